package paper

import (
	"fmt"
	"math"
)

// The FORKS paper's kernel-width grid: σ ∈ {2^-5, 2^-4.5, …, 2^7} (25 values).
const forksSigmaGrid = "2^-5..2^7:2^0.5"

// prosnkonsSigmaGrid is every other value of forksSigmaGrid (13 values).
// Deviation, for tractability: PROS-N-KONS' dictionary is not budgeted in
// the paper, and uncapped it grows towards N at small σ with O(m²) work per
// round and O(m³) per epoch restart — one cod-rna run at σ = 1 did not
// finish in 5 minutes on our machine. Table 1 therefore caps it at B
// (bmax; the paper's own budgeted variant, used on KuaiRec) and halves its
// grid; measured on cod-rna, a 400-point cap runs at ~490 µs/event and a
// 200-point cap still made PROS-N-KONS most of the table's running time.
const prosnkonsSigmaGrid = "2^-5..2^7:2^1"

// forksTable1Datasets are Table 1's datasets we have (ijcnn1 is not in the
// shared data), with the paper's budget rule (B = 50 for N ≤ 10,000, else
// 100). "unscaled" is the file as distributed, which is what the paper's
// numbers come from (the LSOKL toolbox matches them only unscaled); "scaled" is min–max to
// [0, 1] (german: LIBSVM's own [−1, 1] german.numer_scale, as the reference
// runs used).
var forksTable1Datasets = []Dataset{
	{Key: "german", Title: "german", B: 50, Variants: []Variant{{Name: "unscaled", Scale: "none"}, {Name: "scaled", Scale: "none", Data: "german-scale"}}},
	{Key: "svmguide3", Title: "svmguide3", B: 50, Variants: []Variant{{Name: "unscaled", Scale: "none"}, {Name: "scaled", Scale: "minmax01"}}},
	{Key: "spambase", Title: "spambase", B: 50, Variants: []Variant{{Name: "unscaled", Scale: "none"}, {Name: "scaled", Scale: "minmax01"}}},
	{Key: "cod-rna", Title: "codrna", B: 100, Variants: []Variant{{Name: "unscaled", Scale: "none"}, {Name: "scaled", Scale: "minmax01"}}},
	{Key: "w7a", Title: "w7a", B: 100, Variants: []Variant{{Name: "unscaled", Scale: "none"}}, Note: "binary 0/1 features: scaling changes nothing"},
}

func forksSpec(format string) func(d Dataset) string {
	return func(d Dataset) string { return fmt.Sprintf(format, d.B, forksSigmaGrid) }
}

// forksTable1Titles are the columns of the paper's Table 1 we reproduce, in
// the order of forksTable1Datasets; forksTable1RefCells are the
// "title/variant" cells we ran the LSOKL toolbox on.
var (
	forksTable1Titles   = []string{"german", "svmguide3", "spambase", "codrna", "w7a"}
	forksTable1RefCells = []string{"german/unscaled", "german/scaled", "svmguide3/unscaled", "spambase/unscaled", "spambase/scaled", "codrna/scaled", "w7a/unscaled"}
)

// t1Paper is a row of the paper's Table 1: mean, std per title in the
// order of forksTable1Titles.
func t1Paper(meanStd ...float64) map[string]*Value { return valueRow(forksTable1Titles, meanStd) }

// t1Ref is the toolbox's row on our files, one number per cell of
// forksTable1RefCells (NaN: not run).
func t1Ref(means ...float64) map[string]*Value { return numberRow(forksTable1RefCells, means) }

// nan marks a cell of a table row that has no number.
var nan = math.NaN()

// Specs shared by Table 1 and the adversarial Tables 2 and 3.
var (
	bogdSpec      = forksSpec("bogd:budget=%d,eta=0.2,gamma=10,sigma=%s")
	prosnkonsSpec = func(d Dataset) string {
		return fmt.Sprintf("pros-n-kons:loss=hinge,bmax=%d,sigma=%s", d.B, prosnkonsSigmaGrid)
	}
	nogdSpec = func(rankDiv int) func(d Dataset) string {
		return func(d Dataset) string {
			return fmt.Sprintf("nogd:budget=%d,k=%d,eta=0.2,sigma=%s", d.B, d.B/rankDiv, forksSigmaGrid)
		}
	}
)

