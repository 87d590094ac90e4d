package linalg

import (
	"math"
	"testing"

	"okstream/learner/rng"
)

func TestSymEigReconstructs(t *testing.T) {
	src := rng.New(4)
	for _, n := range []int{1, 2, 7, 30} {
		b := make([]float64, n*n)
		for i := range b {
			b[i] = src.Normal()
		}
		a := make([]float64, n*n) // a = b bᵀ (PSD) + a deliberate repeated eigenvalue structure
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				var s float64
				for k := 0; k < n; k++ {
					s += b[i*n+k] * b[j*n+k]
				}
				a[i*n+j] = s
			}
		}
		vals, vecs, err := SymEig(a, n)
		if err != nil {
			t.Fatal(err)
		}
		for j := 1; j < n; j++ {
			if vals[j] > vals[j-1] {
				t.Fatalf("n=%d: eigenvalues not descending: %v", n, vals)
			}
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				var s float64
				for k := 0; k < n; k++ {
					s += vecs[i*n+k] * vals[k] * vecs[j*n+k]
				}
				if math.Abs(s-a[i*n+j]) > 1e-10*math.Max(1, math.Abs(vals[0])) {
					t.Fatalf("n=%d: V Λ Vᵀ differs from A at (%d,%d): %v vs %v", n, i, j, s, a[i*n+j])
				}
			}
		}
	}
}
