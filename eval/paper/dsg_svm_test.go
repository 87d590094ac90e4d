package paper

import (
	"strings"
	"testing"
)

// The MNIST 8 vs 6 block of dsg-svm (one permutation): two well-formed
// tables (one pass, then mnist86Passes passes) with the paper's 0.26 % on
// the DSG rows, every model at least 30 points below the class prior
// (~52 % on these 8s and 6s), and the raw result holding both runs.
func TestDSGSVMMNIST86(t *testing.T) {
	needShared(t, "mnist")
	e, err := Get("dsg-svm")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := e.Run(Options{Runs: 1, Seed: 1, Workers: 2, Datasets: []string{"mnist-8v6"}})
	if err != nil {
		t.Fatal(err)
	}
	out := rep.Data.(dsgSVMResult)
	if out.Result != nil || out.MNIST86 == nil || out.MNIST86.Result == nil || out.MNIST86.Passes == nil {
		t.Fatalf("raw result: a9a %v, mnist %+v", out.Result != nil, out.MNIST86)
	}
	if p := out.MNIST86.Passes.Passes; p != mnist86Passes {
		t.Errorf("second table ran %d passes, want %d", p, mnist86Passes)
	}
	header, rows := mdRows(rep.Body)
	per := len(dsgSVMAlgos(1, 1, "", "")) + 1 // the algorithms and the class prior
	if len(header) != 6 || len(rows) != 2*per {
		t.Fatalf("header %q, %d rows:\n%s", header, len(rows), rep.Body)
	}
	var prior float64
	for i, r := range rows {
		if len(r) != len(header) {
			t.Fatalf("row %q: %d cells", r, len(r))
		}
		if strings.HasPrefix(r[0], "DSG") && r[1] != "0.26" {
			t.Errorf("row %q: paper column %q, want 0.26", r[0], r[1])
		}
		if i%per == per-1 {
			if r[0] != "class prior of the training stream" {
				t.Fatalf("row %d is %q, want the class prior", i, r[0])
			}
			prior = meanOf(t, r[2])
			for _, m := range rows[i-per+1 : i] {
				if te := meanOf(t, m[2]); !(te < prior-30) {
					t.Errorf("%s: test error %v, class prior %v", m[0], te, prior)
				}
			}
		}
	}
}
