// Package eval runs learners offline over a dataset with progressive
// validation — every example is predicted before its label is used — the
// protocol of all four papers, on the same learner code path the stream
// runtime uses.
//
// A run is one pass over one seeded permutation of the dataset (or, with
// Config.NoPermute, over the rows in their order: datasets whose order is
// the experiment, such as dataset.Adversarial's games). For each
// learner spec (optionally a grid of specs, see Expand) eval runs N
// permutations, reports the mistake rate (classification, %) or the mean
// squared error (regression) as mean ± sample standard deviation over the
// runs, the time per event of the learning loop (I/O excluded), the model
// size, and the learning curve (cumulative metric against t, averaged over
// runs). For a grid it picks the point with the lowest mean metric, as the
// papers did, and reports which one won.
//
// Reproducibility: permutation r of seed s is dataset.Permutation(n, s, r);
// the learner of run r gets seed rng.Derive(s, 1<<32+r) unless its spec
// fixes a seed. So the same Config on the same data gives identical metrics
// (times aside) on every run and every machine, whatever the number of
// workers.
package eval

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync"
	"time"

	"okstream/dataset"
	"okstream/internal/progress"
	"okstream/learner"
	"okstream/learner/rng"
)

// Config controls an evaluation.
type Config struct {
	// Runs is the number of permutations reported (the FORKS paper uses 20,
	// the ALD paper 10). Default 20.
	Runs int
	// Seed is the base seed of permutations and learner seeds. Default 1.
	Seed uint64
	// SelectRuns chooses how a grid's winner is picked: 0 (default) picks on
	// the reported runs themselves, which is what the papers did (optimistic
	// by the selection effect); k > 0 picks on k separate permutations
	// (disjoint seeds) and then reports the winner on the Runs permutations.
	SelectRuns int
	// Workers is the number of runs executed in parallel (default
	// GOMAXPROCS). Per-event times are measured per run; with several
	// workers they include contention for memory bandwidth, so use 1 for
	// timing-grade numbers.
	Workers int
	// CurvePoints is the number of points of the learning curves (default 100).
	CurvePoints int
	// NoPermute presents the rows in their order in every run instead of a
	// seeded permutation, for datasets whose order is the experiment (e.g.
	// the adversarial games of dataset.Adversarial). Runs then differ only
	// by the learner's seed, unless Sequence is set.
	NoPermute bool
	// Sequence, with NoPermute, gives run r its own row sequence (e.g. a new
	// adversarial game per run), presented in its order; it must return a
	// dataset with the length and dimension of the one passed to Run, and be
	// safe for concurrent use (runs execute in parallel). Grid selection
	// runs (Config.SelectRuns) ask for run numbers from 1<<20 on.
	Sequence func(run int) (*dataset.Dataset, error)
	// Progress, if non-nil, receives progress in events.
	Progress *progress.Bar
}

