package paper

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The ALD paper's Table 3 (Li & Liao, ICML 2023) on the
// five datasets of the table we have (calhousing, Year and TomsHardware are
// not in the shared data). Preprocessing and widths are those under which
// we ran the authors' R code on our files: targets → [0, 1],
// features → [−1, 1], except cpusmall, whose paper file is [0, 1]-scaled
// (the "x11" variant shows cpusmall with [−1, 1] features too). parkinson is
// the dataset preset: the 16 voice features and total_UPDRS (the paper's
// exact variant is unknown; no preprocessing reproduces its J = 13).

// aldTable3N is each dataset's length T (Table 2; our files have the same
// number of rows): FOGD's and NOGD's step grid is {1, 10, 100, 1000}/√T,
// written out per dataset because a grid value cannot refer to the horizon.
var aldTable3N = map[string]int{"parkinson": 5875, "elevators": 16599, "cpusmall": 8192, "bank": 8192, "ailerons": 13750}

// aldTable3Gamma is the KORS ridge γ behind the paper's PROS-N-KONS and
// CON-KONS rows (with α = 5; found by running the authors' code on our files).
var aldTable3Gamma = map[string]string{"parkinson": "0.5", "elevators": "10", "cpusmall": "5", "bank": "1", "ailerons": "1"}

// aldEtaGrid returns "c₁/√T|c₂/√T|…" for c ∈ {1, 10, 100, 1000} (4
// significant digits).
func aldEtaGrid(d Dataset) string {
	T := aldTable3N[d.Title]
	var parts []string
	for _, c := range []float64{1, 10, 100, 1000} {
		parts = append(parts, strconv.FormatFloat(c/math.Sqrt(float64(T)), 'g', 4, 64))
	}
	return strings.Join(parts, "|")
}

const aldTable3Paper = "paper"

var aldTable3Datasets = []Dataset{
	{Key: "parkinsons", Title: "parkinson", B: 400, Sigma: "8", Variants: []Variant{{Name: aldTable3Paper, Scale: "minmax11+y01"}},
		Note: "16 voice features, target total_UPDRS (the paper's variant is unknown: no preprocessing of the UCI file reproduces its J); paper's J: FOGD/NOGD 400, PROS-N-KONS 33, CON-KONS 31, AOGD-ALD 13, NONS-ALD 13"},
	{Key: "elevators", Title: "elevators", B: 400, Sigma: "8", Variants: []Variant{{Name: aldTable3Paper, Scale: "minmax11+y01"}},
		Note: "paper's J: FOGD/NOGD 400, PROS-N-KONS 32, CON-KONS 34, AOGD-ALD 28, NONS-ALD 28"},
	{Key: "cpusmall", Title: "cpusmall", B: 400, Sigma: "2", Variants: []Variant{{Name: aldTable3Paper, Scale: "minmax01+y01"}, {Name: "x11", Scale: "minmax11+y01"}},
		Note: "the paper's file has features in [0, 1] (variant paper); x11 scales them to [−1, 1] like the other datasets; paper's J: FOGD/NOGD 400, PROS-N-KONS 42, CON-KONS 42, AOGD-ALD 44, NONS-ALD 43"},
	{Key: "bank32nh", Title: "bank", B: 400, Sigma: "12", Variants: []Variant{{Name: aldTable3Paper, Scale: "minmax11+y01"}},
		Note: "bank32nh (the paper says bank, 32 features); paper's J: FOGD/NOGD 400, PROS-N-KONS 179, CON-KONS 177, AOGD-ALD 148, NONS-ALD 148"},
	{Key: "ailerons", Title: "ailerons", B: 400, Sigma: "8", Variants: []Variant{{Name: aldTable3Paper, Scale: "minmax11+y01"}},
		Note: "paper's J: FOGD/NOGD 400, PROS-N-KONS 88, CON-KONS 84, AOGD-ALD 58, NONS-ALD 58"},
}

