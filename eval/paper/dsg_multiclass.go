package paper

// DSG paper, §7.4 (Dai et al., NIPS 2014): multi-class kernel logistic
// regression (§4's softmax loss, learner/dsg_multi.go) against the online
// multinomial linear model and the class prior, test errors on held-out
// rows as `okstream eval --test` computes them (eval.Run with Config.Test
// and Config.MultiClass). Data: the shared letter (UCI, 20,000 × 16, 26
// classes; the UCI split: first 16,000 rows train, last 4,000 test) and
// the shared mnist, which holds only MNIST's 10,000 test images (first
// 8,000 train, last 2,000 test), reduced to 50 dimensions by PCA fitted on
// the training rows (the paper's MNIST preprocessing in §7.3; its §7.4
// MNIST 8M run uses 1568 features of a trained CNN, which we do not have).
// Every deviation is stated in the section and in
// docs/algorithms/dsg-multiclass.md.

import (
	"fmt"
	"strings"

	"okstream/eval"
	"okstream/learner"
)

// dsgMCSetup is one dataset of the experiment.
type dsgMCSetup struct {
	Title       string // the dataset's title (reproduce --datasets)
	Key         string // dataset.Shared name
	Train, Test int    // first Train rows train, last Test rows test
	PCA         int    // > 0: project on this many principal components of the training rows
	Passes      int    // > 1: also run this many passes (models and baselines)
	Paper       string // the paper's DSG test error on its version of the data, or "–" (on every DSG row)
	Note        string // how our data differs from the paper's
}

// dsgMCSetups are the experiment's datasets.
var dsgMCSetups = []dsgMCSetup{
	{Title: "letter", Key: "letter", Train: 16000, Test: 4000, Paper: "–",
		Note: "not in the paper; UCI's split (first 16,000 rows train, last 4,000 test), the 16 raw integer features"},
	{Title: "mnist", Key: "mnist", Train: 8000, Test: 2000, PCA: 50, Passes: 5, Paper: "0.5 (MNIST 8M, CNN features; the paper's jointly trained net: 0.6)",
		Note: "the 10,000 MNIST test images only (first 8,000 train, last 2,000 test: 1/1000 of the paper's 8.1M virtual examples, no virtual examples), raw pixels reduced to 50 dims by PCA on the training rows instead of the paper's 1568 CNN features"},
}

// dsgMCAlgo is one DSG row: its label and its spec given σ̂ (the median
// trick on the training rows) and, for a grid row, the σ and γ0 values
// (grids "a|b|c" in the one-pass run, the one-pass picks in the runs with
// more passes).
type dsgMCAlgo struct {
	label string
	spec  func(sigmaHat float64, sigma, gamma string) string
	// grid: picked by eval's grid on the progressive error of a separate
	// permutation of the training rows (Config.SelectRuns = 1) from
	// dsgMCSigmaGrid × dsgMCGammaGrid in the one-pass run; the runs with
	// more passes use the one-pass pick.
	grid bool
	// onePass: not run with more passes.
	onePass bool
}

// dsgMCSigmaGrid are the kernel widths tried, as fractions of σ̂ (the
// paper's own multiplier of the median varies: 0.1 in §7.1, 1 in
// §7.2–7.3, 4 in §7.4), and dsgMCGammaGrid the constant steps:
// half-decades up to the defaults' first step γ0 = 30.
var dsgMCSigmaGrid = []struct {
	name string
	frac float64
}{{"σ̂/4", 0.25}, {"σ̂/2", 0.5}, {"σ̂", 1}}

const dsgMCGammaGrid = "3|10|30"

// dsgMCSigmas returns the σ grid for σ̂ ("a|b|c").
func dsgMCSigmas(sigmaHat float64) string {
	var v []string
	for _, g := range dsgMCSigmaGrid {
		v = append(v, learner.FormatNumber(g.frac*sigmaHat))
	}
	return strings.Join(v, "|")
}

// dsgMCSigmaName names a σ of the grid for σ̂ ("σ̂/2"), or returns it.
func dsgMCSigmaName(sigmaHat float64, sigma string) string {
	for _, g := range dsgMCSigmaGrid {
		if learner.FormatNumber(g.frac*sigmaHat) == sigma {
			return g.name
		}
	}
	return sigma
}

