package label

import (
	"testing"

	"okstream/learner/state"
)

// EncodedSize is what Encode writes (the checkpoint is written into one
// buffer of its computed size).
func TestEncodedSize(t *testing.T) {
	for _, m := range []*Map{{}, {Task: Binary, Classes: []string{"no", "yes"}}, {Task: Regression}} {
		e := state.NewEncoder(0)
		m.Encode(e)
		if got := len(e.Bytes()); got != m.EncodedSize() {
			t.Fatalf("%+v: Encode wrote %d bytes, EncodedSize says %d", m, got, m.EncodedSize())
		}
	}
}