// aldTable3Titles are the paper's columns in the order of aldTable3Datasets.
var aldTable3Titles = []string{"parkinson", "elevators", "cpusmall", "bank", "ailerons"}

// aldPaper is a row of the paper's Table 3: MSE mean, std per title in the
// order of aldTable3Titles.
func aldPaper(meanStd ...float64) map[string]*Value { return valueRow(aldTable3Titles, meanStd) }

// The authors' R code on our files (AOGD-ALD and NONS-ALD with
// μ = 1), per "title/variant".
var (
	aldRefCells = []string{"parkinson/paper", "elevators/paper", "cpusmall/paper", "cpusmall/x11", "bank/paper", "ailerons/paper"}
	aldRefAOGD  = numberRow(aldRefCells, []float64{0.05251, 0.00535, 0.01332, 0.00563, 0.01919, 0.00342})
	aldRefNONS  = numberRow(aldRefCells, []float64{0.04759, 0.00284, 0.00695, 0.00279, 0.01308, 0.00290})
)

// aldStepSpec is FOGD's or NOGD's spec with the per-dataset step grid;
// format takes the budget, σ and the grid.
func aldStepSpec(format string) func(d Dataset) string {
	return func(d Dataset) string { return fmt.Sprintf(format, d.B, d.Sigma, aldEtaGrid(d)) }
}

// aldKONSSpec is PROS-N-KONS' or CON-KONS' spec with α = 5 and the
// per-dataset γ; extra holds further settings (with a trailing comma).
func aldKONSSpec(name, extra string) func(d Dataset) string {
	return func(d Dataset) string {
		return fmt.Sprintf("%s:alpha=5,gamma=%s,beta=1,eps=0.5,c=1,%sloss=square,sigma=%s", name, aldTable3Gamma[d.Title], extra, d.Sigma)
	}
}

var aldTable3Algos = []Algorithm{
	{
		Label: "FOGD",
		Spec:  aldStepSpec("fogd:features=%d,loss=square,sigma=%s,eta=%s"),
		Paper: aldPaper(0.05590, 0.00011, 0.00560, 0.00009, 0.01269, 0.00033, 0.01910, 0.00033, 0.00363, 0.00009),
		Note:  "D = 400 frequencies, features scaled by 1/√D, η ∈ {1, 10, 100, 1000}/√T",
	},
	{
		Label: "NOGD",
		Spec:  aldStepSpec("nogd:budget=%d,loss=square,sigma=%s,eta=%s"),
		Paper: aldPaper(0.05711, 0.00042, 0.00575, 0.00004, 0.01388, 0.00070, 0.01966, 0.00008, 0.00394, 0.00013),
		Note:  "budget 400, full-rank map, η ∈ {1, 10, 100, 1000}/√T",
	},
	{
		Label: "PROS-N-KONS",
		Spec:  aldKONSSpec("pros-n-kons", "inverse=old,"),
		Paper: aldPaper(0.06420, 0.00073, 0.00873, 0.00023, 0.02939, 0.00096, 0.02677, 0.00015, 0.01509, 0.00028),
		Note:  "α = 5 and the per-dataset γ behind the paper's rows; the authors' code's pre-update inverse",
	},
	{
		Label: "CON-KONS",
		Spec:  aldKONSSpec("con-kons", ""),
		Paper: aldPaper(0.05553, 0.00024, 0.00452, 0.00018, 0.01166, 0.00080, 0.01663, 0.00014, 0.00320, 0.00007),
		Note:  "α = 5 and the per-dataset γ behind the paper's rows",
	},
	{
		Label:     "AOGD-ALD",
		Spec:      func(d Dataset) string { return "aogd-ald:sigma=" + d.Sigma },
		Paper:     aldPaper(0.05988, 0.00018, 0.00534, 0.00003, 0.01330, 0.00006, 0.01915, 0.00009, 0.00345, 0.00002),
		Reference: aldRefAOGD,
		Note:      "U = 2, α = 25/T, B0 of Theorem 3.2 (horizon = T)",
	},
	{
		Label:     "NONS-ALD",
		Spec:      func(d Dataset) string { return "nons-ald:mu=1|5|15,sigma=" + d.Sigma },
		Paper:     aldPaper(0.05514, 0.00008, 0.00284, 0.00005, 0.00703, 0.00024, 0.01306, 0.00004, 0.00288, 0.00001),
		Reference: aldRefNONS,
		Note:      "U = Y = 1 (η = 1/8), α = 25/T, μ ∈ {1, 5, 15}; the paper's updated-inverse step",
	},
	{
		Label:     "NONS-ALD (R code)",
		Spec:      func(d Dataset) string { return "nons-ald:mu=1,compat_r_code=true,sigma=" + d.Sigma },
		Reference: aldRefNONS,
		Note:      "not a row of the paper: μ = 1 with the authors' code's quirks (old inverse on ALD rounds, no update on round 1), the configuration of the reference column",
	},
}

