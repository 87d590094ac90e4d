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
//
// A second block runs the same rows on MNIST 8 vs 6 (§7.3, Fig. 6(2)) as
// far as the shared mnist allows (dsgSVMMNIST86 below). Blocks can be
// chosen with reproduce --datasets a9a,mnist-8v6.

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
		Title:  "DSG paper, §7.3 kernel SVM: Adult (a9a → a9a.t) and MNIST 8 vs 6, test errors after one pass (Fig. 6(1), 6(2), SC1)",
		Paper:  "Dai et al., Scalable Kernel Methods via Doubly Stochastic Gradients, NIPS 2014 (arXiv 1407.5599)",
		Task:   "classification",
		Runs:   3,
		Custom: runDSGSVM,
		Intro: `Kernel SVM (hinge loss) on Adult as the paper sets it (§7.3): Gaussian RBF kernel, σ by the
median trick, ν = 1/(100 n), mini-batch B = 2^6, feature block r = 2^5, one pass over the 32,561
training rows (SC1), then the frozen model scored on the 16,281 rows of a9a.t. Every run streams
its own seeded permutation of a9a. DSG runs with okstream's defaults for the hinge loss since
issue 42 (cos/sin feature pairs; each step changes every coefficient drawn so far and the new
block's, the kernel estimated by all of them, update=all; steps θ/(t+t0−1) with θν = 1.5 and a
first step B/4, i.e. 1/(4R²) per event with R² = sup k(x, x) = 1; predictions from the
polynomial-decay average of the iterates, η = 3) and, for comparison, with the paper's
Algorithm 1 update (only the new block's coefficients are set: update=new, with the first step
B/32 and the last iterate, okstream's defaults before the last change) and with Algorithm 1's
features √2cos(ωᵀx+b) and the step okstream used before issue 42 (γ_t = 1/(1+(t−1)/100)). Baselines: NORMA-style kernel SGD (bogd: kernel OGD on the hinge
with 2^12 support vectors, a random one discarded when full), random-feature SGD with 2^8
frequencies (FOGD; the paper's r-Pegasos/r-SDCA use 2^8 features), the online linear model and
the class prior of the training stream. The second block runs the same rows on the paper's MNIST
8 vs 6 task as far as the shared mnist allows (its own note says how it differs).`,
		Discussion: `The paper prints no step size for DSG; okstream's default is chosen from the theory's family
(θν ∈ (1, 2)) with the first step of averaged SGD, 1/(4R²) per event (docs/algorithms/dsg-onepass.md:
the error is flat for first steps from B/8 to B on a9a, w7a, cod-rna and spambase). What closes the
gap to the paper is the update: Algorithm 1 sets each coefficient once, from one batch and its own
r = 32 features, so every step's kernel estimate carries O(1/r) variance that stays in the model;
with every coefficient taking every step the variance falls as O(1/(r t)), a larger step becomes
safe, and averaging the iterates removes what noise remains. The paper's Adult number is one run; ours are means over
permutations (± the sample standard deviation).

MNIST 8 vs 6: on ~1,500 training images one pass is 24 iterations of B = 64, and DSG's
progressive error (10–12 %) shows it is still learning at the end of the pass; its test error
(2.1 % with the defaults, 2.0 % with Algorithm 1's update) is behind the online linear model's
(1.6 %) and NORMA-style kernel SGD's (1.8 %), and after 10 passes it is at 1.5 % (1.3 %) against
1.1 % and 1.0 %. These differences are 1–3 of the 389 test images (the two DSG updates differ by
less than one); the paper's 0.26 % would be one. Every model here is far from the paper's because the
training set is 1/1000 of MNIST 8M's; at this size a linear model on the 50 principal components
separates 8s from 6s about as well as the kernel models. See also dsg-multiclass (§7.4) for the
10-class task on the same images.`,
	})
}

// dsgSVMResult is the raw result (the JSON file): the Adult block's
// fields as before the MNIST block was added, and the MNIST 8 vs 6 block.
type dsgSVMResult struct {
	Experiment string       `json:"experiment"`
	Sigma      float64      `json:"sigma"`
	Nu         float64      `json:"nu"`
	Result     *eval.Result `json:"result"`
	// MNIST86 is the §7.3 MNIST 8 vs 6 block (absent when not run).
	MNIST86 *dsgSVMBlock `json:"mnist_8v6,omitempty"`
}

// dsgSVMBlock is one block's raw result.
type dsgSVMBlock struct {
	Sigma  float64      `json:"sigma"`
	Nu     float64      `json:"nu"`
	Result *eval.Result `json:"result"`
	// Passes is the same block with several passes (absent if not run).
	Passes *eval.Result `json:"passes,omitempty"`
}

