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
// Beside the mistake rate or MSE it reports, per model, the measures of
// measures.go (log loss, Brier score, ECE and AUC, or MAE and R²) and,
// under the models, the trivial baseline on the same runs (running class
// prior or running mean). With Config.Test it also scores each run's final
// model, frozen, on a held-out dataset (Result.Test), and with
// Config.Passes it presents the dataset several times per run. With
// Config.MultiClass it evaluates multi-class learners (learner.Multi) with
// the measures and the two baselines (class prior, multinomial logistic
// regression) of multi.go.
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

	"okstream/codec"
	"okstream/dataset"
	"okstream/features"
	"okstream/features/kinds"
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
	// Passes is the number of passes over the dataset in a run (default
	// 1): pass 0 presents permutation r of Seed, as a single pass does;
	// pass p > 0 presents permutation r of rng.Derive(Seed, passSalt+p) (or
	// the rows in order again, with NoPermute). The progressive measures
	// cover every pass (optimistic from the second pass on: the rows have
	// been seen); the test measures (Test) are the honest ones.
	Passes int
	// Test, if set, is a held-out dataset of the same dimension (and, for
	// binary classification, labels ±1; for MultiClass, class keys matched
	// to the training classes by name, multi.go): at the end of each run
	// the final model, frozen, predicts every test row (Predict or
	// PredictProba, no learning) and the test measures are reported in
	// Result.Test.
	Test *dataset.Dataset
	// TestEvery, with Test, also evaluates the frozen model on Test every
	// TestEvery training events (the test curve; the time it takes is left
	// out of the per-event time). 0: only at the end.
	TestEvery int
	// MultiClass evaluates multi-class models (learner.NewMulti; a binary
	// learner's name means its multi-class form) on labels that are class
	// keys (multi.go: Dataset.Classes names, or numbers as classes), with
	// the multi-class measures and baselines of multi.go. Not with
	// Sequence.
	MultiClass bool
	// Final, if set, receives every run's final model (FinalModel) at the
	// end of the run, from the worker running it: it must be safe for
	// concurrent use, and it must not change the model (the test scores
	// are computed after it returns).
	Final func(FinalModel)
}

// passSalt separates the permutation streams of passes > 0.
const passSalt = 1 << 40

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
	if c.Passes <= 0 {
		c.Passes = 1
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
	Passes     int           `json:"passes,omitempty"`
	Models     []ModelResult `json:"models"`
	// Baseline is the trivial predictor on the same runs: the running class
	// prior (classification) or the running mean (regression); see
	// measures.go.
	// (Absent, like every field added with the measures, from results
	// written before them: docs/data/*.json.)
	Baseline *BaselineResult `json:"baseline,omitempty"`
	// Test is the frozen models' error on Config.Test (absent without one).
	Test *TestResult `json:"test,omitempty"`
	// Multi-class only (multi.go): the classes in reported order (per-class
	// accuracies and confusion matrices are indexed by it), and the
	// multinomial logistic regression run beside the models.
	Classes        []string        `json:"classes,omitempty"`
	LinearBaseline *BaselineResult `json:"linear_baseline,omitempty"`
}

// Stat is a measure's mean and sample standard deviation over the runs
// (null in JSON where not finite, e.g. an AUC without both classes).
type Stat struct {
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
}

// Measure names (keys of the measures maps).
const (
	MeasureMistakeRate = "mistake_rate_pct"
	MeasureLogLoss     = "log_loss"
	MeasureBrier       = "brier"
	MeasureECE         = "ece"
	MeasureAUC         = "auc"
	MeasureMSE         = "mse"
	MeasureMAE         = "mae"
	MeasureR2          = "r2"
)

// BaselineResult is the trivial predictor's outcome on the reported runs.
type BaselineResult struct {
	Label    string          `json:"label"`
	Spec     string          `json:"spec,omitempty"` // a learner baseline's canonical spec
	Measures map[string]Stat `json:"measures"`
	Curve    []Point         `json:"curve,omitempty"`
	// Multi-class: accuracy per class (%) and confusion matrix, as
	// ModelResult's.
	PerClass  []Stat     `json:"per_class_accuracy_pct,omitempty"`
	Confusion [][]uint64 `json:"confusion,omitempty"`
}

