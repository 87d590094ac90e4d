package paper

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"okstream/dataset"
	"okstream/eval"
	"okstream/internal/progress"
	"okstream/learner"
	"okstream/learner/kernel"
	"okstream/learner/linalg"
	"okstream/learner/rng"
)

// The rank-k ceiling of FORKS' model class on Table 1's files where FORKS
// misses the paper by more than the band (german, svmguide3,
// spambase; unscaled, as Table 1).
//
// FORKS predicts with a linear function of k = 0.1B features that are a
// rank-k approximation of the Gaussian kernel, learnt by the Online Newton
// Step with the slab projection (Eq. 10). The ceiling gives that ONS — the
// same code, learner.FeatureONS — the best rank-k features there are:
// the exact rank-k Nyström map of m = min(N, 1000) landmarks drawn
// uniformly from the whole file (for german, N = 1000, it is the exact
// kernel PCA of the file), computed before the stream starts. This is an
// oracle: it sees every example's position in kernel space before the
// first round, it has no Stage 1 (every round is predicted by the ONS) and
// no resets, and σ is picked on the reported runs themselves (the paper's
// protocol, which favours it). FORKS' features are a sketched
// approximation of the same map built from the first B̃ = 2B examples, so
// FORKS cannot be expected to do better than the ceiling at the same k,
// except by noise. The ceiling is also given at larger k, to show what
// rank the paper's numbers would need. FORKS itself is run beside it on
// the same permutations with σ picked the same way, with the paper's
// settings and with the update rounds switched off (ρ = 10⁹: no resets, the
// INIT map kept), which splits FORKS' distance to the ceiling into what
// the resets cost and what the sketched map costs.

// ceilingLandmarks is m, the number of landmarks of the ceiling's map.
const ceilingLandmarks = 1000

// ceilingRanks are the ranks of the ceiling, as multiples of B/10 (the
// paper's k = 0.1B first).
var ceilingRanks = []int{1, 2, 5, 10}

type ceilingRow struct {
	Label  string    `json:"label"`
	K      int       `json:"k"`
	Sigma  string    `json:"sigma"`
	Mean   float64   `json:"mean"`
	Std    float64   `json:"std"`
	PerRun []float64 `json:"per_run"`
}

type ceilingCell struct {
	Dataset    string       `json:"dataset"`
	N          int          `json:"n"`
	B          int          `json:"budget"`
	Landmarks  int          `json:"landmarks"`
	Majority   float64      `json:"majority_rate"`
	PaperFORKS *Value       `json:"paper_forks"`
	PaperSkeGD *Value       `json:"paper_skegd"`
	PaperNOGD  *Value       `json:"paper_nogd"`
	FORKS      []ceilingRow `json:"forks"`
	Ceiling    []ceilingRow `json:"ceiling"`
}

type ceilingResult struct {
	Experiment string        `json:"experiment"`
	Runs       int           `json:"runs"`
	Seed       uint64        `json:"seed"`
	Cells      []ceilingCell `json:"cells"`
}

func init() {
	var ds []Dataset
	for _, d := range forksTable1Datasets {
		switch d.Title {
		case "german", "svmguide3", "spambase":
			d.Variants = d.Variants[:1] // unscaled
			ds = append(ds, d)
		}
	}
	register(&Experiment{
		ID:       "forks-ceiling",
		Title:    "FORKS paper, Table 1: the rank-k ceiling of FORKS' model class (german, svmguide3, spambase)",
		Paper:    "Wen et al., Fast Second-Order Online Kernel Learning through Incremental Matrix Sketching and Decomposition, arXiv 2410.11188v2 (IJCAI 2025)",
		Task:     "classification",
		Runs:     20,
		Datasets: ds,
		Custom:   runForksCeiling,
		Intro: `Why FORKS misses Table 1's band on these three files. FORKS predicts with a linear function
of k = 0.1B = 5 features, a sketched rank-k approximation of the Gaussian kernel, learnt by the
Online Newton Step with the slab projection (α = 0.01, σ_i = 0.5, C = 1, hinge). The **ceiling**
runs that same ONS (learner.FeatureONS, the code FORKS runs) on the best rank-k features there
are: the exact rank-k Nyström map of 1000 landmarks drawn uniformly from the whole file (on
german, N = 1000, the exact kernel PCA of the file), computed before the stream starts. It is an
oracle — it sees every example's place in kernel space before the first round, has no Stage 1 and
no resets — and its σ is picked from the paper's grid on the 20 reported permutations themselves
(the paper's protocol, which favours it). FORKS is run beside it on the same permutations with σ
picked the same way: with the paper's settings (Table 1's row, whose σ there is picked on 3
separate permutations), and with the update rounds switched off (ρ = 10⁹: the INIT map is kept and
the ONS is never reset).`,
		Discussion: forksCeilingDiscussion,
	})
}

