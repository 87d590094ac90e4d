package learner_test

// FORKS on the paper's real data (Wen et al., arXiv 2410.11188v2, §5.1
// Table 1 and §5.2 Table 2), through
// okstream/eval. Skipped when ../shared/datasets is absent. Few
// permutations and a fixed σ from the paper's grid 2^-5…2^7 (the value the
// grid search picks), to keep the CPU cost down; `okstream reproduce
// forks-table1` / `forks-table2` run the full protocol.

import (
	"math"
	"testing"

	"okstream/dataset"
	"okstream/eval"
	"okstream/learner/rng"
)

func forksLoad(t *testing.T, name string) *dataset.Dataset {
	t.Helper()
	return loadShared(t, name, true, "")
}

// §5.1 Table 1, german (unscaled german.numer, B = 50, B̃ = 100, s_p = 50,
// s_m = 10, k = 5, ρ = ⌊0.3·1000⌋ = 300, hinge), σ = 2^6 (the grid's pick).
// The paper reports 26.425 ± 0.562 (mid-20s). We do
// not reach it: on this file every kernel learner we have lands at the
// majority-class rate (30.0 %) ± 1 — FORKS 30.4–30.9, SkeGD 30.1, NOGD
// 30.0 (the LSOKL toolbox's NOGD on our file: 30.0, docs/results.md), and even
// exact online ridge regression on 100 landmark kernel columns plus a bias
// gets 29.5 %. The test therefore checks what holds: FORKS learns to the
// majority rate (≤ 31.5 %, not the 70 % of predicting 0 or the wrong
// class) and is within 1.5 points of NOGD and SkeGD at the same settings,
// as the paper's ordering (FORKS 26.4, SkeGD 25.2, NOGD 26.7) implies. It
// logs the gap to the paper.
func TestForksSec5_1Table1German(t *testing.T) {
	ds := forksLoad(t, "german")
	specs := []string{
		"forks:budget=50,sigma=2^6",
		"skegd:budget=50,sigma=2^5",
		"nogd:budget=50,k=5,eta=0.2,sigma=2^5",
	}
	res, err := eval.Run(ds, specs, []string{"FORKS", "SkeGD", "NOGD"}, eval.Config{Runs: 5, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Models {
		t.Logf("%-6s %6.3f ± %.3f %%  [%s]", m.Label, m.Mean, m.Std, m.Chosen)
	}
	f := res.Models[0]
	t.Logf("FORKS vs the paper's 26.425: %+.2f points", f.Mean-26.425)
	if f.Mean > 31.5 {
		t.Errorf("FORKS %.3f %% on german: worse than the majority class (30 %%) by more than 1.5 points", f.Mean)
	}
	for _, m := range res.Models[1:] {
		if f.Mean > m.Mean+1.5 {
			t.Errorf("FORKS %.3f %% is more than 1.5 points worse than %s (%.3f %%)", f.Mean, m.Label, m.Mean)
		}
	}
}

// §5.2 Table 2, german-1 (b = 500 blocks of one german instance repeated
// r = 10 times, even blocks' labels flipped; B = 200, s_p = 0.75B = 150,
// s_m = 30, k = 20, ρ = ⌊0.005(5000 − 200)⌋ = 24, hinge), one game per run,
// σ = 2^4 for every algorithm (FORKS' grid pick). The paper: FORKS
// 5.142 ± 0.215, SkeGD 11.026, NOGD 28.103, BOGD 32.131. We measure FORKS
// 7.8 ± 0.3 (its Stage 1, kernel OGD over the first ~740 rounds, makes 21 %
// mistakes; Stage 2 is at the game's floor of one coin flip per block) and
// the first-order baselines at 26–30. FORKS must stay below 9.5 % and beat
// every first-order baseline by at least 10 points, as the paper reports.
// (With its own σ picked from the grid BOGD reaches 4.9 % at σ = 2^0: a
// narrow kernel turns it into a per-instance memorizer, which this game
// rewards; the paper's 32.1 suggests it did not pick that σ.)
func TestForksSec5_2AdversarialGerman1(t *testing.T) {
	base := forksLoad(t, "german")
	game := func(run int) (*dataset.Dataset, error) {
		g := dataset.AdversarialGame1
		g.Seed = rng.Derive(7, uint64(run))
		return dataset.Adversarial(base, g)
	}
	ds, err := game(0)
	if err != nil {
		t.Fatal(err)
	}
	const s = "budget=200,sp=150,rho=24,sigma=2^4"
	specs := []string{"forks:" + s, "skegd:" + s, "nogd:budget=200,k=20,eta=0.2,sigma=2^4", "bogd:budget=200,sigma=2^4"}
	res, err := eval.Run(ds, specs, []string{"FORKS", "SkeGD", "NOGD", "BOGD"}, eval.Config{Runs: 2, Workers: 1, NoPermute: true, Sequence: game})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Models {
		t.Logf("%-6s %6.3f ± %.3f %%  %.1f µs/event", m.Label, m.Mean, m.Std, m.NsPerEvent/1e3)
	}
	f := res.Models[0]
	t.Logf("FORKS vs the paper's 5.142: %+.2f points", f.Mean-5.142)
	if f.Mean > 9.5 || math.IsNaN(f.Mean) {
		t.Errorf("FORKS %.3f %% on german-1, want ≤ 9.5 (paper 5.142)", f.Mean)
	}
	for _, m := range res.Models[1:] {
		if f.Mean > m.Mean-10 {
			t.Errorf("FORKS %.3f %% does not beat %s (%.3f %%) by 10 points", f.Mean, m.Label, m.Mean)
		}
	}
}

// Class imbalance (learner/forks.go, "Class imbalance"): on w7a (B = 100,
// 2.997 % positives) the paper's settings (k = 0.1B = 10, s_m = 0.2B = 20,
// C = 1) give the constant majority-class predictor at the σ the grid
// search picks (2^4), and the recommended configuration (s_m = k = B/2,
// no slab projection, every other setting the paper's) learns: at least
// 0.3 point below the majority rate over 2 permutations at σ = 2^2.
func TestForksImbalancedW7a(t *testing.T) {
	if testing.Short() {
		t.Skip("two FORKS configurations over 2 × 24,692 events")
	}
	ds := forksLoad(t, "w7a")
	pos := 0
	for _, y := range ds.Y {
		if y > 0 {
			pos++
		}
	}
	majority := 100 * float64(min(pos, ds.Len()-pos)) / float64(ds.Len())
	res, err := eval.Run(ds, []string{
		"forks:budget=100,sigma=2^4",
		"forks:budget=100,preset=wide,sigma=2^2",
	}, []string{"paper", "recommended"}, eval.Config{Runs: 2, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	paper, rec := res.Models[0], res.Models[1]
	t.Logf("majority %.3f %%; paper settings %.3f ± %.3f; recommended %.3f ± %.3f", majority, paper.Mean, paper.Std, rec.Mean, rec.Std)
	if math.Abs(paper.Mean-majority) > 0.1 {
		t.Errorf("paper settings %.3f %%: no longer the majority rate %.3f %% — update the doc comment of forks.go", paper.Mean, majority)
	}
	if rec.Mean > majority-0.3 {
		t.Errorf("recommended configuration %.3f %%: not 0.3 point below the majority rate %.3f %%", rec.Mean, majority)
	}
}
