package learner

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"okstream/learner/rng"
	"okstream/learner/state"
)

// The contract of every multi-class learner (multi.go), for every name of
// MultiNames(): bare (as NewMulti builds it, with the self-tuning rule)
// and plain (newPlainMulti: no wrapper), plus configurations that reach
// pruning (auto) and the feature cap (dsg) within the test stream.

// multiContractSpecs lists the specs the contract tests run.
func multiContractSpecs() []string {
	specs := append([]string(nil), MultiNames()...)
	extra := map[string][]string{
		"auto": {"auto:halving=60,octaves=1,etas=1"},
		"dsg":  {"dsg:sigma=1,batch=8,block=16,max_features=64", "dsg:sigma=1,batch=8,block=16,max_features=72,after_cap=revisit,features=cossin", "dsg:sigma=1,batch=8,block=16,max_features=64,update=all"},
		"fogd": {"fogd:sigma=1,raw=true", "fogd:warmup=20,budget=10"},
	}
	for _, n := range MultiNames() {
		specs = append(specs, extra[n]...)
	}
	return specs
}

// multiContractStream is a d = 5 stream of n events whose classes (up to
// 5) appear in order of first appearance: classes 3 and 4 exist only from
// event newAt on (after the default warm-up of 300), so a class is added
// mid-stream after classes were learnt.
func multiContractStream(n, newAt int) ([][]float64, []int) {
	src := rng.New(42)
	xs := make([][]float64, n)
	cs := make([]int, n)
	ids := map[int]int{}
	for i := range xs {
		x := make([]float64, 5)
		for j := range x {
			x[j] = src.Normal()
		}
		x[4] = float64(src.IntN(3)) * 10 // a coarse feature of another scale
		raw := 0
		switch {
		case x[0]*x[1] > 0.3:
			raw = 1
		case x[2] > 0.5:
			raw = 2
		}
		if i >= newAt {
			if x[3] > 1 {
				raw = 3
			} else if x[3] < -1.2 {
				raw = 4
			}
		}
		c, ok := ids[raw]
		if !ok {
			c = len(ids)
			ids[raw] = c
		}
		xs[i], cs[i] = x, c
	}
	return xs, cs
}

func buildMultiSpec(t *testing.T, spec string, plain bool) Multi {
	t.Helper()
	var m Multi
	var err error
	name, kv, _ := ParseSpec(spec)
	if plain && multiRegistry[name] != nil {
		m, err = newPlainMulti(name, kv, 5)
	} else {
		m, err = NewMulti(spec, 5)
	}
	if err != nil {
		t.Fatalf("%s: %v", spec, err)
	}
	return m
}

func checkDistribution(t *testing.T, what string, p []float64, k int) {
	t.Helper()
	if len(p) != k {
		t.Fatalf("%s: %d probabilities for %d classes", what, len(p), k)
	}
	if k == 0 {
		return
	}
	var s float64
	for _, v := range p {
		if !(v >= 0) || v > 1+1e-12 {
			t.Fatalf("%s: probability %v", what, v)
		}
		s += v
	}
	if math.Abs(s-1) > 1e-9 {
		t.Fatalf("%s: probabilities sum to %v", what, s)
	}
}

