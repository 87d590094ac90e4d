package kernel

import (
	"math"
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
	if c.Cached() != 0 || c.Bytes() != 8*3 {
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

// BenchmarkSeededBlocksProject: a9a-like events (14 of 123 coordinates
// non-zero, indicators or reals) against 2^14 cached features, one event
// at a time (Project) and 64 at once (ProjectGroup); ns per feature
// projection.
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
			p := make([]float64, 512*len(xs))
			w := make([]float64, d)
			b.Run("event", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					x, nz := xs[i%len(xs)], nzs[i%len(xs)]
					for lo := 0; lo < K; lo += 512 {
						c.Project(p, w, x, nz, lo, lo+512, true)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/K, "ns/feature")
			})
			b.Run("group64", func(b *testing.B) { // ProjectGroup: one call per chunk for the 64 events
				var g SparseGroup
				g.Reset(512)
				for i, x := range xs {
					g.Add(x, nzs[i])
				}
				for i := 0; i < b.N; i += len(xs) {
					for lo := 0; lo < K; lo += 512 {
						c.ProjectGroup(p, 512, w, &g, lo, lo+512, true)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64((b.N+len(xs)-1)/len(xs)*len(xs))/K, "ns/feature")
			})
		})
	}
}

// TestSeededBlocksProjectGroup: ProjectGroup writes, for every input of a
// group, the bits of Project(Frequency(i), x, nz, b_i): whole strips of 32
// and their remainders, ranges across block boundaries and across the end
// of the cache (regenerated features), with and without the phase, inputs
// with no non-zero coordinate, a row stride ld above the range.
func TestSeededBlocksProjectGroup(t *testing.T) { checkProjectGroup(t) }

func checkProjectGroup(t *testing.T) {
	t.Helper()
	const d, size = 11, 64
	s, err := NewSeeded(FamilyGaussian, 1.3, 0, d, 17)
	if err != nil {
		t.Fatal(err)
	}
	c := NewSeededBlocks(s, size, 150) // blocks 0, 1 full, block 2 partial (22)
	c.Grow(200)
	src := rng.New(8)
	w := make([]float64, d)
	var g SparseGroup
	for trial := range 40 {
		ne := 1 + src.IntN(9)
		g.Reset(size)
		xs := make([][]float64, ne)
		for e := range xs {
			x := make([]float64, d)
			if e != 1 { // input 1 is all zeros
				for j := range x {
					switch u := src.Float64(); {
					case u < 0.3:
						x[j] = 1
					case u < 0.4:
						x[j] = -1
					case u < 0.6:
						x[j] = src.Normal()
					}
				}
			}
			xs[e] = x
			g.Add(x, NonZero(nil, x))
		}
		lo := src.IntN(180)
		hi := lo + src.IntN(200-lo)
		if trial < 4 { // whole blocks: only strips
			lo, hi = size*(trial%2), size*(trial%2+1+trial/2)
		}
		ld := hi - lo + src.IntN(5)
		withPhase := trial%2 == 0
		p := make([]float64, ne*ld)
		for i := range p {
			p[i] = math.NaN() // every entry in range must be written
		}
		c.ProjectGroup(p, ld, w, &g, lo, hi, withPhase)
		for e, x := range xs {
			nz := NonZero(nil, x)
			for i := lo; i < hi; i++ {
				b := s.Frequency(w, uint64(i))
				if !withPhase {
					b = 0
				}
				want := Project(w, x, nz, b)
				if got := p[e*ld+i-lo]; math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("trial %d input %d feature %d [%d, %d): %v, Project %v", trial, e, i, lo, hi, got, want)
				}
			}
		}
	}
}

// TestSeededBlocksProjectGroupRefuses: a group built for another block
// size, a coordinate beyond d, a row stride below the range or a short p
// panic before anything is read.
func TestSeededBlocksProjectGroupRefuses(t *testing.T) {
	const d = 5
	s, _ := NewSeeded(FamilyGaussian, 1, 0, d, 3)
	c := NewSeededBlocks(s, 32, 64)
	c.Grow(64)
	w := make([]float64, d)
	good := func() *SparseGroup {
		var g SparseGroup
		g.Reset(32)
		g.Add([]float64{1, 0, 2, 0, 1}, []int{0, 2, 4})
		g.Add([]float64{0, 1, 0, 0, 0}, []int{1})
		return &g
	}
	wrongSize := good()
	wrongSize.size = 16
	wide := good()
	wide.Add(make([]float64, d+1), []int{d})
	for _, tc := range []struct {
		name string
		g    *SparseGroup
		p    []float64
		ld   int
	}{
		{"block size", wrongSize, make([]float64, 128), 64},
		{"coordinate ≥ d", wide, make([]float64, 192), 64},
		{"ld", good(), make([]float64, 128), 63},
		{"short p", good(), make([]float64, 127), 64},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			c.ProjectGroup(tc.p, tc.ld, w, tc.g, 0, 64, true)
		}()
	}
	c.ProjectGroup(make([]float64, 128), 64, w, good(), 0, 64, true) // and the good one runs
}
