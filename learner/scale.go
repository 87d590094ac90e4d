package learner

// Online standardisation with outlier-robust statistics, frozen after the
// warm-up.
//
// A standardiser keeps, for each of its coordinates, a centre m and scale s,
// and maps a value v to z = clip((v − m)/s, ±clipOut) (z = 0 while s = 0,
// which only happens during the warm-up). It has two phases:
//
//   - Warm-up (the first W events, which the self-tuning wrapper buffers
//     anyway; W = 300 by default): m is the lower median of the values seen
//     so far and s is the 1 %-trimmed RMS deviation from m (the largest
//     ⌊t/100⌋ deviations left out) times 1.0399, the factor that makes it
//     consistent for normal data (E[Z² | |Z| < z₀.₉₉₅] = 0.9247). When that
//     is 0 — a sparse coordinate, where at least 99 % of the values equal
//     the median, such as a rare indicator — s is the RMS deviation of the
//     whole window (an indicator with c ones in t events: ≈ sqrt(c/t), so
//     it is standardised to unit variance like every other coordinate;
//     rare indicators get large z, up to the clip). The trimmed RMS ignores
//     up to 1 % of the window as gross errors (3 events at W = 300, so one
//     1e300 cannot move it); a sparse coordinate's scale is not robust (a
//     single 1e300 makes that one coordinate ≈ 0 for good; it cannot reach
//     the others).
//     Why a lightly trimmed RMS, and not 1.4826·MAD or a 10 % trim: all are
//     robust to a single outlier, but "standardised" means unit standard
//     deviation, and on skewed, heavy-shouldered or mostly-constant
//     features the MAD (and, less so, a heavy trim) measures only the bulk
//     and gives a scale far below the SD (cod-rna's six ratio features:
//     MAD 0.03, SD 0.05; an elevators feature that departs from its usual
//     value in 11 % of the events: 10 %-trimmed 1.4e-5, SD 5.8e-5). Such a
//     feature then dominates every kernel distance by its factor. Trimming
//     the minimum that guarantees robustness to a few gross errors keeps
//     the estimate at the SD for honest data. Why W = 300: a frozen scale
//     should be within ~5 % of the population's; the relative standard
//     error of an SD estimate is ≈ 1/sqrt(2W) for normal data (7 % at
//     W = 100, 4 % at W = 300), heavier tails make it worse, and the value
//     is never revised.
//   - At the end of the warm-up m and s are frozen for good. A coordinate
//     that was constant over the whole window (s = 0, e.g. a sparse
//     indicator not seen yet) gets s = max(1, |m|)/sqrt(W), the sparse rule
//     as if one departure of unit size (relative to m) had been seen: its
//     probability is below ~1/W, so by the sparse rule its scale would be
//     at most that, and it enters the model instead of being ignored.
//
// Why frozen. The inner learners store examples (support vectors, FORKS'
// sketch, NOGD's Nyström landmarks) or weights in the scaled coordinates of
// the time they learned them; a scale that keeps moving afterwards makes
// those stored coordinates inconsistent with new inputs. Running (Welford)
// statistics did exactly that: on cod-rna the scale of a heavy-tailed
// feature kept growing, about 3.5× by event 3000, and NOGD's support vectors
// drifted out of place until one permutation fell to the majority rate. A
// scale must be a fixed change of units for a model that keeps examples, so
// the only consistent choices are freezing, or changing the scale only where
// every member is rebuilt (which throws away what was learned). Freezing
// after the robust warm-up is the simple one: median and trimmed RMS of W events are
// consistent estimators whose error does not depend on the tails (a
// heavy-tailed feature gets a scale of its bulk, and its tail is clipped at
// clipOut), so no single outlier — during or after the warm-up — can wreck
// them (TestStandardiserOutlier), and the cost per event after the warm-up
// is one subtraction and one division per feature. The price: a stream
// whose distribution shifts after the warm-up is standardised with the
// first W events' units (the clip keeps the inputs bounded regardless).
//
// Declared kinds (selftune.go "Coordinate kinds"). When the runtime tells
// the wrapper what its coordinates hold (KindAware), an indicator
// coordinate bypasses the standardiser (centre 0, scale 1: a rare
// indicator no longer becomes 1/sqrt(p), and a one-hot field adds at most
// 2 to a squared distance), and a numeric coordinate declared after the
// first event gets its centre and scale from its own first W values
// (robustLocScale, then the freeze rule above) instead of the 1/sqrt(W)
// of a coordinate constant during the warm-up. Undeclared coordinates are
// standardised as described here.
//
// The statistics are part of the model's state; they are deterministic
// functions of the first W events. Guarantees: z is always finite and
// |z| ≤ clipOut; m and s are finite for finite inputs (a non-finite scale
// counts as 0).