// TestResult is every model's error on a held-out file after training.
type TestResult struct {
	Dataset string `json:"dataset"`
	N       int    `json:"n"`
	// TrainEvents is the number of training events before the final
	// evaluation (passes × training rows).
	TrainEvents int `json:"train_events"`
	Every       int `json:"every,omitempty"`
	// Baseline is the training stream's final class prior (or mean),
	// frozen, on the test file.
	Baseline BaselineResult `json:"baseline"`
	// LinearBaseline is the multi-class linear baseline, frozen (multi.go).
	LinearBaseline *BaselineResult   `json:"linear_baseline,omitempty"`
	Models         []TestModelResult `json:"models"`
}

// TestModelResult is one model's measures on the test file: at the end of
// training, and (Curve) every TestEvery training events, of the primary
// metric (mistake rate % or MSE).
type TestModelResult struct {
	Label    string          `json:"label"`
	Measures map[string]Stat `json:"measures"`
	Curve    []Point         `json:"curve,omitempty"`
	// Multi-class: as ModelResult's.
	PerClass  []Stat     `json:"per_class_accuracy_pct,omitempty"`
	Confusion [][]uint64 `json:"confusion,omitempty"`
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
	NonFinite int `json:"non_finite,omitempty"`
	// Measures are the progressive measures (see measures.go), mean and
	// std over the runs, keyed by the Measure names; the mistake rate or
	// MSE is also Mean and Std.
	Measures map[string]Stat `json:"measures,omitempty"`
	// AUCSampled is set when a run had more events than DefaultAUCCap:
	// its AUC is then estimated on a uniform reservoir of that many events.
	AUCSampled bool        `json:"auc_sampled,omitempty"`
	Bytes      int         `json:"bytes"` // model memory at the end of run 0
	Curve      []Point     `json:"curve"`
	Grid       []GridPoint `json:"grid,omitempty"`
	// Multi-class only (multi.go): the accuracy (%) of each class of
	// Result.Classes, mean and std over the runs that had events of it, and
	// the confusion matrix [true][predicted] summed over the runs (absent
	// past MaxConfusionClasses classes).
	PerClass  []Stat     `json:"per_class_accuracy_pct,omitempty"`
	Confusion [][]uint64 `json:"confusion,omitempty"`
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
	sum       Summary   // progressive measures
	test      Summary   // the frozen final model on Config.Test
	testCurve []float64 // primary metric on Config.Test at the test points
}