func (c *Config) defaults() {
	if c.Runs <= 0 {
		c.Runs = 20
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.CurvePoints <= 0 {
		c.CurvePoints = 100
	}
}

// Metric names.
const (
	MistakeRate = "mistake_rate_pct" // classification: % of mistakes (score 0 counts as a mistake)
	MSE         = "mse"              // regression: mean squared error
)

// Result is the outcome of evaluating several learner specs on one dataset.
type Result struct {
	Dataset    string        `json:"dataset"`
	N          int           `json:"n"`
	Dim        int           `json:"dim"`
	Task       string        `json:"task"`
	Metric     string        `json:"metric"`
	Runs       int           `json:"runs"`
	Seed       uint64        `json:"seed"`
	SelectRuns int           `json:"select_runs"`
	Models     []ModelResult `json:"models"`
}

// ModelResult is one learner spec's outcome (its grid winner's, for a grid).
type ModelResult struct {
	Label  string            `json:"label"`         // display name
	Spec   string            `json:"spec"`          // as given (may be a grid)
	Chosen string            `json:"chosen"`        // canonical spec of the reported configuration (seed of run 0)
	Won    map[string]string `json:"won,omitempty"` // grid values of the winner
	Mean   float64           `json:"mean"`          // metric mean over runs
	Std    float64           `json:"std"`           // sample standard deviation over runs
	PerRun []float64         `json:"per_run"`       // metric of each run
	// NsPerEvent is the learning loop's time per event (mean over runs).
	NsPerEvent float64 `json:"ns_per_event"`
	// Seconds is the mean wall time of one pass.
	Seconds float64 `json:"seconds"`
	Budget  int     `json:"budget"`
	Used    int     `json:"used"` // at the end of run 0
	// UsedMean is the mean over runs of Used at the end of each run (the
	// papers' "J" or dictionary size is such a mean).
	UsedMean float64 `json:"used_mean"`
	// NonFinite is the number of NaN/±Inf scores over the reported runs:
	// > 0 means the model diverged (its scores count as mistakes).
	NonFinite int         `json:"non_finite,omitempty"`
	Bytes     int         `json:"bytes"` // model memory at the end of run 0
	Curve     []Point     `json:"curve"`
	Grid      []GridPoint `json:"grid,omitempty"`
}

// Point is one point of a learning curve.
type Point struct {
	T    int     `json:"t"`
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
}

// GridPoint is one candidate of a grid with its selection score.
type GridPoint struct {
	Values map[string]string `json:"values"`
	Mean   float64           `json:"mean"`
	Std    float64           `json:"std"`
}

// run is the outcome of one pass.
type run struct {
	metric float64
	// nonFinite counts NaN or ±Inf scores (a diverged model); they count
	// as mistakes (classification) and make the MSE non-finite.
	nonFinite int
	curve     []float64
	ns        float64
	seconds   float64
	info      learner.Info
}

// Run evaluates each spec (label i from labels, if given) on ds. Labels of
// ds must already be ±1 for classification learners.
func Run(ds *dataset.Dataset, specs []string, labels []string, cfg Config) (*Result, error) {
	cfg.defaults()
	if ds.Len() == 0 {
		return nil, errors.New("eval: empty dataset")
	}
	type model struct {
		spec  string
		cands []Candidate
	}
	var models []model
	var task learner.Task
	for _, s := range specs {
		cands, err := Expand(s)
		if err != nil {
			return nil, err
		}
		for i := range cands {
			cands[i].Spec = withHorizon(cands[i].Spec, ds.Len())
			l, err := learner.New(cands[i].Spec, ds.Dim)
			if err != nil {
				return nil, err
			}
			t := l.Info().Task
			if task == 0 {
				task = t
			} else if t != task {
				return nil, fmt.Errorf("eval: specs mix classification and regression learners (%s is %s)", s, t)
			}
		}
		models = append(models, model{s, cands})
	}
	if task == learner.Classification {
		for i, y := range ds.Y {
			if y != 1 && y != -1 {
				return nil, fmt.Errorf("eval: classification needs labels −1/+1, row %d has %v (map them with dataset.BinaryLabels)", i, y)
			}
		}
	}
	res := &Result{Dataset: ds.Name, N: ds.Len(), Dim: ds.Dim, Task: task.String(), Runs: cfg.Runs, Seed: cfg.Seed, SelectRuns: cfg.SelectRuns}
	res.Metric = MistakeRate
	if task == learner.Regression {
		res.Metric = MSE
	}
	curveT := curveTimes(ds.Len(), cfg.CurvePoints)
	ex := &executor{ds: ds, cfg: cfg, task: task, curveT: curveT}

	for mi, m := range models {
		label := m.spec
		if mi < len(labels) && labels[mi] != "" {
			label = labels[mi]
		}
		mr := ModelResult{Label: label, Spec: m.spec}
		winner := 0
		var runs []run
		if len(m.cands) > 1 {
			// Score every candidate on the selection runs.
			first := 0
			if cfg.SelectRuns > 0 {
				first = selectOffset
			}
			all, err := ex.runMany(m.cands, first, selRuns(cfg))
			if err != nil {
				return nil, err
			}
			best := math.Inf(1)
			for ci, c := range m.cands {
				mean, std := MeanStd(metrics(all[ci]))
				mr.Grid = append(mr.Grid, GridPoint{Values: c.Values, Mean: mean, Std: std})
				if mean < best {
					best, winner = mean, ci
				}
			}
			if cfg.SelectRuns > 0 {
				r, err := ex.runMany(m.cands[winner:winner+1], 0, cfg.Runs)
				if err != nil {
					return nil, err
				}
				runs = r[0]
			} else {
				runs = all[winner]
			}
			mr.Won = m.cands[winner].Values
		} else {
			r, err := ex.runMany(m.cands, 0, cfg.Runs)
			if err != nil {
				return nil, err
			}
			runs = r[0]
		}
		mr.PerRun = metrics(runs)
		mr.Mean, mr.Std = MeanStd(mr.PerRun)
		var ns, sec []float64
		for _, r := range runs {
			ns = append(ns, r.ns)
			sec = append(sec, r.seconds)
		}
		mr.NsPerEvent, _ = MeanStd(ns)
		mr.Seconds, _ = MeanStd(sec)
		mr.Chosen = runs[0].info.Spec
		mr.Budget, mr.Used, mr.Bytes = runs[0].info.Budget, runs[0].info.Used, runs[0].info.Bytes
		for _, r := range runs {
			mr.UsedMean += float64(r.info.Used) / float64(len(runs))
			mr.NonFinite += r.nonFinite
		}
		for k, t := range curveT {
			vals := make([]float64, len(runs))
			for i, r := range runs {
				vals[i] = r.curve[k]
			}
			mean, std := MeanStd(vals)
			mr.Curve = append(mr.Curve, Point{T: t, Mean: mean, Std: std})
		}
		res.Models = append(res.Models, mr)
	}
	cfg.Progress.Finish()
	return res, nil
}

// selectOffset separates the selection permutations from the reported ones.
const selectOffset = 1 << 20

func selRuns(cfg Config) int {
	if cfg.SelectRuns > 0 {
		return cfg.SelectRuns
	}
	return cfg.Runs
}

// withHorizon sets horizon=N for learners that take a horizon, unless the
// spec sets it.
func withHorizon(spec string, n int) string {
	name, kv, err := learner.ParseSpec(spec)
	if err != nil || kv["horizon"] != "" {
		return spec
	}
	if reg := learner.Describe(name); reg != nil {
		for _, p := range reg.Params {
			if p.Name == "horizon" {
				return setParam(spec, "horizon", strconv.Itoa(n))
			}
		}
	}
	return spec
}

func setParam(spec, key, val string) string {
	name, _, _ := learner.ParseSpec(spec)
	if name == spec {
		return spec + ":" + key + "=" + val
	}
	return spec + "," + key + "=" + val
}

// takesSeed reports whether the learner accepts a seed parameter.
func takesSeed(spec string) bool {
	name, _, _ := learner.ParseSpec(spec)
	if reg := learner.Describe(name); reg != nil {
		for _, p := range reg.Params {
			if p.Name == "seed" {
				return true
			}
		}
	}
	return false
}

type executor struct {
	ds     *dataset.Dataset
	cfg    Config
	task   learner.Task
	curveT []int
}

// runMany runs every candidate on runs first..first+n-1, in parallel, and
// returns results indexed [candidate][run].
func (ex *executor) runMany(cands []Candidate, first, n int) ([][]run, error) {
	out := make([][]run, len(cands))
	for i := range out {
		out[i] = make([]run, n)
	}
	type job struct{ c, r int }
	jobs := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for w := 0; w < ex.cfg.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r, err := ex.one(cands[j.c].Spec, first+j.r)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				out[j.c][j.r] = r
			}
		}()
	}
	for c := range cands {
		for r := 0; r < n; r++ {
			jobs <- job{c, r}
		}
	}
	close(jobs)
	wg.Wait()
	return out, firstErr
}

