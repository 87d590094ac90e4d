package paper

import (
	"strings"
	"testing"
)

// Issue 2's bar for FOGD and NOGD, on the three small Table-1 datasets
// (unscaled files, the paper's settings and σ grid): the mean over 5
// permutations, with σ picked on 3 other permutations, lies within 2.5
// points of the paper's number or, where the LSOKL toolbox itself cannot
// reach the paper on our files, of the toolbox's (Experiment.Judge, the
// same verdict docs/results.md prints). cod-rna and w7a (60k and 25k rows ×
// 25 σ values) are left to `okstream reproduce forks-table1`.
func TestForksTable1FOGDNOGDWithinBand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs FOGD and NOGD over the 25-value σ grid on german, svmguide3 and spambase")
	}
	e, _ := Get("forks-table1")
	x := *e
	x.Algos = []Algorithm{algoFOGD, algoNOGD}
	rep, err := x.Run(Options{Runs: 5, SelectRuns: 3, Datasets: []string{"german", "svmguide3", "spambase"}, Variants: []string{"unscaled"}})
	if err != nil {
		if strings.Contains(err.Error(), "not found") {
			t.Skipf("shared datasets not available: %v", err)
		}
		t.Fatal(err)
	}
	if len(rep.Cells) != 3 {
		t.Fatalf("%d cells", len(rep.Cells))
	}
	for _, c := range rep.Cells {
		for _, a := range x.Algos {
			m := c.model(a.Label)
			if m == nil {
				t.Fatalf("%s: no %s result", c.Dataset, a.Label)
			}
			v := x.Judge(a, c.Dataset, c.Variant, m.Mean)
			t.Logf("%s %s: %.2f ± %.2f (%s), %s %+.2f", c.Dataset, a.Label, m.Mean, m.Std, m.Chosen, v.Target, v.Delta)
			if !v.OK {
				t.Errorf("%s %s: %.2f is not within %g points of the paper (%v) or the reference (%v)", c.Dataset, a.Label, m.Mean, x.Tolerance, a.Paper[c.Dataset], a.Reference[c.Dataset+"/"+c.Variant])
			}
		}
	}
}
