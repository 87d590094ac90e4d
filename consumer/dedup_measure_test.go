package consumer

import (
	"os"
	"testing"
	"time"

	"okstream/internal/kafkatest"
)

// The cost of effectively-once delivery, measured (OKSTREAM_MEASURE_DELIVERY=1;
// against $OKSTREAM_TEST_BROKERS when set): the steady-state throughput of
// each mode on the same input, and the recovery time after a kill 50,000
// events past the last checkpoint — at-least-once publishes them again,
// effectively-once reads its output's tail and recomputes them without
// publishing. Times run until the output is acknowledged up to the end.
// Rounds alternate the modes. Wall-clock numbers: logged, not
// asserted.
func TestMeasureDelivery(t *testing.T) {
	if os.Getenv("OKSTREAM_MEASURE_DELIVERY") == "" {
		t.Skip("set OKSTREAM_MEASURE_DELIVERY=1 to measure")
	}
	const n, every = 100000, 50000
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	e.Produce(t, input, genEvents(n, 11, "m")...)
	ends := endOffsets(t, e, input)
	rounds := 3
	total := map[string][2]time.Duration{}
	for round := 0; round < rounds; round++ {
		for _, mode := range []string{DeliveryAtLeastOnce, DeliveryEffectivelyOnce} {
			tag := mode + "-" + string(rune('a'+round))
			cfg := testConfig(e, input, e.Name("g-"+tag), e.Name("out-"+tag))
			cfg.Delivery = mode
			cfg.CheckpointEvery = every
			cfg.BatchSize = 1000
			// Steady state: the whole input from scratch (checkpoints at
			// 50,000 and 100,000 are part of both).
			start0 := time.Now()
			r := start(t, cfg)
			acked(t, r, ends[0])
			steady := time.Since(start0)
			r.kill(t) // the last checkpoint is at 100,000 … unless every divides n
			// Recovery: delete nothing; restart a group whose last checkpoint
			// is 50,000 behind: kill right after the first checkpoint.
			cfg2 := testConfig(e, input, e.Name("r-"+tag), e.Name("rout-"+tag))
			cfg2.Delivery, cfg2.CheckpointEvery, cfg2.BatchSize = mode, every, 1000
			cfg2.CheckpointInterval = time.Hour
			r = start(t, cfg2)
			waitFor(t, 5*time.Minute, "the crashing run", func() bool { return caughtUp(ends, r) })
			r.kill(t)
			_, next := checkpointStates(t, e, cfg2, 1)
			if next[0] >= n {
				t.Fatalf("checkpoint at %d: nothing to recover", next[0])
			}
			start1 := time.Now()
			r = start(t, cfg2)
			acked(t, r, ends[0])
			recovery := time.Since(start1)
			r.kill(t)
			t.Logf("%s round %d: steady %v (%.0f events/s), recovery of %d events %v (checkpoint at %d)",
				mode, round, steady.Round(time.Millisecond), n/steady.Seconds(), n-next[0], recovery.Round(time.Millisecond), next[0])
			tt := total[mode]
			total[mode] = [2]time.Duration{tt[0] + steady, tt[1] + recovery}
		}
	}
	a, b := total[DeliveryAtLeastOnce], total[DeliveryEffectivelyOnce]
	t.Logf("throughput effectively-once / at-least-once = %.3f; recovery time effectively-once / at-least-once = %.3f (sums over %d rounds)",
		float64(a[0])/float64(b[0]), float64(b[1])/float64(a[1]), rounds)
}

// acked waits (polling every millisecond) until the output of partition 0
// is acknowledged up to end.
func acked(t *testing.T, r *running, end int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		r.p.mu.Lock()
		w := r.p.live[0]
		r.p.mu.Unlock()
		if w != nil && w.acked.Load() >= end {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}