// dsgMCAlgos are the DSG rows (the class prior and the linear model come
// with every eval.Run). max_features = 2^14 is dsg's default cap, written
// out so that the table states it.
var dsgMCAlgos = []dsgMCAlgo{
	{label: "DSG, the multi-class defaults (learner/dsg_multi.go), σ = σ̂", spec: func(sh float64, _, _ string) string {
		return fmt.Sprintf("dsg:sigma=%s,max_features=16384", learner.FormatNumber(sh))
	}},
	{label: "DSG, σ ∈ {σ̂/4, σ̂/2, σ̂} and a constant step γ ∈ {3, 10, 30} picked by progressive validation", grid: true, spec: func(_ float64, sg, g string) string {
		return fmt.Sprintf("dsg:sigma=%s,max_features=16384,nu=1e-5,batch=16,block=64,features=cos,gamma0=%s,kappa=0", sg, g)
	}},
	{label: "DSG, the paper's §7.4 σ = 4σ̂ and ν = 5e-4 (multi-class defaults otherwise)", onePass: true, spec: func(sh float64, _, _ string) string {
		return fmt.Sprintf("dsg:sigma=%s,max_features=16384,nu=0.0005", learner.FormatNumber(4*sh))
	}},
}

func init() {
	register(&Experiment{
		ID:     "dsg-multiclass",
		Title:  "DSG paper, §7.4 multi-class kernel logistic regression: letter and mnist, test errors against the online multinomial linear model",
		Paper:  "Dai et al., Scalable Kernel Methods via Doubly Stochastic Gradients, NIPS 2014 (arXiv 1407.5599)",
		Task:   "classification",
		Runs:   2,
		Custom: runDSGMulticlass,
		Intro: `Multi-class kernel logistic regression by doubly stochastic gradients (the paper's §4 softmax
loss; §7.4 runs it on MNIST 8M, CIFAR 10 and ImageNet against convolutional nets). Gaussian RBF
kernel with σ̂ the median distance of 2,000 consecutive pairs of training rows
(learner.MedianTrickSigma, as dsg-svm), the feature cap 2^14 (dsg's default; the paper lets the
features grow far beyond), one pass over each run's own seeded permutation of the training rows
(SC1), then the frozen model scored on the test rows (eval.Config.Test: what ` + "`okstream eval --test`" + `
computes). DSG rows: the multi-class defaults of learner/dsg_multi.go (γ_t = 30/(1 + (t−1)/100),
B = 16, r = 64, ν = 1e-5, √2cos features) at σ̂; σ ∈ {σ̂/4, σ̂/2, σ̂} (the paper's own multiplier
of the median is 0.1 in §7.1, 1 in §7.2–7.3 and 4 in §7.4) with a constant step γ ∈ {3, 10, 30}
(κ = 0; the one-pass argument of docs/algorithms/dsg-onepass.md: every batch weighted alike), the
pair picked by eval's grid on the progressive error of one separate permutation of the training
rows (no test row is used to pick it); and the paper's §7.4 settings σ = 4σ̂, ν = 5e-4. On mnist
the first two also run 5 passes over the training rows, the second with its one-pass picks (the
paper's MNIST 8M is ~135 distorted copies of each of MNIST's 60,000 images; our passes repeat the
images undistorted). Baselines on the same permutations: the class prior of the training stream and the online
multinomial logistic regression (` + "`linear`" + `, standardised inputs, per-coordinate AdaGrad).`,
		Discussion: `With σ and the step picked on the training stream, DSG beats the online linear model clearly:
letter 11.6 % against 25.9 % (picks σ̂/2, γ = 30), mnist 6.1 % against 8.1 % in one pass and 3.5 %
against 7.3 % in 5 passes (picks σ̂/2, γ = 10). With its defaults at σ̂ it beats it only on letter,
by 1 point (24.9 %), and not on mnist in one pass (10.0 %): σ̂ by the median trick is too wide for
both files and the defaults' step decays 6–11× within one pass. The paper's 0.5 % on MNIST 8M is
not comparable: 8.1M virtual training images (1,000× ours) and 1568 features of a trained
convolutional net, on which a wide kernel (4 × median) works; on 10^4 rows of PCA or raw features
σ = 4σ̂ with ν = 5e-4 is far too smooth (the §7.4 rows). letter is not in the paper. Settings,
deviations and the measurements behind them: docs/algorithms/dsg-multiclass.md.`,
	})
}

// dsgMCResult is the raw result (the JSON file).
type dsgMCResult struct {
	Experiment string        `json:"experiment"`
	Datasets   []dsgMCRecord `json:"datasets"`
}

// dsgMCRecord is one dataset and pass count.
type dsgMCRecord struct {
	Title  string       `json:"title"`
	Passes int          `json:"passes"`
	Sigma  float64      `json:"sigma"`
	Result *eval.Result `json:"result"`
}

func runDSGMulticlass(e *Experiment, o Options) (*Report, error) {
	runs := o.Runs
	if runs <= 0 {
		runs = e.Runs
	}
	var setups []dsgMCSetup
	for _, s := range dsgMCSetups {
		if keep(o.Datasets, s.Title) {
			setups = append(setups, s)
		}
	}
	if len(setups) == 0 {
		return nil, fmt.Errorf("dsg-multiclass: no dataset selected (known: letter, mnist)")
	}
	body, data, err := dsgMulticlass(setups, dsgMCAlgos, runs, o)
	if err != nil {
		return nil, err
	}
	return &Report{Exp: e, Runs: runs, Seed: o.Seed, Body: body, Data: data}, nil
}