func runForksCeiling(e *Experiment, o Options) (*Report, error) {
	res := &ceilingResult{Experiment: e.ID, Runs: o.Runs, Seed: o.Seed}
	grid, err := eval.Expand("forks:sigma=" + forksSigmaGrid)
	if err != nil {
		return nil, err
	}
	var todo []Dataset
	for _, d := range e.Datasets {
		if keep(o.Datasets, d.Title) {
			todo = append(todo, d)
		}
	}
	var bar *progress.Bar
	if o.Progress != nil {
		bar = progress.New(o.Progress, e.ID, int64(len(todo)*len(grid)), "σ values")
	}
	for _, d := range todo {
		bar.SetLabel(e.ID + " " + d.Title)
		cell, err := ceilingCellFor(e, d, grid, o, bar)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", e.ID, d.Title, err)
		}
		res.Cells = append(res.Cells, *cell)
	}
	bar.Finish()
	rep := &Report{Exp: e, Runs: o.Runs, Seed: o.Seed, Data: res}
	var plotRef string
	if len(res.Cells) > 0 {
		var err error
		if plotRef, err = o.writePlot(e.ID+".png", func(path string) error { return ceilingPlot(res, path) }); err != nil {
			return nil, err
		}
	}
	rep.Body = ceilingMarkdown(res, plotRef)
	return rep, nil
}

