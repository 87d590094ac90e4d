package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"okstream/consumer"
	"okstream/eval/paper"
	"okstream/share"
)

// BenchmarkShareRatio runs the partitions experiment's cod-rna FOGD
// configuration (P = 16, S = 16, L = 1; the consumer on the embedded
// broker) with independent and with shared models back to back in each
// iteration, and reports both events/s and "shared/independent" (issue 17
// asks ≥ 0.80). On a shared machine compare the ratio, not events/s:
//
//	go test ./cmd/okstream -run xxx -bench ShareRatio -benchtime 2x
//
// Knobs (environment): SHARE_DATA=kuairec the experiment's keyed KuaiRec
// stream (FOGD σ = 2, the 100 ms bounded wait; partitions end at different
// times, so decision records are written); PRODUCE_DELAY=d (a Go
// duration) answers every produce request d late, as a real broker's
// acks=all round trip would; SHARE_EVERY=S and SHARE_LAG=L another schedule;
// SHARE_P=P another partition count; SHARE_SPEC another learner
// (INDEP_SPEC another one for the independent
// runs, e.g. FORKS without shared=true, as the experiment compares them);
// REPEAT=k the stream k times over (a longer run, less start-up in the
// window); SHARE_ONLY / INDEP_ONLY one side only (for a CPU profile).
// WINDOW_PROFILE=prefix writes a CPU profile of each run's timed window
// alone to prefix-shared-N.prof / prefix-indep-N.prof (run without
// -test.cpuprofile; read them together: go tool pprof x.test prefix-shared-*).
//
// Besides events/s it reports the process's CPU time over each run's timed
// window (shared-/indep-window-cpu-ms): what sharing costs in CPU, less
// sensitive than wall-clock rates to other processes on the machine.
func BenchmarkShareRatio(b *testing.B) {
	data := os.Getenv("SHARE_DATA")
	if data == "" {
		data = "cod-rna"
	}
	stream, keys, dim, err := paper.PartitionsStream(data, 1)
	if err != nil {
		b.Skip(err)
	}
	P := 16
	if v, err := strconv.Atoi(os.Getenv("SHARE_P")); err == nil && v > 0 {
		P = v
	}
	rep := 1
	if v, err := strconv.Atoi(os.Getenv("REPEAT")); err == nil {
		rep = v
	}
	events := make([]share.Event, len(stream)*rep)
	assign := make([]int, len(events))
	for i := range events {
		events[i], assign[i] = stream[i%len(stream)], i%P
		if keys != nil {
			assign[i] = int(keys[i%len(stream)] % uint64(P))
		}
	}
	run := paper.PartitionsRun{Spec: "fogd:budget=100,eta=0.002,sigma=8", Dim: dim, Partitions: P,
		Every: 16, Lag: 1, MaxWait: time.Second, Events: events, Assign: assign}
	if keys != nil { // as the experiment runs its keyed stream
		run.Spec, run.MaxWait = "fogd:budget=100,sigma=2", 100*time.Millisecond
	}
	if d, err := time.ParseDuration(os.Getenv("PRODUCE_DELAY")); err == nil && d > 0 {
		// Every produce request is answered d late, as by a broker that
		// replicates before it acknowledges (acks=all) across a network.
		partitionsCluster = func(c *kfake.Cluster) {
			c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				c.SleepControl(func() { time.Sleep(d) })
				return nil, nil, false
			})
		}
		defer func() { partitionsCluster = nil }()
	}
	if v, err := strconv.Atoi(os.Getenv("SHARE_EVERY")); err == nil {
		run.Every = int64(v)
	}
	if v := os.Getenv("SHARE_SPEC"); v != "" {
		run.Spec = v
	}
	if v, err := strconv.Atoi(os.Getenv("SHARE_LAG")); err == nil {
		run.Lag = int64(v)
	}
	var indep, shared, wait float64
	var indepWin, sharedWin, winStart float64
	var sharing bool
	winProf, nProf := os.Getenv("WINDOW_PROFILE"), 0
	var profFile *os.File
	partitionsWindow = func(start bool) {
		if profFile != nil && !start {
			pprof.StopCPUProfile()
			profFile.Close()
			profFile = nil
		}
		c := cpuSeconds()
		if winProf != "" && start {
			side := map[bool]string{false: "indep", true: "shared"}[sharing]
			f, err := os.Create(fmt.Sprintf("%s-%s-%d.prof", winProf, side, nProf))
			if err != nil {
				b.Fatal(err)
			}
			profFile = f
			nProf++
			if err := pprof.StartCPUProfile(f); err != nil {
				b.Fatal(err)
			}
		}
		switch {
		case start:
			winStart = c
		case sharing:
			sharedWin += c - winStart
		default:
			indepWin += c - winStart
		}
	}
	defer func() { partitionsWindow = nil }()
	var indepCPU, indepWall, sharedCPU, sharedWall float64
	var waits uint64
	var decisions, skips float64
	partitionsDebug = func(pl *consumer.Pipeline) {
		mfs, _ := pl.Registry().Gather()
		for _, mf := range mfs {
			if mf.GetName() == "okstream_share_wait_seconds" {
				h := mf.GetMetric()[0].GetHistogram()
				wait += h.GetSampleSum()
				waits += h.GetSampleCount()
			}
			switch mf.GetName() {
			case "okstream_share_decisions_total":
				decisions += mf.GetMetric()[0].GetCounter().GetValue()
			case "okstream_share_skips_total":
				skips += mf.GetMetric()[0].GetCounter().GetValue()
			}
		}
	}
	defer func() { partitionsDebug = nil }()
	only := os.Getenv("SHARE_ONLY") != ""
	for i := 0; i < b.N; i++ {
		for _, sh := range []bool{false, true} {
			if only && !sh || os.Getenv("INDEP_ONLY") != "" && sh {
				continue
			}
			run.Share, sharing = sh, sh
			if v := os.Getenv("INDEP_SPEC"); v != "" && !sh {
				run.Spec = v
			} else if v := os.Getenv("SHARE_SPEC"); v != "" {
				run.Spec = v
			}
			c0, t0 := cpuSeconds(), time.Now()
			out, err := partitionsPipeline(run)
			if err != nil {
				b.Fatal(err)
			}
			c1, t1 := cpuSeconds(), time.Since(t0).Seconds()
			if sh {
				shared += out.Seconds
				sharedCPU, sharedWall = sharedCPU+c1-c0, sharedWall+t1
			} else {
				indep += out.Seconds
				indepCPU, indepWall = indepCPU+c1-c0, indepWall+t1
			}
		}
	}
	n := float64(len(events) * b.N)
	b.ReportMetric(n/indep, "indep-events/s")
	b.ReportMetric(n/shared, "shared-events/s")
	b.ReportMetric(indep/shared, "shared/indep")
	// CPU-seconds per wall second of the whole call (setup included: the
	// same for both): below the core count, the runs leave cores idle.
	if indepWall > 0 {
		b.ReportMetric(indepCPU/indepWall, "indep-cores")
	}
	b.ReportMetric(sharedCPU/sharedWall, "shared-cores")
	// CPU per run (setup included: the same for both), less sensitive to
	// other processes on the machine than the wall-clock rates: their
	// difference is what sharing costs.
	if indepWall > 0 {
		b.ReportMetric(indepCPU/float64(b.N)*1e3, "indep-cpu-ms/run")
	}
	b.ReportMetric(sharedCPU/float64(b.N)*1e3, "shared-cpu-ms/run")
	if indepWall > 0 {
		b.ReportMetric(indepWin/float64(b.N)*1e3, "indep-window-cpu-ms")
	}
	b.ReportMetric(sharedWin/float64(b.N)*1e3, "shared-window-cpu-ms")
	if waits > 0 {
		b.ReportMetric(wait/float64(b.N), "wait-s/run")
		b.ReportMetric(float64(waits)/float64(b.N), "boundaries/run")
		b.ReportMetric(decisions/float64(b.N), "decisions/run")
		b.ReportMetric(skips/float64(b.N), "skips/run")
	}
	b.ReportMetric(0, "ns/op")
}

// cpuSeconds is the process's user and system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