func mustMarshal(t *testing.T, m Multi) []byte {
	t.Helper()
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMultiContract: determinism, distributions, class growth (also
// mid-stream), PredictProba leaves the model unchanged, and a state
// restored at any of several points (during and after the warm-up, before
// and after pruning or the feature cap) continues bit for bit.
func TestMultiContract(t *testing.T) {
	const n, newAt = 420, 320
	xs, cs := multiContractStream(n, newAt)
	for _, spec := range multiContractSpecs() {
		for _, plain := range []bool{false, true} {
			if plain && !isBareName(spec) {
				continue // plain variants of the bare names only
			}
			t.Run(fmt.Sprintf("%s/plain=%v", spec, plain), func(t *testing.T) {
				a := buildMultiSpec(t, spec, plain)
				b := buildMultiSpec(t, spec, plain)
				if a.Info().Task != MultiClass {
					t.Fatalf("task %v", a.Info().Task)
				}
				if a.Classes() != 0 || len(a.PredictProba(xs[0], make([]float64, 1))) != 0 {
					t.Fatal("a fresh learner has classes")
				}
				restoreAt := map[int]bool{1: true, 77: true, 301: true, newAt + 3: true}
				var r Multi // the restored copy, once restored
				pa := make([]float64, 8)
				pb := make([]float64, 8)
				pr := make([]float64, 8)
				seen := 0
				for i, x := range xs {
					c := cs[i]
					k := a.Classes()
					if k != seen {
						t.Fatalf("event %d: %d classes, %d seen", i, k, seen)
					}
					if i%50 == 7 { // PredictProba changes nothing
						before := mustMarshal(t, a)
						q := a.PredictProba(x, pa)
						checkDistribution(t, "PredictProba", q, k)
						if !bytes.Equal(before, mustMarshal(t, a)) {
							t.Fatalf("event %d: PredictProba changed the state", i)
						}
					}
					qa := a.LearnClass(x, c, pa)
					qb := b.LearnClass(x, c, pb)
					checkDistribution(t, fmt.Sprintf("event %d", i), qa, k)
					if !sameBits(qa, qb) {
						t.Fatalf("event %d: two instances differ: %v vs %v", i, qa, qb)
					}
					if r != nil {
						qr := r.LearnClass(x, c, pr)
						if !sameBits(qa, qr) {
							t.Fatalf("event %d: restored copy differs: %v vs %v", i, qa, qr)
						}
					}
					if c == seen {
						seen++
					}
					if restoreAt[i+1] {
						r = buildMultiSpec(t, spec, plain)
						if err := r.UnmarshalBinary(mustMarshal(t, a)); err != nil {
							t.Fatalf("restore after %d events: %v", i+1, err)
						}
						if !bytes.Equal(mustMarshal(t, a), mustMarshal(t, r)) {
							t.Fatalf("restore after %d events: the states differ", i+1)
						}
					}
				}
				if a.Classes() != 5 {
					t.Fatalf("%d classes at the end, want 5", a.Classes())
				}
				if !bytes.Equal(mustMarshal(t, a), mustMarshal(t, b)) || !bytes.Equal(mustMarshal(t, a), mustMarshal(t, r)) {
					t.Fatal("final states differ")
				}
				if in := a.Info(); in.Updates != n {
					t.Fatalf("Info().Updates = %d", in.Updates)
				}
			})
		}
	}
}

func isBareName(spec string) bool {
	for _, n := range MultiNames() {
		if spec == n {
			return true
		}
	}
	return false
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestMultiHostileState: truncated, extended and corrupted states never
// panic, and a refused state leaves the learner unchanged (same state,
// same next prediction). Truncations and trailing bytes must be refused.
func TestMultiHostileState(t *testing.T) {
	xs, cs := multiContractStream(340, 320)
	for _, spec := range multiContractSpecs() {
		t.Run(spec, func(t *testing.T) {
			for _, at := range []int{150, 340} { // during and after the warm-up
				src := buildMultiSpec(t, spec, false)
				p := make([]float64, 8)
				for i := 0; i < at; i++ {
					src.LearnClass(xs[i], cs[i], p)
				}
				good := mustMarshal(t, src)
				victim := buildMultiSpec(t, spec, false)
				for i := 0; i < 30; i++ {
					victim.LearnClass(xs[i], cs[i], p)
				}
				before := mustMarshal(t, victim)
				check := func(what string, data []byte, mustFail bool) {
					t.Helper()
					var err error
					func() {
						defer func() {
							if r := recover(); r != nil {
								t.Fatalf("%s: UnmarshalBinary panicked: %v", what, r)
							}
						}()
						err = victim.UnmarshalBinary(data)
					}()
					if err == nil {
						if mustFail {
							t.Fatalf("%s: accepted", what)
						}
						// Accepted (a corrupted float is still a float): start
						// again from the known state.
						if err := victim.UnmarshalBinary(before); err != nil {
							t.Fatal(err)
						}
						return
					}
					if !bytes.Equal(before, mustMarshal(t, victim)) {
						t.Fatalf("%s: refused state changed the learner", what)
					}
				}
				for _, cut := range []int{0, 1, 7, len(good) / 3, len(good) / 2, len(good) - 8, len(good) - 1} {
					check(fmt.Sprintf("truncated to %d of %d", cut, len(good)), good[:cut], true)
				}
				check("trailing byte", append(append([]byte{}, good...), 0), true)
				g := rng.New(uint64(at))
				for k := 0; k < 60; k++ {
					bad := append([]byte{}, good...)
					pos := g.IntN(len(bad))
					bad[pos] ^= byte(1 + g.IntN(255))
					check(fmt.Sprintf("byte %d flipped", pos), bad, false)
				}
				garbage := make([]byte, 200)
				for i := range garbage {
					garbage[i] = byte(g.IntN(256))
				}
				check("garbage", garbage, true)
				// The learner still works and predicts as before.
				q := victim.PredictProba(xs[0], p)
				checkDistribution(t, "after hostile states", q, victim.Classes())
			}
		})
	}
}

// TestMultiSteadyStateAllocs: after the warm-up and once every class has
// been seen, PredictProba and LearnClass allocate nothing (bare specs,
// wrapper included).
func TestMultiSteadyStateAllocs(t *testing.T) {
	xs, cs := multiContractStream(420, 320)
	for _, spec := range multiContractSpecs() {
		t.Run(spec, func(t *testing.T) {
			m := buildMultiSpec(t, spec, false)
			p := make([]float64, 8)
			for i := range xs {
				m.LearnClass(xs[i], cs[i], p)
			}
			i := 0
			allocs := testing.AllocsPerRun(50, func() {
				m.PredictProba(xs[i%len(xs)], p)
				m.LearnClass(xs[i%len(xs)], cs[i%len(xs)], p)
				i++
			})
			if allocs != 0 {
				t.Fatalf("%v allocations per event", allocs)
			}
		})
	}
}

// TestMultiWarmupBufferLabels: a warm-up state whose buffered class index
// is not a valid class sequence (a class beyond the next new one, a
// fraction, a negative or NaN index) is refused, the learner unchanged.
// The last 8 bytes of a warm-up state are the label of the last buffered
// event (selftune.go: the buffer rows are x then y).
func TestMultiWarmupBufferLabels(t *testing.T) {
	xs, cs := multiContractStream(40, 400)
	for _, spec := range []string{"fogd", "linear", "auto"} {
		m := buildMultiSpec(t, spec, false)
		p := make([]float64, 8)
		for i := range xs {
			m.LearnClass(xs[i], cs[i], p)
		}
		good := mustMarshal(t, m)
		last := math.Float64frombits(leUint64(good[len(good)-8:]))
		if last != float64(cs[len(cs)-1]) {
			t.Fatalf("%s: the state does not end with the last label (%v)", spec, last)
		}
		victim := buildMultiSpec(t, spec, false)
		victim.LearnClass(xs[0], 0, p)
		before := mustMarshal(t, victim)
		for _, bad := range []float64{float64(m.Classes() + 1), 0.5, -1, math.NaN(), 1e300} {
			data := append([]byte{}, good...)
			putLeUint64(data[len(data)-8:], math.Float64bits(bad))
			if err := victim.UnmarshalBinary(data); err == nil {
				t.Fatalf("%s: label %v accepted", spec, bad)
			}
			if !bytes.Equal(before, mustMarshal(t, victim)) {
				t.Fatalf("%s: label %v: refused state changed the learner", spec, bad)
			}
		}
		if err := victim.UnmarshalBinary(good); err != nil {
			t.Fatalf("%s: the good state: %v", spec, err)
		}
	}
}

func leUint64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func putLeUint64(b []byte, v uint64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (8 * i))
	}
}

// TestFOGDMultiSharesBinaryMap: multi-class FOGD computes binary FOGD's
// feature map (same kernel, σ, D, seed and scale give the same z(x), bit
// for bit), once per event.
func TestFOGDMultiSharesBinaryMap(t *testing.T) {
	xs, cs := multiContractStream(50, 400)
	bin, err := New("fogd:sigma=0.7,budget=20,normalize=true,seed=9", 5)
	if err != nil {
		t.Fatal(err)
	}
	mm, err := NewMulti("fogd:sigma=0.7,budget=20,normalize=true,seed=9", 5)
	if err != nil {
		t.Fatal(err)
	}
	b, m := bin.(*FOGD), mm.(*FOGDMulti)
	p := make([]float64, 8)
	for i, x := range xs {
		b.Predict(x)
		m.LearnClass(x, cs[i], p)
		if !sameBits(b.z, m.z) {
			t.Fatalf("event %d: the maps differ", i)
		}
	}
}

// TestSoftmaxHeadFirstStep checks both step rules against their formulas
// at the first step from zero weights, where P is uniform (1/K) and the
// gradient of the log loss in logit k is g_k = 1/K − [k = c]:
// per coordinate w_kj = −η g_k φ_j/√(δ + g_k² φ_j²) ≈ −η·sign(g_k φ_j);
// shared per feature w_kj = −η g_k φ_j/√(δ + φ_j² Σ_k g_k²) (bias: φ = 1;
// δ = 1e-8).
func TestSoftmaxHeadFirstStep(t *testing.T) {
	phi := []float64{0.5, -2, 0, 3}
	const K, c, eta = 3, 1, 0.7
	for _, cols := range []bool{false, true} {
		h := newSoftmaxHead(len(phi), eta)
		if cols {
			h = newSoftmaxHeadCols(len(phi), eta)
		}
		h.grow(K)
		p := h.probs(phi, make([]float64, K))
		for _, v := range p {
			if math.Abs(v-1.0/K) > 1e-15 {
				t.Fatalf("zero head: p = %v", p)
			}
		}
		h.learn(phi, p, c)
		var ss float64
		for k := 0; k < K; k++ {
			g := 1.0 / K
			if k == c {
				g--
			}
			ss += g * g
		}
		for k := 0; k < K; k++ {
			g := 1.0 / K
			if k == c {
				g--
			}
			for j, v := range append(append([]float64{}, phi...), 1) {
				var want float64
				switch {
				case v == 0:
					want = 0
				case cols:
					want = -eta * g * v / math.Sqrt(1e-8+v*v*ss)
				default:
					want = -eta * g * v / math.Sqrt(1e-8+g*v*g*v) // ≈ −η·sign(g_k φ_j)
				}
				if got := h.row(k)[j]; math.Abs(got-want) > 1e-12 {
					t.Fatalf("cols=%v: w[%d][%d] = %v, want %v", cols, k, j, got, want)
				}
			}
		}
	}
}

// TestFOGDMultiSharedMap: a FOGD member built on a shared map at width 1
// (newFOGDMultiOn, as auto builds its members) predicts and learns with
// the bits of a FOGD that drew its own map at σ = 2^i, through its own
// PredictProba/LearnClass and through projections computed once by the
// shared map (learnProjected, as auto calls it); a σ that is not a power
// of two is refused.
func TestFOGDMultiSharedMap(t *testing.T) {
	xs, cs := multiContractStream(120, 60)
	const base = "budget=20,raw=true,seed=9,normalize=true,kernel="
	for _, kern := range []string{"gaussian", "laplacian"} {
		one, err := newPlainMulti("fogd", map[string]string{"sigma": "1", "budget": "20", "raw": "true", "seed": "9", "kernel": kern}, 5)
		if err != nil {
			t.Fatal(err)
		}
		shared := one.(*FOGDMulti).rff
		build := func(p *Params, d int) (Multi, error) { return newFOGDMultiOn(p, d, shared) }
		for _, sigma := range []string{"0.25", "0.5", "1", "2", "4"} {
			_, kv, _ := ParseSpec("fogd:" + base + kern + ",sigma=" + sigma)
			own, err := newPlainMulti("fogd", kv, 5)
			if err != nil {
				t.Fatal(err)
			}
			viaOwn, err := newPlainMultiWith("fogd", kv, 5, build)
			if err != nil {
				t.Fatal(err)
			}
			viaShared, err := newPlainMultiWith("fogd", kv, 5, build)
			if err != nil {
				t.Fatal(err)
			}
			if own.Info().Spec != viaOwn.Info().Spec {
				t.Fatalf("specs differ: %s, %s", own.Info().Spec, viaOwn.Info().Spec)
			}
			p, q, r := make([]float64, 8), make([]float64, 8), make([]float64, 8)
			proj := make([]float64, shared.Frequencies())
			for i, x := range xs {
				a := own.LearnClass(x, cs[i], p)
				b := viaOwn.LearnClass(x, cs[i], q)
				c := viaShared.(*FOGDMulti).learnProjected(x, shared.Project(proj, x), cs[i], r)
				if !sameBits(a, b) || !sameBits(a, c) {
					t.Fatalf("%s σ=%s event %d: %v, %v, %v", kern, sigma, i, a, b, c)
				}
			}
			if !bytes.Equal(mustMarshal(t, own), mustMarshal(t, viaShared)) {
				t.Fatalf("%s σ=%s: the states differ", kern, sigma)
			}
		}
		_, kv, _ := ParseSpec("fogd:" + base + kern + ",sigma=3")
		if _, err := newPlainMultiWith("fogd", kv, 5, build); err == nil {
			t.Fatal("σ = 3 accepted on a shared map")
		}
	}
}

// TestAutoMultiCommonView: bare auto runs its FOGD grid on both views
// (standardised and common-scale), auto:scale=none on the raw view only,
// and common=true without standardisation is refused. After the warm-up
// the common-scale view of an event is clip((x − m)/c, ±10)/σ̂' with m the
// frozen centres, c the root mean square of the frozen scales and σ̂' the
// lower median pairwise distance of the warm-up rows in units of c
// (recomputed here by brute force). The test stream has one feature of
// scale 10 beside four of scale 1, so the views differ.
func TestAutoMultiCommonView(t *testing.T) {
	const n = 300
	xs, cs := multiContractStream(n+20, 400)
	m, err := NewMulti("auto:octaves=1,etas=1", 5)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.Info().Spec, "common=true") {
		t.Fatalf("bare auto without the common view: %s", m.Info().Spec)
	}
	st := m.(*selfTunedMulti)
	a := st.inner().m.(*AutoMulti)
	if got := fmt.Sprint(a.views); got != "[0 0 0 1 1 1 0]" {
		t.Fatalf("member views %s, want 3 FOGD members per view and linear on view 0", got)
	}
	p := make([]float64, 8)
	for i := 0; i < n; i++ {
		m.LearnClass(xs[i], cs[i], p)
	}
	std := st.t.st
	var ss float64
	for _, s := range std.s[:5] {
		ss += s * s
	}
	c := math.Sqrt(ss / 5)
	unit := func(x []float64) []float64 {
		u := make([]float64, 5)
		for j := range u {
			u[j] = math.Max(-10, math.Min(10, (x[j]-std.m[j])/c))
		}
		return u
	}
	var d2 []float64
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			ui, uj := unit(xs[i]), unit(xs[j])
			var s float64
			for k := range ui {
				s += (ui[k] - uj[k]) * (ui[k] - uj[k])
			}
			d2 = append(d2, s)
		}
	}
	slices.Sort(d2)
	sigma := math.Sqrt(d2[(len(d2)-1)/2])
	for i := n; i < n+20; i++ {
		z := st.t.input(xs[i])
		u := unit(xs[i])
		for j := range u {
			if want := u[j] / sigma; math.Abs(z[5+j]-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Fatalf("event %d: view 2 coordinate %d is %v, want %v", i, j, z[5+j], want)
			}
		}
		if z[4]*sigma == u[4] && u[4] != 0 {
			t.Fatalf("event %d: the two views agree on the coarse feature", i)
		}
	}
	raw, err := NewMulti("auto:scale=none", 5)
	if err != nil {
		t.Fatal(err)
	}
	if ra := raw.(*selfTunedMulti); ra.t.common != nil || slices.Contains(ra.inner().m.(*AutoMulti).views, 1) || !strings.Contains(raw.Info().Spec, "common=false") {
		t.Fatalf("auto:scale=none has the common view: %s", raw.Info().Spec)
	}
	if _, err := NewMulti("auto:scale=none,common=true", 5); err == nil {
		t.Fatal("auto:scale=none,common=true accepted")
	}
	// A common scale or width that is not positive and finite is refused.
	for _, bad := range [][2]float64{{0, 1}, {1, 0}, {-1, 1}, {math.Inf(1), 1}, {1, math.NaN()}} {
		e := state.NewEncoder(16)
		e.F64(bad[0])
		e.F64(bad[1])
		d := state.NewDecoder(e.Bytes())
		var cv commonView
		cv.decode(d)
		if d.Err() == nil {
			t.Fatalf("c=%v 1/σ̂'=%v accepted", bad[0], bad[1])
		}
	}
}

