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
	if a, b := spec("forks:budget=100,preset=wide"), spec("forks:budget=100,sm=50,k=50,c=0,preset=paper"); a != b {
		t.Fatalf("preset=wide %s\nwant       %s", a, b)
	}
	if a, b := spec("forks:budget=100,preset=paper"), spec("forks:budget=100,sm=20,k=10,c=1,preset=paper"); a != b {
		t.Fatalf("preset=paper %s\nwant        %s", a, b)
	}
	// The default: with σ given, the paper's settings; without (σ from the
	// stream, selftune.go "Bare specs"), preset=wide, for FORKS, NOGD and
	// SkeGD alike, and preset=paper restores the paper's defaults.
	for _, c := range [][2]string{
		{"forks:budget=100,sigma=2", "forks:budget=100,sigma=2,preset=paper"},
		{"nogd:budget=100,sigma=2", "nogd:budget=100,sigma=2,k=10,eta=0.2"},
		{"skegd:budget=100,sigma=2", "skegd:budget=100,sigma=2,sm=20,k=10,eta=0.2,lambda=0.01,carry=keep,warm=none"},
		// FORKS' bare spec also carries the ONS over update rounds and takes
		// Stage-1 steps of 1 (hinge only): bareExtras.
		{"forks:budget=100", "forks:budget=100,preset=wide,carry=true,eta=1"},
		{"forks:budget=100", "forks:budget=100,sigma=auto,scale=standard,sm=50,k=50,c=0,carry=true,eta=1,preset=paper"},
		{"forks:budget=100,loss=logistic", "forks:budget=100,loss=logistic,preset=wide,carry=true"},
		{"forks:budget=100,eta=0.5,carry=false", "forks:budget=100,preset=wide,eta=0.5,carry=false"},
		{"nogd:budget=100", "nogd:budget=100,preset=wide"},
		{"nogd:budget=100", "nogd:budget=100,sigma=auto,k=100,eta=1,preset=paper"},
		{"nogd:budget=100,loss=logistic", "nogd:budget=100,sigma=auto,k=100,eta=0.2,loss=logistic,preset=paper"},
		{"skegd:budget=100", "skegd:budget=100,preset=wide"},
		{"skegd:budget=100", "skegd:budget=100,sigma=auto,sm=50,k=50,eta=1,lambda=0,carry=transfer,warm=lsq,preset=paper"},
		{"skegd:budget=100,carry=keep", "skegd:budget=100,sigma=auto,sm=50,k=50,eta=1,lambda=0,carry=keep,warm=lsq,preset=paper"},
	} {
		if a, b := spec(c[0]), spec(c[1]); a != b {
			t.Fatalf("%s: %s\nwant %s", c[0], a, b)
		}
	}
	if a, b := spec("forks:budget=100,preset=wide,k=20,c=2"), spec("forks:budget=100,sm=50,k=20,c=2,preset=paper"); a != b {
		t.Fatalf("explicit values lost: %s\nwant %s", a, b)
	}
	// The slab stays for the exp-concave losses.
	if a, b := spec("forks:budget=100,preset=wide,loss=squared_hinge"), spec("forks:budget=100,sm=50,k=50,c=1,loss=squared_hinge,preset=paper"); a != b {
		t.Fatalf("squared hinge %s\nwant          %s", a, b)
	}
	if _, err := learner.New("forks:preset=fast", 4); err == nil {
		t.Fatal("accepted preset=fast")
	}
}
