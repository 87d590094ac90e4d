package eval

import (
	"math"
	"sort"

	"okstream/learner"
	"okstream/learner/rng"
)

// Measures beside the mistake rate and the MSE (issue 38).
//
// Every measure is progressive, like the mistake rate: event t's
// prediction (score, probability) is computed before its label is used by
// anything — the learner, the calibration, the baseline. The accumulators
// below cost O(1) per event (the AUC's reservoir aside, see AUC) and
// allocate nothing per event once their buffers have grown.
//
// Classification (labels ±1):
//
//   - the probability p of y = +1 is the learner's own if it exposes one
//     (Prober), otherwise the margin calibrated online by Platt, a
//     logistic regression of y on the score fitted progressively (see
//     Platt);
//   - LogLoss = −mean log p(y), with p clipped to [ProbClip, 1 − ProbClip];
//   - Brier = mean (p − y01)², y01 = (y+1)/2;
//   - ECE = Σ_b (n_b/N)·|mean y01 − mean p| over 10 equal-width bins of p;
//   - AUC = P(score of a positive > score of a negative), ties counting
//     one half (Mann–Whitney), from the raw scores (calibration does not
//     change a ranking).
//
// Regression: MSE, MAE, and R² = 1 − SSE/SSE_mean where SSE_mean is the
// squared error of the running-mean predictor (the baseline below) on the
// same stream, so R² > 0 means better than predicting the mean of the
// labels seen so far.
//
// Baselines on the same stream (the trivial predictors every number is to
// be read against): for classification the running class prior,
// p_t = (n₊ + 1)/(n + 2) over the labels before t (Laplace's rule), whose
// decision is the majority so far (a tie, the first event included, is a
// mistake, as a score of 0 is for a learner); for regression the running
// mean of the labels before t (0 at the first event).
//
// Multi-class measures (MultiMeasures: mistake rate, log loss, Brier, ECE
// of the top class, per-class accuracy, confusion matrix) and baselines
// are in multi.go; they fill the same Summary, PerClass and Confusion
// included (empty for the binary and regression accumulators).

// ProbClip bounds a probability away from 0 and 1 in the log loss, so that
// one confident mistake costs at most −log(ProbClip) ≈ 34.5 nats.
const ProbClip = 1e-15

// ECEBins is the number of equal-width probability bins of the ECE.
const ECEBins = 10

// DefaultAUCCap is the number of (score, label) pairs the AUC keeps: up to
// it the AUC is exact; past it the pairs are a uniform reservoir sample of
// the stream (Algorithm R, seeded, so deterministic) and the AUC an
// estimate with standard error about 0.5/√cap ≈ 0.001 (Summary.AUCExact
// says which). 2^18 pairs are 4 MiB.
const DefaultAUCCap = 1 << 18

// PlattEta is the step of the online Platt calibration (learner.PlattEta).
const PlattEta = learner.PlattEta

// Prober is implemented by learners whose score may map to a probability
// of y = +1 (learner.Linear with the logistic loss: σ(score)); ok is false
// when it does not in the learner's configuration (another loss).
// Measures use it instead of the Platt calibration when it does.
type Prober interface {
	Probability(score float64) (p float64, ok bool)
}

// Platt is the online Platt calibration of a classifier's score,
// learner.Platt (defined there so that the one-vs-rest multi-class wrapper
// shares its numerics).
type Platt = learner.Platt

// NewPlatt returns the calibration's starting point (A = 1, B = 0).
func NewPlatt() Platt { return learner.NewPlatt() }

func y01(y float64) float64 {
	if y > 0 {
		return 1
	}
	return 0
}