// Run evaluates each spec (label i from labels, if given) on ds. Labels of
// ds must already be ±1 for classification learners; with cfg.MultiClass
// they are class keys (multi.go).
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
			cands[i].Spec = withHorizon(cands[i].Spec, ds.Len()*max(cfg.Passes, 1), cfg.MultiClass)
			if cfg.MultiClass {
				if _, err := learner.NewMulti(cands[i].Spec, ds.Dim); err != nil {
					return nil, err
				}
				task = learner.MultiClass
				continue
			}
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
	if cfg.MultiClass {
		task = learner.MultiClass
		if cfg.Sequence != nil {
			return nil, errors.New("eval: multi-class evaluation does not take a per-run Sequence")
		}
	}
	if task == learner.Classification {
		for i, y := range ds.Y {
			if y != 1 && y != -1 {
				return nil, fmt.Errorf("eval: classification needs labels −1/+1, row %d has %v (map them with dataset.BinaryLabels)", i, y)
			}
		}
		if cfg.Test != nil {
			for i, y := range cfg.Test.Y {
				if y != 1 && y != -1 {
					return nil, fmt.Errorf("eval: classification needs labels −1/+1, test row %d has %v", i, y)
				}
			}
		}
	}
	if cfg.Test != nil && (cfg.Test.Dim != ds.Dim || cfg.Test.Len() == 0) {
		return nil, fmt.Errorf("eval: test set has %d rows of dimension %d, want rows of dimension %d", cfg.Test.Len(), cfg.Test.Dim, ds.Dim)
	}
	res := &Result{Dataset: ds.Name, N: ds.Len(), Dim: ds.Dim, Task: taskName(task), Runs: cfg.Runs, Seed: cfg.Seed, SelectRuns: cfg.SelectRuns, Passes: cfg.Passes}
	res.Metric = MistakeRate
	if task == learner.Regression {
		res.Metric = MSE
	}
	events := ds.Len() * cfg.Passes
	curveT := curveTimes(events, cfg.CurvePoints)
	ex := &executor{ds: ds, cfg: cfg, task: task, curveT: curveT}
	if cfg.Test != nil {
		ex.testT = testTimes(events, cfg.TestEvery)
		res.Test = &TestResult{Dataset: cfg.Test.Name, N: cfg.Test.Len(), TrainEvents: events, Every: cfg.TestEvery}
	}
	if task == learner.MultiClass {
		md := &multiData{}
		var err error
		if md.classOf, md.names, err = classIndex(ds, nil); err != nil {
			return nil, err
		}
		if cfg.Test != nil {
			if md.testClassOf, md.names, err = classIndex(cfg.Test, md.names); err != nil {
				return nil, err
			}
		}
		ex.multi, res.Classes = md, md.names
		err = ex.baselinesMulti(res)
		if err != nil {
			return nil, err
		}
	} else if err := ex.baselines(res); err != nil {
		return nil, err
	}

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
		mr.Curve = curveOf(curveT, runs, func(r run) []float64 { return r.curve })
		sums := make([]Summary, len(runs))
		for i, r := range runs {
			sums[i] = r.sum
		}
		mr.Measures = statsOf(sums, task)
		mr.PerClass, mr.Confusion = classStats(sums)
		for _, s := range sums {
			mr.AUCSampled = mr.AUCSampled || (task == learner.Classification && !s.AUCExact && s.N > 0)
		}
		res.Models = append(res.Models, mr)
		if res.Test != nil {
			tsums := make([]Summary, len(runs))
			for i, r := range runs {
				tsums[i] = r.test
			}
			tm := TestModelResult{Label: label, Measures: statsOf(tsums, task),
				Curve: curveOf(ex.testT, runs, func(r run) []float64 { return r.testCurve })}
			tm.PerClass, tm.Confusion = classStats(tsums)
			res.Test.Models = append(res.Test.Models, tm)
		}
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

// taskName is Result.Task: classification, regression or multiclass.
func taskName(t learner.Task) string {
	if t == learner.MultiClass {
		return "multiclass"
	}
	return t.String()
}

