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

// The PKAWV paper's casp experiment (Jézéquel, Gaillard, Rudi, NeurIPS
// 2019, Fig. 4 top, §4 and App. G): average square loss
// and running time against the number of events on casp (45,730 rows,
// d = 9), x and y scaled to [−1, 1], σ = λ = 1, for Kernel-AWV, PKAWV with
// Taylor features (M = 2, 3, and 4 on a prefix), PKAWV-Nyström with KORS,
// FOGD and PROS-N-KONS.
//
// A custom experiment (not eval.Run's table): the paper plots curves of one
// pass, and the stream order is the authors' — NumPy's
// RandomState(0).permutation, reproduced by NumPyPermutation — so that the
// deterministic methods can be checked against what the authors' Python
// gives on our file to 1e-9. okstream's own seeded PCG
// permutations cannot produce that order; any other order gives
// statistically equivalent but different numbers. One pass, so --runs does
// not apply.
//
// Deviations from the paper, all stated in the section: the paper stops
// every algorithm at a 5-minute timeout; here each has a fixed prefix
// instead (deterministic tables): Kernel-AWV the first 5,000 events
// (O(t²) per event, as we ran the authors' code), Taylor M = 4 the first 20,000 (1.5 ms
// per event), the others the whole file. The paper's real-data curves are
// the ridge ("Projected-KRR") variants; the rows here are the AWV
// forecasters the issue names (on casp they differ by the factor
// 1/(1+h_t) → 1; the authors' Taylor M = 2: 0.24026 vs 0.24037).

type pkawvCaspAlgo struct {
	Label string
	Spec  string
	Limit int // events run (0: all)
	// Ref is the authors' code on our file: running average
	// at t. Exact is true when ours must equal it (deterministic methods,
	// same order).
	Ref   map[int]float64
	Exact bool
	Note  string
}

type pkawvCaspCheck struct {
	T     int     `json:"t"`
	Ours  float64 `json:"ours"`
	Ref   float64 `json:"authors_code"`
	Delta float64 `json:"delta"`
}

type pkawvCaspSeries struct {
	Label      string           `json:"label"`
	Spec       string           `json:"spec"`
	Events     int              `json:"events"`
	T          []int            `json:"t"`
	Loss       []float64        `json:"avg_square_loss"`
	Seconds    []float64        `json:"seconds"` // cumulative time in Learn
	Size       int              `json:"size"`    // features / dictionary / points at the end
	Bytes      int              `json:"bytes"`
	NsPerEvent float64          `json:"ns_per_event"`
	Checks     []pkawvCaspCheck `json:"authors_code,omitempty"`
	Exact      bool             `json:"exact"`
	Note       string           `json:"note,omitempty"`
}

type pkawvCaspResult struct {
	Experiment string            `json:"experiment"`
	Dataset    string            `json:"dataset"`
	N          int               `json:"n"`
	Dim        int               `json:"dim"`
	Scale      string            `json:"scale"`
	Order      string            `json:"order"`
	Series     []pkawvCaspSeries `json:"series"`
}

// pkawvCaspChecks are the checkpoints we ran the authors' code to (n = N is added).
var pkawvCaspChecks = []int{1000, 5000, 10000, 20000}

