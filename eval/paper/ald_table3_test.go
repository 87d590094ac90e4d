package paper

import (
	"strings"
	"testing"
	"time"

	"okstream/eval"
	"okstream/learner"
)

// Every row of ald-table3 builds on every dataset (every grid point), so a
// misspelt parameter fails here rather than after an hour of runs. Rows of
// learners not in this build are logged, not failed (the runner skips them).
func TestALDTable3SpecsBuild(t *testing.T) {
	e, err := Get("ald-table3")
	if err != nil {
		t.Fatal(err)
	}
	dims := map[string]int{"parkinson": 16, "elevators": 18, "cpusmall": 12, "bank": 32, "ailerons": 40}
	for _, d := range e.Datasets {
		if aldTable3N[d.Title] == 0 || aldTable3Gamma[d.Title] == "" || dims[d.Title] == 0 {
			t.Fatalf("%s: no T, γ or dimension", d.Title)
		}
		for _, a := range e.Algos {
			spec := a.Spec(d)
			name, _, _ := learner.ParseSpec(spec)
			if learner.Describe(name) == nil {
				t.Logf("%s: %s not registered in this build (skipped by the runner)", a.Label, name)
				continue
			}
			cands, err := eval.Expand(spec)
			if err != nil {
				t.Fatalf("%s %s: %v", d.Title, a.Label, err)
			}
			for _, c := range cands {
				l, err := learner.New(c.Spec, dims[d.Title])
				if err != nil {
					t.Fatalf("%s %s: %v", d.Title, a.Label, err)
				}
				if l.Info().Task != learner.Regression {
					t.Fatalf("%s %s: %s is not a regression learner", d.Title, a.Label, c.Spec)
				}
			}
			if a.Paper[d.Title] == nil && a.Reference[d.Title+"/"+d.Variants[0].Name] == nil {
				t.Errorf("%s %s: neither a paper nor a reference number", d.Title, a.Label)
			}
		}
	}
	if got := aldEtaGrid(Dataset{Title: "cpusmall"}); got != "0.01105|0.1105|1.105|11.05" {
		t.Fatalf("η grid for T = 8192: %s", got)
	}
}

// A row whose learner is not registered is skipped with a note, and the
// table shows it as not run; the J column shows each model's size.
func TestALDTable3SkipsUnregisteredLearners(t *testing.T) {
	e, _ := Get("ald-table3")
	x := *e
	x.Datasets = []Dataset{e.Datasets[0]}
	x.Datasets[0].Limit = 300
	x.Algos = []Algorithm{e.Algos[4], {Label: "Nowhere", Spec: func(Dataset) string { return "no-such-learner:sigma=1" }}}
	rep, err := x.Run(Options{Runs: 1, Workers: 1})
	if err != nil {
		if strings.Contains(err.Error(), "not found") {
			t.Skipf("shared datasets not available: %v", err)
		}
		t.Fatal(err)
	}
	if c := rep.Cells[0]; len(c.Skipped) != 1 || c.Skipped[0] != "Nowhere" || len(c.Result.Models) != 1 {
		t.Fatalf("skipped %v, %d models run", c.Skipped, len(c.Result.Models))
	}
	md := rep.Markdown("test", time.Second)
	for _, want := range []string{"| Nowhere | – | – | not run | – | – |", "Not run (learner not registered in this build): Nowhere.", "| J (paper) |", "| AOGD-ALD | 0.05988 ± 0.00018 | 0.05251 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
