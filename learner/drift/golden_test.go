package drift

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
)

// Golden values pin the detections and state bytes on a fixed stream, so
// that a change of arithmetic (an operation reordered, a fused
// multiply-add, another logarithm) shows up on every platform.
func TestGolden(t *testing.T) {
	xs := driftStream(21, 12_000)
	want := map[string]string{
		"adwin":       "[2559 2591 2623 5055 5087 5119 5151 7551 7583 7615 10047 10079] a337f05fcf7210b7",
		"adwin-small": "[2535 2547 2549 5041 7519 7544 10016 10024] 6bad75979491ada3",
		"pagehinkley": "[2515 3176 4830 5041 7381 7547 9723 10024 10845] 5edd07943486d799",
	}
	for _, mk := range stateMakers {
		d := mk.mk(t)
		at := alarms(d, xs)
		h := sha256.Sum256(mustMarshal(t, d))
		got := fmt.Sprintf("%v %s", at, hex.EncodeToString(h[:8]))
		if got != want[mk.name] {
			t.Errorf("%s: got %q, want %q", mk.name, got, want[mk.name])
		}
	}
}
