//go:build unix

package learner

import (
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"okstream/dataset"
	"okstream/learner/kernel"
)

// dsgA9a loads the shared a9a training file (±1 labels), or skips.
func dsgA9a(b testing.TB, file string) *dataset.Dataset {
	b.Helper()
	ds, err := dataset.Load(filepath.Join(dataset.DataRoot(), "a9a", file), dataset.Options{Dim: 123})
	if err != nil {
		b.Skipf("shared a9a not available (%v): this benchmark needs ../shared/datasets/a9a beside the repository", err)
	}
	if err := ds.BinaryLabels(nil); err != nil {
		b.Fatal(err)
	}
	return ds
}

// dsgPaperSpec is the paper's §7.3 setting on a9a (batch 2^6, block 2^5,
// ν = 1/(100 n), σ by the median trick) at 2^14 features.
func dsgPaperSpec(ds *dataset.Dataset, block int) string {
	return fmt.Sprintf("dsg:sigma=%.6g,nu=%.6g,batch=64,block=%d,max_features=16384", MedianTrickSigma(ds.X, 2000), 1/(100*float64(len(ds.X))), block)
}

// BenchmarkDSGA9a streams a9a once (32,561 events; the model grows to
// 16,256 features) at the paper's §7.3 settings with the defaults
// (update=all: every feature takes each batch's gradient; pass-new:
// update=new, Algorithm 1's new block only), event by event (Learn)
// and in runs of 64 events (LearnBatch) with threads=1 and threads=2, all
// in the same run, and then times the events after the cap (2^14
// features reached with block 64 after 16,384 events) with
// after_cap=refine (cap: every feature takes each batch's gradient) and
// after_cap=revisit (cap-revisit: prediction plus one block's gradient,
// i.e. about what predicting at 2^14 features costs).
// threads=2 splits each group's features over two goroutines (LearnBatch)
// and, event by event, each event's (Learn: what the pipeline calls).
// It reports µs per event (wall clock; also the process's CPU time, which
// a loaded machine inflates less: with two threads it shows what the split
// costs in total work, not the speed-up) and the 2-thread
// speed-ups (wall clock: meaningful only on an otherwise idle machine); the
// scores of every variant are checked bit for bit against one-thread
// Learn. Run with -benchtime=1x:
//
//	go test ./learner -run '^$' -bench DSGA9a -benchtime=1x
func BenchmarkDSGA9a(b *testing.B) {
	ds := dsgA9a(b, "a9a")
	const group = 64
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	var cpuUs float64 // CPU µs per event of the last run
	run := func(spec string, threads int, batched bool, from int, ref []float64) (float64, []float64) {
		l, err := New(fmt.Sprintf("%s,threads=%d", spec, threads), ds.Dim)
		if err != nil {
			b.Fatal(err)
		}
		d := l.(*DSG)
		scores := make([]float64, len(ds.X))
		d.LearnBatch(ds.X[:from], ds.Y[:from], scores[:from])
		start, c0 := time.Now(), cpu()
		for i := from; i < len(ds.X); i += group {
			j := min(i+group, len(ds.X))
			if batched {
				d.LearnBatch(ds.X[i:j], ds.Y[i:j], scores[i:j])
			} else {
				for k := i; k < j; k++ {
					scores[k] = d.Learn(ds.X[k], ds.Y[k])
				}
			}
		}
		us := float64(time.Since(start).Microseconds()) / float64(len(ds.X)-from)
		cpuUs = float64((cpu() - c0).Microseconds()) / float64(len(ds.X)-from)
		for i := range ref {
			if math.Float64bits(ref[i]) != math.Float64bits(scores[i]) {
				b.Fatalf("threads=%d batched=%v: event %d scores %v, want %v", threads, batched, i, scores[i], ref[i])
			}
		}
		return us, scores
	}
	for range b.N {
		for _, c := range []struct {
			name, spec string
			from       int
		}{{"pass", dsgPaperSpec(ds, 32), 0}, {"pass-new", dsgPaperSpec(ds, 32) + ",update=new", 0}, {"cap", dsgPaperSpec(ds, 64), 16384},
			{"cap-revisit", dsgPaperSpec(ds, 64) + ",after_cap=revisit", 16384}} {
			l1, ref := run(c.spec, 1, false, c.from, nil)
			b.ReportMetric(cpuUs, "cpu-µs/event-"+c.name+"-learn-1t")
			b1, _ := run(c.spec, 1, true, c.from, ref)
			b.ReportMetric(cpuUs, "cpu-µs/event-"+c.name+"-batch-1t")
			b2, _ := run(c.spec, 2, true, c.from, ref)
			b.ReportMetric(cpuUs, "cpu-µs/event-"+c.name+"-batch-2t")
			l2, _ := run(c.spec, 2, false, c.from, ref)
			b.ReportMetric(cpuUs, "cpu-µs/event-"+c.name+"-learn-2t")
			b.ReportMetric(l2, "µs/event-"+c.name+"-learn-2t")
			b.ReportMetric(l1/l2, "speedup-2t-"+c.name+"-learn")
			b.ReportMetric(l1, "µs/event-"+c.name+"-learn-1t")
			b.ReportMetric(b1, "µs/event-"+c.name+"-batch-1t")
			b.ReportMetric(b2, "µs/event-"+c.name+"-batch-2t")
			b.ReportMetric(l1/b1, "speedup-batch-vs-learn-"+c.name)
			b.ReportMetric(b1/b2, "speedup-2t-"+c.name+"-batch")
		}
	}
}