func init() {
	register(&Experiment{
		ID:         "ald-table3",
		Title:      "ALD paper, Table 3 (online kernel regression, MSE)",
		Paper:      "Li & Liao, Nearly Optimal Algorithms with Sublinear Computational Complexity for Online Kernel Regression, ICML 2023",
		Task:       "regression",
		Runs:       10,
		Tolerance:  0.10,
		Relative:   true,
		SizeColumn: "J",
		Datasets:   aldTable3Datasets,
		Algos:      aldTable3Algos,
		Intro: `Online MSE (1/T) Σ (ŷ_t − y_t)² over one pass, mean ± std over the permutations (the
paper: 10); targets
scaled to [0, 1] and features to [−1, 1] (cpusmall: [0, 1], the paper's file) by min–max over
the whole file; the Gaussian kernel width σ of the paper per dataset, the same for every
algorithm. FOGD and NOGD pick η from {1, 10, 100, 1000}/√T and NONS-ALD μ from {1, 5, 15} by the
lowest mean MSE over the same permutations (the paper does not say how it tuned).
PROS-N-KONS and CON-KONS run with α = 5 and the per-dataset γ (parkinson 0.5, elevators 10,
cpusmall 5, bank 1, ailerons 1) that the paper's rows correspond to (found by running the authors' code on our files).
"Reference" is the authors' R code run on our files (AOGD-ALD and NONS-ALD with
μ = 1). J is the number of stored points (dictionary size; D for FOGD) at the end of the first
permutation; the paper's J are in each dataset's note. The acceptance band is 10% relative:
NONS-ALD against the paper (parkinson: against the reference, the paper's parkinson variant
being unknown). Rows whose learner is not registered in this build are listed as not run.`,
		Discussion: `**parkinson.** The paper's parkinson variant is unknown (no
preprocessing of the UCI file reproduces its J = 13 with 16 features). With the 16 voice
features and total_UPDRS every algorithm's MSE is lower than the paper's, by a similar margin,
so the paper column is not a target there; the authors' code on the same file (reference
column) is.

**NONS-ALD vs its R-code configuration.** The "NONS-ALD (R code)" row differs from the
paper's algorithm in two documented quirks of the authors' code (docs/algorithms/regression.md): no update on
round 1 and the pre-update inverse A_{t−1}⁻¹ in the step on ALD-holding rounds. It is the row
that should match the reference column closely; the paper's updated-inverse step is usually a
little better (most visibly on cpusmall with [−1, 1] features, whose dictionary is larger).

**Dictionary sizes.** AOGD-ALD and NONS-ALD build the same ALD dictionary (it depends on the
inputs only), so their J columns agree; J is that of the first permutation (the paper's and
the reference's are means). B0 (Theorem 3.2) is never reached here, so AOGD-ALD's
budget_policy does not matter.`,
	})
}
