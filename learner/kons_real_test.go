package learner_test

// PROS-N-KONS and CON-KONS on the shared datasets, run through okstream/eval:
// the FORKS paper's Table 1 (classification, unscaled files) and the ALD
// paper's Table 3 (regression, with the preprocessing and kernel widths under
// which the authors' R code was run on our files, docs/results.md). Few permutations and one worker; the tests skip when
// ../shared/datasets is absent.

import (
	"math"
	"os"
	"strconv"
	"testing"

	"okstream/eval"
)

func konsRuns(def int) int {
	if s := os.Getenv("OKSTREAM_KONS_RUNS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return def
}

// Table 1 of the FORKS paper (unscaled files, hinge loss,
// PROS-N-KONS adaptive). The paper gives no PROS-N-KONS hyper-parameters;
// σ = 2^7 is the best of the paper's grid 2^-5..2^7 on all three files, α, β,
// ε, C, σ_ONS are the defaults (the ALD paper's), and γ is the best of
// {1, 10, 30, 100} on 5 permutations: larger γ means a smaller dictionary
// and fewer restarts. With the default γ = 1 the 20-permutation means are
// german 33.98, svmguide3 25.25, spambase (γ = 10) 36.21.
var konsForksTable1 = []struct {
	data, spec string
	paper      float64
}{
	{"german", "pros-n-kons:sigma=2^7,gamma=10", 31.235},
	{"svmguide3", "pros-n-kons:sigma=2^7", 24.529},
	{"spambase", "pros-n-kons:sigma=2^7,gamma=100", 32.227},
}

// FORKS paper Table 1: PROS-N-KONS's mean mistake rate is within 3 points of
// the paper's on german, svmguide3 and spambase.
func TestProsNKonsForksTable1(t *testing.T) {
	for _, c := range konsForksTable1 {
		t.Run(c.data, func(t *testing.T) {
			ds := loadShared(t, c.data, true, "")
			runs := konsRuns(10)
			res, err := eval.Run(ds, []string{c.spec}, nil, eval.Config{Runs: runs, Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			m := res.Models[0]
			t.Logf("%s: %.3f ± %.3f %% over %d runs, paper %.3f (%+.2f), dictionary %d  [%s]", c.data, m.Mean, m.Std, runs, c.paper, m.Mean-c.paper, m.Used, m.Chosen)
			if math.Abs(m.Mean-c.paper) > 3 {
				t.Errorf("%.3f%% is more than 3 points from the paper's %.3f", m.Mean, c.paper)
			}
		})
	}
}

// The ALD paper's Table 3 rows for PROS-N-KONS and CON-KONS:
// α = 5 with the per-dataset γ of the authors' runs (docs/algorithms/regression.md), β = 1, ε = 0.5, C = 1; MSE and
// dictionary size J (PROS-N-KONS / CON-KONS).
var konsALDTable3 = []struct {
	title, key, scale, sigma, gamma string
	pros, con                       float64
	prosJ, conJ                     float64
}{
	{"elevators", "elevators", "minmax11+y01", "8", "10", 0.00873, 0.00452, 32, 34},
	{"cpusmall", "cpusmall", "minmax01+y01", "2", "5", 0.02939, 0.01166, 42, 42},
	{"bank", "bank32nh", "minmax11+y01", "12", "1", 0.02677, 0.01663, 179, 177},
	{"ailerons", "ailerons", "minmax11+y01", "8", "1", 0.01509, 0.00320, 88, 84},
	// The paper's parkinson variant is unknown (docs/algorithms/regression.md); ours is
	// total_UPDRS with the 16 voice features: no band, only the ordering.
	{"parkinson", "parkinsons", "minmax11+y01", "8", "0.5", 0.06420, 0.05553, 33, 31},
}

// ALD paper Table 3: the code-compatible PROS-N-KONS (inverse=old) and
// CON-KONS are within 10% (relative) of the paper's MSE and their dictionary
// within 15% of its size, on elevators, cpusmall, bank and ailerons; CON-KONS
// beats PROS-N-KONS everywhere. 2 permutations (OKSTREAM_KONS_RUNS for more).
func TestKONSALDTable3(t *testing.T) {
	if testing.Short() {
		t.Skip("real-data reproduction (up to ~20 s per dataset)")
	}
	for _, c := range konsALDTable3 {
		t.Run(c.title, func(t *testing.T) {
			ds := loadShared(t, c.key, false, c.scale)
			common := "sigma=" + c.sigma + ",alpha=5,gamma=" + c.gamma
			specs := []string{
				"pros-n-kons:loss=square,inverse=old," + common,
				"con-kons:" + common,
				"pros-n-kons:loss=square," + common,
			}
			runs := konsRuns(2)
			res, err := eval.Run(ds, specs, []string{"PROS-N-KONS (code)", "CON-KONS", "PROS-N-KONS"}, eval.Config{Runs: runs, Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			pros, con, prosNew := res.Models[0], res.Models[1], res.Models[2]
			t.Logf("%s (n = %d, d = %d, %s, σ = %s, γ = %s, %d runs):", c.title, res.N, res.Dim, c.scale, c.sigma, c.gamma, runs)
			t.Logf("  PROS-N-KONS inverse=old %.5f ± %.5f  paper %.5f (%+.1f%%)  J %d (paper %.0f)  %.1f µs/event",
				pros.Mean, pros.Std, c.pros, 100*(pros.Mean/c.pros-1), pros.Used, c.prosJ, pros.NsPerEvent/1e3)
			t.Logf("  PROS-N-KONS inverse=new %.5f ± %.5f", prosNew.Mean, prosNew.Std)
			t.Logf("  CON-KONS                %.5f ± %.5f  paper %.5f (%+.1f%%)  J %d (paper %.0f)  %.1f µs/event",
				con.Mean, con.Std, c.con, 100*(con.Mean/c.con-1), con.Used, c.conJ, con.NsPerEvent/1e3)
			if con.Mean >= pros.Mean {
				t.Errorf("CON-KONS %.5f does not beat PROS-N-KONS %.5f", con.Mean, pros.Mean)
			}
			if c.title == "parkinson" {
				return
			}
			for _, m := range []struct {
				name     string
				got, ref float64
				j, refJ  float64
			}{{"PROS-N-KONS", pros.Mean, c.pros, float64(pros.Used), c.prosJ}, {"CON-KONS", con.Mean, c.con, float64(con.Used), c.conJ}} {
				if math.Abs(m.got-m.ref) > 0.10*m.ref {
					t.Errorf("%s MSE %.5f outside 10%% of the paper's %.5f", m.name, m.got, m.ref)
				}
				if math.Abs(m.j-m.refJ) > 0.15*m.refJ {
					t.Errorf("%s dictionary %.0f, paper's %.0f", m.name, m.j, m.refJ)
				}
			}
		})
	}
}
