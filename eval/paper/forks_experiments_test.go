package paper

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"okstream/dataset"
	"okstream/eval"
	"okstream/learner"
	"okstream/learner/rng"
)

// forksToyFile writes a small binary LIBSVM dataset and returns its path.
func forksToyFile(t *testing.T, n int) string {
	t.Helper()
	src := rng.New(5)
	var b strings.Builder
	for i := 0; i < n; i++ {
		x0, x1 := 2*src.Float64()-1, 2*src.Float64()-1
		y := -1
		if x0*x0+x1*x1 < 0.5 {
			y = 1
		}
		fmt.Fprintf(&b, "%d 1:%g 2:%g\n", y, x0, x1)
	}
	path := filepath.Join(t.TempDir(), "toy.libsvm")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every FORKS-paper experiment builds a valid learner for every algorithm
// that is registered, on every dataset (dimension 8 stands in for the
// data), and Table 1's FORKS/SkeGD specs resolve ρ = ⌊0.3N⌋ from the
// horizon eval sets.
func TestForksExperimentsAreWellFormed(t *testing.T) {
	for _, id := range []string{"forks-table1", "forks-table2", "forks-table3", "forks-budget-sweep"} {
		e, err := Get(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range e.Datasets {
			for _, a := range e.Algos {
				for _, B := range []int{d.B, 50, 1000} {
					if B == 0 {
						continue
					}
					db := d
					db.B = B
					spec := a.Spec(db)
					name, _, err := learner.ParseSpec(spec)
					if err != nil {
						t.Fatalf("%s %s %s: %v", id, d.Title, a.Label, err)
					}
					if learner.Describe(name) == nil {
						continue // e.g. pros-n-kons before it lands: the runner skips it
					}
					cands, err := eval.Expand(spec)
					if err != nil {
						t.Fatalf("%s %s %s: %v", id, d.Title, a.Label, err)
					}
					if _, err := learner.New(cands[0].Spec, 8); err != nil {
						t.Fatalf("%s %s %s: %v", id, d.Title, a.Label, err)
					}
				}
			}
		}
	}
	e, _ := Get("forks-table1")
	for _, a := range e.Algos {
		if a.Label != "FORKS" && a.Label != "SkeGD" {
			continue
		}
		cands, _ := eval.Expand(a.Spec(e.Datasets[0]))
		l, err := learner.New(cands[0].Spec+",horizon=1000", 24)
		if err != nil {
			t.Fatal(err)
		}
		if s := l.Info().Spec; !strings.Contains(s, "rho=300,") || !strings.Contains(s, "buffer=100,") || !strings.Contains(s, "sm=10,") || !strings.Contains(s, "k=5,") {
			t.Fatalf("%s on german: %s", a.Label, s)
		}
	}
	t2, _ := Get("forks-table2")
	for _, a := range t2.Algos {
		if a.Label == "FORKS" && !strings.Contains(a.Spec(t2.Datasets[0]), "rho=24,") {
			t.Fatalf("Table 2 FORKS spec %s, want ρ = ⌊0.005(5000 − 200)⌋ = 24", a.Spec(t2.Datasets[0]))
		}
	}
}

// A Game dataset (Tables 2–3) runs a fresh adversarial game per run,
// presented in order: run r's metric is exactly the progressive mistake
// rate of the learner on dataset.Adversarial(base, game with GameSeed(seed,
// r)) in row order.
func TestForksGameCellsPlayOneGamePerRun(t *testing.T) {
	path := forksToyFile(t, 300)
	g := dataset.AdversarialGame{Blocks: 40, Repeats: 5}
	e := &Experiment{ID: "toy-game", Task: "classification", Runs: 3, Tolerance: 1,
		Datasets: []Dataset{{Key: path, Title: "toy-1", B: 20, Game: &g, Variants: []Variant{{Name: "raw", Scale: "none"}}}},
		Algos: []Algorithm{
			{Label: "NOGD", Spec: func(d Dataset) string { return fmt.Sprintf("nogd:budget=%d,k=5,sigma=0.5", d.B) }},
			{Label: "ghost", Spec: func(d Dataset) string { return "no-such-learner:budget=3" }},
		},
	}
	rep, err := e.Run(Options{Workers: 2, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cells[0]
	if c.Result.N != g.Len() || len(c.Skipped) != 1 || c.Skipped[0] != "ghost" {
		t.Fatalf("n = %d (want %d), skipped %v", c.Result.N, g.Len(), c.Skipped)
	}
	base, _ := dataset.Load(path, dataset.Options{})
	if err := base.BinaryLabels(nil); err != nil {
		t.Fatal(err)
	}
	m := c.Result.Models[0]
	distinct := false
	for r := 0; r < 3; r++ {
		gg := g
		gg.Seed = GameSeed(4, r)
		ds, err := dataset.Adversarial(base, gg)
		if err != nil {
			t.Fatal(err)
		}
		l, _ := learner.New(fmt.Sprintf("nogd:budget=20,k=5,sigma=0.5,horizon=%d", g.Len()), ds.Dim)
		mistakes := 0
		for i := range ds.X {
			if learner.Mistake(l.Learn(ds.X[i], ds.Y[i]), ds.Y[i]) {
				mistakes++
			}
		}
		if want := 100 * float64(mistakes) / float64(ds.Len()); math.Abs(m.PerRun[r]-want) > 1e-12 {
			t.Fatalf("run %d: reported %v, recomputed on the run's game in order %v", r, m.PerRun[r], want)
		}
		distinct = distinct || m.PerRun[r] != m.PerRun[0]
	}
	if !distinct {
		t.Fatal("every run gave the same metric: the games are not per run")
	}
	md := rep.Markdown("okstream reproduce toy-game", 0)
	if !strings.Contains(md, "adversarial game b=40,r=5") || !strings.Contains(md, "not run") {
		t.Fatalf("markdown lacks the game command note or the skipped row:\n%s", md)
	}
}

// The budget sweep runs every budget with one worker in both regimes (the
// paper's ratios and fixed k) and reports µs/event and mistakes per
// (regime, B, algorithm), a slope, a plot per regime and the raw points.
func TestForksBudgetSweepRunner(t *testing.T) {
	path := forksToyFile(t, 400)
	saved := forksSweepBudgets
	forksSweepBudgets = []int{50, 60}
	defer func() { forksSweepBudgets = saved }()
	e := &Experiment{ID: "toy-sweep", Task: "classification", Runs: 1,
		Datasets: []Dataset{{Key: path, Title: "toy", Sigma: "0.7", Variants: []Variant{{Name: "raw", Scale: "none"}}}},
		Algos:    forksSweepAlgos, Custom: runBudgetSweep}
	img := t.TempDir()
	rep, err := e.Run(Options{ImgDir: img, ImgRel: "img"})
	if err != nil {
		t.Fatal(err)
	}
	pts := rep.Data.(struct {
		Experiment string       `json:"experiment"`
		Runs       int          `json:"runs"`
		Seed       uint64       `json:"seed"`
		Points     []sweepPoint `json:"points"`
	}).Points
	want := map[string]int{}
	for _, rg := range forksSweepRegimes {
		for _, a := range rg.Algos {
			if name, _, _ := learner.ParseSpec(a.Spec(Dataset{B: 50, Sigma: "1"})); learner.Describe(name) != nil {
				want[rg.Slug] += 2 // budgets
			}
		}
	}
	got := map[string]int{}
	for _, p := range pts {
		got[p.Regime]++
		if !(p.UsPerEvent > 0) || !(p.SteadyUs > 0) || p.N != 400 || p.Runs != 1 {
			t.Fatalf("bad point %+v", p)
		}
		if p.Regime == "fixed-k" && p.Algorithm == "FORKS" && !strings.Contains(p.Spec, fmt.Sprintf(",k=%d,", forksSweepFixedK)) {
			t.Fatalf("fixed-k point with spec %s", p.Spec)
		}
	}
	if len(got) != len(want) || got["ratios"] != want["ratios"] || got["fixed-k"] != want["fixed-k"] {
		t.Fatalf("points per regime %v, want %v", got, want)
	}
	if !strings.Contains(rep.Body, "| 60 |") || !strings.Contains(rep.Body, "slope") || !strings.Contains(rep.Body, "fixed rank k = 10") || !strings.Contains(rep.Body, steadyColumn) {
		t.Fatalf("body:\n%s", rep.Body)
	}
	for _, rg := range forksSweepRegimes {
		name := "toy-sweep-toy-raw-" + rg.Slug + ".png"
		if !strings.Contains(rep.Body, "img/"+name) {
			t.Fatalf("body lacks %s:\n%s", name, rep.Body)
		}
		if _, err := os.Stat(filepath.Join(img, name)); err != nil {
			t.Fatal(err)
		}
	}
}
