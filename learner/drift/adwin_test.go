package drift

import (
	"math"
	"testing"

	"okstream/learner/rng"
)

// The cut thresholds against hand-computed values (python, float64):
// n0 = 20, n1 = 30, n = 50, δ = 0.002, σ² = 0.25.
func TestADWINEpsilonHand(t *testing.T) {
	// MOA: L = ln(2 ln 50 / 0.002), 1/m = 1/16 + 1/26,
	// ε = sqrt(2·(1/m)·0.25·L) + (2/3)·L·(1/m).
	lg := rng.Log(2 * rng.Log(50) / 0.002)
	if got, want := bernsteinEps(20, 30, 0.25, lg), 1.2029509328565915; math.Abs(got-want) > 1e-14 {
		t.Errorf("Bernstein ε = %.17g, want %.17g", got, want)
	}
	// Paper, Theorem 3.1: ε = sqrt((1/20 + 1/30)/2 · ln(4·50/0.002)).
	a := newADWIN(t, ADWINConfig{Bound: BoundHoeffding})
	lh := rng.Log(4 * 50 / 0.002)
	const want = 0.6926075567787958
	if a.cut(20, 30, want*(1+1e-12), lh, 0) != true || a.cut(20, 30, want*(1-1e-12), lh, 0) != false {
		t.Errorf("Hoeffding cut not at ε = %.17g", want)
	}
}

// After every Add the window is the stream's last Width values: its mean
// and variance are those of that suffix, and the buckets form a valid
// exponential histogram (at most M a row, rows non-empty, sizes summing to
// the width).
func TestADWINWindowIsSuffix(t *testing.T) {
	for _, c := range []ADWINConfig{{}, {M: 2, Clock: 1, MaxWidth: 300}, {M: 3, Bound: BoundHoeffding}} {
		a := newADWIN(t, c)
		src := rng.New(7)
		var xs []float64
		cuts := 0
		for i := range 6000 {
			p := 0.2 + 0.6*float64((i/1500)%2) // changes every 1500
			x := bernoulli(src, p)
			xs = append(xs, x)
			if a.Add(x) {
				cuts++
			}
			w := a.Width()
			var s float64
			for _, v := range xs[len(xs)-w:] {
				s += v
			}
			mean := s / float64(w)
			var ss float64
			for _, v := range xs[len(xs)-w:] {
				ss += (v - mean) * (v - mean)
			}
			if math.Abs(a.Mean()-mean) > 1e-9 || math.Abs(a.Variance()-ss/float64(w)) > 1e-9 {
				t.Fatalf("%+v step %d: mean %v var %v, suffix of %d has %v, %v", c, i, a.Mean(), a.Variance(), w, mean, ss/float64(w))
			}
			sum := 0
			for r := 0; r < a.nrows; r++ {
				if a.cnt[r] < 1 || a.cnt[r] > a.m {
					t.Fatalf("%+v step %d: row %d holds %d buckets", c, i, r, a.cnt[r])
				}
				sum += a.cnt[r] << r
			}
			if sum != w || w > a.maxWidth {
				t.Fatalf("%+v step %d: buckets hold %d, width %d (cap %d)", c, i, sum, w, a.maxWidth)
			}
		}
		if cuts < 3 {
			t.Errorf("%+v: %d changes detected, the stream has 3", c, cuts)
		}
	}
}

// After an abrupt change the window drops the old values: 3000 values
// after a 0.2 → 0.5 change at 10^4, the window holds at most 3000 + 256
// values — the only old values it may keep are in the bucket that
// straddles the change, and a window of ~3000 has buckets of at most 2^8
// values at M = 5 (measured over 20 seeds: 3016 to 3144) — and its mean
// is the new mean.
func TestADWINShrinksToNewMean(t *testing.T) {
	const t0, after = 10_000, 3000
	for s := range uint64(20) {
		a := newADWIN(t, ADWINConfig{})
		xs := abrupt(4000+s, t0+after, t0, 0.2, 0.5, false)
		wBefore := 0
		for i, x := range xs {
			a.Add(x)
			if i == t0-1 {
				wBefore = a.Width()
			}
		}
		if wBefore < 5000 {
			t.Errorf("seed %d: window before the change only %d", s, wBefore)
		}
		if a.Width() > after+256 || a.Width() < after/2 {
			t.Errorf("seed %d: window %d values %d after the change", s, a.Width(), after)
		}
		// 3σ of a mean of ≥ 1500 Bernoulli(0.5) is 0.039.
		if math.Abs(a.Mean()-0.5) > 0.04 {
			t.Errorf("seed %d: window mean %v, want 0.5", s, a.Mean())
		}
	}
}