// one runs one pass of spec over permutation runID.
func (ex *executor) one(spec string, runID int) (run, error) {
	if takesSeed(spec) {
		if _, kv, _ := learner.ParseSpec(spec); kv["seed"] == "" {
			spec = setParam(spec, "seed", strconv.FormatUint(rng.Derive(ex.cfg.Seed, 1<<32+uint64(runID)), 10))
		}
	}
	l, err := learner.New(spec, ex.ds.Dim)
	if err != nil {
		return run{}, err
	}
	X, Y := ex.ds.X, ex.ds.Y
	var perm []int
	if ex.cfg.NoPermute {
		if ex.cfg.Sequence != nil {
			seq, err := ex.cfg.Sequence(runID)
			if err != nil {
				return run{}, err
			}
			if seq.Len() != ex.ds.Len() || seq.Dim != ex.ds.Dim {
				return run{}, fmt.Errorf("eval: sequence of run %d has %d rows of dimension %d, want %d of %d", runID, seq.Len(), seq.Dim, ex.ds.Len(), ex.ds.Dim)
			}
			X, Y = seq.X, seq.Y
		}
		perm = make([]int, ex.ds.Len())
		for i := range perm {
			perm[i] = i
		}
	} else {
		perm = dataset.Permutation(ex.ds.Len(), ex.cfg.Seed, runID)
	}
	curve := make([]float64, len(ex.curveT))
	k := 0
	var loss float64
	nonFinite := 0
	const chunk = 4096
	start := time.Now()
	for t, idx := range perm {
		y := Y[idx]
		f := l.Learn(X[idx], y)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			nonFinite++
		}
		if ex.task == learner.Classification {
			if learner.Mistake(f, y) {
				loss++
			}
		} else {
			loss += (f - y) * (f - y)
		}
		if t+1 == ex.curveT[k] {
			curve[k] = loss / float64(t+1)
			if ex.task == learner.Classification {
				curve[k] = 100 * loss / float64(t+1)
			}
			k++
		}
		if (t+1)%chunk == 0 {
			ex.cfg.Progress.Add(chunk)
		}
	}
	el := time.Since(start)
	ex.cfg.Progress.Add(int64(len(perm) % chunk))
	n := float64(len(perm))
	m := loss / n
	if ex.task == learner.Classification {
		m = 100 * loss / n
	}
	return run{metric: m, nonFinite: nonFinite, curve: curve, ns: float64(el.Nanoseconds()) / n, seconds: el.Seconds(), info: l.Info()}, nil
}

// curveTimes returns up to p increasing event counts ending at n.
func curveTimes(n, p int) []int {
	var out []int
	for k := 1; k <= p; k++ {
		t := int(math.Ceil(float64(n) * float64(k) / float64(p)))
		if t < 1 {
			t = 1
		}
		if len(out) == 0 || t > out[len(out)-1] {
			out = append(out, t)
		}
	}
	return out
}

func metrics(rs []run) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.metric
	}
	return out
}

// MeanStd returns the mean and the sample standard deviation (n−1; 0 for a
// single value), as MATLAB's and R's std do.
func MeanStd(v []float64) (mean, std float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) == 1 {
		return mean, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)-1))
}

// TotalEvents returns how many learner events Run will process for specs on
// a dataset of n rows (for a progress bar).
func TotalEvents(specs []string, n int, cfg Config) (int64, error) {
	cfg.defaults()
	var total int64
	for _, s := range specs {
		c, err := Expand(s)
		if err != nil {
			return 0, err
		}
		runs := cfg.Runs
		if len(c) > 1 {
			runs = len(c) * selRuns(cfg)
			if cfg.SelectRuns > 0 {
				runs += cfg.Runs
			}
		}
		total += int64(runs) * int64(n)
	}
	return total, nil
}