// dsgSVMAlgo is one row of a block: label, spec and the paper's number.
type dsgSVMAlgo struct{ label, spec, paper string }

// dsgSVMAlgos are a block's rows for σ̂ and ν: the same learners and
// settings for Adult and MNIST 8 vs 6 (the paper's Adult B = 2^6, r = 2^5
// for both; see the MNIST block's note), with the paper's DSG and NORMA
// numbers of the dataset.
func dsgSVMAlgos(sigma, nu float64, paperDSG, paperNORMA string) []dsgSVMAlgo {
	s, n := learner.FormatNumber(sigma), learner.FormatNumber(nu)
	return []dsgSVMAlgo{
		{"DSG (okstream defaults)", fmt.Sprintf("dsg:sigma=%s,nu=%s,batch=64,block=32,max_features=16384", s, n), paperDSG},
		{"DSG, Algorithm 1's update (update=new: cos/sin pairs, first step B/32, last iterate)", fmt.Sprintf("dsg:sigma=%s,nu=%s,batch=64,block=32,max_features=16384,update=new", s, n), paperDSG},
		{"DSG (Algorithm 1 cos features, pre-42 step)", fmt.Sprintf("dsg:sigma=%s,nu=%s,batch=64,block=32,max_features=16384,update=new,features=cos,gamma0=1,t0=100", s, n), paperDSG},
		{"NORMA-style kernel SGD (bogd, 2^12 SVs)", fmt.Sprintf("bogd:sigma=%s,budget=4096", s), paperNORMA},
		{"random features 2^8 (FOGD)", fmt.Sprintf("fogd:sigma=%s,features=256", s), "–"},
		{"online linear model", "linear", "–"},
	}
}

// dsgSVMTable runs a block (one pass over train, frozen models scored on
// test) and writes its table into b.
func dsgSVMTable(b *strings.Builder, train, test *dataset.Dataset, algos []dsgSVMAlgo, runs, passes int, o Options) (*eval.Result, error) {
	var specs, labels []string
	for _, a := range algos {
		specs = append(specs, a.spec)
		labels = append(labels, a.label)
	}
	cfg := eval.Config{Runs: runs, Seed: o.Seed, Workers: o.Workers, Test: test, Passes: passes}
	res, err := eval.Run(train, specs, labels, cfg)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(b, "| algorithm | paper test error %% | test error %% (%s) | progressive error %% (%s) | µs/event | spec |\n|---|---|---|---|---|---|\n", test.Name, train.Name)
	for i, m := range res.Models {
		te := "–"
		if st, ok := testError(res, m.Label); ok {
			te = fmt.Sprintf("%.2f ± %.2f", st.Mean, st.Std)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %.2f ± %.2f | %.1f | `%s` |\n", m.Label, algos[i].paper, te, m.Mean, m.Std, m.NsPerEvent/1000, m.Chosen)
	}
	if res.Test != nil {
		st := res.Test.Baseline.Measures[eval.MeasureMistakeRate]
		fmt.Fprintf(b, "| class prior of the training stream | – | %.2f ± %.2f | – | – | – |\n", st.Mean, st.Std)
	}
	return res, nil
}

func runDSGSVM(e *Experiment, o Options) (*Report, error) {
	runs := o.Runs
	if runs <= 0 {
		runs = e.Runs
	}
	out := dsgSVMResult{Experiment: e.ID}
	var b strings.Builder
	if keep(o.Datasets, "a9a") {
		if err := dsgSVMAdult(&b, &out, runs, o); err != nil {
			return nil, err
		}
	}
	if keep(o.Datasets, "mnist-8v6") {
		if err := dsgSVMMNIST86(&b, &out, runs, o); err != nil {
			return nil, err
		}
	}
	if b.Len() == 0 {
		return nil, fmt.Errorf("dsg-svm: no block selected (known: a9a, mnist-8v6)")
	}
	return &Report{Exp: e, Runs: runs, Seed: o.Seed, Body: b.String(), Data: out}, nil
}

// dsgSVMAdult is the Adult block: a9a → a9a.t.
func dsgSVMAdult(b *strings.Builder, out *dsgSVMResult, runs int, o Options) error {
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
		return err
	}
	test, err := load("a9a.t")
	if err != nil {
		return err
	}
	sigma := learner.MedianTrickSigma(train.X, 2000)
	nu := 1 / (100 * float64(train.Len()))
	b.WriteString("### Adult (a9a → a9a.t)\n\n")
	fmt.Fprintf(b, "σ = %s (median trick), ν = 1/(100·%d) = %s; %d permutations.\n\n", learner.FormatNumber(sigma), train.Len(), learner.FormatNumber(nu), runs)
	res, err := dsgSVMTable(b, train, test, dsgSVMAlgos(sigma, nu, "15.3", "15"), runs, 1, o)
	if err != nil {
		return err
	}
	out.Sigma, out.Nu, out.Result = sigma, nu, res
	return nil
}

