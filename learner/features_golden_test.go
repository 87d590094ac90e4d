package learner

import (
	"math"
	"testing"

	"okstream/learner/rng"
)

// TestRandomFeatureLearnersGolden pins the bits of FOGD's and DSG's scores
// and final states on a fixed stream: an FNV-1a hash of every pre-update
// score and of the marshalled state. The random-feature code is written to
// give the same bits on every platform (rng.FastSincos, explicitly rounded
// products; kernel.TestFeatureCodeNoFMA checks the arm64 code), and CI runs
// this test on arm64 under qemu-user too, so a hash that differs there is a
// portability bug, not a golden to regenerate. (Changed in issue 17, when
// the features moved to rng.FastSincos; DSG's hashes in issue 42, when its
// score became a sum of per-chunk partial sums with four accumulators, so
// that any thread count gives the same bits: the features themselves kept
// their bits, checked with the old sequential sum; the first DSG case also
// when the hinge loss's defaults became features=cossin and the step
// θ/(t+t0−1) with θν = 1.5, γ0 = B/32; that case now names update=new,
// which keeps its canonical spec and bits, and the hinge defaults of
// update=all, γ0 = B/4 and the polynomial-decay average have a case of
// their own.)
func TestRandomFeatureLearnersGolden(t *testing.T) {
	cases := []struct {
		spec string
		want uint64
	}{
		{"fogd:sigma=2,budget=100", 0x8f84d34105370df0},
		{"fogd:kernel=laplacian,sigma=2,features=64,eta=0.002", 0x2d204fbf1aa218a0},
		{"fogd:sigma=1.5,features=50,loss=square", 0x61e87b38faba0d6b},
		{"dsg:sigma=2,batch=8,block=16,max_features=256,update=new", 0x7117233f5c7eaa0a},
		{"dsg:sigma=2,batch=8,block=16,max_features=256", 0xae4be88e16bf9f59},
		{"dsg:sigma=2,batch=8,block=16,max_features=256,features=cossin,loss=square", 0x1e41fdac46c896cd},
	}
	const d, n = 8, 600
	src := rng.New(123)
	xs := make([][]float64, n)
	ys := make([]float64, n)
	for i := range xs {
		x := make([]float64, d)
		var s float64
		for j := range x {
			if i%3 != 0 || j%2 == 0 { // every third event sparse
				x[j] = src.Normal()
			}
			s += x[j]
		}
		xs[i] = x
		ys[i] = math.Copysign(1, s+0.3*src.Normal())
	}
	for _, c := range cases {
		l, err := New(c.spec, d)
		if err != nil {
			t.Fatal(err)
		}
		h := uint64(14695981039346656037)
		mix := func(b uint64) {
			for k := 0; k < 8; k++ {
				h ^= b >> (8 * k) & 0xff
				h *= 1099511628211
			}
		}
		for i, x := range xs {
			mix(math.Float64bits(l.Learn(x, ys[i])))
		}
		state, err := l.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range state {
			mix(uint64(b))
		}
		if h != c.want {
			t.Errorf("%s: hash %#x, golden %#x", c.spec, h, c.want)
		}
	}
}
