package kernel

import (
	"math"
	"testing"

	"okstream/learner/rng"
)

// TestFourierBank: Score and Scores have the bits of MapDot's score;
// Scaled(2^-i) of the map at width 1 is the map drawn at 2^i (ScaledOf
// holds, MapProjected and Map agree), and ScaledOf fails on another map.
func TestFourierBank(t *testing.T) {
	src := rng.New(3)
	const d, D = 6, 37
	one, err := NewFourier(Gaussian, 1, d, D, 1/math.Sqrt(D), 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []float64{0.25, 1, 8} {
		drawn, err := NewFourier(Gaussian, sig, d, D, 1/math.Sqrt(D), 5)
		if err != nil {
			t.Fatal(err)
		}
		sc := one.Scaled(1 / sig)
		if !drawn.ScaledOf(one, 1/sig) || !sc.ScaledOf(one, 1/sig) || !drawn.ScaledOf(sc, 1) {
			t.Fatalf("σ=%v: the drawn map is not the width-1 map scaled", sig)
		}
		if sig != 1 && drawn.ScaledOf(one, 1) {
			t.Fatalf("σ=%v: ScaledOf accepts another map", sig)
		}
		ws := make([][]float64, 5)
		for k := range ws {
			ws[k] = make([]float64, 2*D)
			for j := range ws[k] {
				ws[k][j] = src.Normal()
			}
		}
		x := make([]float64, d)
		for rep := 0; rep < 20; rep++ {
			for j := range x {
				x[j] = src.Normal()
			}
			x[rep%d] = 0
			z := sc.Map(make([]float64, 2*D), x)
			p := one.Project(make([]float64, D), x)
			zp := one.MapProjected(make([]float64, 2*D), p, 1/sig)
			scores := make([]float64, len(ws))
			one.Scores(scores, ws, zp)
			for k, w := range ws {
				_, want := drawn.MapDot(make([]float64, 2*D), w, x)
				for _, got := range []float64{sc.Score(w, z), one.Score(w, zp), scores[k]} {
					if math.Float64bits(got) != math.Float64bits(want) {
						t.Fatalf("σ=%v: score %v, MapDot's %v", sig, got, want)
					}
				}
			}
		}
	}
}
