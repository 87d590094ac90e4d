package learner_test

// The ALD paper's Table 3 (Li & Liao, ICML 2023) for
// AOGD-ALD and NONS-ALD on the shared datasets, run through okstream/eval
// with the preprocessing and kernel widths under which the authors'
// R code was run on our files (docs/results.md, ald-table3). Few permutations and one worker: the
// full 10-permutation reproduction is `okstream reproduce ald-table3`.

import (
	"math"
	"os"
	"strconv"
	"testing"

	"okstream/eval"
)

// aldTable3Real lists, per dataset, the preprocessing and σ of the reference runs,
// the paper's NONS-ALD MSE (or, for parkinson, whose paper variant is
// unknown, the R code's on our file), and the R code's numbers on our files:
// AOGD-ALD MSE, NONS-ALD (μ = 1) MSE and mean dictionary size J.
var aldTable3Real = []struct {
	title, key, scale, sigma string
	nonsTarget               float64 // acceptance target for NONS-ALD (paper, or R code for parkinson)
	refAOGD, refNONS, refJ   float64 // the authors' R code on our file
	paperJ                   float64
}{
	{"elevators", "elevators", "minmax11+y01", "8", 0.00284, 0.00535, 0.00284, 28.4, 28},
	{"cpusmall", "cpusmall", "minmax01+y01", "2", 0.00703, 0.01332, 0.00695, 43.9, 44},
	{"bank", "bank32nh", "minmax11+y01", "12", 0.01306, 0.01919, 0.01308, 148.8, 148},
	{"ailerons", "ailerons", "minmax11+y01", "8", 0.00288, 0.00342, 0.00290, 56.7, 58},
	{"parkinson", "parkinsons", "minmax11+y01", "8", 0.04759, 0.05251, 0.04759, 16.5, 13},
	// Not the paper's preprocessing: cpusmall with [−1, 1] features (R code only).
	{"cpusmall-x11", "cpusmall", "minmax11+y01", "2", 0.00279, 0.00563, 0.00279, 125, 0},
}

// Table 3 (§6): NONS-ALD's MSE is within 10% (relative) of the paper's on
// elevators, cpusmall, bank and ailerons (parkinson, and cpusmall with
// [−1, 1] features: of the authors' code on our file); its dictionary size is near the paper's; AOGD-ALD and the
// R-code-compatible NONS-ALD are within 10% of the authors' code on our
// files. 3 permutations (set OKSTREAM_ALD_RUNS for more).
func TestALDTable3RealData(t *testing.T) {
	if testing.Short() {
		t.Skip("real-data reproduction (a few seconds per dataset)")
	}
	runs := 3
	if s := os.Getenv("OKSTREAM_ALD_RUNS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			runs = n
		}
	}
	for _, c := range aldTable3Real {
		t.Run(c.title, func(t *testing.T) {
			ds := loadShared(t, c.key, false, c.scale)
			specs := []string{
				"nons-ald:mu=1,sigma=" + c.sigma,
				"aogd-ald:sigma=" + c.sigma,
				"nons-ald:mu=1,compat_r_code=true,sigma=" + c.sigma,
			}
			res, err := eval.Run(ds, specs, []string{"NONS-ALD", "AOGD-ALD", "NONS-ALD (R code)"}, eval.Config{Runs: runs, Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			nons, aogd, compat := res.Models[0], res.Models[1], res.Models[2]
			t.Logf("%s (n = %d, d = %d, %s, σ = %s, %d runs):", c.title, res.N, res.Dim, c.scale, c.sigma, runs)
			t.Logf("  NONS-ALD          %.5f ± %.5f  target %.5f (%+.1f%%)  J %d (R code %.1f, paper %.0f)  %.1f µs/event",
				nons.Mean, nons.Std, c.nonsTarget, 100*(nons.Mean/c.nonsTarget-1), nons.Used, c.refJ, c.paperJ, nons.NsPerEvent/1e3)
			t.Logf("  NONS-ALD (R code) %.5f ± %.5f  R code %.5f (%+.1f%%)", compat.Mean, compat.Std, c.refNONS, 100*(compat.Mean/c.refNONS-1))
			t.Logf("  AOGD-ALD          %.5f ± %.5f  R code %.5f (%+.1f%%)  J %d  %.1f µs/event",
				aogd.Mean, aogd.Std, c.refAOGD, 100*(aogd.Mean/c.refAOGD-1), aogd.Used, aogd.NsPerEvent/1e3)
			within := func(ours, target float64) bool { return math.Abs(ours-target) <= 0.10*target }
			if !within(nons.Mean, c.nonsTarget) {
				t.Errorf("NONS-ALD MSE %.5f outside 10%% of %.5f", nons.Mean, c.nonsTarget)
			}
			if !within(compat.Mean, c.refNONS) {
				t.Errorf("R-code-compatible NONS-ALD MSE %.5f outside 10%% of the R code's %.5f", compat.Mean, c.refNONS)
			}
			if !within(aogd.Mean, c.refAOGD) {
				t.Errorf("AOGD-ALD MSE %.5f outside 10%% of the R code's %.5f", aogd.Mean, c.refAOGD)
			}
			if math.Abs(float64(nons.Used)-c.refJ) > math.Max(3, 0.15*c.refJ) || aogd.Used != nons.Used {
				t.Errorf("dictionary sizes %d (NONS-ALD), %d (AOGD-ALD); R code's mean %.1f", nons.Used, aogd.Used, c.refJ)
			}
			// The paper's J, where its preprocessing is known (not parkinson).
			if c.paperJ > 0 && c.title != "parkinson" && math.Abs(float64(nons.Used)-c.paperJ) > math.Max(3, 0.10*c.paperJ) {
				t.Errorf("dictionary size %d, paper's %.0f", nons.Used, c.paperJ)
			}
		})
	}
}