// BenchmarkDSGFeatureEvals compares DSG's feature evaluations per second
// at 2^14 features on a9a rows (a sparse projection ω_iᵀx, one sincos and
// the two multiply-adds of the score per feature: cossin features) — event
// by event (Predict) and for a group of 64 events of one mini-batch at once
// (LearnBatch's scoring, scoreGroup: the frequencies read once per group)
// — with GEMMs of the same shapes in
// the same run: C (64×K) = X (64×d) · Wᵀ (d×K) with the dense a9a rows
// (d = 123) and with the inner dimension cut to the rows' mean number of
// non-zeros (the multiply-adds the sparse projection does), both through
// gonum's blas64.Gemm. The metrics are outputs (feature values, C
// entries) per second and the ratios.
//
//	go test ./learner -run '^$' -bench DSGFeatureEvals -benchtime=1x
func BenchmarkDSGFeatureEvals(b *testing.B) {
	ds := dsgA9a(b, "a9a")
	const K, B = 16384, 64
	l, err := New(dsgPaperSpec(ds, 64), ds.Dim)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 16384 {
		l.Learn(ds.X[i], ds.Y[i])
	}
	var nnz int
	for _, x := range ds.X[:1000] {
		for _, v := range x {
			if v != 0 {
				nnz++
			}
		}
	}
	inner := (nnz + 500) / 1000
	gemm := func(k int) float64 {
		a := blas64.General{Rows: B, Cols: k, Stride: k, Data: make([]float64, B*k)}
		w := blas64.General{Rows: k, Cols: K, Stride: K, Data: make([]float64, k*K)}
		c := blas64.General{Rows: B, Cols: K, Stride: K, Data: make([]float64, B*K)}
		for i := range a.Data {
			a.Data[i] = float64(i%7) / 7
		}
		for i := range w.Data {
			w.Data[i] = float64(i%13) / 13
		}
		reps := 0
		start := time.Now()
		for time.Since(start) < 300*time.Millisecond {
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, a, w, 0, c)
			reps++
		}
		return float64(reps*B*K) / time.Since(start).Seconds()
	}
	d := l.(*DSG)
	group := ds.X[16384 : 16384+B]
	nc := K / dsgChunk
	partG, partGA := make([]float64, B*nc), make([]float64, B*nc)
	for range b.N {
		reps := 0
		start := time.Now()
		for time.Since(start) < 300*time.Millisecond {
			for _, x := range group {
				l.Predict(x)
			}
			reps++
		}
		dsg := float64(reps*B*K) / time.Since(start).Seconds()
		d.grp.Reset(d.cache.Block()) // as LearnBatch does (Predict left a group of one)
		for _, x := range group {
			d.grp.Add(x, kernel.NonZero(nil, x))
		}
		reps = 0
		start = time.Now()
		for time.Since(start) < 300*time.Millisecond {
			d.scoreGroup(&d.work[0], group, nc, 0, nc, nil, partG, partGA)
			reps++
		}
		grouped := float64(reps*B*K) / time.Since(start).Seconds()
		dense := gemm(ds.Dim)
		sparse := gemm(inner)
		b.ReportMetric(dsg/1e6, "M-feature-evals/s")
		b.ReportMetric(grouped/1e6, "M-feature-evals/s-group64")
		b.ReportMetric(grouped/dense, "ratio-group64-vs-gemm-d123")
		b.ReportMetric(grouped/sparse, fmt.Sprintf("ratio-group64-vs-gemm-d%d", inner))
		b.ReportMetric(dense/1e6, "M-gemm-d123-outputs/s")
		b.ReportMetric(sparse/1e6, fmt.Sprintf("M-gemm-d%d-outputs/s", inner))
		b.ReportMetric(dsg/dense, "ratio-vs-gemm-d123")
		b.ReportMetric(dsg/sparse, fmt.Sprintf("ratio-vs-gemm-d%d", inner))
	}
}

// BenchmarkDSGCapPhase times LearnBatch (threads=1, runs of 64 events) at
// the cap (2^14 features, the paper's §7.3 settings with block 64) on a9a,
// for after_cap=refine (every feature takes each batch's gradient: the
// feature values of all K features of the batch's events are kept) and
// after_cap=revisit (prediction plus one block's gradient: what predicting
// at 2^14 features costs). The setup streams the first 16,384 events; each
// iteration learns the next 64 (wrapping around the file). µs/event is
// wall clock, cpu-µs/event the CPU time of the benchmark's thread (the
// learner runs on it; a loaded machine inflates it less).
//
//	go test ./learner -run '^$' -bench DSGCapPhase
func BenchmarkDSGCapPhase(b *testing.B) {
	ds := dsgA9a(b, "a9a")
	const group, from = 64, 16384
	for _, policy := range []string{"refine", "revisit"} {
		b.Run(policy, func(b *testing.B) {
			l, err := New(dsgPaperSpec(ds, 64)+",after_cap="+policy, ds.Dim)
			if err != nil {
				b.Fatal(err)
			}
			d := l.(*DSG)
			scores := make([]float64, len(ds.X))
			d.LearnBatch(ds.X[:from], ds.Y[:from], scores[:from])
			if d.nf != 16384 {
				b.Fatalf("%d features after %d events, want 16384", d.nf, from)
			}
			runtime.LockOSThread() // threads=1: the learner runs on this thread
			defer runtime.UnlockOSThread()
			i := from
			b.ResetTimer()
			c0 := dsgThreadCPU(b)
			for range b.N {
				if i+group > len(ds.X) {
					i = from
				}
				d.LearnBatch(ds.X[i:i+group], ds.Y[i:i+group], scores[i:i+group])
				i += group
			}
			cpu := dsgThreadCPU(b) - c0
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*group), "µs/event")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*group), "cpu-µs/event")
		})
	}
}

// dsgThreadCPU returns the CPU time of the calling OS thread (Linux
// RUSAGE_THREAD; the process's elsewhere).
func dsgThreadCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(dsgRusageThread, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
