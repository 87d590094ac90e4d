package paper

import (
	"fmt"
	"math"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"okstream/dataset"
	"okstream/eval"
	"okstream/internal/progress"
	"okstream/learner"
)

// The budget sweep: time per event of FORKS, SkeGD, NOGD and PROS-N-KONS
// against the budget B, the paper's claim that FORKS' cost is linear in B
// (§3.5: O(s_m k + k²) ≤ O(Bk + k²) per regular round — linear for a fixed
// k, quadratic at the experiments' k = 0.1B, so both regimes are run;
// update rounds O(μ + s_p k² + s_m s_p k + k³)) while budgeted PROS-N-KONS
// is O(B²) per step (§3.5) — the paper's Fig. 5b shows the KuaiRec
// version, which we do not have the data for. A timing experiment: every
// (regime, B, algorithm) triple is one eval.Run with one worker (so
// per-event times are not inflated by a parallel run's memory traffic),
// fixed σ (no grid), the dataset's own permutations; it records B,
// µs/event (learning loop only: Stage 1, INIT and update rounds included),
// the steady-state µs/event of the regular rounds (steadyUsPerEvent) and
// the mistake rate, and writes markdown tables and a log–log plot per
// regime.

var forksSweepBudgets = []int{50, 100, 200, 300, 400, 500, 700, 1000}

// forksSweepFixedK is the rank of the fixed-rank regime: the paper's k at
// B = 100 (Table 1's large datasets).
const forksSweepFixedK = 10

// sweepAlgosWithRank builds a sweep's lines with the sketch sizes at the
// paper's ratios (B̃ = 2B, s_p = B, s_m = 0.2B, ρ = ⌊0.3N⌋) and the rank k(B)
// for FORKS, SkeGD and NOGD; withPROS adds PROS-N-KONS capped at B
// dictionary atoms (the paper's budgeted variant; it has no rank).
func sweepAlgosWithRank(k func(B int) int, withPROS bool) []Algorithm {
	sketch := func(name string) func(d Dataset) string {
		return func(d Dataset) string {
			return fmt.Sprintf("%s:budget=%d,buffer=%d,sp=%d,sm=%d,k=%d,theta=0.3,sigma=%s", name, d.B, 2*d.B, d.B, d.B/5, k(d.B), d.Sigma)
		}
	}
	algos := []Algorithm{
		{Label: "FORKS", Spec: sketch("forks")},
		{Label: "SkeGD", Spec: sketch("skegd")},
		{Label: "NOGD", Spec: func(d Dataset) string {
			return fmt.Sprintf("nogd:budget=%d,k=%d,eta=0.2,sigma=%s", d.B, k(d.B), d.Sigma)
		}},
	}
	if withPROS {
		algos = append(algos, Algorithm{Label: "PROS-N-KONS", Spec: func(d Dataset) string {
			return fmt.Sprintf("pros-n-kons:bmax=%d,loss=hinge,sigma=%s", d.B, d.Sigma)
		}})
	}
	return algos
}

// forksSweepAlgos: the paper's ratios at every B (k = 0.1B), with
// PROS-N-KONS. forksSweepAlgosFixedK: the regime of the paper's complexity
// claim (§3.5: a regular round costs O(s_m k + k²) ≤ O(Bk + k²), "linear
// time complexity w.r.t. the budget", i.e. with k held fixed): k = 10 at
// every B, everything else as above.
var (
	forksSweepAlgos       = sweepAlgosWithRank(func(B int) int { return B / 10 }, true)
	forksSweepAlgosFixedK = sweepAlgosWithRank(func(int) int { return forksSweepFixedK }, false)
)

// sweepRegime is one way of sizing the learners with B.
type sweepRegime struct {
	Slug, Title, Note string
	Algos             []Algorithm
}

var forksSweepRegimes = []sweepRegime{
	{Slug: "ratios", Title: "the paper's ratios (k = 0.1B, s_m = 0.2B, s_p = B)", Algos: forksSweepAlgos,
		Note: "The experiments' setting. The regular round is O(s_m d + s_m k + k²) = O(B²) here (k² = B²/100), so the per-event time cannot be linear in B at large B; FORKS' constant is small enough that the quadratic term only shows from B ≈ 300 on."},
	{Slug: "fixed-k", Title: fmt.Sprintf("fixed rank k = %d (s_m = 0.2B, s_p = B)", forksSweepFixedK), Algos: forksSweepAlgosFixedK,
		Note: "The setting of the paper's complexity claim (§3.5: O(s_m k + k²) ≤ O(Bk + k²) per regular round, \"linear time complexity w.r.t. the budget\"): only s_m, s_p and the buffer grow with B. PROS-N-KONS has no rank parameter; its numbers are in the table above."},
}

