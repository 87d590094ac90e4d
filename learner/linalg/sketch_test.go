package linalg

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"okstream/learner/rng"
)

// kernelStream is a Gaussian kernel over a fixed list of random points, so
// that K of the first n points is available in batch.
type kernelStream struct {
	X     []float64
	d     int
	sigma float64
}

func newKernelStream(src *rng.Source, n, d int, sigma float64) *kernelStream {
	return &kernelStream{X: randn(src, n*d), d: d, sigma: sigma}
}

func (ks *kernelStream) k(i, j int) float64 {
	d := ks.d
	return math.Exp(-sqDist(ks.X[i*d:i*d+d], ks.X[j*d:j*d+d]) / (2 * ks.sigma * ks.sigma))
}

func (ks *kernelStream) gram(n int) []float64 {
	K := make([]float64, n*n)
	for i := range n {
		for j := range n {
			K[i*n+j] = ks.k(i, j)
		}
	}
	return K
}

// App. B.1: inserting examples one by one keeps Φ_pm and Φ_pp
// (the latter through the Δ₁Δ₂ᵀ returned for TISVD) equal to the batch
// products S_pᵀ K S_m and S_pᵀ K S_p of the grown kernel matrix, to 1e-10,
// for D = 1 (CountSketch), 2 and 5 blocks. Also checks a = S_pᵀψ.
func TestSketch_IncrementalEqualsBatch(t *testing.T) {
	wpm := worst{name: "Φ_pm incremental vs batch (relative)"}
	wpp := worst{name: "Φ_pp incremental vs batch (relative)"}
	wa := worst{name: "a = S_pᵀψ (relative)"}
	for _, D := range []int{1, 2, 5} {
		src := rng.New(40 + uint64(D))
		const sp, sm, n0, inserts = 20, 6, 30, 120
		ks := newKernelStream(src, n0+inserts, 4, 1.5)
		sk := NewSJLT(sp, D, n0+inserts)
		for range n0 {
			sk.AddRow(src)
		}
		L := SampleColumns(src, n0, sm)
		K := ks.gram(n0)
		phiPM := make([]float64, sp*sm)
		phiPP := make([]float64, sp*sp)
		sk.SketchPM(phiPM, K, n0, L)
		sk.SketchPP(phiPP, K, n0)
		d1 := make([]float64, 2*sp)
		d2 := make([]float64, 2*sp)
		aRef := make([]float64, sp)
		for step := range inserts {
			n := n0 + step
			psi := make([]float64, n)
			for i := range psi {
				psi[i] = ks.k(n, i)
			}
			sk.MulTVec(aRef, psi)
			if row := sk.Insert(src, psi, ks.k(n, n), L, phiPM, d1, d2); row != n {
				t.Fatalf("Insert returned row %d, want %d", row, n)
			}
			a := make([]float64, sp)
			for i := range sp {
				a[i] = d1[2*i+1]
			}
			wa.see(relErr(a, aRef))
			addOuter(phiPP, d1, d2, sp, sp, 2)
			if (step+1)%20 == 0 {
				K := ks.gram(n + 1)
				bpm := make([]float64, sp*sm)
				bpp := make([]float64, sp*sp)
				sk.SketchPM(bpm, K, n+1, L)
				sk.SketchPP(bpp, K, n+1)
				wpm.see(relErr(phiPM, bpm))
				wpp.see(relErr(phiPP, bpp))
			}
		}
	}
	wpm.report(t, 1e-10)
	wpp.report(t, 1e-10)
	wa.report(t, 1e-12)
}

