package drift

import (
	"testing"

	"okstream/learner/rng"
)

// Streams for the tests: seeded, from okstream/learner/rng.

func bernoulli(src *rng.Source, p float64) float64 {
	if src.Float64() < p {
		return 1
	}
	return 0
}

// abrupt is a stream whose mean jumps at t0: Bernoulli(p0 → p1) when
// gauss is false, N(p0, 1) → N(p1, 1) when true.
func abrupt(seed uint64, n, t0 int, p0, p1 float64, gauss bool) []float64 {
	src := rng.New(seed)
	xs := make([]float64, n)
	for i := range xs {
		p := p0
		if i >= t0 {
			p = p1
		}
		if gauss {
			xs[i] = p + src.Normal()
		} else {
			xs[i] = bernoulli(src, p)
		}
	}
	return xs
}

// gradual is Bernoulli whose p moves linearly from p0 to p1 over
// [t0, t0+ramp).
func gradual(seed uint64, n, t0, ramp int, p0, p1 float64) []float64 {
	src := rng.New(seed)
	xs := make([]float64, n)
	for i := range xs {
		p := p0
		switch {
		case i >= t0+ramp:
			p = p1
		case i >= t0:
			p = p0 + (p1-p0)*float64(i-t0)/float64(ramp)
		}
		xs[i] = bernoulli(src, p)
	}
	return xs
}

// alarms feeds xs to d and returns the indices at which it alarmed.
func alarms(d Detector, xs []float64) []int {
	var at []int
	for i, x := range xs {
		if d.Add(x) {
			at = append(at, i)
		}
	}
	return at
}

// firstFrom is the first alarm index ≥ t0, or -1.
func firstFrom(at []int, t0 int) int {
	for _, i := range at {
		if i >= t0 {
			return i
		}
	}
	return -1
}

func newADWIN(t testing.TB, c ADWINConfig) *ADWIN {
	t.Helper()
	a, err := NewADWIN(c)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func newPH(t testing.TB, c PageHinkleyConfig) *PageHinkley {
	t.Helper()
	p, err := NewPageHinkley(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
