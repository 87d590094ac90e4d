package linalg

import (
	"fmt"
	"math"
	"testing"

	"okstream/learner/rng"
)

// Run with: go test -run '^$' -bench . -benchmem ./learner/linalg/

// sketchDeltaPool returns pool FORKS-style (Δ₁, Δ₂) pairs (s_p×2):
// s a CountSketch row, a = S_pᵀψ dense.
func sketchDeltaPool(src *rng.Source, sp, pool int) [][2][]float64 {
	out := make([][2][]float64, pool)
	for i := range out {
		s := make([]float64, sp)
		s[src.IntN(sp)] = src.Sign()
		a := randn(src, sp)
		d1, d2 := sketchDeltas(s, a, 1)
		out[i] = [2][]float64{d1, d2}
	}
	return out
}

// BenchmarkTISVDUpdate: one TISVD.Update with the FORKS c = 2 sketch form,
// s_p ∈ {50, 100, 150, 400}, k = 0.1·s_p (the paper's defaults), and the
// Fig. 4 setting (100×100 Gaussian, rank-3 Gaussian updates, k = 30). The
// default re-orthonormalization (every 100 updates) is included, amortized.
func BenchmarkTISVDUpdate(b *testing.B) {
	type tc struct {
		name    string
		sp, k   int
		c       int
		sketchy bool
	}
	cases := []tc{
		{"sp=50,k=5,c=2", 50, 5, 2, true},
		{"sp=100,k=10,c=2", 100, 10, 2, true},
		{"sp=150,k=15,c=2", 150, 15, 2, true},
		{"sp=400,k=40,c=2", 400, 40, 2, true},
		{"fig4:n=100,k=30,c=3", 100, 30, 3, false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			src := rng.New(1)
			ts := NewTISVD(c.sp, c.sp, c.k, TISVDOptions{})
			a := randn(src, c.sp*c.sp)
			if c.sketchy {
				Symmetrize(a, c.sp)
			}
			if err := ts.Init(a); err != nil {
				b.Fatal(err)
			}
			var pool [][2][]float64
			if c.sketchy {
				pool = sketchDeltaPool(src, c.sp, 64)
			} else {
				for range 64 {
					d1, d2 := randDelta(src, c.sp, c.sp, c.c, 1)
					pool = append(pool, [2][]float64{d1, d2})
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				d := pool[i%len(pool)]
				if err := ts.Update(d[0], d[1], c.c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFig4 compares, per rank-3 update of the 100×100 Gaussian matrix
// with k = 30 (FORKS paper App. B.3, Fig. 4): TISVD.Update; the dense update plus a full
// SVD truncated to 30; the dense update plus a randomized SVD (oversample
// 10, q = 1 and q = 2 power iterations).
func BenchmarkFig4(b *testing.B) {
	const n, m, k = 100, 3, 30
	setup := func() (*rng.Source, []float64, [][2][]float64) {
		src := rng.New(2)
		A := randn(src, n*n)
		var pool [][2][]float64
		for range 64 {
			d1, d2 := randDelta(src, n, n, m, 1)
			pool = append(pool, [2][]float64{d1, d2})
		}
		return src, A, pool
	}
	b.Run("TISVD", func(b *testing.B) {
		_, A, pool := setup()
		ts := NewTISVD(n, n, k, TISVDOptions{})
		if err := ts.Init(A); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			d := pool[i%len(pool)]
			if err := ts.Update(d[0], d[1], m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("FullSVD", func(b *testing.B) {
		_, A, pool := setup()
		var f TruncSVD
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			d := pool[i%len(pool)]
			addOuter(A, d[0], d[1], n, n, m)
			if err := TruncatedSVD(&f, A, n, n, k); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, q := range []int{1, 2} {
		b.Run(fmt.Sprintf("RSVD,p=10,q=%d", q), func(b *testing.B) {
			src, A, pool := setup()
			var f TruncSVD
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				d := pool[i%len(pool)]
				addOuter(A, d[0], d[1], n, n, m)
				if err := RandomizedSVD(&f, A, n, n, k, 10, q, src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkShermanMorrison(b *testing.B) {
	for _, k := range []int{5, 10, 20, 50} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			src := rng.New(3)
			ainv := identity(k, 100)
			g := randn(src, k)
			for i := range g {
				g[i] *= 1e-3 // keep A⁻¹ well scaled over b.N updates
			}
			u := make([]float64, k)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := ShermanMorrison(ainv, k, 0.5, g, u); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSlabProject(b *testing.B) {
	for _, k := range []int{10, 50} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			src := rng.New(4)
			ainv := identity(k, 1)
			v := randn(src, k)
			phi := randn(src, k)
			w := make([]float64, k)
			u := make([]float64, k)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				SlabProject(w, v, ainv, k, phi, 0, u) // always projects
			}
		})
	}
}

// BenchmarkCholeskyAppend: the ALD/PKAWV per-point cost at dictionary size
// n: l = L⁻¹k, α = κ − ‖l‖², append [lᵀ, √α] (then Truncate back to n).
func BenchmarkCholeskyAppend(b *testing.B) {
	for _, n := range []int{50, 100, 200, 500} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			src := rng.New(5)
			A := gaussGram(src, n+1, 3, 1, 1e-3)
			sub := make([]float64, n*n)
			for i := range n {
				copy(sub[i*n:i*n+n], A[i*(n+1):i*(n+1)+n])
			}
			c := NewCholesky(n + 1)
			if err := c.Factorize(sub, n); err != nil {
				b.Fatal(err)
			}
			k := A[n*(n+1) : n*(n+1)+n]
			kxx := A[n*(n+1)+n]
			l := make([]float64, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				alpha := c.ProjectionResidual(l, k, kxx)
				if err := c.Append(l, math.Sqrt(alpha)); err != nil {
					b.Fatal(err)
				}
				c.Truncate(n)
			}
		})
	}
}

// BenchmarkCholeskyRankOne: an update LLᵀ + vvᵀ followed by the downdate
// LLᵀ − vvᵀ (so L stays bounded); per op = one update + one downdate.
func BenchmarkCholeskyRankOne(b *testing.B) {
	for _, n := range []int{50, 100, 200, 500} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			src := rng.New(6)
			var c Cholesky
			if err := c.Factorize(gaussGram(src, n, 3, 1, 1e-1), n); err != nil {
				b.Fatal(err)
			}
			v := randn(src, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := c.RankOneUpdate(v); err != nil {
					b.Fatal(err)
				}
				if err := c.RankOneDowndate(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSketchInsert: SJLT.Insert (a = S_pᵀψ, new row, Φ_pm update,
// Δ₁/Δ₂) with n stored examples, s_p = 100, s_m = 20, D = 1.
func BenchmarkSketchInsert(b *testing.B) {
	for _, n := range []int{100, 300, 1000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			src := rng.New(7)
			const sp, sm = 100, 20
			sk := NewSJLT(sp, 1, n+1)
			for range n {
				sk.AddRow(src)
			}
			L := SampleColumns(src, n, sm)
			psi := randn(src, n)
			phiPM := make([]float64, sp*sm)
			d1 := make([]float64, 2*sp)
			d2 := make([]float64, 2*sp)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sk.Insert(src, psi, 1, L, phiPM, d1, d2)
				sk.Truncate(n)
			}
		})
	}
}

// BenchmarkSketchedNystromMap: Z = pinv(Φ_pm) V Σ^{1/2} for the FORKS
// shapes (s_p, s_m, k) = (B, 0.2B, 0.1B).
func BenchmarkSketchedNystromMap(b *testing.B) {
	for _, B := range []int{50, 100, 200} {
		sp, sm, k := B, B/5, B/10
		b.Run(fmt.Sprintf("sp=%d,sm=%d,k=%d", sp, sm, k), func(b *testing.B) {
			src := rng.New(8)
			phiPM := randn(src, sp*sm)
			v := randOrth(src, sp, k)
			s := make([]float64, k)
			for i := range s {
				s[i] = 1 / float64(i+1)
			}
			z := make([]float64, sm*k)
			var work SVDWork
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := SketchedNystromMap(z, phiPM, sp, sm, v, s, k, -1, &work); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
