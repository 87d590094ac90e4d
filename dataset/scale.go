package dataset

import (
	"fmt"
	"math"
	"strings"
)

// Scaler is a per-feature min–max scaling, x'_j = Lo + (Hi−Lo)·(x_j − Min_j)/(Max_j − Min_j),
// the transformation of LIBSVM's svm-scale. Min and Max are fitted on a
// dataset (FitMinMax) or set from configuration (for live streams, where a
// running min–max would make features drift under the model).
//
// Constant columns (Max_j == Min_j): every value maps to 0 clamped into
// [Lo, Hi], i.e. 0 for [−1,1] and for [0,1]. This is what svm-scale does
// (it writes no entry for such a feature, so it reads back as 0): a column
// that carries no information then adds nothing to inner products and
// distances, whatever value a later row has in it.
//
// Values outside [Min_j, Max_j] (a test row, or a stream after fitting)
// map outside [Lo, Hi]; they are not clipped unless Clip is set.
type Scaler struct {
	Min, Max []float64 // per feature
	Lo, Hi   float64   // target interval
	Clip     bool      // clip results into [Lo, Hi]
}

// FitMinMax returns the Scaler mapping each feature's range over d's rows to
// [lo, hi]. An empty dataset gives constant columns.
func FitMinMax(d *Dataset, lo, hi float64) *Scaler {
	s := &Scaler{Min: make([]float64, d.Dim), Max: make([]float64, d.Dim), Lo: lo, Hi: hi}
	if len(d.X) == 0 {
		return s
	}
	copy(s.Min, d.X[0])
	copy(s.Max, d.X[0])
	for _, row := range d.X[1:] {
		for j, v := range row[:d.Dim] {
			s.Min[j] = min(s.Min[j], v)
			s.Max[j] = max(s.Max[j], v)
		}
	}
	return s
}

// Apply scales x in place. It panics if len(x) != len(s.Min).
func (s *Scaler) Apply(x []float64) {
	if len(x) != len(s.Min) {
		panic(fmt.Sprintf("dataset: Scaler.Apply: vector of length %d, scaler of %d features", len(x), len(s.Min)))
	}
	mx := s.Max[:len(x)]
	for j, v := range x {
		v = Rescale(v, s.Min[j], mx[j], s.Lo, s.Hi)
		if s.Clip {
			v = min(max(v, s.Lo), s.Hi)
		}
		x[j] = v
	}
}

// ApplyDataset replaces d's rows by scaled copies (rows shared with other
// Datasets are left alone). It panics if d.Dim != len(s.Min).
func (s *Scaler) ApplyDataset(d *Dataset) {
	if d.Dim != len(s.Min) {
		panic(fmt.Sprintf("dataset: Scaler.ApplyDataset: %d features, scaler of %d", d.Dim, len(s.Min)))
	}
	d.X = copyRows(d.X, d.Dim)
	for _, row := range d.X {
		s.Apply(row)
	}
}

// Rescale maps v from [min, max] to [lo, hi] linearly; if min == max it
// returns 0 clamped into [lo, hi] (see Scaler). Rescale(Rescale(v, a, b, lo,
// hi), lo, hi, a, b) gives v back up to rounding when a < b.
func Rescale(v, min, max, lo, hi float64) float64 {
	if max == min {
		return math.Min(math.Max(0, math.Min(lo, hi)), math.Max(lo, hi))
	}
	return lo + (hi-lo)*((v-min)/(max-min))
}

// ScaleFeatures fits a min–max Scaler to [lo, hi] on d and applies it; d's
// rows are replaced by scaled copies, so Datasets sharing them (Permuted,
// Subset) are not affected.
func (d *Dataset) ScaleFeatures(lo, hi float64) *Scaler {
	s := FitMinMax(d, lo, hi)
	s.ApplyDataset(d)
	return s
}

// ScaleTargets maps Y from its range [min, max] to [lo, hi] in place and
// returns the range, so that predictions can be mapped back with
// Rescale(p, lo, hi, min, max). A constant Y maps to 0 clamped into [lo, hi].
func (d *Dataset) ScaleTargets(lo, hi float64) (min, max float64) {
	if len(d.Y) == 0 {
		return 0, 0
	}
	min, max = d.Y[0], d.Y[0]
	for _, y := range d.Y {
		min = math.Min(min, y)
		max = math.Max(max, y)
	}
	for i, y := range d.Y {
		d.Y[i] = Rescale(y, min, max, lo, hi)
	}
	return min, max
}

// Scale is a preprocessing choice, as written on the command line (see
// ParseScale).
type Scale struct {
	Features       bool    // min–max scale the features ...
	FeatLo, FeatHi float64 // ... to [FeatLo, FeatHi]
	Targets        bool    // min–max scale the labels ...
	TargLo, TargHi float64 // ... to [TargLo, TargHi]
}