// withHorizon sets horizon=N for learners that take a horizon, unless the
// spec sets it (multi: the learner's multi-class form's parameters).
func withHorizon(spec string, n int, multi bool) string {
	_, kv, err := learner.ParseSpec(spec)
	if err != nil || kv["horizon"] != "" {
		return spec
	}
	if takesParam(spec, "horizon", multi) {
		return setParam(spec, "horizon", strconv.Itoa(n))
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

// takesParam reports whether the spec's learner (its multi-class form, for
// multi) accepts parameter key.
func takesParam(spec, key string, multi bool) bool {
	name, _, _ := learner.ParseSpec(spec)
	var params []learner.ParamDoc
	if multi {
		if reg := learner.DescribeMulti(name); reg != nil {
			params = reg.Params
		}
	} else if reg := learner.Describe(name); reg != nil {
		params = reg.Params
	}
	for _, p := range params {
		if p.Name == key {
			return true
		}
	}
	return false
}

// seeded gives spec run runID's learner seed, rng.Derive(Seed, 1<<32 +
// runID), unless the spec fixes one or the learner takes none.
func (ex *executor) seeded(spec string, runID int, multi bool) string {
	if takesParam(spec, "seed", multi) {
		if _, kv, _ := learner.ParseSpec(spec); kv["seed"] == "" {
			spec = setParam(spec, "seed", strconv.FormatUint(rng.Derive(ex.cfg.Seed, 1<<32+uint64(runID)), 10))
		}
	}
	return spec
}

type executor struct {
	ds     *dataset.Dataset
	cfg    Config
	task   learner.Task
	curveT []int
	testT  []int      // training events after which the test set is scored
	multi  *multiData // multi-class class numbering (task MultiClass)
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
	if ex.task == learner.MultiClass {
		return ex.oneMulti(spec, runID)
	}
	spec = ex.seeded(spec, runID, false)
	l, err := learner.New(spec, ex.ds.Dim)
	if err != nil {
		return run{}, err
	}
	X, Y, order, err := ex.sequence(runID)
	if err != nil {
		return run{}, err
	}
	curve := make([]float64, len(ex.curveT))
	k := 0
	var loss float64
	nonFinite := 0
	var bin *Binary
	var reg *Regress
	if ex.task == learner.Classification {
		bin = NewBinary(ProbabilityOf(l), 0)
	} else {
		reg = NewRegress()
	}
	var testCurve []float64
	kt := 0
	var testTime time.Duration
	const chunk = 4096
	start := time.Now()
	for t, idx := range order {
		y := Y[idx]
		x := X.row(idx)
		if err := X.declare(l); err != nil {
			return run{}, fmt.Errorf("eval: declaring the feature kinds: %w", err)
		}
		f := l.Learn(x, y)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			nonFinite++
		}
		if ex.task == learner.Classification {
			if learner.Mistake(f, y) {
				loss++
			}
			bin.Add(f, y)
		} else {
			loss += (f - y) * (f - y)
			reg.Add(f, y)
		}
		if t+1 == ex.curveT[k] {
			curve[k] = loss / float64(t+1)
			if ex.task == learner.Classification {
				curve[k] = 100 * loss / float64(t+1)
			}
			k++
		}
		if kt < len(ex.testT) && t+1 == ex.testT[kt] && kt < len(ex.testT)-1 {
			ts := time.Now()
			sum := ex.score(l, bin, reg, X)
			testCurve = append(testCurve, primary(sum, ex.task))
			testTime += time.Since(ts)
			kt++
		}
		if (t+1)%chunk == 0 {
			ex.cfg.Progress.Add(chunk)
		}
	}
	el := time.Since(start) - testTime
	ex.cfg.Progress.Add(int64(len(order) % chunk))
	n := float64(len(order))
	m := loss / n
	if ex.task == learner.Classification {
		m = 100 * loss / n
	}
	r := run{metric: m, nonFinite: nonFinite, curve: curve, ns: float64(el.Nanoseconds()) / n, seconds: el.Seconds(), info: l.Info()}
	if bin != nil {
		r.sum = bin.Summary()
	} else {
		r.sum = reg.Summary()
	}
	fm := FinalModel{Run: runID, Spec: r.info.Spec, Learner: l, Encoder: X.enc, Events: len(order)}
	if bin != nil {
		fm.Calib, fm.Mistakes = bin.platt, int(loss)
	} else {
		fm.SqErr = loss
	}
	ex.final(fm)
	if ex.cfg.Test != nil {
		r.test = ex.score(l, bin, reg, X)
		r.testCurve = append(testCurve, primary(r.test, ex.task))
	}
	return r, nil
}

// rows are a run's rows as the learners see them: ds.X, or for a named
// dataset (dataset.Named) each record encoded, when it is presented, by the
// run's own fresh features.Encoder — exactly as the runtime encodes a
// stream, once per event in presentation order (passes included: the
// encoder carries over from one pass to the next, as in a stream that
// replays the file).
type rows struct {
	X     [][]float64
	recs  [][]codec.Field
	enc   *features.Encoder // nil: X as it is
	kinds kinds.Declarer
}

// declare gives l the encoder's feature kinds when the last row encoded
// allocated coordinates (kinds.Declarer), before l sees that row — what
// the runtime does.
func (r *rows) declare(l any) error {
	if r.enc == nil {
		return nil
	}
	return r.kinds.Declare(r.enc, l)
}

// row returns the vector of row idx: X[idx], or the record encoded now (a
// new slice: learners may keep it).
func (r *rows) row(idx int) []float64 {
	if r.enc == nil {
		return r.X[idx]
	}
	x, _ := r.enc.Encode(r.recs[idx], nil) // MissingImpute: never an error
	return x
}

// frozen returns the rows of a held-out dataset as the run's encoder
// would encode them now, without changing it (a copy of its state encodes
// them in order); ts.X when either side is not named.
func (r *rows) frozen(ts *dataset.Dataset) [][]float64 {
	if r.enc == nil || ts.Named == nil {
		return ts.X
	}
	b, err := r.enc.MarshalBinary()
	if err != nil {
		panic(fmt.Sprintf("eval: encoder state: %v", err)) // cannot fail for a valid encoder
	}
	c := features.New(r.enc.Config())
	if err := c.UnmarshalBinary(b); err != nil {
		panic(fmt.Sprintf("eval: encoder state: %v", err))
	}
	out := make([][]float64, len(ts.Named.Records))
	for i, rec := range ts.Named.Records {
		out[i], _ = c.Encode(rec, nil)
	}
	return out
}

// sequence returns run runID's rows and the order in which they are
// presented, every pass included. A named dataset's rows are encoded as
// they are presented (rows.row), by a fresh encoder per call.
func (ex *executor) sequence(runID int) (X *rows, Y []float64, order []int, err error) {
	src := ex.ds
	n := ex.ds.Len()
	if ex.cfg.NoPermute && ex.cfg.Sequence != nil {
		seq, err := ex.cfg.Sequence(runID)
		if err != nil {
			return nil, nil, nil, err
		}
		if seq.Len() != n || seq.Dim != ex.ds.Dim {
			return nil, nil, nil, fmt.Errorf("eval: sequence of run %d has %d rows of dimension %d, want %d of %d", runID, seq.Len(), seq.Dim, n, ex.ds.Dim)
		}
		src = seq
	}
	X, Y = &rows{X: src.X}, src.Y
	if src.Named != nil {
		X.recs, X.enc = src.Named.Records, src.Named.NewEncoder()
	}
	order = make([]int, 0, n*ex.cfg.Passes)
	for p := 0; p < ex.cfg.Passes; p++ {
		switch {
		case ex.cfg.NoPermute:
			for i := 0; i < n; i++ {
				order = append(order, i)
			}
		case p == 0:
			order = append(order, dataset.Permutation(n, ex.cfg.Seed, runID)...)
		default:
			order = append(order, dataset.Permutation(n, rng.Derive(ex.cfg.Seed, passSalt+uint64(p)), runID)...)
		}
	}
	return X, Y, order, nil
}

// score evaluates the frozen learner on the test set: every row predicted
// (no learning), the probabilities from the training stream's calibration
// as it is now (frozen), R² against the training stream's running mean. A
// named test set is encoded by a copy of the run's encoder as it is now
// (rows.frozen).
func (ex *executor) score(l learner.Learner, bin *Binary, reg *Regress, X *rows) Summary {
	ts := ex.cfg.Test
	tx := X.frozen(ts)
	if bin != nil {
		fb := bin.Frozen(0)
		for i, x := range tx {
			fb.Add(l.Predict(x), ts.Y[i])
		}
		return fb.Summary()
	}
	fr := reg.Frozen()
	for i, x := range tx {
		fr.Add(l.Predict(x), ts.Y[i])
	}
	return fr.Summary()
}

// baselines fills res.Baseline (and res.Test.Baseline) with the trivial
// predictor's measures on the reported runs.
func (ex *executor) baselines(res *Result) error {
	classify := ex.task == learner.Classification
	label := "class prior"
	if !classify {
		label = "running mean"
	}
	var sums, tsums []Summary
	var curves [][]float64
	for r := 0; r < ex.cfg.Runs; r++ {
		_, Y, order, err := ex.sequence(r)
		if err != nil {
			return err
		}
		b := NewBaseline(classify)
		curve := make([]float64, len(ex.curveT))
		k := 0
		for t, idx := range order {
			b.Add(Y[idx])
			if t+1 == ex.curveT[k] {
				curve[k] = primary(b.Summary(), ex.task)
				k++
			}
		}
		sums, curves = append(sums, b.Summary()), append(curves, curve)
		if ex.cfg.Test != nil {
			f := b.Frozen()
			for _, y := range ex.cfg.Test.Y {
				f.Add(y)
			}
			tsums = append(tsums, f.Summary())
		}
	}
	res.Baseline = &BaselineResult{Label: label, Measures: statsOf(sums, ex.task)}
	for k, t := range ex.curveT {
		vals := make([]float64, len(curves))
		for i := range curves {
			vals[i] = curves[i][k]
		}
		mean, std := MeanStd(vals)
		res.Baseline.Curve = append(res.Baseline.Curve, Point{T: t, Mean: mean, Std: std})
	}
	if res.Test != nil {
		res.Test.Baseline = BaselineResult{Label: label + " of the training stream", Measures: statsOf(tsums, ex.task)}
	}
	return nil
}

// primary is the mistake rate (%) or the MSE of a summary.
func primary(s Summary, task learner.Task) float64 {
	if task != learner.Regression {
		return s.MistakeRate
	}
	return s.MSE
}

// statsOf is the mean and std over runs of every measure of the task.
func statsOf(sums []Summary, task learner.Task) map[string]Stat {
	get := map[string]func(Summary) float64{}
	if task != learner.Regression {
		get[MeasureMistakeRate] = func(s Summary) float64 { return s.MistakeRate }
		get[MeasureLogLoss] = func(s Summary) float64 { return s.LogLoss }
		get[MeasureBrier] = func(s Summary) float64 { return s.Brier }
		get[MeasureECE] = func(s Summary) float64 { return s.ECE }
		if task == learner.Classification {
			get[MeasureAUC] = func(s Summary) float64 { return s.AUC }
		}
	} else {
		get[MeasureMSE] = func(s Summary) float64 { return s.MSE }
		get[MeasureMAE] = func(s Summary) float64 { return s.MAE }
		get[MeasureR2] = func(s Summary) float64 { return s.R2 }
	}
	out := map[string]Stat{}
	for name, f := range get {
		vals := make([]float64, len(sums))
		for i, s := range sums {
			vals[i] = f(s)
		}
		defined := false
		for _, v := range vals {
			defined = defined || !math.IsNaN(v)
		}
		if !defined {
			continue // not defined for this predictor (the baseline's AUC)
		}
		mean, std := MeanStd(vals)
		out[name] = Stat{Mean: mean, Std: std}
	}
	return out
}

// curveOf averages a per-run curve over the runs at the times ts.
func curveOf(ts []int, runs []run, get func(run) []float64) []Point {
	var out []Point
	for k, t := range ts {
		vals := make([]float64, len(runs))
		for i, r := range runs {
			vals[i] = get(r)[k]
		}
		mean, std := MeanStd(vals)
		out = append(out, Point{T: t, Mean: mean, Std: std})
	}
	return out
}

// testTimes is every-th training event up to n, and n (only n for every 0).
func testTimes(n, every int) []int {
	var out []int
	if every > 0 {
		for t := every; t < n; t += every {
			out = append(out, t)
		}
	}
	return append(out, n)
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
		total += int64(runs) * int64(n) * int64(cfg.Passes)
	}
	if cfg.MultiClass { // the linear baseline
		total += int64(cfg.Runs) * int64(n) * int64(cfg.Passes)
	}
	return total, nil
}