// MNIST 8 vs 6 (§7.3, Fig. 6(2)): the paper's data is MNIST 8M's 1.6M
// images of 8s and 6s (virtual examples: distortions of MNIST's 60,000
// training images), reduced to 50 dimensions by PCA, σ = 9.03 by the
// median trick, ν = 1/n, B = 2^10, r = 2^8; DSG's test error after one
// pass is 0.26 % (the best of the solvers). Ours: the 8s and 6s of the
// shared mnist's 10,000 test images — those among the first 8,000 rows
// train, those among the last 2,000 test (the split of dsg-multiclass) —
// PCA to 50 fitted on the training rows, σ by the median trick, ν = 1/n,
// and Adult's B = 2^6, r = 2^5 (with ~1,550 training rows B = 2^10 would
// be one or two iterations).
const (
	mnist86Train, mnist86Test = 8000, 2000
	mnist86PCA                = 50
	mnist86Passes             = 10
)

// dsgSVMMNIST86 is the MNIST 8 vs 6 block.
func dsgSVMMNIST86(b *strings.Builder, out *dsgSVMResult, runs int, o Options) error {
	tr, te, err := loadSplit("mnist", mnist86Train, mnist86Test)
	if err != nil {
		return fmt.Errorf("dsg-svm: %w", err)
	}
	eightSix := func(ds *dataset.Dataset) (*dataset.Dataset, error) {
		var idx []int
		for i, y := range ds.Y {
			if y == 8 || y == 6 {
				idx = append(idx, i)
			}
		}
		s := ds.Subset(idx)
		s.Name = ds.Name + " (8 vs 6)"
		eight := 8.0
		return s, s.BinaryLabels(&eight)
	}
	if tr, err = eightSix(tr); err != nil {
		return err
	}
	if te, err = eightSix(te); err != nil {
		return err
	}
	if tr, te, err = pcaProject(tr, te, mnist86PCA); err != nil {
		return fmt.Errorf("dsg-svm: mnist 8 vs 6: %w", err)
	}
	tr.Name, te.Name = "train", "test"
	sigma := learner.MedianTrickSigma(tr.X, 2000)
	nu := 1 / float64(tr.Len())
	b.WriteString("\n### MNIST 8 vs 6 (the shared mnist's test images)\n\n")
	fmt.Fprintf(b, `The paper (§7.3, Fig. 6(2)): 1.6M images of 8s and 6s from MNIST 8M (distorted copies of
MNIST's training images), PCA to 50 dimensions, σ = 9.03 by the median trick (pixels in [0, 1]),
ν = 1/n, B = 2^10, r = 2^8; DSG's test error after one pass 0.26 %%, the best of the solvers. Ours:
the 8s and 6s of the 10,000 MNIST test images the shared folder holds (its training images are
missing): those among its first 8,000 rows train, those among its last 2,000 test (MNIST's last
5,000 test images are the NIST test-set writers, the harder half); no virtual examples, so 1/1000
of the paper's training set; PCA to 50 fitted on the training rows; ν = 1/n; Adult's B = 2^6 and
r = 2^5 (B = 2^10 would be one or two iterations here); 8 is the positive class.

%d training rows, %d test rows (one test mistake = %.2f points); σ̂ = %.1f in pixel units 0–255,
%.2f in the paper's units; ν = 1/%d = %.3g; a pass adds %d features (under the cap 2^14);
%d permutations.

`, tr.Len(), te.Len(), 100/float64(te.Len()), sigma, sigma/255, tr.Len(), nu, tr.Len()/64*32, runs)
	res, err := dsgSVMTable(b, tr, te, dsgSVMAlgos(sigma, nu, "0.26", "–"), runs, 1, o)
	if err != nil {
		return err
	}
	out.MNIST86 = &dsgSVMBlock{Sigma: sigma, Nu: nu, Result: res}
	fmt.Fprintf(b, "\nThe same with %d passes over the training rows (each permutation presents them %d times; the paper's 1.6M images are ~135 distorted copies of each of its ~11,800 original 8s and 6s, ours are undistorted repeats; the progressive column is optimistic from the second pass on, the test column is not):\n\n", mnist86Passes, mnist86Passes)
	if out.MNIST86.Passes, err = dsgSVMTable(b, tr, te, dsgSVMAlgos(sigma, nu, "0.26", "–"), runs, mnist86Passes, o); err != nil {
		return err
	}
	return nil
}