// sketchSpec is a FORKS or SkeGD spec on the σ grid with B̃ = 2B and one
// SJLT block; sizes gives s_p, s_m and k for a budget, tail the update
// cycle (θ or ρ) and any further settings.
func sketchSpec(name string, sizes func(B int) (sp, sm, k int), tail string) func(d Dataset) string {
	return func(d Dataset) string {
		sp, sm, k := sizes(d.B)
		return fmt.Sprintf("%s:budget=%d,buffer=%d,sp=%d,sm=%d,k=%d,blocks=1,%s,sigma=%s",
			name, d.B, 2*d.B, sp, sm, k, tail, forksSigmaGrid)
	}
}

// forksPaperSizes are the paper's Table 1 sketch settings (§5, App. D.1):
// s_p = B, s_m = 0.2 s_p, k = 0.1B; with θ = 0.3, ρ = ⌊θN⌋ (eval sets
// horizon = N).
func forksPaperSizes(B int) (sp, sm, k int) { return B, B / 5, B / 10 }

// The rows of the FORKS paper's Table 1: the budgeted kernel-expansion
// baselines (RBP, BPA-S, Projectron, BOGD), FOGD and NOGD (with the LSOKL
// toolbox's settings alongside), SkeGD, PROS-N-KONS and FORKS. Paper
// numbers: the paper's Table 1; reference numbers: the LSOKL toolbox on our
// files (5 permutations; w7a: its first 10,000 rows).
var (
	algoRBP = Algorithm{
		Label:     "RBP",
		Spec:      forksSpec("rbp:budget=%d,sigma=%s"),
		Paper:     t1Paper(38.830, 0.152, 29.698, 1.644, 35.461, 0.842, 22.644, 0.262, 5.963, 0.722),
		Reference: t1Ref(38.7, 36.1, 30.2, 35.6, 23.4, 23.9, 4.2),
		Note:      "perceptron; on a mistake at full budget a uniformly random support vector is dropped",
	}
	algoBPAS = Algorithm{
		Label:     "BPA-S",
		Spec:      forksSpec("bpas:budget=%d,c=1,sigma=%s"),
		Paper:     t1Paper(35.235, 0.944, 29.027, 0.732, 34.394, 2.545, 17.029, 0.303, 3.001, 0.045),
		Reference: t1Ref(34.0, 31.0, 23.4, 32.7, 17.4, 13.8, 2.8),
		Note:      "C = 1 (LSOKL)",
	}
	algoProjectron = Algorithm{
		Label:     "Projectron",
		Spec:      forksSpec("projectron:budget=%d,sigma=%s"),
		Paper:     t1Paper(36.875, 1.403, 25.060, 0.373, 32.659, 0.914, 19.257, 4.688, 3.174, 0.014),
		Reference: t1Ref(35.6, 32.6, 26.1, 33.0, 15.3, 9.4, nan),
		Note:      "budgeted form of the LSOKL toolbox with the δ² ≤ 1e-8 duplicate guard (the toolbox is unstable on w7a)",
	}
	algoBOGD = Algorithm{
		Label:     "BOGD",
		Spec:      bogdSpec,
		Paper:     t1Paper(33.705, 1.446, 29.904, 1.653, 32.859, 0.478, 17.305, 0.146, 3.548, 0.164),
		Reference: t1Ref(32.7, 30.5, 24.0, 32.9, 23.5, 25.5, 3.0),
		Note:      "η = 0.2, γ = 10, λ = 1/N² (LSOKL)",
	}
	algoFOGD = Algorithm{
		Label:     "FOGD",
		Spec:      forksSpec("fogd:budget=%d,eta=0.2,sigma=%s"),
		Paper:     t1Paper(30.915, 0.845, 30.024, 0.787, 25.651, 0.349, 13.103, 0.105, 2.893, 0.053),
		Reference: t1Ref(35.1, 32.5, 25.9, 30.5, 15.8, 8.8, 4.1),
		Note:      "4B frequencies (8B features), no 1/√D scaling, η = 0.2 (paper)",
	}
	algoFOGDToolbox = Algorithm{
		Label:     "FOGD η=0.002",
		Spec:      forksSpec("fogd:budget=%d,eta=0.002,sigma=%s"),
		Reference: t1Ref(29.4, 27.6, 20.0, 27.5, 12.1, 6.5, 2.7),
		Note:      "the LSOKL toolbox's default step (not the paper's); shown to explain the FOGD gap",
	}
	algoNOGD = Algorithm{
		Label:     "NOGD",
		Spec:      nogdSpec(10),
		Paper:     t1Paper(26.715, 0.552, 19.964, 0.077, 31.003, 0.751, 17.915, 3.315, 2.579, 0.007),
		Reference: t1Ref(30.0, 30.1, 22.6, 31.4, 20.1, 10.6, 3.0),
		Note:      "k = 0.1B, η = 0.2 (paper)",
	}
	algoNOGDToolbox = Algorithm{
		Label:     "NOGD k=0.2B",
		Spec:      nogdSpec(5),
		Reference: t1Ref(nan, nan, nan, nan, nan, 7.3, nan),
		Note:      "the LSOKL toolbox's default rank (not the paper's); shown to explain the NOGD gap",
	}
	algoSkeGD = Algorithm{
		Label: "SkeGD",
		Spec:  sketchSpec("skegd", forksPaperSizes, "theta=0.3"),
		Paper: t1Paper(25.170, 0.391, 19.976, 0.105, 32.413, 1.886, 13.274, 0.262, 2.706, 0.335),
		Note:  "B̃ = 2B, s_p = B, s_m = 0.2B, k = 0.1B, D = 1, ρ = ⌊0.3N⌋, η = 0.2, λ = 0.01; exact rank-k SVD each update round, w kept",
	}
	algoPROSNKONS = Algorithm{
		Label: "PROS-N-KONS",
		Spec:  prosnkonsSpec,
		Paper: t1Paper(31.235, 0.939, 24.529, 0.561, 32.227, 0.678, 13.387, 0.289, 3.016, 0.007),
		Note:  "dictionary capped at B (the paper's budgeted variant) and σ from every other grid value (tractability, see the intro); the learner's defaults otherwise",
	}
	algoFORKS = Algorithm{
		Label:     "FORKS",
		Spec:      sketchSpec("forks", forksPaperSizes, "theta=0.3"),
		Paper:     t1Paper(26.425, 0.562, 19.710, 0.557, 30.662, 0.670, 12.795, 0.360, 2.561, 0.038),
		Tolerance: 1.5,
		Note:      "B̃ = 2B, s_p = B, s_m = 0.2B, k = 0.1B, D = 1, ρ = ⌊0.3N⌋, α = 0.01, σ_i = 0.5, η_i = 0, λ = 0 (Eq. 10; see learner/forks.go), C = 1, TISVD; acceptance band ±1.5 points (the issue's)",
	}
	// algoFORKSRank is FORKS in the configuration learner/forks.go
	// recommends (not in the paper; "Class imbalance" in its opening
	// comment): s_m = k = B/2 landmarks and rank instead of 0.2B and 0.1B,
	// and no slab projection (c=0, C = ∞) instead of C = 1; every other
	// setting is the paper's. It is the row beside FORKS that shows the
	// paper-settings FORKS at the majority rate on w7a is the setting, not
	// the algorithm.
	algoFORKSRank = Algorithm{
		Label: "FORKS k=s_m=B/2 c=0",
		Spec:  sketchSpec("forks", func(B int) (int, int, int) { return B, B / 2, B / 2 }, "theta=0.3,c=0"),
		Note:  "not in the paper: the recommended configuration of learner/forks.go (s_m = k = B/2, no slab projection), the paper's settings otherwise",
	}
)

