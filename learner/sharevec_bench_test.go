package learner

import "testing"

// BenchmarkFOGDShareBoundary is the learner's part of one sync point of
// 16 partitions (FOGD, budget 100: 800 weights): every copy's ShareDelta,
// one ShareMix (an instance computes it once per epoch), and every copy's
// ShareApply. Each copy's weights move between sync points (as its events
// would move them), so that every delta is quantised afresh. Per op: one
// sync point of all 16 copies.
func BenchmarkFOGDShareBoundary(b *testing.B) {
	const P = 16
	copies := make([]*FOGD, P)
	for p := range copies {
		l, err := New("fogd:budget=100,eta=0.002,sigma=8", 8)
		if err != nil {
			b.Fatal(err)
		}
		copies[p] = l.(*FOGD)
	}
	in := make([]SharedDelta, P)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for p, l := range copies {
			for j := range l.w {
				l.w[j] += 1e-3 * float64((i+p+j)%7-3)
			}
			l.updates++
			d, err := l.ShareDelta()
			if err != nil {
				b.Fatal(err)
			}
			in[p] = SharedDelta{Partition: p, Epoch: int64(i), Data: d}
		}
		mix, err := copies[0].ShareMix(in)
		if err != nil {
			b.Fatal(err)
		}
		for p, l := range copies {
			in[p].Own = true
			if err := l.ShareApply(in, mix); err != nil {
				b.Fatal(err)
			}
			in[p].Own = false
		}
	}
}
