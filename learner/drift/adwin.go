// ADWIN: adaptive windowing over an exponential histogram.
//
// Reference: A. Bifet and R. Gavaldà, "Learning from Time-Changing Data with
// Adaptive Windowing", SIAM International Conference on Data Mining (SDM)
// 2007. §3 defines ADWIN: keep a window W of the most recent values and drop
// its oldest values while some split W = W0·W1 into an older and a newer
// part has |μ̂_W0 − μ̂_W1| ≥ ε_cut, with (Theorem 3.1)
//
//	ε_cut = sqrt( (1/(2m)) · ln(4/δ') ),  m = 1/(1/n0 + 1/n1),  δ' = δ/n,
//
// for values in [0, 1], n = |W|; the same section gives the variance-based
// refinement used in practice,
//
//	ε_cut = sqrt( (2/m) · σ²_W · ln(2/δ') ) + (2/(3m)) · ln(2/δ').
//
// §4 (ADWIN2) stores W as an exponential histogram: rows of buckets, row i
// holding buckets that summarise 2^i consecutive values (their sum and
// their sum of squared deviations), at most M buckets a row; when a row
// reaches M+1 buckets its two oldest merge into one bucket of the next row.
// Memory is O(M·log(W/M)) and only the O(M·log(W/M)) bucket boundaries are
// tried as splits.
//
// This file follows the authors' implementation, MOA's ADWIN.java
// (Bifet, Gavaldà; moa.classifiers.core.driftdetection.ADWIN), which River's
// ADWIN also follows, in every choice the paper leaves open:
//
//   - the test (BoundBernstein, the default) is MOA's: with n = |W|,
//     σ²_W the population variance of W, L = ln(2·ln(n)/δ) and
//     1/m := 1/(n0−4) + 1/(n1−4),
//     ε = sqrt(2 · (1/m) · σ²_W · L) + (2/3) · L · (1/m);
//     a cut needs both sub-windows longer than 6 values. Compared with
//     the paper's refinement, δ' = δ/ln n instead of δ/n (only O(log n)
//     splits are tried), and n_i − 4 instead of n_i in m;
//   - the window is checked only every Clock (32) insertions, and only
//     once it holds more than 10 values;
//   - at a check, splits are tried from the oldest bucket boundary to the
//     newest; at the first cut the oldest bucket is dropped and the scan
//     starts again, until a whole scan finds no cut; Add reports a change
//     if any bucket was dropped;
//   - buckets merge when a row holds M+1 (MOA's MAXBUCKETS = 5), the
//     window's sum and variance are updated incrementally with MOA's
//     formulas, in MOA's order of operations.
//
// BoundHoeffding is the paper's Theorem 3.1 test as printed (δ' = δ/n,
// cut when the difference is ≥ ε_cut); it assumes values in [0, 1] (its
// false-alarm guarantee does not hold otherwise) and uses the same
// minimum sub-window length, clock and scan as the default.
//
// Deviations from MOA, none of which changes a detection on a stream MOA
// handles: (1) a window cap, MaxWidth (default 2^22 values): when an
// insertion makes the window longer, its oldest buckets are dropped
// silently (not reported as a change), so that on an endless stationary
// stream memory is fixed, the sums do not accumulate rounding forever and
// the counters cannot overflow; the window then holds between MaxWidth −
// 2^(R−1) and MaxWidth values, R the number of rows. (2) After a bucket is
// dropped the window's variance is clamped at 0 (the incremental
// subtraction can round below 0). (3) Non-finite or huge inputs are
// ignored (see package doc). (4) All bucket rows are allocated when the
// detector is built, so Add never allocates. MOA's unused per-split
// variances v0, v1 are not computed.
//
// Guarantee (paper, Theorem 3.1, for the Hoeffding test on [0, 1] values):
// at any check, if the stream's mean has been constant over W, the
// probability that ADWIN shrinks W is at most δ; a change of the mean by
// more than 2·ε_cut is detected with probability ≥ 1 − δ once both sides of
// it are long enough. For the default test the bound is the same in
// spirit, with Bernstein's inequality; see docs/algorithms/drift-detection.md
// for measured false-alarm rates and detection delays.
package drift

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"

	"okstream/learner/rng"
	"okstream/learner/state"
)

// Bound selects ADWIN's cut test.
type Bound uint8

const (
	// BoundBernstein is MOA's variance-based test (the default).
	BoundBernstein Bound = iota
	// BoundHoeffding is the paper's Theorem 3.1 test, for values in [0, 1].
	BoundHoeffding
)

func (b Bound) String() string {
	switch b {
	case BoundBernstein:
		return "bernstein"
	case BoundHoeffding:
		return "hoeffding"
	}
	return "bound(" + strconv.Itoa(int(b)) + ")"
}