// pkawvCaspAlgos returns the rows for a dataset of n events.
func pkawvCaspAlgos(n int) []pkawvCaspAlgo {
	return []pkawvCaspAlgo{
		{Label: "Kernel-AWV", Spec: "kawv:sigma=1,lambda=1,max_points=5000", Limit: 5000, Exact: true,
			Ref:  map[int]float64{1000: 0.2485413705, 5000: 0.2305890814},
			Note: "exact, O(t²) per event: first 5,000 events"},
		{Label: "PKAWV-Taylor M=2", Spec: "pkawv:order=2,sigma=1,lambda=1", Exact: true,
			Ref:  map[int]float64{1000: 0.2705448800, 5000: 0.2503965282, 10000: 0.2473878784, 20000: 0.2430496462, 45730: 0.2402629404},
			Note: "r = 55"},
		{Label: "PKAWV-Taylor M=3", Spec: "pkawv:order=3,sigma=1,lambda=1", Exact: true,
			Ref:  map[int]float64{1000: 0.2573288483, 5000: 0.2404067241, 10000: 0.2376053041, 20000: 0.2333970501, 45730: 0.2297504926},
			Note: "r = 220"},
		{Label: "PKAWV-Taylor M=4", Spec: "pkawv:order=4,sigma=1,lambda=1", Limit: 20000,
			Note: "r = 715: first 20,000 events"},
		{Label: "PKAWV-Nyström (KORS)", Spec: "pkawv:basis=nystrom,sigma=1,lambda=1,mu=1,beta=1,eps=0.5,max_points=0,max_history=0",
			Ref:  map[int]float64{45730: 0.21844},
			Note: "unbounded: exact Algorithm 2 (offline replay); the reference's KORS draws are NumPy's (175 points)"},
		{Label: "PKAWV-Nyström, service defaults", Spec: "pkawv:basis=nystrom,sigma=1,lambda=1",
			Note: "max_points = 500, max_history = 20,000: the dictionary freezes after 20,000 events"},
		{Label: "FOGD", Spec: pkawvCaspFOGD(n),
			Ref:  map[int]float64{45730: 0.25014},
			Note: "1000 frequencies (2000 features), η = 1/√n, ŷ = wᵀz/√D (the reference's (1/D)wᵀz with w rescaled)"},
		{Label: "PROS-N-KONS", Spec: "pros-n-kons:loss=square,sigma=1,alpha=1,c=1,gamma=1,beta=1,eps=0.5",
			Note: "C = 1, α = 1, KORS μ = 1, β = 1, ε = 0.5 (the paper's KORS settings); KORS weights 1/√p"},
	}
}

// pkawvCaspFOGD is the paper's FOGD setting on casp (§4) for a stream of n
// events: σ = 1, 1000 random frequencies (2000 features), η = 1/√n, square
// loss, ŷ = wᵀz/√D. The partitions experiment uses it too.
func pkawvCaspFOGD(n int) string {
	return fmt.Sprintf("fogd:loss=square,sigma=1,features=1000,normalize=true,eta=%s", learner.FormatNumber(1/math.Sqrt(float64(n))))
}

func init() {
	register(&Experiment{
		ID:     "pkawv-casp",
		Title:  "PKAWV paper, Fig. 4 (top): casp, average square loss and time against the number of events",
		Paper:  "Jézéquel, Gaillard, Rudi, Efficient online learning with kernels for adversarial large scale problems, NeurIPS 2019",
		Task:   "regression",
		Runs:   1,
		Custom: runPKAWVCasp,
		Intro: `casp (UCI "Physicochemical Properties of Protein Tertiary Structure": 45,730 rows, 9 features,
target RMSD), x and y min–max scaled to [−1, 1] over the whole file (minmax11+y11; the paper: "we scaled
x in [−1, 1]^d and y in [−1, 1]"), σ = 1, λ = 1, KORS μ = 1, β = 1, ε = 0.5, FOGD with 1000 random
features and η = 1/√n (paper §4). One pass, predict then update, in the order of the authors' code:
NumPy's RandomState(0).permutation (MT19937, reproduced in eval/paper), which makes the deterministic
methods comparable with what the authors' Python gives on our file to
1e-9. Average square loss is the running mean of (ŷ_t − y_t)² on the scaled y; time is the cumulative
time spent in Learn (this machine, one core; the paper: an Intel Core i7-6700 and Python/NumPy).
Instead of the paper's 5-minute timeout every algorithm has a fixed number of events (deterministic
tables): Kernel-AWV the first 5,000 (O(t²) per event), Taylor M = 4 the first 20,000.`,
		Discussion: `**Exact agreement with the authors' code.** Same file, same scaling, same order: Kernel-AWV and
PKAWV-Taylor (M = 2, 3) reproduce the authors' code's running averages on our file to ~1e-10 (the "max |Δ|" column), and
the first predictions to 1e-12 (TestPKAWVCaspMatchesAuthorsCode). Our Taylor features are the
multi-index basis (55 and 220 features), theirs the redundant tensor form (91 and 820): the same
predictions (docs/algorithms/kernel-awv.md), a fraction of the cost. The stochastic methods cannot match draw for draw
(NumPy's binomial draws vs our generator): PKAWV-Nyström lands near the reference's 0.21844 with a
dictionary of similar size, FOGD near 0.25014.

**The paper's claims.** PKAWV-Taylor approaches Kernel-AWV as M grows (at 5,000 events: the gap to
Kernel-AWV shrinks from M = 2 to 3 to 4; TestPKAWVCaspTaylorApproachesKernelAWV checks it on the first
2,000 events), and its cost per event is flat in t (the time curves are straight lines of slope 1 on
log-log axes; BenchmarkPKAWVPerEventAtT: the same µs per event at t = 10³, 10⁴, 10⁵), while
Kernel-AWV's per-event cost grows like t² (slope 3 for its cumulative time). With σ = 1 and d = 9 the
order-M Taylor kernel is far from the Gaussian one at the corners of [−1, 1]^9 (Lemma 13's bound), and
PKAWV-Nyström, whose subspace adapts to the data, does better than every Taylor order here, as in the
authors' run. PROS-N-KONS restarts on every dictionary change and is the slowest to learn.`,
	})
}

