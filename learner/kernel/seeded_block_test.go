package kernel

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"okstream/learner/rng"
)

// TestSeededBlocksProject: the block projections have the bits of
// Project(Frequency(i), x, nz, b_i) for cached and regenerated features,
// ranges across block boundaries and across the end of the cache, with
// and without the phase, for dense, sparse, indicator and signed-indicator
// inputs (the ±1 shortcut must not change a bit).
func TestSeededBlocksProject(t *testing.T) {
	const d = 13
	for _, fam := range []Family{FamilyGaussian, FamilyLaplacian, FamilyMatern} {
		s, err := NewSeeded(fam, 1.7, 1.5, d, 99)
		if err != nil {
			t.Fatal(err)
		}
		c := NewSeededBlocks(s, 8, 21) // 21 cached: blocks 0, 1 full, block 2 partial
		c.Grow(40)
		if c.Cached() != 21 {
			t.Fatalf("cached %d, want 21", c.Cached())
		}
		src := rng.New(5)
		w := make([]float64, d)
		p := make([]float64, 64)
		for trial := range 60 {
			x := make([]float64, d)
			for j := range x {
				switch trial % 4 {
				case 0:
					x[j] = src.Normal()
				case 1:
					if src.Float64() < 0.4 {
						x[j] = src.Normal()
					}
				case 2:
					if src.Float64() < 0.5 {
						x[j] = 1
					}
				case 3:
					if u := src.Float64(); u < 0.3 {
						x[j] = 1
					} else if u < 0.6 {
						x[j] = -1
					} else if u < 0.7 {
						x[j] = 0.5
					}
				}
			}
			nz := NonZero(nil, x)
			lo := src.IntN(30)
			hi := lo + src.IntN(40-lo)
			withPhase := trial%2 == 0
			got := c.Project(p, w, x, nz, lo, hi, withPhase)
			if len(got) != hi-lo {
				t.Fatalf("len %d, want %d", len(got), hi-lo)
			}
			for i := lo; i < hi; i++ {
				b := s.Frequency(w, uint64(i))
				if !withPhase {
					b = 0
				}
				want := Project(w, x, nz, b)
				if math.Float64bits(got[i-lo]) != math.Float64bits(want) {
					t.Fatalf("%v trial %d feature %d: block %v, Project %v", fam, trial, i, got[i-lo], want)
				}
			}
		}
	}
}

// TestSeededBlocksNoCache: a zero budget caches nothing and regenerates.
func TestSeededBlocksNoCache(t *testing.T) {
	s, _ := NewSeeded(FamilyGaussian, 1, 0, 3, 1)
	c := NewSeededBlocks(s, 4, 0)
	c.Grow(10)
	if c.Cached() != 0 || c.Bytes() != 8*(3+4) {
		t.Fatalf("cached %d bytes %d", c.Cached(), c.Bytes())
	}
	x := []float64{1, 0, 2}
	w := make([]float64, 3)
	got := c.Project(make([]float64, 2), w, x, NonZero(nil, x), 3, 5, true)
	for i := 3; i < 5; i++ {
		b := s.Frequency(w, uint64(i))
		if want := Project(w, x, []int{0, 2}, b); got[i-3] != want {
			t.Fatalf("feature %d: %v, want %v", i, got[i-3], want)
		}
	}
}

// TestSeededBlockNoFMA: the arm64 code of projectBlock has no fused
// multiply-add (TestFeatureCodeNoFMA's check, for this file's kernel).
func TestSeededBlockNoFMA(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the package for arm64")
	}
	out := objdumpArm64(t, "okstream/learner/kernel.projectBlock")
	if m := fusedInstr.FindAllString(out, -1); len(m) > 0 {
		t.Errorf("arm64 code of projectBlock has fused multiply-adds %v", m)
	}
	if !strings.Contains(out, "FADDD") {
		t.Errorf("arm64 code of projectBlock shows no FADDD: the check reads the wrong code")
	}
}

// BenchmarkSeededBlocksProject: one a9a-like event (14 of 123 coordinates
// non-zero, indicators or reals) against 2^14 cached features; ns per
// feature projection.
func BenchmarkSeededBlocksProject(b *testing.B) {
	const d, K = 123, 1 << 14
	s, _ := NewSeeded(FamilyGaussian, 4, 0, d, 1)
	c := NewSeededBlocks(s, 512, K)
	c.Grow(K)
	for _, kind := range []string{"indicator", "real"} {
		b.Run(kind, func(b *testing.B) {
			src := rng.New(3)
			xs := make([][]float64, 64)
			for i := range xs {
				x := make([]float64, d)
				for k := 0; k < 14; k++ {
					j := src.IntN(d)
					x[j] = 1
					if kind == "real" {
						x[j] = src.Normal()
					}
				}
				xs[i] = x
			}
			nzs := make([][]int, len(xs))
			for i, x := range xs {
				nzs[i] = NonZero(nil, x)
			}
			p := make([]float64, 512)
			w := make([]float64, d)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				x, nz := xs[i%len(xs)], nzs[i%len(xs)]
				for lo := 0; lo < K; lo += 512 {
					c.Project(p, w, x, nz, lo, lo+512, true)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/K, "ns/feature")
		})
	}
}

// objdumpArm64 cross-compiles the package's test binary for arm64 and
// returns the disassembly of sym (skips without a go command or a cross
// compiler).
func objdumpArm64(t *testing.T, sym string) string {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "kernel.arm64.test")
	build := exec.Command(goTool, "test", "-c", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Skipf("cannot cross-compile for arm64: %v\n%s", err, out)
	}
	out, err := exec.Command(goTool, "tool", "objdump", "-s", "^"+regexp.QuoteMeta(sym)+"$", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("objdump %s: %v\n%s", sym, err, out)
	}
	if !strings.Contains(string(out), "TEXT") {
		t.Fatalf("objdump found no code for %s", sym)
	}
	return string(out)
}

// TestSeededBlocksAVX2MatchesGo: the AVX2 kernel (amd64) gives the bits of
// the Go loops, on long blocks with every tail length and on values that
// make rounding matter (a wide spread of magnitudes, signs, indicators).
func TestSeededBlocksAVX2MatchesGo(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 kernel on this machine")
	}
	src := rng.New(11)
	for k, n := range []int{1, 3, 4, 5, 8, 31, 512} {
		d := 40 + k%4 // remainders of 0–3 coordinates after the groups of 4
		W := make([]float64, d*n)
		for i := range W {
			W[i] = src.Normal() * math.Exp(8*src.Normal())
		}
		x := make([]float64, d)
		for j := range x {
			switch (j + k) % 3 {
			case 0:
				x[j] = 1
			case 1:
				x[j] = src.Normal() * 1e3
			}
		}
		nz := NonZero(nil, x)
		if len(nz)%4 != k%4 { // every remainder 0–3 after the groups of 4
			for len(nz)%4 != k%4 {
				x[nz[len(nz)-1]] = 0
				nz = nz[:len(nz)-1]
			}
		}
		a, b := make([]float64, n), make([]float64, n)
		for i := range a {
			a[i] = src.Normal()
			if i%5 == 0 {
				a[i] = 0 // a phase of +0 (cos/sin features start at +0)
			}
			b[i] = a[i]
		}
		zero := make([]float64, n)
		projectBlock(a, W, zero, x, nz, n, 0)
		useAVX2 = false
		projectBlock(b, W, zero, x, nz, n, 0)
		useAVX2 = true
		for i := range a {
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
				t.Fatalf("n=%d element %d: AVX2 %v, Go %v", n, i, a[i], b[i])
			}
		}
	}
}