// ADWIN defaults (MOA's).
const (
	DefaultADWINDelta    = 0.002
	DefaultADWINM        = 5
	DefaultADWINClock    = 32
	DefaultADWINMaxWidth = 1 << 22
	// adwinMinSub: both sides of a cut hold more than adwinMinSub+1
	// values; 1/m uses n_i − adwinMinSub + 1 (MOA's mintMinWinLength).
	adwinMinSub = 5
	// adwinGrace: no check until the window holds more values (MOA's
	// mintMinimLongitudWindow).
	adwinGrace = 10
	// limits on the configuration
	adwinMaxM        = 1024
	adwinMaxClock    = 1 << 30
	adwinMaxMaxWidth = 1 << 40
)

// ADWINConfig configures an ADWIN; a zero field takes its default.
type ADWINConfig struct {
	// Delta is the confidence δ in (0, 1): smaller means fewer false
	// alarms and later detections. Default 0.002.
	Delta float64
	// M is the number of buckets a row holds before its two oldest
	// merge, in [2, 1024]. Default 5.
	M int
	// Clock: the window is checked every Clock insertions, in
	// [1, 2^30]. Default 32.
	Clock int
	// MaxWidth caps the window, in [max(64, 4(M+1)), 2^40]. Default 2^22.
	MaxWidth int
	// Bound selects the cut test. Default BoundBernstein.
	Bound Bound
}

// ADWIN is an adaptive-window change detector (see the file comment). Not
// safe for concurrent use.
type ADWIN struct {
	delta    float64
	m        int // buckets per row before a merge
	clock    int
	maxWidth int
	bound    Bound
	spec     string
	rows     int // rows allocated

	// Bucket j of row r is at r*(m+1)+j, j = 0 the oldest; a row holds
	// cnt[r] ≤ m buckets between calls (m+1 transiently).
	tot, vr []float64 // sum and sum of squared deviations
	cnt     []int
	nrows   int // rows in use, ≥ 1

	width           int
	total, variance float64 // Σx and Σ(x − mean)² over the window
	tick            int64   // insertions since construction
	detections      int64
}

// NewADWIN returns an ADWIN with configuration c (zero fields default).
func NewADWIN(c ADWINConfig) (*ADWIN, error) {
	if c.Delta == 0 {
		c.Delta = DefaultADWINDelta
	}
	if c.M == 0 {
		c.M = DefaultADWINM
	}
	if c.Clock == 0 {
		c.Clock = DefaultADWINClock
	}
	if c.MaxWidth == 0 {
		c.MaxWidth = DefaultADWINMaxWidth
	}
	if !(c.Delta > 0 && c.Delta < 1) {
		return nil, fmt.Errorf("drift: ADWIN delta %v not in (0, 1)", c.Delta)
	}
	if c.M < 2 || c.M > adwinMaxM {
		return nil, fmt.Errorf("drift: ADWIN M %d not in [2, %d]", c.M, adwinMaxM)
	}
	if c.Clock < 1 || c.Clock > adwinMaxClock {
		return nil, fmt.Errorf("drift: ADWIN clock %d not in [1, %d]", c.Clock, adwinMaxClock)
	}
	if lo := max(64, 4*(c.M+1)); c.MaxWidth < lo || c.MaxWidth > adwinMaxMaxWidth {
		return nil, fmt.Errorf("drift: ADWIN max width %d not in [%d, %d]", c.MaxWidth, lo, adwinMaxMaxWidth)
	}
	if c.Bound > BoundHoeffding {
		return nil, fmt.Errorf("drift: unknown ADWIN bound %d", c.Bound)
	}
	// A row r+1 is created when row r holds M+1 buckets of 2^r values,
	// so when the window (at most MaxWidth+1 values before the cap
	// applies) holds at least (M+1)·2^r: r ≤ log2((MaxWidth+1)/(M+1)).
	rows := bits.Len(uint((c.MaxWidth+1)/(c.M+1))) + 1
	a := &ADWIN{
		delta: c.Delta, m: c.M, clock: c.Clock, maxWidth: c.MaxWidth, bound: c.Bound,
		rows: rows,
		tot:  make([]float64, rows*(c.M+1)),
		vr:   make([]float64, rows*(c.M+1)),
		cnt:  make([]int, rows),
	}
	a.spec = "adwin:delta=" + strconv.FormatFloat(c.Delta, 'g', -1, 64) +
		",m=" + strconv.Itoa(c.M) + ",clock=" + strconv.Itoa(c.Clock) +
		",max=" + strconv.Itoa(c.MaxWidth) + ",bound=" + c.Bound.String()
	a.Reset()
	return a, nil
}

// Spec is the canonical configuration.
func (a *ADWIN) Spec() string { return a.spec }

