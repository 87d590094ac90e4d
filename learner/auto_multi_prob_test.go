package learner

import (
	"testing"

	"okstream/learner/rng"
)

// TestAutoMultiProbabilitiesInUnitInterval streams random events of 1 to 5
// classes through multi-class auto and checks that every probability it
// returns, from LearnClass and from PredictProba, lies in [0, 1]: with one
// class seen the mixture of the survivors' 1s came out 1 + 4·10⁻¹⁶, and
// okstream's own prediction-record decoder refused the record.
func TestAutoMultiProbabilitiesInUnitInterval(t *testing.T) {
	const d = 5
	m, err := NewMulti("auto", d)
	if err != nil {
		t.Fatal(err)
	}
	src := rng.New(3)
	x := make([]float64, d)
	p := make([]float64, 0, 8)
	check := func(i int, what string, q []float64) {
		for k, v := range q {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("event %d: %s: P(class %d) = %v, outside [0, 1]", i, what, k, v)
			}
		}
	}
	seen := 0 // classes seen
	for i := range 600 {
		for j := range x {
			x[j] = src.Normal()
		}
		c := 0
		if i >= 100 { // one class for the first 100 events, then up to 5
			c = min(src.IntN(5), seen) // a new class gets the next index
		}
		if c == seen {
			seen++
		}
		check(i, "PredictProba", m.PredictProba(x, p[:0]))
		check(i, "LearnClass", m.LearnClass(x, c, p[:0]))
	}
}
