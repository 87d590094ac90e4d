package learner

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkDSGStream1M runs one DSG learner with a feature cap over a
// stream of 1M events (d = 8, K_max = 256 features reached after 4
// iterations) and reports, per 100k-event window, the time per event and
// the heap in use after the window: both must be flat once the cap is
// reached (memory and per-event cost are bounded by K_max, not by the
// stream length). It also reports the allocations per event after the
// cap, which must be 0. Run it with -benchtime=1x:
//
//	go test ./learner -run '^$' -bench DSGStream1M -benchtime=1x
func BenchmarkDSGStream1M(b *testing.B) {
	const n, window = 1_000_000, 100_000
	spec := "dsg:sigma=2,batch=16,block=64,max_features=256,predict_with=average"
	xs, ys := benchStream(8)
	var ms runtime.MemStats
	heap := func() float64 {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapInuse) / (1 << 20)
	}
	b.ReportAllocs()
	for iter := 0; iter < b.N; iter++ {
		l, err := New(spec, 8)
		if err != nil {
			b.Fatal(err)
		}
		nsPerEvent := make([]float64, 0, n/window)
		heapMB := make([]float64, 0, n/window)
		var afterCap uint64 // allocations inside the Learn loops after window 0
		ev := 0
		for w := 0; w < n/window; w++ {
			runtime.ReadMemStats(&ms)
			m0 := ms.Mallocs
			start := time.Now()
			for i := 0; i < window; i++ {
				j := ev % len(xs)
				l.Learn(xs[j], ys[j])
				ev++
			}
			nsPerEvent = append(nsPerEvent, float64(time.Since(start).Nanoseconds())/window)
			runtime.ReadMemStats(&ms)
			if w > 0 {
				afterCap += ms.Mallocs - m0
			}
			heapMB = append(heapMB, heap())
		}
		b.ReportMetric(float64(afterCap)/float64(n-window), "allocs/event-after-cap")
		if info := l.Info(); info.Used != 256 {
			b.Fatalf("features in use %d, want the cap 256", info.Used)
		}
		b.ReportMetric(nsPerEvent[0], "ns/event-first100k")
		b.ReportMetric(nsPerEvent[len(nsPerEvent)-1], "ns/event-last100k")
		b.ReportMetric(heapMB[0], "heapMB-after100k")
		b.ReportMetric(heapMB[len(heapMB)-1], "heapMB-after1M")
		b.Logf("ns/event per 100k window: %.0f", nsPerEvent)
		b.Logf("heap in use (MB) after each window: %.3f", heapMB)
		b.Logf("model: %d features, %d bytes", l.Info().Used, l.Info().Bytes)
	}
}

// BenchmarkDSGLearn times steady-state (post-cap) Learn for the grid of
// BenchmarkLearn's dimensions and two caps.
func BenchmarkDSGLearn(b *testing.B) {
	for _, d := range []int{8, 123} {
		for _, K := range []int{256, 1024} {
			spec := fmt.Sprintf("dsg:sigma=2,batch=16,block=64,max_features=%d", K)
			b.Run(fmt.Sprintf("d=%d/K=%d", d, K), func(b *testing.B) { benchLearner(b, spec, d, false) })
		}
	}
}

func BenchmarkDSGPredict(b *testing.B) {
	for _, d := range []int{8, 123} {
		spec := "dsg:sigma=2,batch=16,block=64,max_features=1024"
		b.Run(fmt.Sprintf("d=%d/K=1024", d), func(b *testing.B) { benchLearner(b, spec, d, true) })
	}
}
