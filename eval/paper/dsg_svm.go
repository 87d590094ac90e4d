package paper

// DSG paper, §7.3, Adult (Dai et al., NIPS 2014, Fig. 6(1), stopping
// criterion SC1: one pass over the training data): kernel SVM (hinge loss),
// Gaussian RBF kernel with σ by the median trick, ν = 1/(100 n), mini-batch
// 2^6, feature block 2^5; the paper reports the test error after one pass:
// DSG 15.3 %, NORMA and k-SDCA 15 %. Our data: the shared a9a (UCI Adult
// as LIBSVM's a9a, 32,561 training rows, 123 binary coordinates) and a9a.t
// (16,281 test rows) — the paper's "32K × 123" Adult is this file.
//
// Deviations, stated in the section: the median trick over 2,000
// consecutive pairs of the training file (the paper does not say over
// which pairs); the feature count capped at 2^14 (the paper lets it grow:
// with r = 2^5 a pass adds 16,256 features, under the cap); the
// baselines are okstream's learners, not the paper's code: NORMA is
// approximated by budgeted kernel OGD (bogd, 2^12 support vectors, hinge),
// r-Pegasos/r-SDCA with 2^8 random features by FOGD with 2^8 frequencies;
// k-SDCA (a batch solver) is not run. Permutations: every run streams a
// fresh seeded order of a9a (the paper: one pass, order not stated), the
// models are then frozen and scored on a9a.t.

import (
	"fmt"
	"path/filepath"
	"strings"

	"okstream/dataset"
	"okstream/eval"
	"okstream/learner"
)

func init() {
	register(&Experiment{
		ID:     "dsg-svm",
		Title:  "DSG paper, §7.3 Adult kernel SVM: one pass over a9a, test error on a9a.t (Fig. 6(1), SC1)",
		Paper:  "Dai et al., Scalable Kernel Methods via Doubly Stochastic Gradients, NIPS 2014 (arXiv 1407.5599)",
		Task:   "classification",
		Runs:   3,
		Custom: runDSGSVM,
		Intro: `Kernel SVM (hinge loss) on Adult as the paper sets it (§7.3): Gaussian RBF kernel, σ by the
median trick, ν = 1/(100 n), mini-batch B = 2^6, feature block r = 2^5, one pass over the 32,561
training rows (SC1), then the frozen model scored on the 16,281 rows of a9a.t. Every run streams
its own seeded permutation of a9a. DSG runs with okstream's defaults for the hinge loss since
issue 42 (cos/sin feature pairs, steps θ/(t+t0−1) with θν = 1.5 and a first step B/32) and,
for comparison, with the paper's Algorithm 1 features √2cos(ωᵀx+b) and the step okstream used
before (γ_t = 1/(1+(t−1)/100)). Baselines: NORMA-style kernel SGD (bogd: kernel OGD on the hinge
with 2^12 support vectors, a random one discarded when full), random-feature SGD with 2^8
frequencies (FOGD; the paper's r-Pegasos/r-SDCA use 2^8 features), the online linear model and
the class prior of the training stream.`,
		Discussion: `The paper prints no step size for DSG; okstream's default is chosen from the theory's family
(θν ∈ (1, 2)) with the first step measured on a9a (docs/algorithms/dsg-onepass.md), and checked
on w7a → w7a.t and cod-rna. The paper's Adult number is one run; ours are means over
permutations (± the sample standard deviation).`,
	})
}

// dsgSVMResult is the raw result (the JSON file).
type dsgSVMResult struct {
	Experiment string       `json:"experiment"`
	Sigma      float64      `json:"sigma"`
	Nu         float64      `json:"nu"`
	Result     *eval.Result `json:"result"`
}

func runDSGSVM(e *Experiment, o Options) (*Report, error) {
	load := func(name string) (*dataset.Dataset, error) {
		ds, err := dataset.Load(filepath.Join(dataset.DataRoot(), "a9a", name), dataset.Options{Dim: 123})
		if err != nil {
			return nil, fmt.Errorf("dsg-svm needs the shared a9a (../shared/datasets/a9a): %w", err)
		}
		if err := ds.BinaryLabels(nil); err != nil {
			return nil, err
		}
		return ds, nil
	}
	train, err := load("a9a")
	if err != nil {
		return nil, err
	}
	test, err := load("a9a.t")
	if err != nil {
		return nil, err
	}
	sigma := learner.MedianTrickSigma(train.X, 2000)
	nu := 1 / (100 * float64(train.Len()))
	s, n := learner.FormatNumber(sigma), learner.FormatNumber(nu)
	type algo struct{ label, spec, paper string }
	algos := []algo{
		{"DSG (okstream defaults)", fmt.Sprintf("dsg:sigma=%s,nu=%s,batch=64,block=32,max_features=16384", s, n), "15.3"},
		{"DSG (Algorithm 1 cos features, pre-42 step)", fmt.Sprintf("dsg:sigma=%s,nu=%s,batch=64,block=32,max_features=16384,features=cos,gamma0=1,t0=100", s, n), "15.3"},
		{"NORMA-style kernel SGD (bogd, 2^12 SVs)", fmt.Sprintf("bogd:sigma=%s,budget=4096", s), "15"},
		{"random features 2^8 (FOGD)", fmt.Sprintf("fogd:sigma=%s,features=256", s), "–"},
		{"online linear model", "linear", "–"},
	}
	var specs, labels []string
	for _, a := range algos {
		specs = append(specs, a.spec)
		labels = append(labels, a.label)
	}
	runs := o.Runs
	if runs <= 0 {
		runs = e.Runs
	}
	cfg := eval.Config{Runs: runs, Seed: o.Seed, Workers: o.Workers, Test: test}
	res, err := eval.Run(train, specs, labels, cfg)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "σ = %s (median trick), ν = 1/(100·%d) = %s; %d permutations.\n\n", s, train.Len(), n, runs)
	b.WriteString("| algorithm | paper test error % | test error % (a9a.t) | progressive error % (a9a) | µs/event | spec |\n|---|---|---|---|---|---|\n")
	testOf := func(label string) string {
		if res.Test == nil {
			return "–"
		}
		for _, m := range res.Test.Models {
			if m.Label == label {
				st := m.Measures[eval.MeasureMistakeRate]
				return fmt.Sprintf("%.2f ± %.2f", st.Mean, st.Std)
			}
		}
		return "–"
	}
	for i, m := range res.Models {
		fmt.Fprintf(&b, "| %s | %s | %s | %.2f ± %.2f | %.1f | `%s` |\n", m.Label, algos[i].paper, testOf(m.Label), m.Mean, m.Std, m.NsPerEvent/1000, m.Chosen)
	}
	if res.Test != nil {
		st := res.Test.Baseline.Measures[eval.MeasureMistakeRate]
		fmt.Fprintf(&b, "| class prior of the training stream | – | %.2f ± %.2f | – | – | – |\n", st.Mean, st.Std)
	}
	return &Report{Exp: e, Runs: runs, Seed: o.Seed, Body: b.String(),
		Data: dsgSVMResult{Experiment: e.ID, Sigma: sigma, Nu: nu, Result: res}}, nil
}
