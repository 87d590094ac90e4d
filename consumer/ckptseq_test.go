package consumer

import (
	"testing"

	"okstream/checkpoint"
	"okstream/learner/rng"
)

// Checkpoint attempts under random failures: every attempt has an epoch
// no earlier attempt used (a failed Save's records may land later, so an
// epoch reused with another payload would look corrupt), and no attempt
// writes into the slot of the last durable checkpoint (the fallback if the
// attempt is torn).
func TestNextCheckpointSeq(t *testing.T) {
	for _, c := range []struct{ last, failed, want uint64 }{
		{0, 0, 1}, {1, 0, 2}, {0, 1, 3}, {0, 3, 5}, {3, 1, 4}, {4, 6, 8},
	} {
		if got := nextCheckpointSeq(c.last, c.failed); got != c.want {
			t.Errorf("nextCheckpointSeq(%d, %d) = %d, want %d", c.last, c.failed, got, c.want)
		}
	}
	src := rng.New(3)
	for run := 0; run < 200; run++ {
		last, failed := uint64(src.Uint64()%5), uint64(0)
		used := map[uint64]bool{}
		for i := 0; i < 40; i++ {
			seq := nextCheckpointSeq(last, failed)
			if used[seq] || seq <= last {
				t.Fatalf("run %d: attempt %d reuses or precedes Seq %d (durable %d)", run, i, seq, last)
			}
			used[seq] = true
			if last > 0 && (checkpoint.Epoch{Seq: seq}).Slot() == (checkpoint.Epoch{Seq: last}).Slot() {
				t.Fatalf("run %d: attempt Seq %d writes over the durable checkpoint's slot (Seq %d)", run, seq, last)
			}
			if src.Uint64()%3 == 0 {
				failed = seq
			} else {
				last = seq
			}
		}
	}
}
