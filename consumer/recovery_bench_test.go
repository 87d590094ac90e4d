package consumer

import (
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// BenchmarkRecovery measures what an instance taking over partitions
// costs after the group has rebalanced (issue 17: restore + catch-up of a
// 10,000-event checkpoint interval in < 2 s): a first instance processes
// 40,000 events of a 4-partition topic (d = 20) and stops, checkpointing
// every partition; 40,000 more events arrive (about 10,000 per partition,
// what a crash just before the next checkpoint leaves to replay with
// --checkpoint-every 10000); a second instance joins the group, restores
// every partition's checkpoint and catches up. Reported, in seconds:
// "join-s" (start to the generation's assignment; the group is empty, so
// no session timeout is waited for), "restore-s" (assignment to every
// partition restored and ready), "catchup-s" (ready to the last event
// processed) and "recovery-s" = restore-s + catchup-s, the figure the
// issue bounds. Run it against a real broker with OKSTREAM_TEST_BROKERS.
func BenchmarkRecovery(b *testing.B) {
	const dim, half = 20, 40000
	msgs := benchEvents(2*half, dim)
	for _, c := range benchModels {
		b.Run(c.name, func(b *testing.B) {
			var join, restore, catchup time.Duration
			for i := 0; i < b.N; i++ {
				j, r, cu := recoveryRun(b, msgs[:half], msgs[half:], dim, c.models)
				join, restore, catchup = join+j, restore+r, catchup+cu
			}
			n := float64(b.N)
			b.ReportMetric(join.Seconds()/n, "join-s")
			b.ReportMetric(restore.Seconds()/n, "restore-s")
			b.ReportMetric(catchup.Seconds()/n, "catchup-s")
			b.ReportMetric((restore+catchup).Seconds()/n, "recovery-s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// recoveryRun is one BenchmarkRecovery measurement (see there).
func recoveryRun(b *testing.B, first, tail []kafka.Message, dim int, models []Model) (join, restore, catchup time.Duration) {
	b.Helper()
	e, cfg, ends := benchSetup(b, first, dim, models)
	a := startPipeline(b, mustNew(b, cfg))
	for !caughtUp(ends, a) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := a.shutdown(b); err != nil { // checkpoints every partition, leaves the group
		b.Fatal(err)
	}
	e.Produce(b, cfg.Input, tail...)
	ends = endOffsets(b, e, cfg.Input)

	p := mustNew(b, cfg)
	t0 := time.Now()
	r := startPipeline(b, p)
	for owned(r) != len(ends) {
		time.Sleep(time.Millisecond)
	}
	t1 := time.Now()
	for !allReady(p, len(ends)) {
		time.Sleep(time.Millisecond)
	}
	t2 := time.Now()
	for !caughtUp(ends, r) {
		time.Sleep(time.Millisecond)
	}
	t3 := time.Now()
	st, _ := p.Status()
	for _, s := range st {
		if !s.Restored {
			b.Fatalf("partition %d started without its checkpoint", s.Partition)
		}
	}
	if err := r.shutdown(b); err != nil {
		b.Fatal(err)
	}
	return t1.Sub(t0), t2.Sub(t1), t3.Sub(t2)
}

func mustNew(b testing.TB, cfg Config) *Pipeline {
	b.Helper()
	p, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return p
}