func init() {
	register(&Experiment{
		ID:         "forks-table1",
		Title:      "FORKS paper, Table 1 (fixed budget, hinge loss)",
		Paper:      "Wen et al., Fast Second-Order Online Kernel Learning through Incremental Matrix Sketching and Decomposition, arXiv 2410.11188v2 (IJCAI 2025)",
		Task:       "classification",
		Runs:       20,
		SelectRuns: 3,
		Tolerance:  2.5,
		Datasets:   forksTable1Datasets,
		Algos:      []Algorithm{algoRBP, algoBPAS, algoProjectron, algoBOGD, algoFOGD, algoFOGDToolbox, algoNOGD, algoNOGDToolbox, algoSkeGD, algoPROSNKONS, algoFORKS, algoFORKSRank},
		Intro: `Budget B = 50 for german, svmguide3 and spambase and 100 for codrna and w7a (the
paper's N ≤ 10,000 rule); hinge loss; σ picked from the paper's grid 2^-5 … 2^7 (step 2^0.5)
by the lowest mean mistake rate over 3 separate permutations, then reported over 20 others
(the paper picked on its 20 reporting runs, which biases the mean slightly downwards and costs
25 × 20 runs per learner and dataset: more than this machine has for the table); the mistake
rate counts every round, Stage 1 included, and a score of exactly 0 as a mistake.
PROS-N-KONS, unbudgeted in the paper, is capped at B dictionary points (the paper's own budgeted
variant, which it uses on KuaiRec) and searched on every other σ of the grid: uncapped, one cod-rna run at σ = 1 did not finish in 5 minutes. "Reference"
is the LSOKL MATLAB toolbox (the paper's baseline code) run under Octave on our files, 5
permutations. Rows marked "(toolbox setting)" are not in the
paper: they use the toolbox's defaults to show where the paper's settings and the toolbox's
differ. FORKS and SkeGD use the paper's sketch settings (B̃ = 2B, s_p = B, s_m = 0.2B, k = 0.1B,
D = 1, ρ = ⌊0.3N⌋; FORKS α = 0.01, σ_i = 0.5, η_i = 0, λ = 0, C = 1); the issue's acceptance
band for FORKS is ±1.5 points of the paper. The row "FORKS k=s_m=B/2 c=0" is not in the paper:
it is FORKS with preset=wide (s_m = k = B/2 landmarks and rank, no slab projection; every other
setting the paper's), the configuration learner/forks.go recommends, run with the same protocol.
A cell marked ≈maj is within 0.1 point of the majority-class rate of its file: that learner
(or the paper's number) is the constant predictor, whatever its distance to the paper.`,
		Discussion: forksTable1Discussion,
	})
}