func init() {
	register(&Experiment{
		ID:    "forks-budget-sweep",
		Title: "FORKS paper, time per event against the budget B (FORKS, SkeGD, NOGD, PROS-N-KONS)",
		Paper: "Wen et al., Fast Second-Order Online Kernel Learning through Incremental Matrix Sketching and Decomposition, arXiv 2410.11188v2 (IJCAI 2025), §3.5 and Fig. 5b",
		Task:  "classification",
		Runs:  3,
		Datasets: []Dataset{
			{Key: "cod-rna", Title: "codrna", Sigma: "2^6", Variants: []Variant{{Name: "unscaled", Scale: "none"}},
				Note: "σ = 2^6, FORKS' Table 1 grid pick on this file"},
		},
		Algos: forksSweepAlgos,
		Intro: `Per-event time of the learning loop (Stage 1, INIT and the update rounds included, I/O
excluded) for B = 50, 100, 200, 300, 400, 500, 700, 1000, hinge loss, one fixed σ, runs
executed one at a time (one worker), in two regimes: the paper's ratios (FORKS and SkeGD:
B̃ = 2B, s_p = B, s_m = 0.2B, k = 0.1B, ρ = ⌊0.3N⌋; NOGD: k = 0.1B; PROS-N-KONS: at most B
dictionary atoms), and a fixed rank k = 10 with everything else as before. The paper claims
FORKS' cost is linear in B and budgeted PROS-N-KONS' quadratic (§3.5: O(s_m k + k²) ≤
O(Bk + k²) per regular round — linear in B for a fixed k); its Fig. 5b shows this on KuaiRec,
which we do not have. Each regime has two time tables. "µs/event" is the whole pass
amortized over the 59,535 events. "steady µs/event" is the regular-round cost the paper
analyses: the second half of one permutation with the update rounds switched off (ρ = 10⁹),
so INIT and Stage 1 are behind and no update round falls inside. The amortized time also
contains one-off costs that are cubic in B and spread over the stream: INIT (a B̃×B̃ Gram
matrix, the exact top-k of the s_p×s_p Φ_pp — one tridiagonal reduction, 0.5 s at s_p =
1000 — and Φ_pm^†) and the three update rounds (Φ_pm^†, an O(s_p s_m²) SVD, 80 ms at s_p =
1000; the paper's update-round cost O(μ + s_p k² + s_m s_p k + k³) has no such term, but it
does not say how Z = Φ_pm^† V Σ^{1/2} is obtained). SkeGD recomputes an exact top-k of Φ_pp
every update round. Times depend on the machine and its load; compare the slopes.
PROS-N-KONS' time flattens once its dictionary stops growing (its mistake rate is constant
from B = 400 on: the cap no longer binds).`,

		Custom: runBudgetSweep,
	})
}

// sweepPoint is one (dataset, B, algorithm) measurement.
type sweepPoint struct {
	Dataset    string  `json:"dataset"`
	Variant    string  `json:"variant"`
	Regime     string  `json:"regime,omitempty"` // forks-budget-sweep: how the learners are sized with B
	B          int     `json:"budget"`
	Algorithm  string  `json:"algorithm"`
	Spec       string  `json:"spec"`
	UsPerEvent float64 `json:"us_per_event"`
	// SteadyUs (forks-budget-sweep): µs/event over the second half of one
	// permutation with update rounds disabled — the regular-round cost.
	SteadyUs float64 `json:"steady_us_per_event,omitempty"`
	Seconds  float64 `json:"seconds_per_pass"`
	Mistake  float64 `json:"mistake_rate_pct"`
	Std      float64 `json:"mistake_std"`
	Runs     int     `json:"runs"`
	N        int     `json:"n"`
	// Won holds a grid's winning values (a grid spec only).
	Won map[string]string `json:"won,omitempty"`
}

