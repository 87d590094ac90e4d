package learner

import "testing"

// BenchmarkFOGDShareBoundary is the learner's part of one sync point of
// 16 partitions (FOGD, budget 100: 800 weights): every copy's ShareDelta,
// one ShareMix (an instance computes it once per epoch), and every copy's
// ShareApply. Each copy's weights move between sync points (as its events
// would move them), so that every delta is quantised afresh. Per op: one
// sync point of all 16 copies.
func BenchmarkFOGDShareBoundary(b *testing.B) {
	benchShareBoundary(b, "fogd:budget=100,eta=0.002,sigma=8", func(l Learner) ([]float64, *base) { f := l.(*FOGD); return f.w, &f.base })
}

// BenchmarkLinearShareBoundary is BenchmarkFOGDShareBoundary for ridge
// (linear:loss=square) at d = 8, cod-rna's dimension: the deltas are the
// exact changes of G's lower triangle and b (45 + 9 float64s), the merge
// a sum and a refit.
func BenchmarkLinearShareBoundary(b *testing.B) {
	benchShareBoundary(b, "linear:loss=square", func(l Learner) ([]float64, *base) { m := l.(*Linear); return m.st, &m.base })
}

// benchShareBoundary runs sync points of 16 copies of spec (dimension 8),
// moving each copy's shared vector (vec) between them.
func benchShareBoundary(b *testing.B, spec string, vec func(Learner) ([]float64, *base)) {
	const P = 16
	copies := make([]Learner, P)
	for p := range copies {
		l, err := New(spec, 8)
		if err != nil {
			b.Fatal(err)
		}
		copies[p] = l
	}
	in := make([]SharedDelta, P)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for p, l := range copies {
			v, lb := vec(l)
			for j := range v {
				v[j] += 1e-3 * float64((i+p+j)%7+1)
			}
			lb.updates++
			d, err := l.(Sharer).ShareDelta()
			if err != nil {
				b.Fatal(err)
			}
			in[p] = SharedDelta{Partition: p, Epoch: int64(i), Data: d}
		}
		mix, err := copies[0].(Mixer).ShareMix(in)
		if err != nil {
			b.Fatal(err)
		}
		for p, l := range copies {
			in[p].Own = true
			if err := l.(Mixer).ShareApply(in, mix); err != nil {
				b.Fatal(err)
			}
			in[p].Own = false
		}
	}
}