// dsgMulticlass runs the setups and renders the table (one row per model,
// dataset and pass count, with the class prior and the linear model).
func dsgMulticlass(setups []dsgMCSetup, algos []dsgMCAlgo, runs int, o Options) (string, dsgMCResult, error) {
	out := dsgMCResult{Experiment: "dsg-multiclass"}
	var b strings.Builder
	b.WriteString("| data | passes | algorithm | paper test error % | test error % | test log loss | progressive error % | µs/event | spec |\n|---|---|---|---|---|---|---|---|---|\n")
	var notes strings.Builder
	for _, s := range setups {
		train, test, err := loadSplit(s.Key, s.Train, s.Test)
		if err != nil {
			return "", out, fmt.Errorf("dsg-multiclass: %w", err)
		}
		if s.PCA > 0 {
			if train, test, err = pcaProject(train, test, s.PCA); err != nil {
				return "", out, fmt.Errorf("dsg-multiclass: %s: %w", s.Title, err)
			}
		}
		sigma := learner.MedianTrickSigma(train.X, 2000)
		fmt.Fprintf(&notes, "- **%s**: %s. %d training rows, %d test rows, %d classes, d = %d; σ̂ = %s (median trick; ν and the step as each row's spec says).\n",
			s.Title, s.Note, train.Len(), test.Len(), len(train.LabelCounts()), train.Dim, learner.FormatNumber(sigma))
		passes := []int{1}
		if s.Passes > 1 {
			passes = append(passes, s.Passes)
		}
		sigmaSel, gamma := dsgMCSigmas(sigma), dsgMCGammaGrid
		for _, p := range passes {
			var specs, labels []string
			for _, a := range algos {
				if p > 1 && a.onePass {
					continue
				}
				label := a.label
				if a.grid && p > 1 {
					label = fmt.Sprintf("DSG, σ = %s, constant step γ = %s (the one-pass picks)", dsgMCSigmaName(sigma, sigmaSel), gamma)
				}
				specs, labels = append(specs, a.spec(sigma, sigmaSel, gamma)), append(labels, label)
			}
			cfg := eval.Config{Runs: runs, Seed: o.Seed, Workers: o.Workers, Test: test, MultiClass: true, Passes: p, SelectRuns: 1}
			res, err := eval.Run(train, specs, labels, cfg)
			if err != nil {
				return "", out, fmt.Errorf("dsg-multiclass: %s: %w", s.Title, err)
			}
			out.Datasets = append(out.Datasets, dsgMCRecord{Title: s.Title, Passes: p, Sigma: sigma, Result: res})
			for _, m := range res.Models {
				if g, ok := m.Won["gamma0"]; ok {
					gamma = g // the one-pass pick, for the runs with more passes
				}
				if g, ok := m.Won["sigma"]; ok {
					sigmaSel = g
				}
			}
			for i, m := range res.Models {
				paper := s.Paper // every DSG row: the paper's DSG on its version of the data
				st, _ := testError(res, m.Label)
				ll := res.Test.Models[i].Measures[eval.MeasureLogLoss]
				fmt.Fprintf(&b, "| %s | %d | %s | %s | %.2f ± %.2f | %.3f | %.2f ± %.2f | %.0f | `%s` |\n",
					s.Title, p, m.Label, paper, st.Mean, st.Std, ll.Mean, m.Mean, m.Std, m.NsPerEvent/1000, m.Chosen)
			}
			lin, lt := res.LinearBaseline, res.Test.LinearBaseline
			st, ll := lt.Measures[eval.MeasureMistakeRate], lt.Measures[eval.MeasureLogLoss]
			pm := lin.Measures[eval.MeasureMistakeRate]
			fmt.Fprintf(&b, "| %s | %d | online multinomial linear model | – | %.2f ± %.2f | %.3f | %.2f ± %.2f | – | `%s` |\n",
				s.Title, p, st.Mean, st.Std, ll.Mean, pm.Mean, pm.Std, lin.Spec)
			pr := res.Test.Baseline.Measures
			fmt.Fprintf(&b, "| %s | %d | class prior of the training stream | – | %.2f ± %.2f | %.3f | – | – | – |\n",
				s.Title, p, pr[eval.MeasureMistakeRate].Mean, pr[eval.MeasureMistakeRate].Std, pr[eval.MeasureLogLoss].Mean)
		}
	}
	head := fmt.Sprintf("%d permutations of the training rows per row (mean ± sample std of the frozen models' test error); the models' seeds derive from the run.\n\n", runs)
	return head + notes.String() + "\n" + b.String(), out, nil
}