const forksTable1Discussion = `**FORKS and SkeGD against the paper.** On the unscaled files FORKS is within the issue's
±1.5-point band on codrna and w7a and outside it on german (+4.6), svmguide3 (+4.2) and
spambase (+2.4); SkeGD is within 2.5 points on spambase, codrna and w7a. Both "matches" on
w7a are the majority-class predictor (3.003 and 3.001 %, majority rate 2.997 %, marked ≈maj):
not a reproduction of the paper's 2.561 and 2.706. On german, svmguide3
and w7a the paper's FORKS, SkeGD and NOGD numbers lie below the majority-class rate of our
files (30.0, 23.8, 3.0 %): our FORKS, SkeGD and NOGD all land at the majority rate ± 1, the LSOKL
toolbox's NOGD likewise (30.0, 22.6, 3.0). The next section (forks-ceiling) measures the ceiling
of FORKS' model class: the paper's ONS on the exact rank-k Nyström features of 1000 landmarks
drawn from the whole file (an oracle, with σ picked on the reported runs). At FORKS' k = 0.1B = 5
it reaches 29.97 % on german, 23.25 % on svmguide3 and 31.11 % on spambase, so the paper's german
and svmguide3 numbers (26.43, 19.71) are 3.5 points below what rank-5 features can give on these
files (german needs more than k = B = 50 exact features, svmguide3 about k = B). On spambase the
paper's 30.66 is within the ceiling's noise, and our FORKS pays 1.9 points to it: 0.6 for the
resets at update rounds and 1.3 for the sketched map. The learners that beat the majority rate
on german and svmguide3 (FOGD with the toolbox's η, BPA-S, BOGD) are first-order expansions over
all 50 stored examples or 200 random features, not rank-5 maps.

**Why FORKS at the paper's settings is the majority-class predictor on w7a, and the
configuration that learns.** Two settings, neither of them a bug (learner/forks.go, "Class
imbalance", has the instrumented runs). (1) The slab |φᵀw| ≤ C of Eq. 10 at C = 1 — the paper
gives no C; 1 was our choice — is the hinge's margin, and the projection moves w itself: every
confidently classified example pulls w back onto its margin, so most majority examples stay
inside it and about half of all rounds produce a hinge gradient, 94 % of them from the majority
class; the Online Newton Step balances them against the few minority gradients at the constant
predictor (w7a, σ = 2^4: at most one +1 prediction per update epoch). Without the slab the
majority examples pass the margin and stop updating (6 % of rounds instead of 53 %). The hinge
is Lipschitz and not exp-concave: the slab, which bounds the gradient and curvature of
exp-concave losses, buys it nothing. (2) The rank: φ has rank ≤ min(k, s_m), and at k = 0.1B = 10
the minority class of w7a is not separable in it; with no slab k = 10 still gives 2.98 % on w7a,
k = s_m = 50 2.66. With both changed (row "FORKS k=s_m=B/2 c=0", learner preset=wide) FORKS is
below the majority rate on every file and better than the paper-settings FORKS on all nine
file/preprocessing pairs, at 2–8× its µs/event: w7a 2.669 (0.33 below the majority rate),
german 29.4, svmguide3 21.6, spambase 23.8, codrna 11.6; scaled spambase 14.7 and codrna 5.5.
On w7a it is still behind FOGD with the toolbox's η (2.27) and BPA-S (2.56). On
class-imbalanced files not used to choose it (cod-rna and spambase keeping 6 % and 8 % of their
positives: 2.86 and 5.36 % minority; min–max scaled, 5 permutations) the paper setting is again
the majority-class predictor (2.864, 5.418) and the recommended one learns (2.671, 5.234). SkeGD (first-order,
no slab) and NOGD do not share cause (1): on w7a (2 permutations) NOGD stays at 2.93–2.96 % for
k = 10, 20, 50 and SkeGD at 3.00 % with k = s_m = 50, and smaller steps (η = 0.02, 0.002) keep
both at 3.001; capped PROS-N-KONS (3.17 %) keeps only ~29 dictionary points on w7a and is not
changed by its slab (C = 1000: 3.16). They are marked, not fixed, here.

**λ, and the sketched map on min–max-scaled data.** The paper lists λ = 0.01 for FORKS but no
update equation uses it; reading it as a ridge term (λw added to the Stage-2 gradient) makes FORKS
collapse on scaled data: with A ≈ αI in directions an epoch has not seen, the step A⁻¹λw
removes w there at the rate λ/α = 1 per round. With it, FORKS on codrna scaled to [0, 1] sat at
30.0 ± 2.9 % (majority rate 33.3 %). FORKS now follows Eq. 10 as written (λ = 0, see
learner/forks.go): codrna scaled 17.1 ± 1.8 (above), codrna unscaled 13.5 ± 0.6 instead of
14.0 ± 2.2, spambase scaled 26.3 instead of 28.3; the unscaled small files move by less than
0.5. The rest of the gap to NOGD on scaled codrna (9.6 at the same rank k = 10) is the rank-k
sketched map: at σ = 1 (2 permutations) FORKS gets 18.9 %, 18.2 with s_m = 100 landmarks
instead of 20, 18.9 with an exact SVD instead of TISVD, and 8.7 with k = 20 (s_m = 40); NOGD's
exact rank-10 Nyström map of its 100 support vectors gets 9.7 at that σ. The top-k subspace of
the SJLT-sketched Φ_pp = S_pᵀKS_p is a coarser rank-k approximation than the top-k of K itself.
SkeGD, which shares the map and has no ONS, is at 29.2 ± 2.7 there.

**Selection and variance.** σ is chosen on 3 permutations that are not reported, so a σ that
is unstable across permutations shows up as a large standard deviation (SkeGD and FORKS on
scaled spambase, ± 4–5) instead of being hidden by picking on the reporting runs.

See docs/algorithms/forks-and-baselines.md (and learner/forks.go, learner/sketchmap.go) for the
decisions on the paper's ambiguities and their measured effects.`
