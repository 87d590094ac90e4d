package drift

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strings"
	"testing"
)

func mustSEA(t *testing.T, c SEAConfig) *SEA {
	t.Helper()
	g, err := NewSEA(c)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestSEALabel checks the concept on hand-computed points at each θ.
func TestSEALabel(t *testing.T) {
	cases := []struct {
		f1, f2 float64
		want   [4]float64 // at θ = 8, 9, 7, 9.5
	}{
		{4, 4, [4]float64{-1, -1, 1, -1}},      // 8: on the boundary of θ = 8 (≤ is class 0)
		{5, 4.25, [4]float64{1, 1, 1, -1}},     // 9.25
		{3.5, 3.5, [4]float64{-1, -1, -1, -1}}, // 7: on the boundary of θ = 7
		{9.9, 0.05, [4]float64{1, 1, 1, 1}},    // 9.95
		{0, 9, [4]float64{1, -1, 1, -1}},       // 9: on the boundary of θ = 9
		{4.75, 4.75, [4]float64{1, 1, 1, -1}},  // 9.5: on the boundary of θ = 9.5
		{7.25, 0.5, [4]float64{-1, -1, 1, -1}}, // 7.75
	}
	for _, c := range cases {
		for i, th := range SEAThetas {
			if got := SEALabel(c.f1, c.f2, th); got != c.want[i] {
				t.Errorf("SEALabel(%v, %v, θ=%v) = %v, want %v", c.f1, c.f2, th, got, c.want[i])
			}
		}
	}
	g := mustSEA(t, SEAConfig{Seed: 1, Block: 10})
	for _, c := range []struct {
		t  int
		th float64
	}{{0, 8}, {9, 8}, {10, 9}, {19, 9}, {20, 7}, {30, 9.5}, {39, 9.5}, {40, 8}} {
		if got := g.Theta(c.t); got != c.th {
			t.Errorf("Theta(%d) = %v, want %v", c.t, got, c.th)
		}
	}
}

// TestSEAStream checks every noise-free label against the block's θ, that
// the previous θ would be wrong on some examples right after each change
// (the switch is where it should be), the class balance of each block
// against the exact areas (θ²/2 over 100), and the noise rate.
func TestSEAStream(t *testing.T) {
	const block = 20000
	g := mustSEA(t, SEAConfig{Seed: 7, Block: block})
	want := [4]float64{0.32, 0.405, 0.245, 0.45125} // P(f1+f2 ≤ θ)
	x := make([]float64, 3)
	for b := 0; b < 4; b++ {
		neg, differ := 0, 0
		for i := 0; i < block; i++ {
			y := g.Next(x)
			for _, v := range x {
				if v < 0 || v >= 10 {
					t.Fatalf("feature %v outside [0, 10)", v)
				}
			}
			th := SEAThetas[b]
			if y != SEALabel(x[0], x[1], th) {
				t.Fatalf("block %d example %d: label %v, want %v", b, i, y, SEALabel(x[0], x[1], th))
			}
			if b > 0 && i < 2000 && y != SEALabel(x[0], x[1], SEAThetas[b-1]) {
				differ++
			}
			if y < 0 {
				neg++
			}
		}
		p := float64(neg) / block
		sd := math.Sqrt(want[b] * (1 - want[b]) / block)
		if math.Abs(p-want[b]) > 5*sd {
			t.Errorf("block %d: class −1 fraction %.4f, want %.4f ± %.4f", b, p, want[b], 5*sd)
		}
		if b > 0 && differ == 0 {
			t.Errorf("block %d: the previous θ agrees with every label after the change", b)
		}
	}
	// Noise: the fraction of labels that disagree with the concept.
	g = mustSEA(t, SEAConfig{Seed: 8, Block: 1000, Noise: 0.1})
	const n = 50000
	flips := 0
	for i := 0; i < n; i++ {
		th := g.Theta(g.T())
		if g.Next(x) != SEALabel(x[0], x[1], th) {
			flips++
		}
	}
	if p := float64(flips) / n; math.Abs(p-0.1) > 5*math.Sqrt(0.09/n) {
		t.Errorf("noise rate %.4f, want 0.1", p)
	}
}

func TestHyperplane(t *testing.T) {
	w := []float64{1, 3}
	for _, c := range []struct {
		x    []float64
		want float64
	}{{[]float64{0.5, 0.5}, 1}, {[]float64{0.9, 0.2}, -1}, {[]float64{0, 0.7}, 1}, {[]float64{1, 0.3}, -1}} {
		// 2 ≥ 2; 1.5 < 2; 2.1 ≥ 2; 1.9 < 2
		if got := HyperplaneLabel(w, c.x); got != c.want {
			t.Errorf("HyperplaneLabel(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	// Labels use the weights before the step; only the first k weights move,
	// by exactly ±t per example; balance near ½; noise 5 %.
	g, err := NewHyperplane(HyperplaneConfig{Seed: 3, Dim: 10, DriftDims: 2, Mag: 0.001, Reverse: 0.1, Noise: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	w0 := append([]float64(nil), g.Weights()...)
	x := make([]float64, 10)
	const n = 40000
	pos, flips := 0, 0
	prev := make([]float64, 10)
	for i := 0; i < n; i++ {
		copy(prev, g.Weights())
		y := g.Next(x)
		if y != HyperplaneLabel(prev, x) {
			flips++
		}
		if y > 0 {
			pos++
		}
		for j, wj := range g.Weights() {
			d := math.Abs(wj - prev[j])
			if j < 2 && math.Abs(d-0.001) > 1e-12 || j >= 2 && d != 0 {
				t.Fatalf("example %d: weight %d moved by %v", i, j, d)
			}
		}
	}
	if p := float64(flips) / n; math.Abs(p-0.05) > 5*math.Sqrt(0.05*0.95/n) {
		t.Errorf("noise rate %.4f, want 0.05", p)
	}
	if p := float64(pos) / n; p < 0.4 || p > 0.6 {
		t.Errorf("class +1 fraction %.3f, want about ½", p)
	}
	moved := math.Abs(g.Weights()[0]-w0[0]) + math.Abs(g.Weights()[1]-w0[1])
	if moved == 0 {
		t.Error("the drifting weights did not move")
	}
	// Without reversal the weights move by exactly n·t.
	g, _ = NewHyperplane(HyperplaneConfig{Seed: 3, Dim: 4, DriftDims: 1, Mag: 0.25, Reverse: 0})
	w0 = append(w0[:0], g.Weights()...)
	for i := 0; i < 8; i++ {
		g.Next(x)
	}
	if got := g.Weights()[0]; got != w0[0]+2 {
		t.Errorf("weight after 8 steps of 0.25: %v, want %v", got, w0[0]+2)
	}
}

// agrawal builds an attribute vector in feature order.
func agrawal(sal, com, age, el, car, zip, hv, hy, loan float64) []float64 {
	return []float64{sal, com, age, el, car, zip, hv, hy, loan}
}

// TestAgrawalFunctions checks the ten functions on hand-evaluated vectors
// (−1 is group A, +1 group B).
func TestAgrawalFunctions(t *testing.T) {
	cases := []struct {
		x    []float64
		want [10]float64
	}{
		// age 30, salary 60k, total 80k, elevel 1, loan 150k, equity 250k:
		// f7 53 333 − 30 000 − 20 000 > 0, f8 53 333 − 5 000 − 20 000 > 0,
		// f9 53 333 − 5 000 − 30 000 − 10 000 > 0, f10 53 333 − 5 000 + 50 000 − 10 000 > 0.
		{agrawal(60000, 20000, 30, 1, 5, 2, 500000, 25, 150000), [10]float64{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
		// age 50, salary 130k (no commission), elevel 4, loan 450k, hyears 5:
		// f5: salary outside [75k, 125k] → loan in [300k, 500k]: A; f7
		// 86 667 − 90 000 − 20 000 < 0; f8 86 667 − 40 000 > 0; f9 < 0; f10 86 667 − 30 000 > 0.
		{agrawal(130000, 0, 50, 4, 1, 8, 100000, 5, 450000), [10]float64{1, 1, 1, 1, -1, 1, 1, -1, 1, -1}},
		// Boundaries: age 60 is the old band, salary 75 000 is inside [25k, 75k]
		// (f2 A); f3 elevel 0 in the old band: B; f4 old band, elevel 0 →
		// salary in [25k, 75k]: A; f5 old, salary in band → loan [300k, 500k]
		// (0): B; f6 total 75 000 in [25k, 75k]: A; f7 50 000 − 20 000 > 0;
		// f8 50 000 − 20 000 > 0; f9 50 000 − 10 000 > 0; f10 hyears 20: equity 0, > 0.
		{agrawal(75000, 0, 60, 0, 20, 0, 900000, 20, 0), [10]float64{-1, -1, 1, -1, 1, -1, -1, -1, -1, -1}},
		// age 40 (middle band), salary 20 000 + commission 10 000, elevel 2,
		// loan 250 000, hyears 30, hvalue 50 000 (equity 50 000):
		// f1 B; f2 B; f3 A; f4 elevel in 1..3 → salary [50k, 100k]: B; f5 salary
		// out of band → loan [300k, 500k]: B; f6 30 000 outside [75k, 125k]: B;
		// f7 20 000 − 50 000 − 20 000 < 0: B; f8 20 000 − 10 000 − 20 000 < 0: B;
		// f9 < 0: B; f10 20 000 − 10 000 + 10 000 − 10 000 = 10 000 > 0: A.
		{agrawal(20000, 10000, 40, 2, 3, 4, 50000, 30, 250000), [10]float64{1, 1, -1, 1, 1, 1, 1, 1, 1, -1}},
	}
	// Closed intervals at their ends: age 60, salary 75 000 (in the old
	// band [25k, 75k]) and loan 500 000 (in [300k, 500k]): f5 A; loan
	// 300 000 also A, 299 999 B; salary 75 001 leaves the band → loan
	// [100k, 300k]: 300 000 A, 500 000 B. f6/f2 at total 25 000: A, 24 999: B.
	for _, c := range []struct {
		f    int
		x    []float64
		want float64
	}{
		{5, agrawal(75000, 0, 60, 0, 1, 0, 1e5, 1, 500000), -1},
		{5, agrawal(75000, 0, 60, 0, 1, 0, 1e5, 1, 300000), -1},
		{5, agrawal(75000, 0, 60, 0, 1, 0, 1e5, 1, 299999), 1},
		{5, agrawal(75001, 0, 60, 0, 1, 0, 1e5, 1, 300000), -1},
		{5, agrawal(75001, 0, 60, 0, 1, 0, 1e5, 1, 500000), 1},
		{5, agrawal(100000, 0, 39, 0, 1, 0, 1e5, 1, 100000), -1},
		{5, agrawal(100001, 0, 39, 0, 1, 0, 1e5, 1, 100000), 1},
		{6, agrawal(20000, 5000, 70, 0, 1, 0, 1e5, 1, 0), -1},
		{6, agrawal(20000, 4999, 70, 0, 1, 0, 1e5, 1, 0), 1},
		{2, agrawal(125000, 0, 59, 0, 1, 0, 1e5, 1, 0), -1},
		{2, agrawal(125001, 0, 59, 0, 1, 0, 1e5, 1, 0), 1},
		{4, agrawal(100000, 0, 45, 3, 1, 0, 1e5, 1, 0), -1},
		{4, agrawal(100000, 0, 45, 4, 1, 0, 1e5, 1, 0), -1},
		{4, agrawal(74999, 0, 45, 4, 1, 0, 1e5, 1, 0), 1},
		// f7 at zero disposable income is B (> 0 is A): 30 000 − 10 000 − 20 000 = 0.
		{7, agrawal(45000, 0, 30, 0, 1, 0, 1e5, 1, 50000), 1},
		{7, agrawal(45000, 0, 30, 0, 1, 0, 1e5, 1, 49995), -1},
	} {
		if got := AgrawalFunction(c.f, c.x); got != c.want {
			t.Errorf("function %d at %v = %v, want %v", c.f, c.x, got, c.want)
		}
	}
	for i, c := range cases {
		for f := 1; f <= 10; f++ {
			if got := AgrawalFunction(f, c.x); got != c.want[f-1] {
				t.Errorf("case %d: function %d = %v, want %v", i, f, got, c.want[f-1])
			}
		}
	}
}

// TestAgrawalAttributes checks the attribute distributions' supports and the
// class balance of function 1 (P(age < 40 or ≥ 60) = 41/61).
func TestAgrawalAttributes(t *testing.T) {
	for _, perturb := range []float64{0, 0.05} {
		g, err := NewAgrawal(AgrawalConfig{Seed: 5, Function: 1, Perturb: perturb})
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float64, 9)
		const n = 30000
		neg := 0
		for i := 0; i < n; i++ {
			y := g.Next(x)
			if y < 0 {
				neg++
			}
			in := func(j int, lo, hi float64, integer bool) {
				if x[j] < lo || x[j] > hi || integer && x[j] != math.Round(x[j]) {
					t.Fatalf("perturb %v: attribute %d = %v outside [%v, %v]", perturb, j, x[j], lo, hi)
				}
			}
			in(AgSalary, 20000, 150000, false)
			in(AgAge, 20, 80, true)
			in(AgElevel, 0, 4, true)
			in(AgCar, 1, 20, true)
			in(AgZipcode, 0, 8, true)
			in(AgHyears, 1, 30, true)
			in(AgLoan, 0, 500000, false)
			in(AgHvalue, 0, 1350000, false)
			if perturb == 0 {
				k := 9 - x[AgZipcode]
				in(AgHvalue, 50000*k, 150000*k, false)
				if (x[AgSalary] >= 75000) != (x[AgCommission] == 0) {
					t.Fatalf("salary %v with commission %v", x[AgSalary], x[AgCommission])
				}
				if x[AgCommission] != 0 {
					in(AgCommission, 10000, 75000, false)
				}
				if y != AgrawalFunction(1, x) {
					t.Fatalf("label %v, function 1 says %v", y, AgrawalFunction(1, x))
				}
			}
		}
		want := 41.0 / 61
		if p := float64(neg) / n; math.Abs(p-want) > 5*math.Sqrt(want*(1-want)/n) {
			t.Errorf("perturb %v: group A fraction %.4f, want %.4f", perturb, p, want)
		}
	}
}

// TestAgrawalDrift checks an abrupt switch at its position and a gradual
// one against the sigmoid, on the examples where the two functions
// disagree (perturbation off, so the label is a function of x).
func TestAgrawalDrift(t *testing.T) {
	g, err := NewAgrawal(AgrawalConfig{Seed: 2, Function: 1, To: 3, Position: 500})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 9)
	for i := 0; i < 1000; i++ {
		y := g.Next(x)
		f := 1
		if i >= 500 {
			f = 3
		}
		if y != AgrawalFunction(f, x) {
			t.Fatalf("abrupt: example %d label %v, function %d says %v", i, y, f, AgrawalFunction(f, x))
		}
	}
	const p, w = 20000, 2000
	g, _ = NewAgrawal(AgrawalConfig{Seed: 2, Function: 2, To: 7, Position: p, Width: w})
	var newAt [40]struct{ n, nw int } // bins of 1000 examples
	for i := 0; i < 40000; i++ {
		y := g.Next(x)
		a, b := AgrawalFunction(2, x), AgrawalFunction(7, x)
		if a == b {
			continue
		}
		bin := &newAt[i/1000]
		bin.n++
		if y == b {
			bin.nw++
		} else if y != a {
			t.Fatalf("label %v matches neither function", y)
		}
	}
	for k, bin := range newAt {
		mid := float64(k*1000) + 499.5
		want := 1 / (1 + math.Exp(-4*(mid-p)/w))
		got := float64(bin.nw) / float64(bin.n)
		// The sigmoid varies within a bin; allow the bin's spread plus 5σ.
		spread := math.Abs(1/(1+math.Exp(-4*(float64(k*1000)-p)/w)) - 1/(1+math.Exp(-4*(float64(k*1000+999)-p)/w)))
		if math.Abs(got-want) > spread+5*math.Sqrt(want*(1-want)/float64(bin.n))+0.01 {
			t.Errorf("gradual: events %d..%d: new-function fraction %.3f, want %.3f", k*1000, k*1000+999, got, want)
		}
	}
}

func TestFriedmanConcepts(t *testing.T) {
	x := []float64{1, 0.5, 0, 0.25, 1, 0.9, 0.9, 0.9, 0.9, 0.9}
	// F0: 10 sin(π/2) + 20·¼ + 10·¼ + 5·1 = 22.5
	// F1: 10 sin(π/4) + 20·0 + 10·1 + 5·0 = 17.0710678…
	// F2: 10 sin(π/2) + 20·(1/16) + 10·0 + 5·1 = 16.25
	for c, want := range []float64{22.5, 10*math.Sqrt2/2 + 10, 16.25} {
		if got := FriedmanConcept(c, x); math.Abs(got-want) > 1e-12 {
			t.Errorf("concept %d = %v, want %v", c, got, want)
		}
	}
}

// TestFriedmanDrift checks the concepts of each segment through the
// residuals: y − F(x) is N(0, 1) under the right concept (mean square ≈ 1)
// and much larger under the neighbouring one; gsg's transition is checked by
// which concept explains each example better, early and late in the window.
func TestFriedmanDrift(t *testing.T) {
	const n, p1, p2 = 30000, 10000, 20000
	g, err := NewFriedman(FriedmanConfig{Seed: 4, Mode: "gra", P1: p1, P2: p2})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 10)
	var ms, other [3]float64
	for i := 0; i < n; i++ {
		y := g.Next(x)
		seg := i / 10000
		c := []int{0, 1, 0}[seg]
		r := y - FriedmanConcept(c, x)
		ms[seg] += r * r / 10000
		o := y - FriedmanConcept(1-c, x)
		other[seg] += o * o / 10000
	}
	for s := range ms {
		if math.Abs(ms[s]-1) > 0.1 || other[s] < 3 {
			t.Errorf("gra segment %d: mean square residual %.3f (want ≈ 1), under the other concept %.3f (want ≫ 1)", s, ms[s], other[s])
		}
	}
	const w = 4000
	g, err = NewFriedman(FriedmanConfig{Seed: 4, Mode: "gsg", P1: p1, P2: p2, Width: w})
	if err != nil {
		t.Fatal(err)
	}
	closer := func(y float64, x []float64, a, b int) bool { // b explains y better than a
		return math.Abs(y-FriedmanConcept(b, x)) < math.Abs(y-FriedmanConcept(a, x))
	}
	var early, late, before, after [2]int // [change] counts of "new concept closer"
	for i := 0; i < n; i++ {
		y := g.Next(x)
		for k, p := range []int{p1, p2} {
			j := i - p
			switch {
			case j >= -w/4 && j < 0 && closer(y, x, k, k+1):
				before[k]++
			case j >= 0 && j < w/4 && closer(y, x, k, k+1):
				early[k]++
			case j >= w*3/4 && j < w && closer(y, x, k, k+1):
				late[k]++
			case j >= w && j < w+w/4 && closer(y, x, k, k+1):
				after[k]++
			}
		}
	}
	for k := range early {
		// Quarters of w/4 = 1000 examples; the new concept's share rises
		// from ~12 % to ~88 % across the window; "closer" is right about
		// 80 % of the time either way.
		if !(before[k] < early[k] && early[k]+200 < late[k] && late[k] < after[k]+100) {
			t.Errorf("gsg change %d: new concept closer before %d, early %d, late %d, after %d (of 1000 each)", k, before[k], early[k], late[k], after[k])
		}
	}
}

func allGens(t *testing.T) []Generator {
	t.Helper()
	var out []Generator
	for _, s := range []string{
		"sea,n=2000,seed=9", "hyperplane,n=2000,seed=9", "agrawal,f=2,to=5,p=1000,w=200,n=2000,seed=9",
		"agrawal,f=4,n=2000,seed=9,perturb=0", "friedman,mode=gra,n=2000,seed=9", "friedman,mode=gsg,n=2000,seed=9",
		"friedman,mode=lea,n=2000,seed=9",
	} {
		g, _, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

func hashStream(g Generator, n int) string {
	h := sha256.New()
	x := make([]float64, g.Dim())
	var b [8]byte
	for i := 0; i < n; i++ {
		y := g.Next(x)
		for _, v := range append(x, y) {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// TestDeterminism: same spec ⇒ same bytes, another seed ⇒ other bytes, and
// a stream restored mid-way from MarshalBinary continues with the same
// bytes.
func TestDeterminism(t *testing.T) {
	a, b := allGens(t), allGens(t)
	for i := range a {
		if ha, hb := hashStream(a[i], 3000), hashStream(b[i], 3000); ha != hb {
			t.Errorf("%s: two streams differ: %s, %s", a[i].Spec(), ha, hb)
		}
		other, _, err := Parse(strings.Replace(a[i].Spec(), "seed=9", "seed=10", 1))
		if err != nil {
			t.Fatal(err)
		}
		if hashStream(other, 3000) == hashStream(allGens(t)[i], 3000) {
			t.Errorf("%s: seed 10 gives the stream of seed 9", a[i].Spec())
		}
	}
	for i, g := range allGens(t) {
		x := make([]float64, g.Dim())
		for j := 0; j < 1234; j++ {
			g.Next(x)
		}
		st, err := g.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		want := hashStream(g, 2000)
		r := allGens(t)[i]
		if err := r.UnmarshalBinary(st); err != nil {
			t.Fatalf("%s: %v", g.Spec(), err)
		}
		if r.T() != 1234 {
			t.Errorf("%s: restored at %d, want 1234", g.Spec(), r.T())
		}
		if got := hashStream(r, 2000); got != want {
			t.Errorf("%s: restored stream %s, want %s", g.Spec(), got, want)
		}
	}
}

// TestGolden pins the first 1000 examples of each stream (features and
// labels, bit for bit) so that a change to a generator or to the random
// source shows up.
func TestGolden(t *testing.T) {
	want := []string{"2c626561b7ea63f7", "e86ce037b79ee323", "6e8fe0ab885a5786", "fe0863d368e9fa9b", "7e7e0a96579c0a39", "feab78c2bd875492", "b2e5da2098506938"}
	for i, g := range allGens(t) {
		if got := hashStream(g, 1000); got != want[i] {
			t.Errorf("%s: %s, want %s", g.Spec(), got, want[i])
		}
	}
}

// TestUnmarshalUntrusted: truncated, flipped and foreign states are errors
// (never panics) and leave the generator unchanged.
func TestUnmarshalUntrusted(t *testing.T) {
	gens := allGens(t)
	for i, g := range gens {
		x := make([]float64, g.Dim())
		g.Next(x)
		st, _ := g.MarshalBinary()
		other, _ := gens[(i+1)%len(gens)].MarshalBinary()
		bad := [][]byte{nil, {1, 2, 3}, append(append([]byte(nil), st...), 0), other}
		for n := 0; n < len(st); n += 3 {
			bad = append(bad, st[:n])
		}
		for k := 0; k < len(st); k += 5 {
			b := append([]byte(nil), st...)
			b[k] ^= 0x41
			bad = append(bad, b)
		}
		before, _ := g.MarshalBinary()
		for _, b := range bad {
			if err := g.UnmarshalBinary(b); err == nil {
				// A flipped byte in the random state, the position or a
				// weight is a valid state of another stream: put it back.
				if err := g.UnmarshalBinary(before); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if now, _ := g.MarshalBinary(); string(now) != string(before) {
				t.Fatalf("%s: a failed UnmarshalBinary changed the generator", g.Spec())
			}
		}
		if err := g.UnmarshalBinary(other); err == nil {
			t.Errorf("%s: accepted the state of %s", g.Spec(), gens[(i+1)%len(gens)].Spec())
		}
	}
}

func TestNoAllocation(t *testing.T) {
	for _, g := range allGens(t) {
		x := make([]float64, g.Dim())
		if a := testing.AllocsPerRun(200, func() { g.Next(x) }); a != 0 {
			t.Errorf("%s: %v allocations per example", g.Spec(), a)
		}
	}
}

func TestParse(t *testing.T) {
	d, g, err := Load("drift:sea,n=1000,seed=1")
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 1000 || d.Dim != 3 || d.Name != "drift:sea,block=250,noise=0.1,seed=1" || g.T() != 1000 {
		t.Errorf("Load: %d rows of %d, name %q, t %d", d.Len(), d.Dim, d.Name, g.T())
	}
	if c := g.Changes(); len(c) != 3 || c[0] != 250 || c[2] != 750 {
		t.Errorf("changes %v", c)
	}
	for _, y := range d.Y {
		if y != 1 && y != -1 {
			t.Fatalf("label %v", y)
		}
	}
	for _, g := range allGens(t) {
		r, _, err := Parse(g.Spec())
		if err != nil || r.Spec() != g.Spec() {
			t.Errorf("Parse(%q): %v, spec %q", g.Spec(), err, r.Spec())
		}
	}
	for _, bad := range []string{
		"", "nope", "sea,n=0", "sea,n=x", "sea,foo=1", "sea,n=5,n=6", "sea,noise=2", "sea,n",
		"hyperplane,k=11", "agrawal,f=11", "agrawal,to=3,w=-1", "friedman,mode=xyz", "friedman,mode=gra,w=5", "friedman,mode=lea,p3=10",
		"friedman,p1=5,p2=5", "friedman,mode=gsg,p1=0,p2=10,w=11", "sea,seed=-1",
	} {
		if _, _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	if !IsSpec("drift:sea") || IsSpec("german") {
		t.Error("IsSpec")
	}
}

func TestWindow(t *testing.T) {
	seg := SegmentErrors([]int{2, 4, 10}, []float64{0.5, 0.25, 0.4})
	// Sums 1, 1, 4: segments 1/2, 0/2, 3/6.
	if len(seg) != 3 || seg[0] != 0.5 || seg[1] != 0 || seg[2] != 0.5 {
		t.Errorf("SegmentErrors = %v", seg)
	}
	if SegmentErrors([]int{2, 2}, []float64{1, 1}) != nil || SegmentErrors([]int{1}, nil) != nil {
		t.Error("SegmentErrors accepted a bad curve")
	}
	w := NewWindow(3)
	if !math.IsNaN(w.Mean()) {
		t.Error("empty window mean")
	}
	for i, c := range []struct{ add, mean float64 }{{1, 1}, {0, 0.5}, {1, 2.0 / 3}, {1, 2.0 / 3}, {0, 2.0 / 3}, {0, 1.0 / 3}, {0, 0}} {
		w.Add(c.add)
		if math.Abs(w.Mean()-c.mean) > 1e-15 {
			t.Errorf("after %d adds: mean %v, want %v", i+1, w.Mean(), c.mean)
		}
	}
	// Curve: 10 % error, a change at 1000, peak 50 %, back to 11 % by 1600.
	ts := []int{500, 1000, 1200, 1400, 1600, 1800}
	errs := []float64{0.1, 0.1, 0.3, 0.5, 0.11, 0.1}
	before, after, tm := Recovery(ts, errs, 1000, 0.02)
	if before != 0.1 || after != 0.5 || tm != 600 {
		t.Errorf("Recovery = %v, %v, %v; want 0.1, 0.5, 600", before, after, tm)
	}
	if _, _, tm := Recovery(ts, errs, 1000, -1); tm != -1 {
		t.Errorf("Recovery with no recovery: %v", tm)
	}
	if b, _, tm := Recovery(ts, errs, 100, 0.1); !math.IsNaN(b) || tm != -1 {
		t.Errorf("Recovery without a level before: %v, %v", b, tm)
	}
}

func TestLoadRun(t *testing.T) {
	const spec = "drift:agrawal,f=1,to=4,p=300,n=600,seed=3"
	d0, _, err := Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	r0, err := LoadRun(spec, 0)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := LoadRun(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	r1b, _ := LoadRun(spec, 1)
	same := func(a, b [][]float64) bool {
		for i := range a {
			for j := range a[i] {
				if a[i][j] != b[i][j] {
					return false
				}
			}
		}
		return true
	}
	if !same(d0.X, r0.X) || same(r0.X, r1.X) || !same(r1.X, r1b.X) || r1.Name != d0.Name || r1.Len() != 600 {
		t.Error("LoadRun: run 0 must be Load's stream, run 1 another, reproducibly, with the same name and length")
	}
	if g, _, _ := Parse("sea,seed=18446744073709551615"); Seed(g) != 1<<64-1 {
		t.Errorf("Seed = %d", Seed(g))
	}
}

func TestFriedmanLEA(t *testing.T) {
	// R1: 10·1·0.2 + 20·(0.1 − ½) + 10·0.8 + 5·0.2 = 2 − 8 + 8 + 1 = 3.
	x1 := []float64{1, 0.2, 0.1, 0.8, 0.2, 0, 0, 0, 0, 0}
	if got := FriedmanLEA(1, x1); math.Abs(got-3) > 1e-14 {
		t.Errorf("R1 = %v, want 3", got)
	}
	// R2: 10 cos(0.8) + 20·0.4 + e^0.2 + 5·0.64.
	x2 := []float64{1, 0.8, 0.9, 0.2, 0.8, 0, 0, 0, 0, 0}
	if got, want := FriedmanLEA(2, x2), 10*math.Cos(0.8)+8+math.Exp(0.2)+3.2; math.Abs(got-want) > 1e-13 {
		t.Errorf("R2 = %v, want %v", got, want)
	}
	for i := 0; i <= 1000; i++ {
		v := float64(i) / 1000
		if got, want := expUnit(v), math.Exp(v); math.Abs(got-want) > 4e-16*want {
			t.Fatalf("expUnit(%v) = %v, want %v", v, got, want)
		}
	}
	g, err := NewFriedman(FriedmanConfig{Mode: "lea", P1: 10, P2: 20, P3: 30})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		x    []float64
		want [4]int // region at t = 5, 15, 25, 35
	}{
		{[]float64{.5, .2, .1, .8, .2}, [4]int{0, 1, 1, 1}}, // every R1 condition
		{[]float64{.5, .2, .1, .8, .9}, [4]int{0, 0, 1, 1}}, // fails x5 < 0.3 only
		{[]float64{.5, .2, .1, .5, .9}, [4]int{0, 0, 0, 1}}, // fails x4 and x5
		{[]float64{.5, .8, .9, .2, .8}, [4]int{0, 2, 2, 2}}, // every R2 condition
		{[]float64{.5, .8, .9, .2, .1}, [4]int{0, 0, 2, 2}},
		{[]float64{.5, .8, .9, .5, .1}, [4]int{0, 0, 0, 2}},
		{[]float64{.5, .5, .9, .2, .8}, [4]int{0, 0, 0, 0}}, // x2 in neither
	} {
		for k, tt := range []int{5, 15, 25, 35} {
			if got := g.LEARegion(tt, c.x); got != c.want[k] {
				t.Errorf("region of %v at %d = %d, want %d", c.x, tt, got, c.want[k])
			}
		}
	}
	// The stream: residuals against the region's function are N(0, 1).
	g, _ = NewFriedman(FriedmanConfig{Seed: 6, Mode: "lea", P1: 5000, P2: 10000, P3: 15000})
	x := make([]float64, 10)
	var ms float64
	inR := 0
	for i := 0; i < 20000; i++ {
		y := g.Next(x)
		reg := g.LEARegion(i, x)
		if reg != 0 {
			inR++
		}
		d := y - FriedmanLEA(reg, x)
		ms += d * d / 20000
	}
	// Region probabilities: 2·0.3⁴ = 1.6 %, 2·0.3³ = 5.4 %, 2·0.3² = 18 % over
	// 5000 examples each, none before: about 1,250 examples in all.
	if math.Abs(ms-1) > 0.06 || inR < 1000 || inR > 1500 {
		t.Errorf("lea: mean square residual %.3f (want ≈ 1), %d examples in the regions (want ≈ 1250)", ms, inR)
	}
}
