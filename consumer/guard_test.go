package consumer

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"okstream/codec"
	"okstream/learner/rng"
)

// poisonStream is n events of dimension 4 (labelled, with every 5th
// unlabelled) with finite but huge values at the given positions: a label
// of 1e308 at yAt (regression only) and features of ±1e308 at xAt.
func poisonStream(n, yAt, xAt int, regression bool) (xs [][]float64, ys []float64, labelled []bool) {
	src := rng.New(3)
	for i := 0; i < n; i++ {
		x := []float64{2*src.Float64() - 1, 2*src.Float64() - 1, 2*src.Float64() - 1, 2*src.Float64() - 1}
		y := -1.0
		if x[0]*x[0]+x[1]*x[1] < 0.5 {
			y = 1
		}
		if regression {
			y = x[0] - 2*x[1]*x[2]
		}
		if i == yAt && regression {
			y = 1e308
		}
		if i == xAt {
			x = []float64{1e308, -1e308, 1e308, -1e308}
		}
		xs, ys, labelled = append(xs, x), append(ys, y), append(labelled, i%5 != 3 || i == yAt || i == xAt)
	}
	return xs, ys, labelled
}

var guardCases = []struct {
	name       string
	models     []Model
	regression bool
}{
	// σ given: the plain learners on raw features (a spec without σ
	// standardises its input with robust statistics, which the poison
	// below does not overflow: the guard would have nothing to do).
	{"regression", []Model{{"fogd", "fogd:loss=square,sigma=1"}, {"nogd", "nogd:loss=square,sigma=1"}, {"skegd", "skegd:loss=square,sigma=1"}, {"aogd-ald", "aogd-ald:sigma=1"}}, true},
	{"classification", []Model{{"fogd", "fogd:sigma=1"}, {"nogd", "nogd:sigma=1"}, {"bogd", "bogd:sigma=1"}, {"skegd", "skegd:sigma=1"}}, false},
}

// guardRun runs a model set over the stream; at each offset in restarts it
// "checkpoints" (the backstop check, marshal) and continues in a fresh model
// set restored from that payload, as a recovered worker does. It returns
// every published score, the final payload and the reset reasons seen.
func guardRun(t *testing.T, models []Model, xs [][]float64, ys []float64, labelled []bool, restarts map[int]bool) ([][]codec.ModelScore, []byte, []string) {
	t.Helper()
	var reasons []string
	newSet := func() *modelSet {
		ms, err := newModelSet(models, 4, pendingLimits{})
		if err != nil {
			t.Fatal(err)
		}
		ms.onReset = func(m *model, reason string) { reasons = append(reasons, m.name+"/"+reason) }
		return ms
	}
	ms := newSet()
	var out [][]codec.ModelScore
	for i := range xs {
		if restarts[i] {
			ms.checkBeforeCheckpoint()
			payload, err := ms.marshal()
			if err != nil {
				t.Fatal(err)
			}
			ms = newSet()
			if _, err := ms.restore(payload, false); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, ms.score(xs[i], ys[i], labelled[i], nil, nil))
	}
	ms.checkBeforeCheckpoint()
	payload, err := ms.marshal()
	if err != nil {
		t.Fatal(err)
	}
	return out, payload, reasons
}

// A finite but huge value (features ±1e308, a regression label 1e308) with
// the value limit off poisons fogd, nogd, skegd and aogd-ald (every later
// score NaN without the guard). With the guard the poisoned model is reset
// and re-run on the event, so later scores are finite, the resets are
// counted in the checkpointed statistics, the checkpointed states predict
// finite scores, and a restore at any point — including right after the
// poisoning label, where the backstop check before the checkpoint does the
// reset — gives the same scores and the same final bytes.
func TestNonFiniteGuard(t *testing.T) {
	const n, yAt, xAt = 300, 100, 200
	for _, tc := range guardCases {
		t.Run(tc.name, func(t *testing.T) {
			xs, ys, labelled := poisonStream(n, yAt, xAt, tc.regression)
			scores, final, reasons := guardRun(t, tc.models, xs, ys, labelled, nil)
			for i := range scores {
				for _, s := range scores[i] {
					if !finite(s.Score) && i != xAt {
						t.Fatalf("event %d model %s: score %v", i, s.Name, s.Score)
					}
				}
			}
			pl, err := DescribePayload(final)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range pl.Models {
				if tc.regression && m.Stats.Resets == 0 {
					t.Errorf("model %s: no reset counted (reasons %v)", m.Name, reasons)
				}
				if math.IsNaN(m.Stats.SqErr) || math.IsInf(m.Stats.SqErr, 0) {
					t.Errorf("model %s: SqErr %v", m.Name, m.Stats.SqErr)
				}
			}
			if len(reasons) == 0 {
				t.Fatal("no reset at all")
			}
			ms, _ := newModelSet(tc.models, 4, pendingLimits{})
			if _, err := ms.restore(final, false); err != nil {
				t.Fatal(err)
			}
			for _, m := range ms.models {
				for _, x := range xs[xAt+1:] {
					if f := m.l.Predict(x); !finite(f) {
						t.Fatalf("checkpointed model %s predicts %v", m.name, f)
					}
				}
			}
			// Exact recovery: restore before, at and after each poisoned event.
			for _, at := range []int{yAt, yAt + 1, yAt + 2, 150, xAt, xAt + 1, xAt + 2} {
				got, gotFinal, gotReasons := guardRun(t, tc.models, xs, ys, labelled, map[int]bool{at: true, at + 37: true})
				if !bytes.Equal(gotFinal, final) {
					t.Fatalf("restore at %d: final payload differs (resets %v, uninterrupted %v)", at, gotReasons, reasons)
				}
				if len(gotReasons) != len(reasons) {
					t.Fatalf("restore at %d: %d resets, uninterrupted %d", at, len(gotReasons), len(reasons))
				}
				for i := range got {
					for j := range got[i] {
						if math.Float64bits(got[i][j].Score) != math.Float64bits(scores[i][j].Score) || got[i][j].Updates != scores[i][j].Updates {
							t.Fatalf("restore at %d: event %d model %s: %+v, uninterrupted %+v", at, i, got[i][j].Name, got[i][j], scores[i][j])
						}
					}
				}
			}
			if tc.regression {
				// Right after the poisoning label the state is NaN: the
				// backstop resets it before the checkpoint.
				_, _, r := guardRun(t, tc.models, xs, ys, labelled, map[int]bool{yAt + 1: true})
				if fmt.Sprint(r) == fmt.Sprint(reasons) || !containsSuffix(r, "/"+resetCheckpoint) {
					t.Fatalf("restore right after the label: resets %v, want the backstop's", r)
				}
			}
		})
	}
}

func containsSuffix(ss []string, suffix string) bool {
	for _, s := range ss {
		if len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix {
			return true
		}
	}
	return false
}

// Without the guard the same stream leaves NaN scores behind: the test
// above can fail.
func TestPoisonWithoutGuardIsNaN(t *testing.T) {
	xs, ys, labelled := poisonStream(300, 100, 200, true)
	for _, m := range guardCases[0].models {
		ms, _ := newModelSet([]Model{m}, 4, pendingLimits{})
		l := ms.models[0].l
		nan := 0
		for i := range xs {
			var f float64
			if labelled[i] {
				f = l.Learn(xs[i], ys[i])
			} else {
				f = l.Predict(xs[i])
			}
			if !finite(f) {
				nan++
			}
		}
		if nan < 100 {
			t.Errorf("%s: only %d non-finite scores without the guard", m.Name, nan)
		}
	}
}