// ceilingCellFor runs FORKS and the ceiling on one dataset; grid is the
// paper's σ grid expanded (eval.Expand of forksSigmaGrid).
func ceilingCellFor(e *Experiment, d Dataset, grid []eval.Candidate, o Options, bar *progress.Bar) (*ceilingCell, error) {
	ds, _, _, err := e.load(d, d.Variants[0])
	if err != nil {
		return nil, err
	}
	n := ds.Len()
	cell := &ceilingCell{Dataset: d.Title, N: n, B: d.B, Landmarks: min(n, ceilingLandmarks),
		Majority:   MajorityRate(ds),
		PaperFORKS: algoFORKS.Paper[d.Title], PaperSkeGD: algoSkeGD.Paper[d.Title], PaperNOGD: algoNOGD.Paper[d.Title]}

	// FORKS on the same permutations, σ picked on them.
	spec := algoFORKS.Spec(d)
	fr, err := eval.Run(ds, []string{spec, spec + ",rho=1000000000"}, []string{"FORKS (paper's settings)", "FORKS, no update rounds (ρ = 10⁹)"},
		eval.Config{Runs: o.Runs, Seed: o.Seed, Workers: o.Workers})
	if err != nil {
		return nil, err
	}
	for _, m := range fr.Models {
		cell.FORKS = append(cell.FORKS, ceilingRow{Label: m.Label, K: d.B / 10, Sigma: wonSigma(m), Mean: m.Mean, Std: m.Std, PerRun: m.PerRun})
	}

	// The ceiling: per σ, the exact Nyström map of the landmarks at the
	// largest rank (its first k rows are the rank-k map), then the ONS at
	// every rank over the reported permutations.
	ks := make([]int, len(ceilingRanks))
	for i, r := range ceilingRanks {
		ks[i] = r * d.B / 10
	}
	kmax := ks[len(ks)-1]
	m := cell.Landmarks
	landmarks := dataset.Permutation(n, rng.Derive(o.Seed, 0xce11), 0)[:m]
	perms := make([][]int, o.Runs)
	for r := range perms {
		perms[r] = dataset.Permutation(n, o.Seed, r)
	}
	// rates[s][j][r]: σ index s, rank index j, run r.
	sigmas := make([]float64, len(grid))
	for s, c := range grid {
		if sigmas[s], err = learner.ParseNumber(c.Values["sigma"]); err != nil {
			return nil, err
		}
	}
	rates := make([][][]float64, len(grid))
	var wg sync.WaitGroup
	nw := o.Workers
	if nw <= 0 {
		nw = runtime.GOMAXPROCS(0)
	}
	sem := make(chan struct{}, nw)
	for s, sigma := range sigmas {
		wg.Add(1)
		sem <- struct{}{}
		go func(s int, sigma float64) {
			defer wg.Done()
			defer func() { <-sem }()
			rates[s] = ceilingRates(ds, ceilingFeatures(ds, landmarks, sigma, kmax), ks, kmax, perms)
			bar.Add(1)
		}(s, sigma)
	}
	wg.Wait()
	for j, k := range ks {
		best := -1
		var bestMean float64
		for s := range grid {
			mean, _ := eval.MeanStd(rates[s][j])
			if best < 0 || mean < bestMean {
				best, bestMean = s, mean
			}
		}
		mean, std := eval.MeanStd(rates[best][j])
		label := "ceiling, k = 0.1B (FORKS' rank)"
		if k != d.B/10 {
			label = fmt.Sprintf("ceiling, k = %gB", float64(k)/float64(d.B))
		}
		cell.Ceiling = append(cell.Ceiling, ceilingRow{Label: label, K: k, Sigma: grid[best].Label(), Mean: mean, Std: std, PerRun: rates[best][j]})
	}
	return cell, nil
}

// ceilingFeatures returns the exact rank-kmax Nyström features of every
// example of ds at width sigma from the landmarks ds.X[landmarks]: row i of the n×kmax
// row-major result is Λ_r^{-1/2} V_rᵀ κ(lm, x_i) (r ≤ kmax eigenpairs of
// the landmarks' Gram matrix above round-off; zeros beyond r), so its
// first k columns are the rank-k map.
func ceilingFeatures(ds *dataset.Dataset, landmarks []int, sigma float64, kmax int) []float64 {
	kern := kernel.MustNew(kernel.Gaussian, sigma, 0, 0)
	m := len(landmarks)
	lm := kernel.NewMatrix(ds.Dim, m) // per call: a Matrix is not safe for concurrent use
	for _, i := range landmarks {
		lm.Append(ds.X[i])
	}
	r, mp, _ := linalg.NystromMap(kern.Gram(make([]float64, m*m), lm), m, kmax)
	feats := make([]float64, ds.Len()*kmax)
	row := make([]float64, m)
	for i, x := range ds.X {
		kern.Row(row, lm, x)
		linalg.MatVec(feats[i*kmax:i*kmax+r], mp, r, m, row)
	}
	return feats
}

// ceilingRates returns the mistake rates (%) of the ONS (FORKS' Stage 2 with
// the paper's α = 0.01, σ_i = 0.5, C = 1, hinge) on the first k columns of
// feats (n×kmax), [rank index][run], each run over its permutation. A score
// of exactly 0 is a mistake (as in eval).
func ceilingRates(ds *dataset.Dataset, feats []float64, ks []int, kmax int, perms [][]int) [][]float64 {
	n := ds.Len()
	out := make([][]float64, len(ks))
	for j, k := range ks {
		out[j] = make([]float64, len(perms))
		for ri, p := range perms {
			on := learner.NewFeatureONS(k, 0.01, 1, 0.5, learner.Hinge)
			mistakes := 0
			for _, i := range p {
				y := ds.Y[i]
				if f := on.Learn(feats[i*kmax:i*kmax+k], y); f == 0 || (f > 0) != (y > 0) {
					mistakes++
				}
			}
			out[j][ri] = 100 * float64(mistakes) / float64(n)
		}
	}
	return out
}