// sweepAlgo is one line of a budget sweep: Spec builds the learner spec at
// budget B; Once marks a learner whose size does not depend on B (run at
// the first budget only and shown as a single point, like the paper's
// budgeted PROS-N-KONS with B_max = 100).
type sweepAlgo struct {
	Label string
	Spec  func(B int) string
	Once  bool
}

// sweepAlgos binds an experiment's algorithms to one dataset entry.
func sweepAlgos(algos []Algorithm, d Dataset) []sweepAlgo {
	out := make([]sweepAlgo, len(algos))
	for i, a := range algos {
		out[i] = sweepAlgo{Label: a.Label, Spec: func(B int) string { db := d; db.B = B; return a.Spec(db) }}
	}
	return out
}

func sweepLabels(algos []sweepAlgo) []string {
	out := make([]string, len(algos))
	for i, a := range algos {
		out[i] = a.Label
	}
	return out
}

// runSweep runs every algorithm at every budget over ds with cfg (one
// eval.Run per budget, the given Workers), and returns one point per
// (B, algorithm) and the labels of algorithms not registered in this
// build. what names the sweep in progress bars and errors.
func runSweep(ds *dataset.Dataset, budgets []int, algos []sweepAlgo, cfg eval.Config, o Options, what string) ([]sweepPoint, []string, error) {
	var pts []sweepPoint
	var skipped []string
	for bi, B := range budgets {
		var specs, labels []string
		for _, a := range algos {
			if a.Once && bi > 0 {
				continue
			}
			s := a.Spec(B)
			if name, _, err := learner.ParseSpec(s); err == nil && learner.Describe(name) == nil {
				if !contains(skipped, a.Label) {
					skipped = append(skipped, a.Label)
				}
				continue
			}
			specs, labels = append(specs, s), append(labels, a.Label)
		}
		if len(specs) == 0 {
			if bi == 0 {
				return nil, skipped, fmt.Errorf("%s: none of the learners is registered in this build", what)
			}
			continue
		}
		c := cfg
		if o.Progress != nil {
			total, err := eval.TotalEvents(specs, ds.Len(), c)
			if err != nil {
				return nil, skipped, err
			}
			c.Progress = progress.New(o.Progress, fmt.Sprintf("%s B=%d", what, B), total, "events")
		}
		res, err := eval.Run(ds, specs, labels, c)
		if err != nil {
			return nil, skipped, fmt.Errorf("%s B=%d: %w", what, B, err)
		}
		for i, m := range res.Models {
			pts = append(pts, sweepPoint{B: B, Algorithm: m.Label, Spec: specs[i],
				UsPerEvent: m.NsPerEvent / 1e3, Seconds: m.Seconds, Mistake: m.Mean, Std: m.Std, Runs: res.Runs, N: res.N, Won: m.Won})
		}
	}
	return pts, skipped, nil
}