// pkawvCaspTimes returns the checkpoints: round(10^(k/8)) ≤ n, Appendix
// R's, and n.
func pkawvCaspTimes(n int) []int {
	seen := map[int]bool{}
	var out []int
	add := func(t int) {
		if t >= 1 && t <= n && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for k := 0; ; k++ {
		t := int(math.Round(math.Pow(10, float64(k)/8)))
		if t > n {
			break
		}
		add(t)
	}
	for _, t := range pkawvCaspChecks {
		add(t)
	}
	add(n)
	// Sort (insertion sort: a few dozen entries).
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// pkawvCaspRun streams ds (already in the experiment's order) through each
// algorithm's learner and records its curves.
func pkawvCaspRun(ds *dataset.Dataset, algos []pkawvCaspAlgo, bar *progress.Bar) ([]pkawvCaspSeries, error) {
	var out []pkawvCaspSeries
	for _, a := range algos {
		l, err := learner.New(a.Spec, ds.Dim)
		if err != nil {
			return nil, err
		}
		n := ds.Len()
		if a.Limit > 0 && a.Limit < n {
			n = a.Limit
		}
		ts := pkawvCaspTimes(n)
		s := pkawvCaspSeries{Label: a.Label, Spec: l.Info().Spec, Events: n, T: ts, Exact: a.Exact, Note: a.Note}
		var loss float64
		var elapsed time.Duration
		start := time.Now()
		k, done := 0, 0
		for i := range n {
			f := l.Learn(ds.X[i], ds.Y[i])
			loss += (f - ds.Y[i]) * (f - ds.Y[i])
			if i+1 == ts[k] {
				elapsed += time.Since(start)
				s.Loss = append(s.Loss, loss/float64(i+1))
				s.Seconds = append(s.Seconds, elapsed.Seconds())
				if ref, ok := a.Ref[i+1]; ok {
					s.Checks = append(s.Checks, pkawvCaspCheck{T: i + 1, Ours: loss / float64(i+1), Ref: ref, Delta: loss/float64(i+1) - ref})
				}
				k++
				bar.Add(int64(i + 1 - done))
				done = i + 1
				start = time.Now()
			}
		}
		info := l.Info()
		s.Size, s.Bytes = info.Used, info.Bytes
		s.NsPerEvent = 1e9 * s.Seconds[len(s.Seconds)-1] / float64(n)
		out = append(out, s)
	}
	return out, nil
}

// pkawvCaspData loads casp as the experiment uses it: scaled, then in the
// authors' order.
func pkawvCaspData() (*dataset.Dataset, dataset.Scale, error) {
	ds, sc, err := caspScaled()
	if err != nil {
		return nil, dataset.Scale{}, err
	}
	return ds.Permuted(NumPyPermutation(ds.Len(), 0)), sc, nil
}

// caspScaled loads casp in file order with x and y min–max scaled to
// [−1, 1] over the whole file (minmax11+y11), as the PKAWV paper scales it
// (§4: "we scaled x in [−1, 1]^d and y in [−1, 1]"). It fails if the file
// is missing or malformed.
func caspScaled() (*dataset.Dataset, dataset.Scale, error) {
	path, opts, err := dataset.Resolve("casp")
	if err != nil {
		return nil, dataset.Scale{}, err
	}
	ds, err := dataset.Load(path, opts)
	if err != nil {
		return nil, dataset.Scale{}, err
	}
	sc, err := dataset.ParseScale("minmax11+y11")
	if err != nil {
		return nil, dataset.Scale{}, err
	}
	ds.ApplyScale(sc)
	return ds, sc, nil
}

func runPKAWVCasp(e *Experiment, o Options) (*Report, error) {
	ds, sc, err := pkawvCaspData()
	if err != nil {
		return nil, err
	}
	algos := pkawvCaspAlgos(ds.Len())
	var bar *progress.Bar
	if o.Progress != nil {
		var total int64
		for _, a := range algos {
			n := ds.Len()
			if a.Limit > 0 && a.Limit < n {
				n = a.Limit
			}
			total += int64(n)
		}
		bar = progress.New(o.Progress, e.ID, total, "events")
	}
	series, err := pkawvCaspRun(ds, algos, bar)
	if err != nil {
		return nil, err
	}
	bar.Finish()
	res := &pkawvCaspResult{Experiment: e.ID, Dataset: "casp", N: ds.Len(), Dim: ds.Dim, Scale: sc.String(),
		Order: "NumPy RandomState(0).permutation(n)", Series: series}
	rep := &Report{Exp: e, Runs: 1, Seed: o.Seed, Data: res}
	var lossRef, timeRef string
	for _, p := range []struct {
		name string
		time bool
		ref  *string
	}{{e.ID + "-loss.png", false, &lossRef}, {e.ID + "-time.png", true, &timeRef}} {
		ref, err := o.writePlot(p.name, func(path string) error { return pkawvCaspPlot(res, path, p.time) })
		if err != nil {
			return nil, err
		}
		*p.ref = ref
	}
	rep.Body = pkawvCaspMarkdown(res, lossRef, timeRef)
	return rep, nil
}

// at returns the series' value at checkpoint t, if it got there.
func (s *pkawvCaspSeries) at(vals []float64, t int) (float64, bool) {
	for k, tk := range s.T {
		if tk == t {
			return vals[k], true
		}
	}
	return 0, false
}

func pkawvCaspMarkdown(r *pkawvCaspResult, lossRef, timeRef string) string {
	var b strings.Builder
	cols := append(append([]int(nil), pkawvCaspChecks...), r.N)
	b.WriteString("Average square loss (running mean over the first t events) and, in parentheses, the authors' code on our file where we ran it; time in Learn.\n\n")
	b.WriteString("| algorithm | events |")
	for _, t := range cols {
		fmt.Fprintf(&b, " t = %d |", t)
	}
	b.WriteString(" max \\|Δ\\| vs authors' code | size | µs/event | total s |\n|---|---|")
	for range cols {
		b.WriteString("---|")
	}
	b.WriteString("---|---|---|---|\n")
	for i := range r.Series {
		s := &r.Series[i]
		fmt.Fprintf(&b, "| %s | %d |", s.Label, s.Events)
		for _, t := range cols {
			v, ok := s.at(s.Loss, t)
			if !ok {
				b.WriteString(" – |")
				continue
			}
			cell := fmt.Sprintf("%.5f", v)
			for _, c := range s.Checks {
				if c.T == t {
					cell += fmt.Sprintf(" (%.5f)", c.Ref)
				}
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		delta := "–"
		if s.Exact && len(s.Checks) > 0 {
			var m float64
			for _, c := range s.Checks {
				m = math.Max(m, math.Abs(c.Delta))
			}
			delta = fmt.Sprintf("%.1e", m)
		}
		fmt.Fprintf(&b, " %s | %d | %.1f | %.1f |\n", delta, s.Size, s.NsPerEvent/1e3, s.Seconds[len(s.Seconds)-1])
	}
	b.WriteString("\n")
	// The claim: Taylor approaches Kernel-AWV as M grows (at Kernel-AWV's last event).
	var kawv *pkawvCaspSeries
	for i := range r.Series {
		if strings.HasPrefix(r.Series[i].Spec, "kawv:") {
			kawv = &r.Series[i]
		}
	}
	if kawv != nil {
		t := kawv.Events
		ref, _ := kawv.at(kawv.Loss, t)
		fmt.Fprintf(&b, "Gap to Kernel-AWV at t = %d (Kernel-AWV %.5f):", t, ref)
		for i := range r.Series {
			s := &r.Series[i]
			if !strings.HasPrefix(s.Label, "PKAWV-Taylor") {
				continue
			}
			if v, ok := s.at(s.Loss, t); ok {
				fmt.Fprintf(&b, " %s %+.5f;", strings.TrimPrefix(s.Label, "PKAWV-Taylor "), v-ref)
			}
		}
		b.WriteString("\n\n")
	}
	if lossRef != "" {
		fmt.Fprintf(&b, "![casp: average square loss against t](%s)\n\n", lossRef)
	}
	if timeRef != "" {
		fmt.Fprintf(&b, "![casp: cumulative time against t](%s)\n\n", timeRef)
	}
	b.WriteString("<details><summary>learner specs and notes</summary>\n\n| algorithm | spec | note |\n|---|---|---|\n")
	for _, s := range r.Series {
		fmt.Fprintf(&b, "| %s | `%s` | %s |\n", s.Label, s.Spec, s.Note)
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

func pkawvCaspPlot(r *pkawvCaspResult, path string, timePlot bool) error {
	p := plot.New()
	p.X.Label.Text = "number of events t"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	if timePlot {
		p.Title.Text = "casp: cumulative time in Learn"
		p.Y.Label.Text = "seconds"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Legend.Top, p.Legend.Left = false, false // the empty corner: large t, small times
	} else {
		p.Title.Text = "casp: average square loss (x, y scaled to [−1, 1])"
		p.Y.Label.Text = "average square loss"
		p.Legend.Top = true
	}
	for i, s := range r.Series {
		var pts plotter.XYs
		for k, t := range s.T {
			y := s.Loss[k]
			if timePlot {
				y = s.Seconds[k]
				if !(y > 0) {
					continue // log axis
				}
			} else if t < 100 {
				continue // the first events' averages are noise
			}
			pts = append(pts, plotter.XY{X: float64(t), Y: y})
		}
		if len(pts) < 2 {
			continue
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.Color = eval.Palette[i%len(eval.Palette)]
		line.Dashes = eval.Dashes[(i/len(eval.Palette))%len(eval.Dashes)]
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(s.Label, line)
	}
	if !timePlot {
		// Clip at 2.5 times the best loss so that the close curves stay apart
		// (a much worse learner leaves the chart at the top). Set after
		// Add, which widens the axes to the data.
		lo := math.Inf(1)
		for _, s := range r.Series {
			for _, v := range s.Loss {
				lo = math.Min(lo, v)
			}
		}
		p.Y.Min, p.Y.Max = 0.95*lo, 2.5*lo
	}
	p.Add(plotter.NewGrid())
	return eval.SavePlot(p, path, 7, 4.5)
}
