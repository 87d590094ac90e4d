package learner_test

import (
	"testing"

	"okstream/learner"
)

// preset=wide only chooses defaults: its canonical spec (what a checkpoint
// records) is that of the same values written out, the paper preset's is
// unchanged (no "preset" key), and explicit values win over the preset.
func TestForksPresetWide(t *testing.T) {
	spec := func(s string) string {
		t.Helper()
		l, err := learner.New(s, 4)
		if err != nil {
			t.Fatal(err)
		}
		return l.Info().Spec
	}
	if a, b := spec("forks:budget=100,preset=wide"), spec("forks:budget=100,sm=50,k=50,c=0"); a != b {
		t.Fatalf("preset=wide %s\nwant       %s", a, b)
	}
	if a, b := spec("forks:budget=100,preset=paper"), spec("forks:budget=100,sm=20,k=10,c=1"); a != b {
		t.Fatalf("preset=paper %s\nwant        %s", a, b)
	}
	if a, b := spec("forks:budget=100"), spec("forks:budget=100,preset=paper"); a != b {
		t.Fatalf("default %s\nwant    %s", a, b)
	}
	if a, b := spec("forks:budget=100,preset=wide,k=20,c=2"), spec("forks:budget=100,sm=50,k=20,c=2"); a != b {
		t.Fatalf("explicit values lost: %s\nwant %s", a, b)
	}
	// The slab stays for the exp-concave losses.
	if a, b := spec("forks:budget=100,preset=wide,loss=squared_hinge"), spec("forks:budget=100,sm=50,k=50,c=1,loss=squared_hinge"); a != b {
		t.Fatalf("squared hinge %s\nwant          %s", a, b)
	}
	if _, err := learner.New("forks:preset=fast", 4); err == nil {
		t.Fatal("accepted preset=fast")
	}
}