// runBudgetSweep is the Custom runner of a timing experiment: for each
// dataset variant and budget in forksSweepBudgets, one eval.Run of the
// experiment's algorithms with Workers = 1.
func runBudgetSweep(e *Experiment, o Options) (*Report, error) {
	rep := &Report{Exp: e, Runs: o.Runs, Seed: o.Seed}
	var points []sweepPoint
	var body strings.Builder
	var skipped []string
	err := e.eachCell(o, func(d Dataset, v Variant) error {
		ds, _, _, err := e.load(d, v)
		if err != nil {
			return fmt.Errorf("%s %s/%s: %w", e.ID, d.Title, v.Name, err)
		}
		var majority float64 // ≈maj marks in the mistake-rate tables (the file's legend explains them)
		if e.Task == "classification" {
			majority = MajorityRate(ds)
		}
		fmt.Fprintf(&body, "### %s (%s, n = %d, σ = %s)\n\n", d.Title, v.Name, ds.Len(), d.Sigma)
		if d.Note != "" {
			body.WriteString(d.Note + ".\n\n")
		}
		for _, rg := range forksSweepRegimes {
			algos := sweepAlgos(rg.Algos, d)
			cellPts, sk, err := runSweep(ds, forksSweepBudgets, algos, eval.Config{Runs: o.Runs, Seed: o.Seed, Workers: 1}, o, fmt.Sprintf("%s %s/%s %s", e.ID, d.Title, v.Name, rg.Slug))
			if err != nil {
				return err
			}
			for _, l := range sk {
				if !contains(skipped, l) {
					skipped = append(skipped, l)
				}
			}
			for i := range cellPts {
				cellPts[i].Dataset, cellPts[i].Variant, cellPts[i].Regime = d.Title, v.Name, rg.Slug
				us, err := steadyUsPerEvent(ds, cellPts[i].Spec, o.Seed)
				if err != nil {
					return fmt.Errorf("%s %s B=%d steady state: %w", e.ID, cellPts[i].Algorithm, cellPts[i].B, err)
				}
				cellPts[i].SteadyUs = us
			}
			points = append(points, cellPts...)
			plotPath, err := o.writePlot(fmt.Sprintf("%s-%s-%s-%s.png", e.ID, slug(d.Title), slug(v.Name), rg.Slug), func(path string) error {
				return plotSweep(cellPts, sweepLabels(algos), fmt.Sprintf("%s (%s), %s", d.Title, v.Name, rg.Slug), path)
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(&body, "#### %s\n\n%s\n\n", rg.Title, rg.Note)
			writeSweepTables(&body, forksSweepBudgets, cellPts, sweepLabels(algos), true, false, majority)
			if plotPath != "" {
				fmt.Fprintf(&body, "![%s %s time per event against B, %s](%s)\n\n", d.Title, v.Name, rg.Slug, plotPath)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&body, "Not run (learner not registered in this build): %s.\n\n", strings.Join(skipped, ", "))
	}
	rep.Body = body.String()
	rep.Data = struct {
		Experiment string       `json:"experiment"`
		Runs       int          `json:"runs"`
		Seed       uint64       `json:"seed"`
		Points     []sweepPoint `json:"points"`
	}{e.ID, o.Runs, o.Seed, points}
	return rep, nil
}

// steadyColumn heads the steady-state table of a sweep.
const steadyColumn = "steady µs/event"

// steadyUsPerEvent returns the mean time of Learn, in µs, over the second
// half of permutation 0 of ds, for spec with update rounds disabled
// (FORKS and SkeGD: rho = 10⁹): the regular-round cost the paper's §3.5
// analyses (O(s_m k + k²)), without Stage 1, INIT and the update rounds,
// which fall in the first half or are switched off. One pass, one
// goroutine; the learner does not allocate there, so the time is the
// arithmetic's.
func steadyUsPerEvent(ds *dataset.Dataset, spec string, seed uint64) (float64, error) {
	name, _, err := learner.ParseSpec(spec)
	if err != nil {
		return 0, err
	}
	if name == "forks" || name == "skegd" {
		spec += ",rho=1000000000"
	}
	l, err := learner.New(spec, ds.Dim)
	if err != nil {
		return 0, err
	}
	perm := dataset.Permutation(ds.Len(), seed, 0)
	half := len(perm) / 2
	var t0 time.Time
	for i, j := range perm {
		if i == half {
			t0 = time.Now()
		}
		l.Learn(ds.X[j], ds.Y[j])
	}
	n := len(perm) - half
	if n == 0 {
		return 0, nil
	}
	return float64(time.Since(t0).Nanoseconds()) / 1e3 / float64(n), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sweepLookup(pts []sweepPoint, B int, algo string) *sweepPoint {
	for i := range pts {
		if pts[i].B == B && pts[i].Algorithm == algo {
			return &pts[i]
		}
	}
	return nil
}

// writeSweepTables renders a sweep: µs/event (with the fitted log–log
// slope, cost ∝ B^slope, if slope) and mistake rate per budget and
// algorithm — mistake rate first if mistakesFirst; "–" where an algorithm
// has no point at that budget.
//
// majority (%) marks the mistake-rate cells at the majority-class rate
// (markMajority; 0: no marks).
func writeSweepTables(b *strings.Builder, budgets []int, pts []sweepPoint, labels []string, slope, mistakesFirst bool, majority float64) {
	var present []string
	for _, l := range labels {
		for _, p := range pts {
			if p.Algorithm == l {
				present = append(present, l)
				break
			}
		}
	}
	tables := []string{"µs/event", "mistake %"}
	if mistakesFirst {
		tables[0], tables[1] = tables[1], tables[0]
	}
	for _, p := range pts {
		if p.SteadyUs > 0 {
			tables = append(tables[:1], append([]string{steadyColumn}, tables[1:]...)...)
			break
		}
	}
	for _, what := range tables {
		b.WriteString("| B |")
		sep := "|---|"
		for _, a := range present {
			fmt.Fprintf(b, " %s %s |", a, what)
			sep += "---|"
		}
		b.WriteString("\n" + sep + "\n")
		for _, B := range budgets {
			fmt.Fprintf(b, "| %d |", B)
			for _, a := range present {
				p := sweepLookup(pts, B, a)
				switch {
				case p == nil:
					b.WriteString(" – |")
				case what == "µs/event":
					fmt.Fprintf(b, " %.2f |", p.UsPerEvent)
				case what == steadyColumn && p.SteadyUs > 0:
					fmt.Fprintf(b, " %.2f |", p.SteadyUs)
				case what == steadyColumn:
					b.WriteString(" – |")
				default:
					fmt.Fprintf(b, " %s |", markMajority(fmt.Sprintf("%.3f ± %.3f", p.Mistake, p.Std), p.Mistake, majority))
				}
			}
			b.WriteString("\n")
		}
		if (what == "µs/event" || what == steadyColumn) && slope {
			metric := func(p sweepPoint) float64 { return p.UsPerEvent }
			if what == steadyColumn {
				metric = func(p sweepPoint) float64 { return p.SteadyUs }
			}
			b.WriteString("| slope of log(µs/event) on log B |")
			for _, a := range present {
				if sl := sweepSlope(pts, a, metric); math.IsNaN(sl) {
					b.WriteString(" – |")
				} else {
					fmt.Fprintf(b, " %.2f |", sl)
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
}

// sweepSlope is the least-squares slope of log(metric) against log B
// (metric: µs/event, or the steady-state µs/event).
func sweepSlope(pts []sweepPoint, algo string, metric func(sweepPoint) float64) float64 {
	var xs, ys []float64
	for _, p := range pts {
		if v := metric(p); p.Algorithm == algo && v > 0 {
			xs = append(xs, math.Log(float64(p.B)))
			ys = append(ys, math.Log(v))
		}
	}
	if len(xs) < 2 {
		return math.NaN()
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(xs))
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	return sxy / sxx
}

// plotSweep draws µs/event against B on log–log axes, one line per
// algorithm.
func plotSweep(pts []sweepPoint, labels []string, title, path string) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "budget B"
	p.Y.Label.Text = "µs per event"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	p.Legend.Left = true
	if err := addSweepLines(p, pts, labels, func(q sweepPoint) (float64, float64, bool) {
		return float64(q.B), q.UsPerEvent, q.UsPerEvent > 0
	}); err != nil {
		return err
	}
	// The steady-state (regular-round) times, dashed, where measured.
	if err := addSweepLinesStyled(p, pts, labels, func(q sweepPoint) (float64, float64, bool) {
		return float64(q.B), q.SteadyUs, q.SteadyUs > 0
	}, " (steady)", []vg.Length{vg.Points(4), vg.Points(3)}); err != nil {
		return err
	}
	p.Add(plotter.NewGrid())
	return eval.SavePlot(p, path, 7, 4.5)
}

// addSweepLines adds one line with points per label (colours by label
// index, as every okstream plot) through the points xy maps to plot
// coordinates (ok false: left out).
func addSweepLines(p *plot.Plot, pts []sweepPoint, labels []string, xy func(sweepPoint) (x, y float64, ok bool)) error {
	return addSweepLinesStyled(p, pts, labels, xy, "", nil)
}

// addSweepLinesStyled is addSweepLines with a legend suffix and a dash
// pattern (nil: solid).
func addSweepLinesStyled(p *plot.Plot, pts []sweepPoint, labels []string, xy func(sweepPoint) (x, y float64, ok bool), suffix string, dashes []vg.Length) error {
	for i, label := range labels {
		var line plotter.XYs
		for _, q := range pts {
			if x, y, ok := xy(q); ok && q.Algorithm == label {
				line = append(line, plotter.XY{X: x, Y: y})
			}
		}
		if len(line) == 0 {
			continue
		}
		l, points, err := plotter.NewLinePoints(line)
		if err != nil {
			return err
		}
		l.Color = eval.Palette[i%len(eval.Palette)]
		l.Width = vg.Points(1.5)
		l.Dashes = dashes
		points.Color = l.Color
		points.Radius = vg.Points(3)
		p.Add(l, points)
		p.Legend.Add(label+suffix, l, points)
	}
	return nil
}
