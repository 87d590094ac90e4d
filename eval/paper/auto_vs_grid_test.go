package paper

import (
	"strings"
	"testing"

	"okstream/dataset"
	"okstream/eval"
	"okstream/learner"
)

// The rows of auto-vs-grid build what they claim: the old defaults are the
// plain learners on raw features with σ = 1, auto and the grid points
// standardise, and no spec depends on the dataset (nothing per file).
func TestAutoVsGridRows(t *testing.T) {
	for _, task := range []string{"classification", "regression"} {
		algos := autoGridAlgos(task)
		if len(algos) != 11 {
			t.Fatalf("%s: %d rows", task, len(algos))
		}
		for _, a := range algos {
			spec := a.Spec(Dataset{Title: "x", B: 7, Sigma: "3"})
			if other := a.Spec(Dataset{Title: "y", B: 50, Sigma: "0.5"}); other != spec {
				t.Errorf("%s %s: spec depends on the dataset: %s vs %s", task, a.Label, spec, other)
			}
			cands, err := eval.Expand(spec)
			if err != nil {
				t.Fatal(err)
			}
			l, err := learner.New(cands[0].Spec, 5)
			if err != nil {
				t.Fatalf("%s %s: %v", task, a.Label, err)
			}
			s := l.Info().Spec
			if want := learner.Regression; (task == "regression") != (l.Info().Task == want) {
				t.Errorf("%s %s: task %v", task, a.Label, l.Info().Task)
			}
			switch {
			case strings.Contains(a.Label, "old default"):
				if strings.Contains(s, "scale=") || !strings.Contains(s, "sigma=1") {
					t.Errorf("%s: %s is not σ = 1 on raw features", a.Label, s)
				}
			case strings.HasPrefix(a.Label, "auto:"):
				if !strings.Contains(s, "scale=standard") || !strings.Contains(s, "sigma=auto") {
					t.Errorf("%s: %s does not self-tune", a.Label, s)
				}
			case a.Label == autoGridMemberLabel:
				// auto's linear member: its loss and solver, on standardised features.
				if !strings.Contains(s, "scale=standard") || (task == "regression") != strings.Contains(s, "solver=rls") || (task == "classification") != strings.Contains(s, "loss=squared_hinge") {
					t.Errorf("%s: %s is not auto's linear member on standardised features", a.Label, s)
				}
			case strings.Contains(a.Label, "best grid"):
				if !strings.Contains(s, "scale=standard") || strings.Contains(s, "sigma=auto") {
					t.Errorf("%s: %s is not a fixed σ on standardised features", a.Label, s)
				}
			}
		}
	}
}

// reproduce auto-vs-grid --data FILE: a user's file runs through the same
// rows, with the constant predictor and the verdict tables.
func TestAutoVsGridOnAFile(t *testing.T) {
	path := forksToyFile(t, 400)
	e, _ := Get("auto-vs-grid")
	load := func(classification bool) (*dataset.Dataset, error) {
		ds, err := dataset.Load(path, dataset.Options{})
		if err == nil && classification {
			err = ds.BinaryLabels(nil)
		}
		return ds, err
	}
	rep, err := e.Run(Options{Runs: 1, Workers: 2, Data: path, Load: load, Task: "classification"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cells) != 1 || len(rep.Cells[0].Result.Models) != 11 {
		t.Fatalf("%d cells", len(rep.Cells))
	}
	for _, want := range []string{"| toy.libsvm | ", "auto:fogd < constant", "linear (raw features)", "FOGD best grid point"} {
		if !strings.Contains(rep.Body, want) {
			t.Errorf("body lacks %q", want)
		}
	}
	g := rep.Data.(autoGridResult)
	if c := g.Groups[0].Constant["toy.libsvm"]; c <= 0 || c >= 50 {
		t.Errorf("majority-class rate %v", c)
	}
}

// The constant predictor: the minority share in % and the labels'
// population variance (the MSE of their mean).
func TestConstantPredictor(t *testing.T) {
	ds := &dataset.Dataset{Y: []float64{1, -1, -1, -1}}
	if got := constantPredictor(ds, "classification"); got != 25 {
		t.Errorf("majority rate %v, want 25", got)
	}
	ds = &dataset.Dataset{Y: []float64{1, 2, 3, 4}}
	if got := constantPredictor(ds, "regression"); got < 1.25-1e-12 || got > 1.25+1e-12 {
		t.Errorf("mean predictor MSE %v, want 1.25", got)
	}
}