func finiteF(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// LogLoss is −log p(y) for the probability p of y = +1, clipped to
// [ProbClip, 1 − ProbClip].
func LogLoss(p, y float64) float64 {
	p = math.Min(math.Max(p, ProbClip), 1-ProbClip)
	if y > 0 {
		return -math.Log(p)
	}
	return -math.Log(1 - p)
}

// Summary is the value of every measure of one accumulator; the fields
// that do not apply to the task are NaN (and null in JSON), except the
// slices, which are empty.
type Summary struct {
	N int // labelled events

	// Classification.
	MistakeRate float64 // %
	LogLoss     float64 // nats
	Brier       float64
	ECE         float64
	AUC         float64
	AUCExact    bool // the AUC used every event (see DefaultAUCCap)

	// Regression.
	MSE, MAE, R2 float64

	// Multi-class (MultiMeasures): accuracy per class (%, index = reported
	// class, NaN without events) and the confusion matrix
	// [true][predicted].
	PerClass  []float64
	Confusion [][]uint64
}

func nanSummary() Summary {
	n := math.NaN()
	return Summary{MistakeRate: n, LogLoss: n, Brier: n, ECE: n, AUC: n, MSE: n, MAE: n, R2: n}
}

// Binary accumulates the classification measures of one model over a
// stream of (score, label ±1) pairs.
type Binary struct {
	prob     func(float64) float64 // the learner's probability, or nil for Platt
	platt    Platt
	frozen   bool // calibration not updated (scoring a test file)
	n        int
	mistakes int
	logLoss  float64
	brier    float64
	bins     [ECEBins]struct{ n, p, y float64 }
	auc      aucReservoir
}

// NewBinary returns an accumulator whose probabilities come from prob
// (see ProbabilityOf), or from the online Platt calibration if prob is nil,
// keeping at most aucCap pairs for the AUC (0: DefaultAUCCap).
func NewBinary(prob func(score float64) float64, aucCap int) *Binary {
	b := &Binary{prob: prob, platt: NewPlatt()}
	b.auc.init(aucCap)
	return b
}

// ProbabilityOf is l's probability if l is a Prober that gives one, else
// nil (the measures then calibrate the score).
func ProbabilityOf(l learner.Learner) func(float64) float64 {
	pr, ok := l.(Prober)
	if !ok {
		return nil
	}
	if _, ok := pr.Probability(0); !ok {
		return nil
	}
	return func(s float64) float64 { p, _ := pr.Probability(s); return p }
}

// Frozen returns a new accumulator that uses b's calibration as it is now
// and never updates it: for scoring a frozen model on a test file.
func (b *Binary) Frozen(aucCap int) *Binary {
	f := &Binary{prob: b.prob, platt: b.platt, frozen: true}
	f.auc.init(aucCap)
	return f
}

// Prob is the probability of y = +1 the accumulator gives score s now.
func (b *Binary) Prob(s float64) float64 {
	if b.prob != nil {
		if !finiteF(s) {
			return 0.5
		}
		return b.prob(s)
	}
	return b.platt.Prob(s)
}

// Add counts one event: score s computed before label y (±1) was known.
func (b *Binary) Add(s, y float64) {
	p := b.Prob(s)
	b.n++
	if learner.Mistake(s, y) {
		b.mistakes++
	}
	b.logLoss += LogLoss(p, y)
	t := y01(y)
	b.brier += (p - t) * (p - t)
	k := int(p * ECEBins)
	if k >= ECEBins {
		k = ECEBins - 1
	} else if k < 0 {
		k = 0
	}
	b.bins[k].n++
	b.bins[k].p += p
	b.bins[k].y += t
	if finiteF(s) {
		b.auc.add(s, y > 0)
	}
	if !b.frozen && b.prob == nil {
		b.platt.Update(s, p, y)
	}
}

// Summary returns the measures so far.
func (b *Binary) Summary() Summary {
	s := nanSummary()
	s.N = b.n
	if b.n == 0 {
		return s
	}
	n := float64(b.n)
	s.MistakeRate = 100 * float64(b.mistakes) / n
	s.LogLoss = b.logLoss / n
	s.Brier = b.brier / n
	s.ECE = 0
	for _, bin := range b.bins {
		if bin.n > 0 {
			s.ECE += bin.n / n * math.Abs(bin.y/bin.n-bin.p/bin.n)
		}
	}
	s.AUC, s.AUCExact = b.auc.value()
	return s
}

// aucReservoir keeps up to cap (score, label) pairs: all of them until
// cap, then a uniform sample (Algorithm R with a fixed seed).
type aucReservoir struct {
	cap   int
	seen  int
	pairs []scored
	src   *rng.Source
}

type scored struct {
	s   float64
	pos bool
}

func (r *aucReservoir) init(cap int) {
	if cap <= 0 {
		cap = DefaultAUCCap
	}
	r.cap = cap
}

func (r *aucReservoir) add(s float64, pos bool) {
	r.seen++
	if len(r.pairs) < r.cap {
		r.pairs = append(r.pairs, scored{s, pos})
		return
	}
	if r.src == nil {
		r.src = rng.New(0x0a0c)
	}
	if j := r.src.IntN(r.seen); j < r.cap {
		r.pairs[j] = scored{s, pos}
	}
}

// value is the Mann–Whitney AUC of the kept pairs (NaN without both
// classes) and whether they are the whole stream. It sorts a copy.
func (r *aucReservoir) value() (float64, bool) {
	exact := r.seen == len(r.pairs)
	return AUC(r.pairs), exact
}

// AUC is the Mann–Whitney statistic of the pairs: the fraction of
// (positive, negative) pairs the positive scores higher, ties counting one
// half; NaN if a class is absent. O(n log n) on a sorted copy.
func AUC(pairs []scored) float64 {
	ps := make([]scored, len(pairs))
	copy(ps, pairs)
	sort.Slice(ps, func(i, j int) bool { return ps[i].s < ps[j].s })
	var nPos, nNeg, rankSum float64
	for i := 0; i < len(ps); {
		j := i
		for j < len(ps) && ps[j].s == ps[i].s {
			j++
		}
		mid := float64(i+j+1) / 2 // mean rank (1-based) of the tie group i..j-1
		for k := i; k < j; k++ {
			if ps[k].pos {
				nPos++
				rankSum += mid
			} else {
				nNeg++
			}
		}
		i = j
	}
	if nPos == 0 || nNeg == 0 {
		return math.NaN()
	}
	return (rankSum - nPos*(nPos+1)/2) / (nPos * nNeg)
}

// Regress accumulates the regression measures of one model.
type Regress struct {
	n        int
	sse, sae float64
	meanSSE  float64 // the running-mean predictor's SSE (R²'s reference)
	mean     RunningMean
	frozen   bool
}

// NewRegress returns an empty regression accumulator.
func NewRegress() *Regress { return &Regress{} }

// Frozen returns an empty accumulator whose R² reference is r's running
// mean as it is now, frozen (the training stream's mean, for a test file).
func (r *Regress) Frozen() *Regress { return &Regress{mean: r.mean, frozen: true} }

// Add counts one event: prediction f made before label y was known.
func (r *Regress) Add(f, y float64) {
	m := r.mean.Predict()
	if !r.frozen {
		r.mean.Add(y)
	}
	r.n++
	r.sse += (f - y) * (f - y)
	r.sae += math.Abs(f - y)
	r.meanSSE += (m - y) * (m - y)
}

// Summary returns the measures so far.
func (r *Regress) Summary() Summary {
	s := nanSummary()
	s.N = r.n
	if r.n == 0 {
		return s
	}
	n := float64(r.n)
	s.MSE, s.MAE = r.sse/n, r.sae/n
	if r.meanSSE > 0 {
		s.R2 = 1 - r.sse/r.meanSSE
	}
	return s
}

// RunningMean is the running-mean predictor: Predict is the mean of the
// labels added so far (0 before the first).
type RunningMean struct {
	N   float64
	Sum float64
}

// Predict is the current mean (0 when empty).
func (m *RunningMean) Predict() float64 {
	if m.N == 0 {
		return 0
	}
	return m.Sum / m.N
}

// Add adds a label.
func (m *RunningMean) Add(y float64) { m.N++; m.Sum += y }

// Prior is the running class prior: Laplace's rule for the probability of
// y = +1 and the majority so far for the decision.
type Prior struct{ Pos, Neg float64 }

// Prob is (n₊ + 1)/(n + 2).
func (c *Prior) Prob() float64 { return (c.Pos + 1) / (c.Pos + c.Neg + 2) }

// Score is n₊ − n₋: its sign is the majority so far, 0 (a mistake) on a tie.
func (c *Prior) Score() float64 { return c.Pos - c.Neg }

// Add adds a label (±1).
func (c *Prior) Add(y float64) {
	if y > 0 {
		c.Pos++
	} else {
		c.Neg++
	}
}

// Baseline accumulates the trivial predictor's measures on a stream: the
// running class prior (classification) or the running mean (regression).
// With Freeze it stops learning (scoring a test file with the prior or the
// mean of the training stream).
type Baseline struct {
	classify bool
	frozen   bool
	prior    Prior
	mean     RunningMean
	n        int
	mistakes int
	logLoss  float64
	brier    float64
	sse, sae float64
}

// NewBaseline returns the baseline of a classification (true) or
// regression stream.
func NewBaseline(classify bool) *Baseline { return &Baseline{classify: classify} }

// Frozen returns a baseline that predicts with b's prior or mean as they are
// now, and counts from zero without learning.
func (b *Baseline) Frozen() *Baseline {
	return &Baseline{classify: b.classify, frozen: true, prior: b.prior, mean: b.mean}
}

// Add predicts label y, counts the prediction, then learns y.
func (b *Baseline) Add(y float64) {
	b.n++
	if b.classify {
		p := b.prior.Prob()
		if learner.Mistake(b.prior.Score(), y) {
			b.mistakes++
		}
		b.logLoss += LogLoss(p, y)
		b.brier += (p - y01(y)) * (p - y01(y))
		if !b.frozen {
			b.prior.Add(y)
		}
		return
	}
	m := b.mean.Predict()
	b.sse += (m - y) * (m - y)
	b.sae += math.Abs(m - y)
	if !b.frozen {
		b.mean.Add(y)
	}
}

// Summary returns the baseline's measures. AUC, ECE and R² are NaN: a
// predictor that ignores the features ranks nothing (AUC ½) and R² is
// measured against it.
func (b *Baseline) Summary() Summary {
	s := nanSummary()
	s.N = b.n
	if b.n == 0 {
		return s
	}
	n := float64(b.n)
	if b.classify {
		s.MistakeRate = 100 * float64(b.mistakes) / n
		s.LogLoss = b.logLoss / n
		s.Brier = b.brier / n
		return s
	}
	s.MSE, s.MAE = b.sse/n, b.sae/n
	return s
}