// The optional landmark-replacement variant (ours): after
// Insert, column 0 of Δ₂ (a + κs) is the new example's sketched kernel
// column, so copying it into Φ_pm[:, j] gives the batch product with
// landmark j replaced.
func TestSketch_LandmarkReplacement(t *testing.T) {
	src := rng.New(50)
	const sp, sm, n0, inserts = 16, 5, 25, 60
	ks := newKernelStream(src, n0+inserts, 3, 1)
	sk := NewSJLT(sp, 1, 0) // capacity 0: rows still append (with allocation)
	for range n0 {
		sk.AddRow(src)
	}
	L := SampleColumns(src, n0, sm)
	phiPM := make([]float64, sp*sm)
	sk.SketchPM(phiPM, ks.gram(n0), n0, L)
	d1 := make([]float64, 2*sp)
	d2 := make([]float64, 2*sp)
	w := worst{name: "Φ_pm with replaced landmarks vs batch"}
	for step := range inserts {
		n := n0 + step
		psi := make([]float64, n)
		for i := range psi {
			psi[i] = ks.k(n, i)
		}
		sk.Insert(src, psi, ks.k(n, n), L, phiPM, d1, d2)
		if src.Float64() < float64(sm)/float64(n+1) {
			j := src.IntN(sm)
			for r := range sp {
				phiPM[r*sm+j] = d2[2*r]
			}
			L[j] = n
		}
		b := make([]float64, sp*sm)
		sk.SketchPM(b, ks.gram(n+1), n+1, L)
		w.see(relErr(phiPM, b))
	}
	w.report(t, 1e-10)
}

// Row structure (exactly D non-zeros ±1/√D, one per block), determinism of
// the draws, RowTo, and the Hashes/Restore/Truncate round trip.
func TestSketch_RowStructureAndRestore(t *testing.T) {
	for _, D := range []int{1, 3} {
		const sp = 12
		a, b := NewSJLT(sp, D, 10), NewSJLT(sp, D, 10)
		sa, sb := rng.New(60), rng.New(60)
		for range 50 {
			a.AddRow(sa)
			b.AddRow(sb)
		}
		row := make([]float64, sp)
		for i := range a.Rows() {
			a.RowTo(row, i)
			nz := 0
			for c, v := range row {
				if v == 0 {
					continue
				}
				nz++
				if math.Abs(math.Abs(v)-1/math.Sqrt(float64(D))) > 1e-15 {
					t.Fatalf("D=%d row %d: value %v", D, i, v)
				}
				blk := c / (sp / D)
				if col, _ := a.Entry(i, blk); col != c {
					t.Fatalf("D=%d row %d: non-zero %d not the block-%d entry", D, i, c, blk)
				}
			}
			if nz != D {
				t.Fatalf("D=%d row %d: %d non-zeros", D, i, nz)
			}
		}
		ca, ga := a.Hashes()
		cb, gb := b.Hashes()
		for i := range ca {
			if ca[i] != cb[i] || ga[i] != gb[i] {
				t.Fatal("same seed, different sketch")
			}
		}
		c := NewSJLT(sp, D, 0)
		if err := c.Restore(ca, ga); err != nil || c.Rows() != 50 {
			t.Fatalf("Restore: %v, rows %d", err, c.Rows())
		}
		c.Truncate(20)
		c.AddRow(rng.New(1))
		if c.Rows() != 21 || a.Rows() != 50 {
			t.Fatal("Restore did not copy")
		}
		bad := append([]int32(nil), ca...)
		bad[0] = int32(sp) // outside block 0
		if err := c.Restore(bad, ga); !errors.Is(err, ErrBadSketch) || c.Rows() != 21 {
			t.Fatalf("bad column accepted: %v", err)
		}
		badSign := append([]int8(nil), ga...)
		badSign[1] = 0
		if err := c.Restore(ca, badSign); !errors.Is(err, ErrBadSketch) {
			t.Fatal("bad sign accepted")
		}
	}
}

