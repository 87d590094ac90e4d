package eval

// Multi-class evaluation: progressive validation of learner.Multi models
// (issue 38, items 2, 5 and 6), their measures, and the two baselines every
// multi-class number stands beside.
//
// Classes. A dataset's labels are class keys: with Dataset.Classes (a CSV
// column of class names) label v is the name Classes[v]; otherwise the
// number v itself, written as strconv.FormatFloat(v, 'g', -1, 64) ("7").
// Keys are matched by name, so a test file's classes are the training
// file's whatever their numbering in each file. Result.Classes lists the
// training file's classes sorted (numerically when every name is a
// number), then those only the test file has, sorted; per-class
// accuracies and the confusion matrix are indexed in that order. A model sees something else: in every run
// (and pass) the classes are numbered 0, 1, ... in order of first
// appearance in the PRESENTED sequence — the permutation — as the
// streaming runtime's class dictionary numbers them, and a model's
// learner.Multi.Classes() grows when a class is seen for the first time.
//
// Protocol: every event is predicted (LearnClass returns the distribution
// before the update) before its label is used by anything. A class seen
// for the first time had no entry in that distribution: its probability
// was 0 and the prediction (the arg max over the known classes) a mistake.
// The first event of a run, with no class known, has no prediction at all:
// a mistake, counted in every measure (its distribution is empty: log loss
// −log ε, Brier 1) but in no cell of the confusion matrix. On a test file
// (Config.Test) the model is frozen (PredictProba only); a test class the
// run never saw in training is always a mistake with probability 0.
//
// Measures (MultiMeasures), over N events with true class y and
// distribution p over the K classes known before the event:
//
//   - mistake rate (%) = 100 · #{arg max p ≠ y} / N (arg max: the first of
//     the largest entries, learner.ArgMax);
//   - log loss = −mean log max(p_y, ProbClip) (ε = ProbClip = 1e-15: one
//     confident mistake or a new class costs at most 34.5 nats);
//   - Brier = mean Σ_k (p_k − [k = y])², the sum over the known classes plus
//     the true class (a new class adds (0 − 1)² = 1); between 0 and 2;
//   - ECE of the top-class probability: Σ_b (n_b/N)·|acc_b − conf_b| over
//     ECEBins equal-width bins of conf = max_k p_k, acc_b the fraction of
//     events of bin b whose arg max was right (Guo et al., ICML 2017, §2);
//   - accuracy per class (recall, %): the fraction of the events of class k
//     predicted k (NaN, JSON null, for a class with no events);
//   - confusion matrix [true][predicted], counts, summed over the runs;
//     kept for at most MaxConfusionClasses classes (larger ones: nil).
//
// A distribution with a non-finite entry (a diverged model) counts as the
// worst prediction: a mistake, log loss −log ε, Brier 2, confidence 0; the
// run's NonFinite counts it.
//
// Baselines on the same runs: MultiPrior, the running class prior, and
// linear multinomial logistic regression (learner.NewMulti("linear"), seeded
// like the models), reported as Result.Baseline and Result.LinearBaseline
// (and their frozen scores on the test file).

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"okstream/dataset"
	"okstream/learner"
)

// MaxConfusionClasses bounds the confusion matrix (C² counters): with more
// classes it is not kept (nil), the per-class accuracies still are.
const MaxConfusionClasses = 256

// LinearBaselineSpec is the multi-class reference model run beside every
// multi-class evaluation: online multinomial logistic regression.
const LinearBaselineSpec = "linear"

// MultiMeasures accumulates the multi-class measures of one predictor over
// a stream (see the top of this file). Classes are indices in the run's
// order of first appearance; Summary maps them to the reported order. Its
// counters grow when a new class index is seen (bounded by the classes)
// and nothing else allocates.
type MultiMeasures struct {
	n, mistakes int
	logLoss     float64
	brier       float64
	bins        [ECEBins]struct{ n, conf, acc float64 }
	count, hit  []float64  // per class index: events, events predicted right
	confusion   [][]uint64 // [true][predicted] in class indices (nil past MaxConfusionClasses)
	noConfusion bool
}