func wonSigma(m eval.ModelResult) string {
	if s, ok := m.Won["sigma"]; ok {
		return "sigma=" + s
	}
	return "–"
}

func ceilingMarkdown(r *ceilingResult, plotRef string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d permutations (seed %d); hinge loss; mistake %% counts every round; σ from the paper's grid 2^-5 … 2^7 picked on the reported permutations for every row.\n\n", r.Runs, r.Seed)
	for _, c := range r.Cells {
		fmt.Fprintf(&b, "### %s (n = %d, B = %d, k = 0.1B = %d; %d landmarks; majority-class predictor %.1f %% mistakes)\n\n", c.Dataset, c.N, c.B, c.B/10, c.Landmarks, c.Majority)
		b.WriteString("| model | k | mistake % | chosen |\n|---|---|---|---|\n")
		fmt.Fprintf(&b, "| paper's FORKS | %d | %s | – |\n", c.B/10, markValue(c.PaperFORKS.String(), c.PaperFORKS, c.Majority))
		fmt.Fprintf(&b, "| paper's SkeGD | %d | %s | – |\n", c.B/10, markValue(c.PaperSkeGD.String(), c.PaperSkeGD, c.Majority))
		fmt.Fprintf(&b, "| paper's NOGD | %d | %s | – |\n", c.B/10, markValue(c.PaperNOGD.String(), c.PaperNOGD, c.Majority))
		for _, row := range append(append([]ceilingRow(nil), c.FORKS...), c.Ceiling...) {
			label := "okstream " + row.Label
			if strings.HasPrefix(row.Label, "ceiling") {
				label = "**" + row.Label + "**"
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s |\n", label, row.K, markMajority(fmt.Sprintf("%.3f ± %.3f", row.Mean, row.Std), row.Mean, c.Majority), row.Sigma)
		}
		fmt.Fprintf(&b, "| always the majority class | – | %s | – |\n\n", markMajority(fmt.Sprintf("%.3f", c.Majority), c.Majority, c.Majority))
		b.WriteString(majorityNote(c.Majority) + "\n\n")
	}
	if plotRef != "" {
		fmt.Fprintf(&b, "![ceiling mistake rate against the rank k, with the paper's FORKS](%s)\n\n", plotRef)
	}
	return b.String()
}

// ceilingPlot draws the ceiling's mistake rate against k/B per dataset
// (solid), the paper's FORKS (dashed, at k = 0.1B's level across) and
// okstream's FORKS (a point at k = 0.1B).
func ceilingPlot(r *ceilingResult, path string) error {
	p := plot.New()
	p.Title.Text = "FORKS' model class: rank-k ceiling vs the paper's FORKS (Table 1, unscaled)"
	p.X.Label.Text = "rank k / budget B"
	p.Y.Label.Text = "mistake rate (%)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.ConstantTicks{{Value: 0.1, Label: "0.1"}, {Value: 0.2, Label: "0.2"}, {Value: 0.5, Label: "0.5"}, {Value: 1, Label: "1"}}
	p.Legend.Top = true
	ymax := 0.0
	for i, c := range r.Cells {
		col := eval.Palette[i%len(eval.Palette)]
		var line plotter.XYs
		for _, row := range c.Ceiling {
			line = append(line, plotter.XY{X: float64(row.K) / float64(c.B), Y: row.Mean})
		}
		l, pts, err := plotter.NewLinePoints(line)
		if err != nil {
			return err
		}
		l.Color, pts.Color = col, col
		l.Width, pts.Radius = vg.Points(1.5), vg.Points(3)
		p.Add(l, pts)
		p.Legend.Add(c.Dataset+": ceiling", l, pts)
		for _, row := range append(append([]ceilingRow(nil), c.FORKS...), c.Ceiling...) {
			ymax = math.Max(ymax, row.Mean)
		}
		if c.PaperFORKS != nil {
			lo, hi := line[0].X, line[len(line)-1].X
			pl, err := plotter.NewLine(plotter.XYs{{X: lo, Y: c.PaperFORKS.Mean}, {X: hi, Y: c.PaperFORKS.Mean}})
			if err != nil {
				return err
			}
			pl.Color, pl.Width, pl.Dashes = col, vg.Points(1), []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(pl)
			p.Legend.Add(c.Dataset+": paper's FORKS (k = 0.1B)", pl)
		}
		if len(c.FORKS) > 0 {
			sc, err := plotter.NewScatter(plotter.XYs{{X: float64(c.FORKS[0].K) / float64(c.B), Y: c.FORKS[0].Mean}})
			if err != nil {
				return err
			}
			sc.Color, sc.Radius = col, vg.Points(4)
			sc.Shape = draw.BoxGlyph{}
			p.Add(sc)
			p.Legend.Add(c.Dataset+": okstream FORKS", sc)
		}
	}
	// Head room for the legend (top right) above the highest point.
	p.Y.Max = ymax + 0.45*(ymax-p.Y.Min)
	p.Add(plotter.NewGrid())
	return eval.SavePlot(p, path, 7, 6)
}

const forksCeilingDiscussion = `**What the ceiling shows.** At FORKS' rank k = 0.1B = 5, the best rank-5 features there are, learnt by
the paper's ONS with σ picked on the reported runs, reach 29.97 % on german, 23.25 % on
svmguide3 and 31.11 % on spambase. The paper reports FORKS at 26.43, 19.71 and 30.66, and SkeGD
and NOGD (also rank 5) at 25.17/26.72 and 19.98/19.96 on german and svmguide3. On german and
svmguide3 these numbers are 3.3–4.8 points below what this model class reaches on these files,
and also below the majority-class predictor. Even k = B = 50 exact features do not reach the
paper's german number (28.04). On svmguide3 it takes about k = B (19.85 at k = 50). Those two
numbers cannot come from rank-5 features and this update on these files, and the paper gives
no code to find out what differs. An independent implementation of the
ceiling (a full kernel PCA through the tridiagonal eigensolver instead of NystromMap, with
kernel.Eval instead of kernel rows), written while investigating, gave the same german k = 5
number (29.97 at σ = 2^7).

**Where our FORKS stands against its ceiling.** Our FORKS lands 0.7 (german), 0.7 (svmguide3)
and 1.9 (spambase) points above the ceiling at the same k. The row without update rounds splits
that gap into two parts:
- the resets cost 0.5, 0.0 and 0.6 points;
- the sketched map costs the rest, 0.2, 0.7 and 1.3 points. That map is a rank-5 map from
  s_m = 10 landmarks and an s_p = 50 CountSketch of the first 100 examples with non-zero loss.

On spambase the paper's 30.66 lies within the ceiling's noise (31.11 ± 0.71). So a FORKS that
paid nothing for its sketch could be within the ±1.5 band there; ours pays 1.9 points. We tried
variations of the sketch at σ ∈ {2^6.5, 2^7}, 20 permutations (paper setting: 33.05 ± 1.22):

| variation | mistake % |
|---|---|
| s_p = 100 | 32.54 |
| s_p = 100, s_m = 20 | 33.13 |
| D = 2 blocks | 32.46 |
| buffer 2× | 32.76 |
| landmark replacement | 32.87 |
| s_m = 50 | 33.22 |
| exact SVD every update round | 33.01 |

All of these lie within 0.6 of the paper setting, about twice the standard error of a 20-run
mean, so none of them closes the gap. They stay switches; the defaults stay the paper's.`