func TestSketch_InsertDoesNotAllocate(t *testing.T) {
	src := rng.New(61)
	const sp, sm, n = 100, 20, 500
	sk := NewSJLT(sp, 1, n+1)
	for range n {
		sk.AddRow(src)
	}
	L := SampleColumns(src, n, sm)
	psi := randn(src, n)
	phiPM := make([]float64, sp*sm)
	d1 := make([]float64, 2*sp)
	d2 := make([]float64, 2*sp)
	allocs := testing.AllocsPerRun(50, func() {
		sk.Insert(src, psi, 1, L, phiPM, d1, d2)
		sk.Truncate(n)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per Insert", allocs)
	}
}

// refPinv is the pseudo-inverse through gonum's SVD with the MATLAB
// tolerance (independent of Pinv's code path).
func refPinv(t testing.TB, a []float64, m, n int) []float64 {
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(m, n, append([]float64(nil), a...)), mat.SVDThin) {
		t.Fatal("gonum SVD failed")
	}
	s := svd.Values(nil)
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	tol := float64(max(m, n)) * 0x1p-52 * s[0]
	out := make([]float64, n*m)
	for i := range n {
		for j := range m {
			var acc float64
			for l := range s {
				if s[l] > tol {
					acc += v.At(i, l) / s[l] * u.At(j, l)
				}
			}
			out[i*m+j] = acc
		}
	}
	return out
}

// Eq. 5: with Z = Φ_pm^† V Σ^{1/2}, the feature map
// reproduces the sketched Nyström kernel on the stored set:
// (C_m Z)(C_m Z)ᵀ = C_m Φ_pm^† (V Σ Vᵀ) Φ_pm^{†ᵀ} C_mᵀ.
func TestSketchedNystromMap_FeatureIdentity(t *testing.T) {
	src := rng.New(62)
	const sp, sm, n, k = 30, 6, 60, 4
	ks := newKernelStream(src, n, 3, 1)
	sk := NewSJLT(sp, 1, n)
	for range n {
		sk.AddRow(src)
	}
	L := SampleColumns(src, n, sm)
	K := ks.gram(n)
	phiPM := make([]float64, sp*sm)
	phiPP := make([]float64, sp*sp)
	sk.SketchPM(phiPM, K, n, L)
	sk.SketchPP(phiPP, K, n)
	var f TruncSVD
	if err := TruncatedSVD(&f, phiPP, sp, sp, k); err != nil {
		t.Fatal(err)
	}
	z := make([]float64, sm*k)
	var work SVDWork
	rank, err := SketchedNystromMap(z, phiPM, sp, sm, f.V, f.S, k, -1, &work)
	if err != nil || rank != sm {
		t.Fatalf("rank %d, err %v", rank, err)
	}
	// C_m = K[:, L] (n×s_m).
	cm := make([]float64, n*sm)
	for i := range n {
		for j, l := range L {
			cm[i*sm+j] = K[i*n+l]
		}
	}
	feat := make([]float64, n*k) // row i = φ(x_i)ᵀ = (C_m Z)[i, :]
	Mul(feat, cm, z, n, sm, k)
	// Each row equals MatTVec(Z, κ_L(x_i)), the per-example map.
	phi := make([]float64, k)
	MatTVec(phi, z, sm, k, cm[:sm])
	if e := relErr(phi, feat[:k]); e > 1e-14 {
		t.Fatalf("φ(x₀) differs from (C_m Z)[0,:] by %g", e)
	}
	lhs := make([]float64, n*n)
	for i := range n {
		for j := range n {
			lhs[i*n+j] = dot(feat[i*k:i*k+k], feat[j*k:j*k+k])
		}
	}
	// Right-hand side with gonum: P = pinv(Φ_pm) (s_m×s_p), W = V Σ Vᵀ.
	P := mat.NewDense(sm, sp, refPinv(t, phiPM, sp, sm))
	var W mat.Dense
	V := mat.NewDense(sp, k, f.V)
	S := mat.NewDiagDense(k, f.S)
	W.Product(V, S, V.T())
	C := mat.NewDense(n, sm, cm)
	var rhs mat.Dense
	rhs.Product(C, P, &W, P.T(), C.T())
	w := worst{name: "(C_m Z)(C_m Z)ᵀ vs C_m Φ_pm^† VΣVᵀ Φ_pm^†ᵀ C_mᵀ"}
	w.see(relErr(lhs, rhs.RawMatrix().Data))
	w.report(t, 1e-10)
	if a := testing.AllocsPerRun(10, func() {
		_, _ = SketchedNystromMap(z, phiPM, sp, sm, f.V, f.S, k, -1, &work)
	}); a != 0 {
		t.Errorf("SketchedNystromMap with a reused work: %v allocations", a)
	}
}