// Add counts one event: p is the distribution over the classes known
// before it (p[k] for class index k < len(p); empty when none is known),
// y the index of its true class (y ≥ len(p) for a class the predictor
// had not seen: probability 0). It returns whether the prediction was a
// mistake. y must be ≥ 0.
func (m *MultiMeasures) Add(p []float64, y int) (mistake bool) {
	m.n++
	pred, conf := -1, 0.0
	bad := false
	for _, v := range p {
		if !finiteF(v) {
			bad = true
			break
		}
	}
	if !bad {
		pred = learner.ArgMax(p)
		if pred >= 0 {
			conf = p[pred]
		}
	}
	mistake = pred != y
	if mistake {
		m.mistakes++
	}
	// log loss and Brier
	py := 0.0
	if !bad && y < len(p) {
		py = p[y]
	}
	m.logLoss -= math.Log(math.Max(py, ProbClip))
	if bad {
		m.brier += 2
	} else {
		var b float64
		for k, v := range p {
			if k == y {
				v -= 1
			}
			b += v * v
		}
		if y >= len(p) {
			b++
		}
		m.brier += b
	}
	// ECE of the top-class probability
	k := int(conf * ECEBins)
	if k >= ECEBins {
		k = ECEBins - 1
	} else if k < 0 {
		k = 0
	}
	m.bins[k].n++
	m.bins[k].conf += conf
	if !mistake {
		m.bins[k].acc++
	}
	// per class and confusion
	m.grow(max(y, pred))
	m.count[y]++
	if !mistake {
		m.hit[y]++
	}
	if pred >= 0 && m.confusion != nil {
		m.confusion[y][pred]++
	}
	return mistake
}

// grow makes the per-class counters cover class index k.
func (m *MultiMeasures) grow(k int) {
	for len(m.count) <= k {
		m.count = append(m.count, 0)
		m.hit = append(m.hit, 0)
	}
	if m.noConfusion {
		return
	}
	if len(m.count) > MaxConfusionClasses {
		m.confusion, m.noConfusion = nil, true
		return
	}
	c := len(m.count)
	if len(m.confusion) == c && (c == 0 || len(m.confusion[0]) == c) {
		return
	}
	for i := range m.confusion {
		m.confusion[i] = append(m.confusion[i], make([]uint64, c-len(m.confusion[i]))...)
	}
	for len(m.confusion) < c {
		m.confusion = append(m.confusion, make([]uint64, c))
	}
}

// Summary returns the measures so far. classOf maps the accumulator's class
// indices to the reported ones (classOf[k] for index k; it must cover
// every index Add saw), classes is the number of reported classes.
// PerClass[k] is the accuracy (%) of reported class k (NaN without
// events), Confusion[i][j] the count of class i predicted j (nil past
// MaxConfusionClasses). AUC, MSE, MAE and R² are NaN.
func (m *MultiMeasures) Summary(classOf []int, classes int) Summary {
	s := nanSummary()
	s.N = m.n
	s.PerClass = make([]float64, classes)
	for i := range s.PerClass {
		s.PerClass[i] = math.NaN()
	}
	if !m.noConfusion && classes <= MaxConfusionClasses {
		s.Confusion = make([][]uint64, classes)
		for i := range s.Confusion {
			s.Confusion[i] = make([]uint64, classes)
		}
	}
	for k, c := range m.count {
		if c > 0 {
			s.PerClass[classOf[k]] = 100 * m.hit[k] / c
		}
		if s.Confusion != nil && m.confusion != nil {
			for j, v := range m.confusion[k] {
				s.Confusion[classOf[k]][classOf[j]] += v
			}
		}
	}
	if m.n == 0 {
		return s
	}
	n := float64(m.n)
	s.MistakeRate = 100 * float64(m.mistakes) / n
	s.LogLoss = m.logLoss / n
	s.Brier = m.brier / n
	s.ECE = 0
	for _, b := range m.bins {
		if b.n > 0 {
			s.ECE += b.n / n * math.Abs(b.acc/b.n-b.conf/b.n)
		}
	}
	return s
}