import (
	"math"
	"slices"

	"okstream/learner/state"
)

const (
	// clipOut bounds the standardised output, so that no single feature can
	// dominate a kernel distance by more than this many standard deviations.
	clipOut = 10.0
	// trimToSigma makes the 1 %-trimmed RMS deviation a consistent
	// estimator of σ for normal data: 1/sqrt(1 − 2·2.576·φ(2.576)/0.99).
	trimToSigma  = 1.0399
	trimFraction = 100 // the largest t/trimFraction deviations are left out
	// clipLabel bounds a standardised regression label: by Chebyshev an
	// honest value lies farther than 20 standard deviations from the mean
	// with probability at most 1/20² = 0.25 % whatever the distribution.
	clipLabel = 20.0
)

// standardiser holds the statistics of k coordinates.
type standardiser struct {
	m []float64 // centres
	s []float64 // scales
	// col is scratch for the warm-up estimates (W floats).
	col []float64
}

func newStandardiser(k, w int) *standardiser {
	return &standardiser{m: make([]float64, k), s: make([]float64, k), col: make([]float64, 0, w)}
}

// fromBuffer sets m and s to the robust warm-up estimates of the t rows in
// buf (row-major, stride k values per row, coordinate j at offset j).
func (st *standardiser) fromBuffer(buf []float64, stride, t int) {
	for j := range st.m {
		col := st.col[:0]
		for i := 0; i < t; i++ {
			col = append(col, buf[i*stride+j])
		}
		st.m[j], st.s[j] = robustLocScale(col)
		st.col = col
	}
}

// robustLocScale returns the lower median of v and the trimmed robust scale
// (see the file comment). It reorders v. With no values it returns 0, 0.
func robustLocScale(v []float64) (loc, scale float64) {
	t := len(v)
	if t == 0 {
		return 0, 0
	}
	slices.Sort(v)
	loc = v[(t-1)/2]
	for i, x := range v {
		v[i] = math.Abs(x - loc)
	}
	slices.Sort(v)
	if keep := t - t/trimFraction; keep >= 2 {
		var ss float64
		for _, d := range v[:keep] {
			ss += d * d
		}
		scale = trimToSigma * math.Sqrt(ss/float64(keep))
	}
	if scale == 0 && v[t-1] > 0 { // sparse: the RMS deviation of the whole window
		big := v[t-1] // (scaled by the largest deviation, so that squares cannot overflow)
		var ss float64
		for _, d := range v {
			ss += (d / big) * (d / big)
		}
		scale = big * math.Sqrt(ss/float64(t))
	}
	if math.IsNaN(scale) || math.IsInf(scale, 0) {
		scale = 0
	}
	return loc, scale
}

// freeze ends a warm-up of w events: a coordinate without spread gets the
// scale max(1, |m|)/sqrt(w) (see the file comment); the statistics do not
// change again.
func (st *standardiser) freeze(w int) {
	for j, s := range st.s {
		if s == 0 {
			st.s[j] = math.Max(1, math.Abs(st.m[j])) / math.Sqrt(float64(w))
		}
	}
	st.col = nil
}

// z standardises value v of coordinate j.
func (st *standardiser) z(j int, v float64) float64 { return st.clipped(j, v, clipOut) }

// clipped is (v − m_j)/s_j clipped to ±c (0 for a coordinate of scale 0).
func (st *standardiser) clipped(j int, v, c float64) float64 {
	s := st.s[j]
	if s == 0 {
		return 0
	}
	z := (v - st.m[j]) / s
	return math.Max(-c, math.Min(c, z))
}

// zLabel standardises a regression label v of coordinate j. A label is not
// a kernel coordinate, and clipping it at clipOut robust scales would cut
// the genuine tail of a skewed target (cpusmall: most labels 80–99, a tail
// down to 0) and bias the fit; it is clipped at clipLabel scales only, to
// keep an absurd label (1e300) from wrecking the learner's step.
func (st *standardiser) zLabel(j int, v float64) float64 { return st.clipped(j, v, clipLabel) }

// encode writes the frozen statistics.
func (st *standardiser) encode(e *state.Encoder) {
	e.F64s(st.m)
	e.F64s(st.s)
}

// decode reads statistics written by encode into st, which must have been
// built for the same number of coordinates.
func (st *standardiser) decode(d *state.Decoder) {
	st.m = d.F64sN(st.m, len(st.m))
	st.s = d.F64sN(st.s, len(st.s))
	if d.Err() != nil {
		return
	}
	for j := range st.m {
		if math.IsNaN(st.m[j]) || math.IsInf(st.m[j], 0) || !(st.s[j] > 0) || math.IsInf(st.s[j], 0) {
			d.Fail("standardiser statistic %d not finite (or scale not positive)", j)
			return
		}
	}
}
