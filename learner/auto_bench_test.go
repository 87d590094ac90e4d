package learner

import (
	"fmt"
	"math"
	"testing"
	"time"

	"okstream/dataset"
	"okstream/learner/rng"
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

// BenchmarkAutoWarmup reports auto's (built by New with the self-tuning
// wrapper, as okstream run builds it) mean cost per event over the first
// 3,700 events of a stream, what one of 16 partitions sees of cod-rna, as
// warm-ns/event, and its steady-state cost per event (events 12,000 to
// 15,700, after pruning has reached its floor) as steady-ns/event, and
// their ratio as "x-steady" (issue 41's target: ≤ 3). Each iteration
// times both, one after the other (the steady bank restored from a state
// taken once), and the minimum of each over the iterations is reported,
// which damps the noise of a shared machine (run with -benchtime=5x or
// more). The stream is cod-rna (d = 8) from ../shared/datasets in a fixed
// random order (stationary: the file is sorted in label blocks, which
// would make the steady window one of restarts) when present, else the
// synthetic d = 8 stream of benchStream, cycled. Reported, never asserted
// (wall-clock).
func BenchmarkAutoWarmup(b *testing.B) {
	for _, spec := range benchWarmupSpecs {
		b.Run(spec, func(b *testing.B) {
			xs, ys := warmupStream(b)
			const warm, from = 3700, 12000
			steady, err := New(spec, len(xs[0]))
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < from; i++ {
				steady.Learn(xs[i%len(xs)], ys[i%len(xs)])
			}
			st, err := steady.MarshalBinary()
			if err != nil {
				b.Fatal(err)
			}
			c0, _, _ := ChangeCount(steady)
			wmin, smin := math.Inf(1), math.Inf(1)
			for it := 0; it < b.N; it++ {
				t0 := time.Now()
				l, err := New(spec, len(xs[0]))
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < warm; i++ {
					l.Learn(xs[i%len(xs)], ys[i%len(xs)])
				}
				wmin = min(wmin, float64(time.Since(t0))/warm)
				if err := steady.UnmarshalBinary(st); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				for i := from; i < from+warm; i++ {
					steady.Learn(xs[i%len(xs)], ys[i%len(xs)])
				}
				smin = min(smin, float64(time.Since(t1))/warm)
			}
			c1, _, _ := ChangeCount(steady)
			b.ReportMetric(wmin, "warm-ns/event")
			b.ReportMetric(smin, "steady-ns/event")
			b.ReportMetric(wmin/smin, "x-steady")
			b.ReportMetric(float64(c1-c0), "restarts")
		})
	}
}

// warmupStream is cod-rna (labels ±1) in a fixed random order when the
// shared datasets are present, else benchStream(8).
func warmupStream(b *testing.B) ([][]float64, []float64) {
	path, opts, err := dataset.Resolve("cod-rna")
	if err == nil {
		ds, err := dataset.Load(path, opts)
		if err == nil && ds.BinaryLabels(nil) == nil {
			src := rng.New(41)
			perm := make([]int, ds.Len())
			for i := range perm {
				j := int(src.Uint64() % uint64(i+1))
				perm[i], perm[j] = perm[j], i
			}
			ds = ds.Permuted(perm)
			return ds.X, ds.Y
		}
	}
	b.Logf("cod-rna not available (%v): synthetic d = 8 stream", err)
	return benchStream(8)
}

var benchWarmupSpecs = []string{"auto", "auto:track=false", "auto:race=false"}