// MultiPrior is the running class prior of a multi-class stream: it
// predicts the most frequent class so far (the first in index order on a
// tie, so the class seen first), with probabilities
// P(k) = (n_k + 1)/(n + K) over the K classes seen (Laplace's rule on the
// known classes; a class not seen yet has probability 0 and is clipped in
// the log loss like any model's). Before any label it predicts nothing
// (an empty distribution).
type MultiPrior struct {
	counts []float64
	n      float64
}

// Proba writes the distribution into p[:K] (p must have room) and returns it.
func (c *MultiPrior) Proba(p []float64) []float64 {
	p = p[:len(c.counts)]
	den := c.n + float64(len(c.counts))
	for k, v := range c.counts {
		p[k] = (v + 1) / den
	}
	return p
}

// Add learns class index k (k ≤ K: k = K adds a class).
func (c *MultiPrior) Add(k int) {
	for len(c.counts) <= k {
		c.counts = append(c.counts, 0)
	}
	c.counts[k]++
	c.n++
}

// classIndex numbers a dataset's labels by class name (see the top of
// this file): classOf[i] is row i's class, names the class names. Names
// already in known keep their number (a test file against its training
// file's names); new ones are appended after them, sorted (numerically
// when they are all numbers).
func classIndex(ds *dataset.Dataset, known []string) (classOf []int, names []string, err error) {
	names = append([]string(nil), known...)
	index := make(map[string]int, len(names))
	for i, n := range names {
		index[n] = i
	}
	byValue := map[float64]int{}
	classOf = make([]int, ds.Len())
	for i, y := range ds.Y {
		if k, ok := byValue[y]; ok {
			classOf[i] = k
			continue
		}
		var name string
		if ds.Classes != nil {
			if y != math.Trunc(y) || y < 0 || int(y) >= len(ds.Classes) {
				return nil, nil, fmt.Errorf("eval: %s: row %d has class number %v, outside its %d class names", ds.Name, i+1, y, len(ds.Classes))
			}
			name = ds.Classes[int(y)]
		} else {
			if !finiteF(y) {
				return nil, nil, fmt.Errorf("eval: %s: row %d has label %v, not a class", ds.Name, i+1, y)
			}
			name = strconv.FormatFloat(y, 'g', -1, 64)
		}
		k, ok := index[name]
		if !ok {
			if len(names) >= learner.MaxClasses {
				return nil, nil, fmt.Errorf("eval: %s has more than %d classes", ds.Name, learner.MaxClasses)
			}
			k = len(names)
			index[name] = k
			names = append(names, name)
		}
		byValue[y] = k
		classOf[i] = k
	}
	// Sort the new names (numerically if they are all numbers).
	fresh := names[len(known):]
	order := make([]int, len(fresh))
	for i := range order {
		order[i] = i
	}
	nums := make([]float64, len(fresh))
	numeric := true
	for i, n := range fresh {
		v, err := strconv.ParseFloat(n, 64)
		nums[i], numeric = v, numeric && err == nil
	}
	sort.SliceStable(order, func(a, b int) bool {
		if numeric {
			return nums[order[a]] < nums[order[b]]
		}
		return fresh[order[a]] < fresh[order[b]]
	})
	rank := make([]int, len(fresh))
	sorted := make([]string, len(fresh))
	for r, i := range order {
		rank[i], sorted[r] = r, fresh[i]
	}
	copy(fresh, sorted)
	for i, k := range classOf {
		if k >= len(known) {
			classOf[i] = len(known) + rank[k-len(known)]
		}
	}
	return classOf, names, nil
}

// multiData is a multi-class evaluation's class numbering.
type multiData struct {
	classOf     []int    // training row → reported class
	testClassOf []int    // test row → reported class
	names       []string // reported classes
}

// runDict is one run's class dictionary: reported class → the run's index
// (−1 until seen) and back.
type runDict struct {
	index []int // by reported class
	order []int // by run index: reported class
}

func newRunDict(classes int) *runDict {
	d := &runDict{index: make([]int, classes)}
	for i := range d.index {
		d.index[i] = -1
	}
	return d
}