// Reset empties the window; the insertion clock and the detection count
// continue.
func (a *ADWIN) Reset() {
	clear(a.tot)
	clear(a.vr)
	clear(a.cnt)
	a.nrows = 1
	a.width, a.total, a.variance = 0, 0, 0
}

// Width is the number of values in the window.
func (a *ADWIN) Width() int { return a.width }

// Mean is the window's mean (0 when empty).
func (a *ADWIN) Mean() float64 {
	if a.width == 0 {
		return 0
	}
	return a.total / float64(a.width)
}

// Variance is the window's population variance (0 when empty).
func (a *ADWIN) Variance() float64 {
	if a.width == 0 {
		return 0
	}
	return a.variance / float64(a.width)
}

// Detections is the number of Add calls that reported a change.
func (a *ADWIN) Detections() int64 { return a.detections }

// Buckets is the number of buckets in use (memory in use is proportional).
func (a *ADWIN) Buckets() int {
	s := 0
	for r := 0; r < a.nrows; r++ {
		s += a.cnt[r]
	}
	return s
}

// Add inserts x (ignored unless finite with |x| ≤ MaxInput) and, every
// Clock insertions, checks the window; it reports whether the check cut
// the window (a change).
func (a *ADWIN) Add(x float64) bool {
	if !usable(x) {
		return false
	}
	a.tick++
	a.insert(x)
	for a.width > a.maxWidth {
		a.dropOldest()
	}
	if a.tick%int64(a.clock) != 0 || a.width <= adwinGrace {
		return false
	}
	changed := false
	for a.scan() {
		changed = true
	}
	if changed {
		a.detections++
	}
	return changed
}

// insert is MOA's insertElement.
func (a *ADWIN) insert(x float64) {
	a.width++
	k := a.cnt[0]
	a.tot[k], a.vr[k] = x, 0
	a.cnt[0]++
	if a.width > 1 {
		w1 := float64(a.width - 1)
		d := x - a.total/w1
		a.variance += float64(w1 * d * d / float64(a.width))
	}
	a.total += x
	a.compress()
}

// compress is MOA's compressBuckets: a row with M+1 buckets merges its two
// oldest into a bucket of the next row, and so on up.
func (a *ADWIN) compress() {
	s := a.m + 1
	for r := 0; r < a.nrows && a.cnt[r] == s; r++ {
		if r+1 == a.nrows {
			a.nrows++ // rows were sized for this (NewADWIN)
			a.cnt[r+1] = 0
		}
		b := r * s
		n := float64(int64(1) << r)
		u1, u2 := a.tot[b]/n, a.tot[b+1]/n
		d := u1 - u2
		inc := float64(n * n * d * d / (n + n))
		nb := (r+1)*s + a.cnt[r+1]
		a.tot[nb] = a.tot[b] + a.tot[b+1]
		a.vr[nb] = a.vr[b] + a.vr[b+1] + inc
		a.cnt[r+1]++
		copy(a.tot[b:b+s-2], a.tot[b+2:b+s])
		copy(a.vr[b:b+s-2], a.vr[b+2:b+s])
		a.tot[b+s-2], a.tot[b+s-1], a.vr[b+s-2], a.vr[b+s-1] = 0, 0, 0, 0
		a.cnt[r] -= 2
	}
}

// dropOldest is MOA's deleteElement: remove the oldest bucket.
func (a *ADWIN) dropOldest() {
	r := a.nrows - 1
	s := a.m + 1
	b := r * s
	n1 := 1 << r
	a.width -= n1
	a.total -= a.tot[b]
	if a.width == 0 {
		a.total, a.variance = 0, 0
	} else {
		u1 := a.tot[b] / float64(n1)
		w := float64(a.width)
		d := u1 - a.total/w
		inc := a.vr[b] + float64(float64(n1*a.width)*d*d/float64(n1+a.width))
		if a.variance -= inc; a.variance < 0 {
			a.variance = 0
		}
	}
	copy(a.tot[b:b+s-1], a.tot[b+1:b+s])
	copy(a.vr[b:b+s-1], a.vr[b+1:b+s])
	a.tot[b+s-1], a.vr[b+s-1] = 0, 0
	a.cnt[r]--
	if a.cnt[r] == 0 && a.nrows > 1 {
		a.nrows--
	}
}

// scan tries every bucket boundary as a split, oldest first; at the first
// cut it drops the oldest bucket and reports true.
func (a *ADWIN) scan() bool {
	n := a.width
	// The parts of ε that depend on n only.
	var lg, v float64
	if a.bound == BoundBernstein {
		lg = rng.Log(2 * rng.Log(float64(n)) / a.delta)
		v = a.variance / float64(n)
	} else {
		lg = rng.Log(4 * float64(n) / a.delta) // ln(4/δ'), δ' = δ/n
	}
	s := a.m + 1
	n0, n1 := 0, a.width
	u0, u1 := 0.0, a.total
	for r := a.nrows - 1; r >= 0; r-- {
		size := 1 << r
		for k := 0; k < a.cnt[r]; k++ {
			t := a.tot[r*s+k]
			n0 += size
			n1 -= size
			u0 += t
			u1 -= t
			if r == 0 && k == a.cnt[0]-1 {
				return false // the newest bucket: no split left
			}
			if n0 > adwinMinSub+1 && n1 > adwinMinSub+1 && a.cut(n0, n1, u0/float64(n0)-u1/float64(n1), lg, v) {
				a.dropOldest()
				return true
			}
		}
	}
	return false
}

