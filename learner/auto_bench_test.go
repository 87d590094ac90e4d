package learner

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// BenchmarkAutoSteadyState times auto after pruning has reached its floor
// (halving=100: 22 → 2 members by event 800, 8 → 2 for bases without η;
// the counts include the linear member)
// and reports its cost per event divided by that of its most expensive
// survivor timed alone on the same (scaled) inputs, as "x-member" (the
// issue's bound is ≤ 3), and the marshalled state size. With track=true
// (the default) the bank is between restarts (the stream is stationary);
// track=false rows are the bank without tracking. The survivors are
// timed on restored copies, so the bank itself is not disturbed.
func BenchmarkAutoSteadyState(b *testing.B) {
	for _, c := range []struct {
		base string
		d    int
	}{{"fogd,budget=100", 8}, {"nogd,budget=100", 8}, {"forks,budget=100", 8}, {"fogd,budget=100", 300}, {"nogd,budget=100", 300},
		{"fogd,budget=100,loss=square", 8}, {"fogd,budget=100,loss=square", 40},
		{"fogd,budget=100,track=false", 8}, {"fogd,budget=100,track=false", 300}} {
		b.Run(fmt.Sprintf("%s/d=%d", c.base, c.d), func(b *testing.B) {
			xs, ys := benchStream(c.d)
			l, err := New("auto:halving=100,base="+c.base, c.d)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < 2000; i++ {
				l.Learn(xs[i%len(xs)], ys[i%len(xs)])
			}
			w := l.(*selfTuned)
			a := w.inner.(*Auto)
			zs := make([][]float64, len(xs))
			for i, x := range xs {
				zs[i] = append([]float64(nil), w.input(x)...)
			}
			cost := func(x Learner) float64 { // reported, never asserted; best of 5
				st, _ := x.MarshalBinary()
				best := math.Inf(1)
				for rep := 0; rep < 5; rep++ {
					t0 := time.Now()
					for i := 0; i < 4000; i++ {
						x.Learn(zs[i%len(zs)], ys[i%len(zs)])
					}
					best = min(best, float64(time.Since(t0)))
					if err := x.UnmarshalBinary(st); err != nil {
						b.Fatal(err)
					}
				}
				return best
			}
			var worst float64
			for _, i := range a.alive {
				worst = max(worst, cost(a.members[i]))
			}
			ratio := cost(a) / worst
			c0, _, _ := ChangeCount(l)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				l.Learn(xs[i%len(xs)], ys[i%len(xs)])
			}
			b.StopTimer()
			st, _ := l.MarshalBinary()
			b.ReportMetric(ratio, "x-member")
			b.ReportMetric(float64(len(st)), "state-bytes")
			b.ReportMetric(float64(len(a.alive)), "survivors")
			c1, _, _ := ChangeCount(l)
			b.ReportMetric(float64(c1-c0), "restarts")
		})
	}
}
