package drift

// Windowed prequential error (Gama, Sebastião and Rodrigues, "On evaluating
// stream learning algorithms", Machine Learning 90(3), 2013, §3: the
// prequential error over a sliding window), and the recovery time after a
// change.
//
// eval already records the progressive (prequential) error as a
// cumulative curve: at each curve point T_k (Config.CurvePoints of them)
// the mean loss of events 1..T_k, averaged over runs (eval.Point.Mean).
// The error of the events in (T_{k−1}, T_k] follows exactly from two
// cumulative points, so a windowed curve needs no second mechanism in
// eval: SegmentErrors turns the cumulative curve into the error of each
// segment — a tumbling window of n/CurvePoints events (with
// CurvePoints = n/w, windows of w events). Because the run average is
// linear, the segment errors of the averaged curve are the averages of the
// runs' segment errors. Window is the per-event sliding version, for code
// that scores a stream itself (e.g. a script, or a detector's test).

import "math"

// SegmentErrors returns, for curve points ts (increasing event counts) with
// cumulative mean losses cum, the mean loss of the events in each segment
// (ts[k−1], ts[k]] (the first segment starts at event 1):
// (cum[k]·ts[k] − cum[k−1]·ts[k−1]) / (ts[k] − ts[k−1]). It returns nil if
// the lengths differ or ts is not increasing from ≥ 1. Rounding: the
// difference of two cumulative sums loses about log10(ts[k]/(ts[k] −
// ts[k−1])) digits, negligible for curves of ≤ 10⁴ points.
func SegmentErrors(ts []int, cum []float64) []float64 {
	if len(ts) != len(cum) {
		return nil
	}
	out := make([]float64, len(ts))
	prevT, prevS := 0, 0.0
	for k, t := range ts {
		if t <= prevT {
			return nil
		}
		s := float64(cum[k] * float64(t))
		out[k] = (s - prevS) / float64(t-prevT)
		prevT, prevS = t, s
	}
	return out
}

// Window is the mean of the last W losses added (fewer at the start).
// Add is O(1) and does not allocate; the sum is recomputed from the ring
// every W additions, so rounding errors do not accumulate over an endless
// stream (for 0/1 losses the sum is exact throughout).
type Window struct {
	buf  []float64
	next int
	n    int
	sum  float64
	adds int
}

// NewWindow returns a window of w ≥ 1 losses (w < 1 is taken as 1).
func NewWindow(w int) *Window { return &Window{buf: make([]float64, max(w, 1))} }

// Add records a loss.
func (w *Window) Add(loss float64) {
	if w.n == len(w.buf) {
		w.sum -= w.buf[w.next]
	} else {
		w.n++
	}
	w.buf[w.next] = loss
	w.sum += loss
	w.next = (w.next + 1) % len(w.buf)
	if w.adds++; w.adds == len(w.buf) {
		w.adds, w.sum = 0, 0
		for _, v := range w.buf[:w.n] {
			w.sum += v
		}
	}
}

// Mean is the mean loss over the window (NaN when empty).
func (w *Window) Mean() float64 {
	if w.n == 0 {
		return math.NaN()
	}
	return w.sum / float64(w.n)
}

// Len is the number of losses in the window.
func (w *Window) Len() int { return w.n }

// Recovery measures how a windowed error curve comes back after a change
// at event change. ts and errs are segment ends and segment errors
// (SegmentErrors); a segment that straddles the change counts as after it.
// before is the error of the last segment ending at or before change (NaN
// if none); after is the worst segment error from the change on (the
// peak); time is the number of events from the change to the end of the
// first segment, at or after the peak, whose error is ≤ before + tol (−1
// if none is, or if before is NaN). Taking the first segment after the
// peak keeps a segment that is still mostly the old concept from counting
// as a recovery.
func Recovery(ts []int, errs []float64, change int, tol float64) (before, after float64, time int) {
	before, after, time = math.NaN(), math.Inf(-1), -1
	peak := -1
	for k, t := range ts {
		if t <= change {
			before = errs[k]
		} else if errs[k] > after {
			after, peak = errs[k], k
		}
	}
	if peak < 0 || math.IsNaN(before) {
		return before, after, -1
	}
	for k := peak; k < len(ts); k++ {
		if errs[k] <= before+tol {
			return before, after, ts[k] - change
		}
	}
	return before, after, -1
}
