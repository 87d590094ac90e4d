package checkpoint

import (
	"context"
	"testing"
	"time"

	"okstream/internal/kafkatest"
)

// A Save in flight when its context is cancelled gets Config.CancelGrace to
// finish, not SaveTimeout: a shutdown or a rebalance with the broker down
// does not wait a minute for a checkpoint that cannot land.
func TestSaveCancelledWithTheBrokerDownStopsAfterTheGrace(t *testing.T) {
	e := kafkatest.New(t)
	ctx0, cancel0 := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel0()
	s, err := Open(ctx0, Config{Brokers: e.Brokers, Topic: e.Name("ckpt"), Partitions: 1, SaveTimeout: time.Minute, CancelGrace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e.StopBroker(t)
	ctx, cancel := context.WithCancel(ctx0)
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err = s.Save(ctx, Checkpoint{ID: ID{"g", "t", 0}, Epoch: Epoch{1, 1}, Payload: payload(1000, 1)})
	took := time.Since(start)
	e.StartBroker(t) // Close then flushes the writer's retries at once
	if err == nil {
		t.Fatal("Save succeeded with the broker down")
	}
	t.Logf("Save returned after %s: %v", took.Round(time.Millisecond), err)
	// Not a speed assertion but the configuration's: cancelled at 0.3 s
	// with a 0.2 s grace, Save returns at about 0.5 s; without the grace
	// it returned when kafka-go's retries against the closed connections
	// ran out (7.4 s here; a broker that does not answer at all makes it
	// SaveTimeout).
	if took > 4*time.Second {
		t.Fatalf("Save took %s after its context was cancelled; CancelGrace is 200 ms", took)
	}
}
