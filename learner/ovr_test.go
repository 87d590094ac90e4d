package learner_test

import (
	"strings"
	"testing"

	"okstream/learner"
)

// TestOvRContract: NewMulti falls back to one-vs-rest for a binary
// learner without a multi-class form, and the result keeps the Multi
// contract (checkMultiContract), across the selftune warm-up (bare spec,
// cut at 150 < 300) and after it.
func TestOvRContract(t *testing.T) {
	s := loadLetter(t, 700, 3)
	for _, spec := range []string{"bpas:budget=30", "bogd:sigma=4,budget=20"} {
		if learner.DescribeMulti(strings.SplitN(spec, ":", 2)[0]) != nil {
			t.Fatalf("%s has a native multi-class form: this test is about the fallback", spec)
		}
		if _, ok := newMultiT(t, spec, s.Dim).(*learner.OvR); !ok {
			t.Fatalf("%s: NewMulti did not build a one-vs-rest learner", spec)
		}
		checkMultiContract(t, spec, s, 700, 1, 150, 420)
	}
}

// TestOvRRefusals: a regression spec is refused with a message that says
// why; a state of another spec and a binary learner's state are refused.
func TestOvRRefusals(t *testing.T) {
	if _, err := learner.NewMulti("bogd:loss=square,sigma=1", 4); err == nil || !strings.Contains(err.Error(), "one-vs-rest") {
		t.Fatalf("regression OvR: %v", err)
	}
	if _, err := learner.NewMulti("nosuchlearner", 4); err == nil || !strings.Contains(err.Error(), "one-vs-rest") {
		t.Fatalf("unknown learner: %v", err)
	}
	a := newMultiT(t, "bogd:sigma=1,budget=10", 4)
	b := newMultiT(t, "bogd:sigma=2,budget=10", 4)
	p := make([]float64, 8)
	for i := range 20 {
		x := []float64{float64(i % 3), 1, float64(i % 5), -1}
		a.LearnClass(x, min(i%3, a.Classes()), p)
	}
	st, _ := a.MarshalBinary()
	if err := b.UnmarshalBinary(st); err == nil {
		t.Fatal("state of another spec accepted")
	}
	bin, _ := learner.New("bogd:sigma=1,budget=10", 4)
	bs, _ := bin.MarshalBinary()
	if err := newMultiT(t, "bogd:sigma=1,budget=10", 4).UnmarshalBinary(bs); err == nil {
		t.Fatal("a binary learner's state accepted as a one-vs-rest state")
	}
}

// TestOvRLearnsLetter: one-vs-rest BPAS and BOGD (bare specs: σ from the
// warm-up) on 4,000 letter events (standardised on the first 300) beat the class prior by a clear
// margin; the linear multinomial model is reported beside it.
func TestOvRLearnsLetter(t *testing.T) {
	s := standardised(loadLetter(t, 4000, 1), 300)
	prior := priorScore(s)
	lin := multiProgressive(t, newMultiT(t, "linear", s.Dim), s)
	for _, spec := range []string{"bpas:budget=100", "bpas:budget=100,sigma=3", "bogd:budget=100,sigma=3"} {
		got := multiProgressive(t, newMultiT(t, spec, s.Dim), s)
		t.Logf("%s: accuracy %.2f %% log loss %.3f [prior %.2f %% %.3f, linear %.2f %% %.3f]", spec, got.Acc, got.LogLoss, prior.Acc, prior.LogLoss, lin.Acc, lin.LogLoss)
		if got.Acc < prior.Acc+30 {
			t.Errorf("%s: accuracy %.2f %%, not clearly above the class prior's %.2f %%", spec, got.Acc, prior.Acc)
		}
		if got.LogLoss > prior.LogLoss-0.5 {
			t.Errorf("%s: log loss %.3f, not clearly below the class prior's %.3f", spec, got.LogLoss, prior.LogLoss)
		}
	}
}