// The canonical spec rebuilds the same learner: NewMulti(Info().Spec) run
// on the same events gives the same state bytes (the runtime rebuilds a
// model from its canonical spec when it resets it, and checkpoints name
// it), also for the plain forms a spec asks for with scale=none.
func TestMultiCanonicalSpecRebuilds(t *testing.T) {
	specs := append(multiContractSpecs(), "linear:scale=none", "fogd:sigma=2", "fogd:scale=none", "auto:common=false", "bpas:budget=20")
	xs, cs := multiContractStream(400, 250)
	for _, spec := range specs {
		a, err := NewMulti(spec, 5)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		b, err := NewMulti(a.Info().Spec, 5)
		if err != nil {
			t.Fatalf("%s: canonical %s: %v", spec, a.Info().Spec, err)
		}
		if b.Info().Spec != a.Info().Spec {
			t.Fatalf("%s: canonical %s rebuilds as %s", spec, a.Info().Spec, b.Info().Spec)
		}
		p := make([]float64, 8)
		for i := range xs {
			a.LearnClass(xs[i], cs[i], p)
			b.LearnClass(xs[i], cs[i], p)
		}
		sa, _ := a.MarshalBinary()
		sb, _ := b.MarshalBinary()
		if !bytes.Equal(sa, sb) {
			t.Fatalf("%s: the learner rebuilt from its canonical spec %s ends in another state", spec, a.Info().Spec)
		}
	}
}