// of returns the run index of reported class c, adding it if new.
func (d *runDict) of(c int) int {
	if k := d.index[c]; k >= 0 {
		return k
	}
	d.index[c] = len(d.order)
	d.order = append(d.order, c)
	return d.index[c]
}

// frozen returns the run index of reported class c without adding it to
// d: a class d has not seen gets an index past d's (and past every other
// unseen class's: extra holds them), for a frozen model's test events.
func (d *runDict) frozen(c int, extra *[]int) int {
	if k := d.index[c]; k >= 0 {
		return k
	}
	for i, e := range *extra {
		if e == c {
			return len(d.order) + i
		}
	}
	*extra = append(*extra, c)
	return len(d.order) + len(*extra) - 1
}

// oneMulti runs one multi-class pass of spec over permutation runID.
func (ex *executor) oneMulti(spec string, runID int) (run, error) {
	spec = ex.seeded(spec, runID, true)
	m, err := learner.NewMulti(spec, ex.ds.Dim)
	if err != nil {
		return run{}, err
	}
	X, _, order, err := ex.sequence(runID)
	if err != nil {
		return run{}, err
	}
	nc := len(ex.multi.names)
	dict := newRunDict(nc)
	p := make([]float64, nc+1)
	curve := make([]float64, len(ex.curveT))
	k, kt := 0, 0
	var acc MultiMeasures
	var testCurve []float64
	var testTime time.Duration
	nonFinite := 0
	const chunk = 4096
	start := time.Now()
	for t, idx := range order {
		c := dict.of(ex.multi.classOf[idx])
		x := X.row(idx)
		if err := X.declare(m); err != nil {
			return run{}, fmt.Errorf("eval: declaring the feature kinds: %w", err)
		}
		q := m.LearnClass(x, c, p)
		for _, v := range q {
			if !finiteF(v) {
				nonFinite++
				break
			}
		}
		acc.Add(q, c)
		if t+1 == ex.curveT[k] {
			curve[k] = 100 * float64(acc.mistakes) / float64(t+1)
			k++
		}
		if kt < len(ex.testT) && t+1 == ex.testT[kt] && kt < len(ex.testT)-1 {
			ts := time.Now()
			sum := ex.scoreMulti(m.PredictProba, dict, p, X)
			testCurve = append(testCurve, sum.MistakeRate)
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
	r := run{metric: 100 * float64(acc.mistakes) / n, nonFinite: nonFinite, curve: curve, ns: float64(el.Nanoseconds()) / n,
		seconds: el.Seconds(), info: m.Info(), sum: acc.Summary(dict.order, nc)}
	ex.final(FinalModel{Run: runID, Spec: r.info.Spec, Multi: m, Classes: append([]int(nil), dict.order...), Encoder: X.enc,
		Events: len(order), Mistakes: int(acc.mistakes)})
	if ex.cfg.Test != nil {
		r.test = ex.scoreMulti(m.PredictProba, dict, p, X)
		r.testCurve = append(testCurve, r.test.MistakeRate)
	}
	return r, nil
}

// scoreMulti scores a frozen predictor (proba writes the distribution of x
// into p) on the test set (a named one encoded as rows.frozen says).
func (ex *executor) scoreMulti(proba func(x, p []float64) []float64, dict *runDict, p []float64, X *rows) Summary {
	var acc MultiMeasures
	var extra []int
	for i, x := range X.frozen(ex.cfg.Test) {
		c := dict.frozen(ex.multi.testClassOf[i], &extra)
		acc.Add(proba(x, p), c)
	}
	return acc.Summary(append(append([]int(nil), dict.order...), extra...), len(ex.multi.names))
}

// baselinesMulti fills res.Baseline with the running class prior and
// res.LinearBaseline with multinomial logistic regression, on the reported
// runs (and their frozen scores on the test set).
func (ex *executor) baselinesMulti(res *Result) error {
	nc := len(ex.multi.names)
	var sums, tsums []Summary
	var curves [][]float64
	p := make([]float64, nc+1)
	for r := 0; r < ex.cfg.Runs; r++ {
		_, _, order, err := ex.sequence(r)
		if err != nil {
			return err
		}
		var prior MultiPrior
		var acc MultiMeasures
		dict := newRunDict(nc)
		curve := make([]float64, len(ex.curveT))
		k := 0
		for t, idx := range order {
			c := dict.of(ex.multi.classOf[idx])
			acc.Add(prior.Proba(p), c)
			prior.Add(c)
			if t+1 == ex.curveT[k] {
				curve[k] = 100 * float64(acc.mistakes) / float64(t+1)
				k++
			}
		}
		sums, curves = append(sums, acc.Summary(dict.order, nc)), append(curves, curve)
		if ex.cfg.Test != nil {
			tsums = append(tsums, ex.scoreMulti(func(_, p []float64) []float64 { return prior.Proba(p) }, dict, p, &rows{})) // the prior ignores x
		}
	}
	res.Baseline = &BaselineResult{Label: "class prior", Measures: statsOf(sums, ex.task)}
	res.Baseline.PerClass, res.Baseline.Confusion = classStats(sums)
	for k, t := range ex.curveT {
		vals := make([]float64, len(curves))
		for i := range curves {
			vals[i] = curves[i][k]
		}
		mean, std := MeanStd(vals)
		res.Baseline.Curve = append(res.Baseline.Curve, Point{T: t, Mean: mean, Std: std})
	}
	if res.Test != nil {
		res.Test.Baseline = BaselineResult{Label: "class prior of the training stream", Measures: statsOf(tsums, ex.task)}
		res.Test.Baseline.PerClass, res.Test.Baseline.Confusion = classStats(tsums)
	}

	lin, err := ex.runMany([]Candidate{{Spec: LinearBaselineSpec}}, 0, ex.cfg.Runs)
	if err != nil {
		return err
	}
	runs := lin[0]
	sums = sums[:0]
	tsums = tsums[:0]
	for _, r := range runs {
		sums = append(sums, r.sum)
		tsums = append(tsums, r.test)
	}
	const label = "linear multinomial logistic"
	res.LinearBaseline = &BaselineResult{Label: label, Spec: runs[0].info.Spec, Measures: statsOf(sums, ex.task),
		Curve: curveOf(ex.curveT, runs, func(r run) []float64 { return r.curve })}
	res.LinearBaseline.PerClass, res.LinearBaseline.Confusion = classStats(sums)
	if res.Test != nil {
		res.Test.LinearBaseline = &BaselineResult{Label: label, Spec: runs[0].info.Spec, Measures: statsOf(tsums, ex.task),
			Curve: curveOf(ex.testT, runs, func(r run) []float64 { return r.testCurve })}
		res.Test.LinearBaseline.PerClass, res.Test.LinearBaseline.Confusion = classStats(tsums)
	}
	return nil
}

// classStats is the per-class accuracy (mean and std over the runs; NaN
// where a run had no event of the class... then over the runs that had)
// and the confusion matrix summed over the runs (nil if a run has none).
func classStats(sums []Summary) ([]Stat, [][]uint64) {
	if len(sums) == 0 || sums[0].PerClass == nil {
		return nil, nil
	}
	nc := len(sums[0].PerClass)
	per := make([]Stat, nc)
	for k := range per {
		var vals []float64
		for _, s := range sums {
			if !math.IsNaN(s.PerClass[k]) {
				vals = append(vals, s.PerClass[k])
			}
		}
		if len(vals) == 0 {
			per[k] = Stat{Mean: math.NaN(), Std: math.NaN()}
			continue
		}
		per[k].Mean, per[k].Std = MeanStd(vals)
	}
	var conf [][]uint64
	for _, s := range sums {
		if s.Confusion == nil {
			return per, nil
		}
	}
	conf = make([][]uint64, nc)
	for i := range conf {
		conf[i] = make([]uint64, nc)
		for _, s := range sums {
			for j, v := range s.Confusion[i] {
				conf[i][j] += v
			}
		}
	}
	return per, conf
}