// The cap: the window stays within [MaxWidth − 2^(R−1), MaxWidth], memory
// does not grow, no change is reported on a constant stream.
func TestADWINCap(t *testing.T) {
	a := newADWIN(t, ADWINConfig{MaxWidth: 1000})
	for i := range 50_000 {
		if a.Add(float64(i % 2)) {
			t.Fatalf("change reported on an alternating stream at %d", i)
		}
		if i > 2000 && (a.Width() > 1000 || a.Width() < 1000-(1<<(a.rows-1))) {
			t.Fatalf("step %d: width %d, rows %d", i, a.Width(), a.rows)
		}
	}
	if a.Buckets() > a.m*a.rows {
		t.Errorf("%d buckets for %d rows of %d", a.Buckets(), a.rows, a.m)
	}
}

func TestADWINConfig(t *testing.T) {
	for _, c := range []ADWINConfig{{Delta: 1}, {Delta: -1}, {Delta: math.NaN()}, {M: 1}, {M: 5000}, {Clock: -1},
		{MaxWidth: 10}, {MaxWidth: 1 << 41}, {Bound: 7}} {
		if _, err := NewADWIN(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	a := newADWIN(t, ADWINConfig{})
	if got := a.Spec(); got != "adwin:delta=0.002,m=5,clock=32,max=4194304,bound=bernstein" {
		t.Errorf("spec %q", got)
	}
	for _, x := range []float64{math.NaN(), math.Inf(1), 2e100} {
		if a.Add(x) || a.Width() != 0 || a.tick != 0 {
			t.Errorf("Add(%v) was taken", x)
		}
	}
}

// After every check no bucket boundary is left where the cut test holds:
// the test recomputed here from the raw values of the window (not from
// the detector's incremental sums), ε from its definition. Clock = 1, so
// every insertion is a check.
func TestADWINNoCutLeft(t *testing.T) {
	for _, bound := range []Bound{BoundBernstein, BoundHoeffding} {
		a := newADWIN(t, ADWINConfig{Clock: 1, Bound: bound})
		src := rng.New(8)
		var xs []float64
		cuts := 0
		for i := range 4000 {
			x := bernoulli(src, 0.1+0.7*float64((i/1000)%2))
			xs = append(xs, x)
			if a.Add(x) {
				cuts++
			}
			n := a.Width()
			if n <= adwinGrace {
				continue
			}
			win := xs[len(xs)-n:]
			var s, ss float64
			for _, v := range win {
				s += v
			}
			for _, v := range win {
				ss += (v - s/float64(n)) * (v - s/float64(n))
			}
			n0 := 0
			for r := a.nrows - 1; r >= 0; r-- {
				for k := 0; k < a.cnt[r]; k++ {
					n0 += 1 << r
					n1 := n - n0
					if n1 == 0 || n0 <= adwinMinSub+1 || n1 <= adwinMinSub+1 {
						continue
					}
					var s0 float64
					for _, v := range win[:n0] {
						s0 += v
					}
					diff := math.Abs(s0/float64(n0) - (s-s0)/float64(n1))
					var eps float64
					if bound == BoundBernstein {
						lg := math.Log(2 * math.Log(float64(n)) / DefaultADWINDelta)
						mrec := 1/float64(n0-4) + 1/float64(n1-4)
						eps = math.Sqrt(2*mrec*(ss/float64(n))*lg) + 2.0/3*lg*mrec
					} else {
						eps = math.Sqrt((1/float64(n0) + 1/float64(n1)) / 2 * math.Log(4*float64(n)/DefaultADWINDelta))
					}
					if diff > eps+1e-9 {
						t.Fatalf("%v step %d: split %d|%d has |Δμ| = %v > ε = %v after the check", bound, i, n0, n1, diff, eps)
					}
				}
			}
		}
		if cuts < 3 {
			t.Errorf("%v: %d cuts on a stream with 3 changes", bound, cuts)
		}
	}
}
