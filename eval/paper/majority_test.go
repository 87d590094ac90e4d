package paper

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"okstream/eval"
)

// A cell at the majority-class rate is marked, one 0.2 point below it is
// not; the band is ±MajorityBand inclusive; an unknown rate marks nothing.
func TestAtMajority(t *testing.T) {
	for _, tc := range []struct {
		v, maj float64
		want   bool
	}{
		{2.997, 2.997, true},
		{3.003, 2.997, true},
		{3.097, 2.997, true},
		{2.897, 2.997, true},
		{2.797, 2.997, false}, // 0.2 below
		{3.197, 2.997, false},
		{30.0, 0, false}, // regression / unknown
	} {
		if got := atMajority(tc.v, tc.maj); got != tc.want {
			t.Errorf("atMajority(%v, %v) = %v, want %v", tc.v, tc.maj, got, tc.want)
		}
	}
}

// markTestReport is a one-dataset table with a learner at the majority
// rate, one 0.2 point below it, a paper number at it and a reference
// number below it.
func markTestReport() *Report {
	e := &Experiment{ID: "mark-test", Title: "t", Paper: "p", Task: "classification", Runs: 2, Tolerance: 2.5,
		Datasets: []Dataset{{Key: "x", Title: "x", Variants: []Variant{{Name: "unscaled"}}}},
		Algos: []Algorithm{
			{Label: "AtMaj", Paper: map[string]*Value{"x": V(3.0, 0.1)}},
			{Label: "Below", Reference: map[string]*Value{"x/unscaled": V(2.7, -1)}},
		}}
	res := &eval.Result{N: 1000, Dim: 3, Metric: eval.MistakeRate, Runs: 2, Seed: 1, Models: []eval.ModelResult{
		{Label: "AtMaj", Mean: 3.05, Std: 0.01, PerRun: []float64{3.04, 3.06}, NsPerEvent: 1234},
		{Label: "Below", Mean: 2.8, Std: 0.01, PerRun: []float64{2.79, 2.81}, NsPerEvent: 1234},
	}}
	return &Report{Exp: e, Runs: 2, Seed: 1, Elapsed: 3 * time.Second,
		Cells: []Cell{{Dataset: "x", Variant: "unscaled", Result: res, Command: "okstream eval --data x", Majority: 3.0}}}
}

func row(md, label string) string {
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| "+label+" |") {
			return l
		}
	}
	return ""
}

// Markdown marks the paper's, the reference's and our cells at the
// majority rate and no other, and explains the mark under the table.
func TestMarkdownMarksMajorityCells(t *testing.T) {
	md := markTestReport().Markdown("okstream reproduce mark-test", 3*time.Second)
	at, below := row(md, "AtMaj"), row(md, "Below")
	if !strings.Contains(at, "| 3.000 ± 0.100"+MajorityMark+" |") || !strings.Contains(at, "| 3.050 ± 0.010"+MajorityMark+" |") {
		t.Errorf("row at the majority rate not marked: %s", at)
	}
	if below == "" || strings.Contains(below, MajorityMark) {
		t.Errorf("row 0.2 below the majority rate marked: %s", below)
	}
	if !strings.Contains(md, "Majority-class predictor: 3.000 % mistakes") {
		t.Errorf("no footnote:\n%s", md)
	}
}

// A section re-rendered from the JSON it was written with is
// byte-identical (the numbers round-trip exactly), and Merge adds a row
// and its command without touching the others.
func TestReadReportRoundTripAndMerge(t *testing.T) {
	rep := markTestReport()
	path := filepath.Join(t.TempDir(), "r.json")
	if err := rep.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(path, rep.Exp)
	if err != nil {
		t.Fatal(err)
	}
	want := rep.Markdown("cmd", rep.Elapsed)
	if got := back.Markdown("cmd", back.Elapsed); got != want {
		t.Fatalf("re-rendered section differs:\n%s\nwant:\n%s", got, want)
	}
	e := *rep.Exp
	e.Algos = append(e.Algos, Algorithm{Label: "New"})
	back.Exp = &e
	add := &Report{Exp: &e, Runs: 2, Seed: 1, Elapsed: time.Second, Cells: []Cell{{Dataset: "x", Variant: "unscaled",
		Result: &eval.Result{N: 1000, Dim: 3, Metric: eval.MistakeRate, Models: []eval.ModelResult{{Label: "New", Spec: "new:a=1", Mean: 2.5}}}}}}
	if err := back.Merge(add); err != nil {
		t.Fatal(err)
	}
	md := back.Markdown("cmd", back.Elapsed)
	if row(md, "AtMaj") != row(want, "AtMaj") || row(md, "Below") != row(want, "Below") {
		t.Fatalf("merge changed existing rows:\n%s", md)
	}
	if !strings.Contains(row(md, "New"), "| 2.500 ± 0.000 |") || !strings.Contains(md, "--model 'new:a=1'") || back.Elapsed != 4*time.Second {
		t.Fatalf("merged row, command or time missing:\n%s", md)
	}
	add.Runs = 3
	if err := back.Merge(add); err == nil {
		t.Fatal("merged a report with a different number of runs")
	}
	if _, err := ReadReport(path, &Experiment{ID: "other"}); err == nil {
		t.Fatal("read another experiment's results")
	}
}