// ParseScale reads a scaling choice: "none" (or ""), or one or two of the
// following words joined by '+' or ',' (case-insensitive):
//
//	minmax11  (also minmax, x11)  features → [−1, 1]  (svm-scale's default; ALD, PKAWV)
//	minmax01  (also x01)          features → [0, 1]   (FORKS' "scaled" spambase/cod-rna; ALD's cpusmall)
//	y01                           targets  → [0, 1]   (ALD's regression targets)
//	y11                           targets  → [−1, 1]  (PKAWV's targets)
//
// e.g. "minmax11+y01" for the ALD paper's regression runs, "minmax11+y11"
// for PKAWV's. At most one feature word and one target word may be given.
func ParseScale(s string) (Scale, error) {
	var sc Scale
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" || t == "none" {
		return sc, nil
	}
	for _, w := range strings.FieldsFunc(t, func(r rune) bool { return r == '+' || r == ',' }) {
		w = strings.TrimSpace(w)
		feat, targ := false, false
		var lo, hi float64
		switch w {
		case "minmax", "minmax11", "x11":
			feat, lo, hi = true, -1, 1
		case "minmax01", "x01":
			feat, lo, hi = true, 0, 1
		case "y01":
			targ, lo, hi = true, 0, 1
		case "y11":
			targ, lo, hi = true, -1, 1
		default:
			return Scale{}, fmt.Errorf("dataset: scale %q: unknown word %q (use none, or minmax11|minmax01 and/or y01|y11, joined by '+')", s, w)
		}
		if (feat && sc.Features) || (targ && sc.Targets) {
			return Scale{}, fmt.Errorf("dataset: scale %q: %q conflicts with an earlier word", s, w)
		}
		if feat {
			sc.Features, sc.FeatLo, sc.FeatHi = true, lo, hi
		} else {
			sc.Targets, sc.TargLo, sc.TargHi = true, lo, hi
		}
	}
	return sc, nil
}

// String returns the canonical spelling, which ParseScale reads back:
// "none", "minmax11", "minmax01+y01", ...; an interval not in the
// vocabulary prints as "x[lo,hi]" / "y[lo,hi]" (not parseable).
func (s Scale) String() string {
	var w []string
	if s.Features {
		switch [2]float64{s.FeatLo, s.FeatHi} {
		case [2]float64{-1, 1}:
			w = append(w, "minmax11")
		case [2]float64{0, 1}:
			w = append(w, "minmax01")
		default:
			w = append(w, fmt.Sprintf("x[%g,%g]", s.FeatLo, s.FeatHi))
		}
	}
	if s.Targets {
		switch [2]float64{s.TargLo, s.TargHi} {
		case [2]float64{-1, 1}:
			w = append(w, "y11")
		case [2]float64{0, 1}:
			w = append(w, "y01")
		default:
			w = append(w, fmt.Sprintf("y[%g,%g]", s.TargLo, s.TargHi))
		}
	}
	if len(w) == 0 {
		return "none"
	}
	return strings.Join(w, "+")
}

// Fitted is a Scale fitted on one dataset, to be applied unchanged to
// another (a test file) or inverted on predictions.
type Fitted struct {
	Scale      Scale
	X          *Scaler // nil unless Scale.Features
	YMin, YMax float64 // fitted target range, if Scale.Targets
}

// ApplyScale fits s on d and applies it (features via ScaleFeatures,
// targets via ScaleTargets).
//
// On a named dataset (Dataset.Named) feature scaling scales X, the records
// as encoded in file order, and drops Named: the scaled rows are then fixed
// vectors, not encoded again in each presented order.
func (d *Dataset) ApplyScale(s Scale) *Fitted {
	f := &Fitted{Scale: s}
	if s.Features {
		d.Named = nil
		f.X = d.ScaleFeatures(s.FeatLo, s.FeatHi)
	}
	if s.Targets {
		f.YMin, f.YMax = d.ScaleTargets(s.TargLo, s.TargHi)
	}
	return f
}

// Apply applies the fitted transformation to another dataset of the same
// dimension, without refitting. It panics on a dimension mismatch.
func (f *Fitted) Apply(d *Dataset) {
	if f.X != nil {
		f.X.ApplyDataset(d)
	}
	if f.Scale.Targets {
		for i, y := range d.Y {
			d.Y[i] = Rescale(y, f.YMin, f.YMax, f.Scale.TargLo, f.Scale.TargHi)
		}
	}
}

// UnscaleTarget maps a prediction on the scaled target back to the original
// units (the identity if targets were not scaled or were constant).
func (f *Fitted) UnscaleTarget(p float64) float64 {
	if !f.Scale.Targets || f.YMin == f.YMax {
		return p
	}
	return Rescale(p, f.Scale.TargLo, f.Scale.TargHi, f.YMin, f.YMax)
}