// cut is the cut test for a split into n0 older and n1 newer values whose
// means differ by diff; lg and v are from scan.
func (a *ADWIN) cut(n0, n1 int, diff, lg, v float64) bool {
	diff = math.Abs(diff)
	if a.bound == BoundHoeffding {
		// (1/(2m)) with 1/m = 1/n0 + 1/n1
		minv := 1/float64(n0) + 1/float64(n1)
		return diff >= math.Sqrt(float64(minv/2*lg))
	}
	return diff > bernsteinEps(n0, n1, v, lg)
}

// bernsteinEps is MOA's ε for sub-window lengths n0, n1, window variance v
// and lg = ln(2·ln(n)/δ), in MOA's order of operations.
func bernsteinEps(n0, n1 int, v, lg float64) float64 {
	mrec := 1/float64(n0-adwinMinSub+1) + 1/float64(n1-adwinMinSub+1)
	return math.Sqrt(float64(2*mrec*v*lg)) + float64(2.0/3*lg*mrec)
}

// MarshalBinary encodes the detector's state.
func (a *ADWIN) MarshalBinary() ([]byte, error) {
	e := state.NewEncoder(64 + len(a.spec) + 8*a.nrows + 16*a.Buckets())
	e.Header("adwin", a.spec, 0)
	e.I64(a.tick)
	e.I64(a.detections)
	e.Int(a.width)
	e.F64(a.total)
	e.F64(a.variance)
	e.Int(a.nrows)
	s := a.m + 1
	for r := 0; r < a.nrows; r++ {
		e.Int(a.cnt[r])
		for k := 0; k < a.cnt[r]; k++ {
			e.F64(a.tot[r*s+k])
			e.F64(a.vr[r*s+k])
		}
	}
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state written by an ADWIN of the same
// configuration (else a *state.MismatchError); a corrupt state is an error
// wrapping state.ErrCorrupt, and on any error the detector is unchanged.
func (a *ADWIN) UnmarshalBinary(data []byte) error {
	d := state.NewDecoder(data)
	d.Header("adwin", a.spec, 0)
	tick := d.I64()
	det := d.I64()
	width := d.IntIn(0, a.maxWidth, "adwin window width")
	total, variance := d.F64(), d.F64()
	nrows := d.IntIn(1, a.rows, "adwin rows")
	if d.Err() != nil {
		return d.Err()
	}
	s := a.m + 1
	tot := make([]float64, len(a.tot)) // sized by the configuration
	vr := make([]float64, len(a.vr))
	cnt := make([]int, len(a.cnt))
	sum := 0
	for r := 0; r < nrows; r++ {
		cnt[r] = d.IntIn(0, a.m, "adwin bucket count")
		for k := 0; k < cnt[r]; k++ {
			tot[r*s+k], vr[r*s+k] = d.F64(), d.F64()
			size := float64(int64(1) << r)
			if !(math.Abs(tot[r*s+k]) <= MaxInput*size) || !(vr[r*s+k] >= 0 && vr[r*s+k] <= 4*MaxInput*MaxInput*size) {
				d.Fail("adwin bucket %d.%d out of range", r, k)
			}
		}
		if cnt[r] == 0 && (r > 0 || width > 0) {
			d.Fail("adwin row %d of %d is empty", r, nrows)
		}
		sum += cnt[r] << r
	}
	if err := d.Done(); err != nil {
		return err
	}
	fw := float64(max(width, 1))
	switch {
	case tick < 0 || det < 0:
		return fmt.Errorf("drift: adwin counters %d, %d negative: %w", tick, det, state.ErrCorrupt)
	case sum != width:
		return fmt.Errorf("drift: adwin buckets hold %d values, width is %d: %w", sum, width, state.ErrCorrupt)
	case !(math.Abs(total) <= 2*MaxInput*fw) || !(variance >= 0 && variance <= 4*MaxInput*MaxInput*fw):
		return fmt.Errorf("drift: adwin sums out of range: %w", state.ErrCorrupt)
	}
	a.tick, a.detections, a.width, a.total, a.variance, a.nrows = tick, det, width, total, variance, nrows
	copy(a.tot, tot)
	copy(a.vr, vr)
	copy(a.cnt, cnt)
	return nil
}
