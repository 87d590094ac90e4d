package learner

// The self-tuning wrapper for multi-class learners: the binary wrapper of
// selftune.go (robust standardisation frozen after a warm-up, σ̂ by the
// median heuristic, provisional learner replayed at events 1, 2, 4, ...)
// run unchanged around a Multi.
//
// How: the wrapper is selftune.go's selfTuned itself, whose inner Learner
// is a multiAsLearner adapter: Learn(x, y) is LearnClass(x, int(y)) with
// the class index carried as the label (an integer below MaxClasses is an
// exact float64). The label coordinate is never scaled (scaleY is for
// regression only), so every number the multi learner sees is the one the
// binary wrapper would compute: there is one implementation of the
// warm-up, the statistics and σ̂ (selftune.go, scale.go).
//
// The rule (one sentence, as for binary learners): a spec that does not
// give σ gets σ from the stream and standardised inputs. Multi-class
// deviation: a learner without σ (linear) is standardised too unless the
// spec says scale=none, because the softmax head's AdaGrad step is in the
// units of its inputs (softmax.go), and a raw feature in the hundreds
// (mnist's pixels) would take steps hundreds of times too large; binary
// linear has NAG's scale invariance instead (linear.go).
//
// Multi-class auto: the common-scale view. For auto (common=true, the
// default with scale=standard) the wrapper computes a second input
// transform from the same warm-up and statistics, commonView:
// y_j = clip((x_j − m_j)/c, ±clipOut)/σ̂', c the root mean square of the
// per-feature scales s_j (one scale for all features, so the data's own
// relative units are kept; c sets only the clip, σ̂' absorbs it) and σ̂' the
// median pairwise distance of the warm-up rows in these units (σ₀' = √(2d)
// during the warm-up, as σ₀). auto's input is then [standardised view;
// common view] (2d entries, auto_multi.go). Why: per-feature
// standardisation inflates rare and warm-up-constant features (mnist's
// border pixels get s = 1/√W and standardise to the ±10 clip later,
// dominating every kernel distance: FOGD standardised 14.07 % mistakes on
// mnist, on raw pixels at σ = 1200 10.48 %), while on files of unrelated
// units (cod-rna, cpusmall) it is essential; auto's AdaHedge picks per
// stream. The hook in selftune.go (selfTuned.common) is nil for every
// other learner, binary ones included, whose behaviour and state bytes are
// unchanged.
//
// State: selfTuned's (warm-up buffer of raw rows and class indices, or
// frozen statistics, σ̂ and the inner learner's state). An untrusted
// warm-up buffer whose class indices are not a valid sequence (each an
// integer ≤ the classes seen before it) is refused: the adapter skips such
// a row and the wrapper reports the state corrupt, unchanged. With the
// common view, c and 1/σ̂' follow the frozen statistics (validated positive
// and finite); during the warm-up they are recomputed from the buffer.

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"okstream/learner/state"
)

// multiAsLearner runs a Multi under the binary self-tuning wrapper (see
// above). Predict is unused by the wrapper's multi-class path and returns 0.
type multiAsLearner struct {
	m   Multi
	p   []float64 // scratch distribution (grown with the classes)
	out []float64 // LearnClass's result of the last Learn
	bad bool      // a Learn got a label that is not a valid class index
}

func (a *multiAsLearner) scratch(k int) []float64 {
	if len(a.p) < k {
		a.p = make([]float64, k+8)
	}
	return a.p
}

func (a *multiAsLearner) Predict(x []float64) float64 { return 0 }

func (a *multiAsLearner) Learn(x []float64, y float64) float64 {
	k := a.m.Classes()
	if !(y >= 0) || y > float64(k) || y != math.Trunc(y) || y >= MaxClasses {
		a.bad = true
		return 0
	}
	a.out = a.m.LearnClass(x, int(y), a.scratch(k+1))
	return 0
}

// setInputWidth passes the wrapper's σ̂ on to a Multi that asks for it.
func (a *multiAsLearner) setInputWidth(w float64) {
	if m, ok := a.m.(interface{ setInputWidth(float64) }); ok {
		m.setInputWidth(w)
	}
}

func (a *multiAsLearner) MarshalBinary() ([]byte, error) { return a.m.MarshalBinary() }
func (a *multiAsLearner) UnmarshalBinary(b []byte) error { return a.m.UnmarshalBinary(b) }
func (a *multiAsLearner) Info() Info                     { return a.m.Info() }

// selfTunedMulti is a Multi under the self-tuning wrapper.
type selfTunedMulti struct{ t *selfTuned }

func (s *selfTunedMulti) inner() *multiAsLearner { return s.t.inner.(*multiAsLearner) }

// Classes returns the inner learner's K.
func (s *selfTunedMulti) Classes() int { return s.inner().m.Classes() }

// PredictProba is the inner learner's distribution on the scaled input.
func (s *selfTunedMulti) PredictProba(x, p []float64) []float64 {
	return s.inner().m.PredictProba(s.t.input(x), p)
}

// LearnClass runs the binary wrapper's Learn with the class index as the
// label (the inner learner predicts and learns class c on the scaled x; the
// wrapper buffers, updates its statistics and replays at the warm-up
// points) and copies the pre-update distribution into p.
func (s *selfTunedMulti) LearnClass(x []float64, c int, p []float64) []float64 {
	if c < 0 || c > s.Classes() || c >= MaxClasses {
		panic("learner " + s.t.name + ": class index out of range")
	}
	a := s.inner() // (the wrapper may replace its inner learner in Learn)
	s.t.Learn(x, float64(c))
	return p[:copy(p[:len(a.out)], a.out)]
}

// MarshalBinary is the wrapper's state.
func (s *selfTunedMulti) MarshalBinary() ([]byte, error) { return s.t.MarshalBinary() }

// UnmarshalBinary restores a wrapper's state; on any error (including a
// warm-up buffer of invalid class indices) the learner is unchanged.
func (s *selfTunedMulti) UnmarshalBinary(data []byte) error {
	saved := *s.t
	if err := s.t.UnmarshalBinary(data); err != nil {
		return err
	}
	if s.inner().bad {
		*s.t = saved
		return fmt.Errorf("%w: warm-up buffer holds a label that is not a class index", state.ErrCorrupt)
	}
	return nil
}

// SetFeatureKinds declares coordinate kinds (KindAware, learner.go): the
// binary wrapper's, for both views of multi-class auto.
func (s *selfTunedMulti) SetFeatureKinds(kinds []FeatureKind) error {
	return s.t.SetFeatureKinds(kinds)
}

// Info is the wrapper's, with Task MultiClass.
func (s *selfTunedMulti) Info() Info { return s.t.Info() }

// newPlainMulti builds the registered multi-class learner itself, without
// the wrapper.
func newPlainMulti(name string, kv map[string]string, dim int) (Multi, error) {
	return newPlainMultiWith(name, kv, dim, nil)
}

// newPlainMultiWith is newPlainMulti with the registered constructor
// replaced by build when build is non-nil (auto's FOGD members on a shared
// map, newFOGDMultiOn), parameters parsed and checked the same way.
func newPlainMultiWith(name string, kv map[string]string, dim int, build func(*Params, int) (Multi, error)) (Multi, error) {
	r := multiRegistry[name]
	if r == nil {
		return nil, fmt.Errorf("learner %q has no multi-class form (multi-class learners: %s)", name, strings.Join(MultiNames(), ", "))
	}
	if dim <= 0 {
		return nil, fmt.Errorf("learner %s: input dimension must be positive, got %d", name, dim)
	}
	p := &Params{learner: name, raw: kv, resolved: map[string]string{}, local: map[string]string{}, docs: r.Params}
	if build == nil {
		build = r.New
	}
	m, err := build(p, dim)
	if err == nil {
		err = p.finish()
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// wrapSelfTuneMulti is splitSelfTune for multi-class learners: it decides
// whether spec (name, kv) needs the wrapper and, if so, builds it. ok is
// false when the spec is a plain learner's (NewMulti then builds it as
// before). The rule is in the file comment.
func wrapSelfTuneMulti(name string, kv map[string]string, dim int) (m Multi, ok bool, err error) {
	if multiRegistry[name] == nil || dim <= 0 {
		return nil, false, nil // NewMulti reports it
	}
	inner := maps.Clone(kv)
	scale, hasScale := inner["scale"]
	delete(inner, "scale")
	warm, hasWarm := inner["warmup"]
	delete(inner, "warmup")
	sigmaAuto := inner["sigma"] == "auto"
	if sigmaAuto {
		delete(inner, "sigma")
	}
	_, sigmaGiven := inner["sigma"]
	if _, set := inner["common"]; name == "auto" && !set {
		// The common-scale view (commonView) is built from the
		// standardiser's statistics: on by default with scale=standard.
		inner["common"] = fmt.Sprint(!hasScale || scale == "standard")
	}
	probe, err := newPlainMulti(name, inner, dim)
	if err != nil {
		return nil, true, err
	}
	_, probeKV, _ := ParseSpec(probe.Info().Spec)
	_, hasSigma := probeKV["sigma"]
	if _, wants := probe.(interface{ selfTuning() }); wants {
		hasSigma, sigmaGiven = true, false // auto: its members' σ grid is in units of σ̂
	}
	if sigmaAuto && !hasSigma {
		return nil, true, fmt.Errorf("learner %s: sigma=auto needs a shift-invariant kernel (gaussian, laplacian, cauchy)", name)
	}
	autoSigma := hasSigma && !sigmaGiven
	if !hasScale {
		scale = "none"
		if autoSigma || (!hasSigma && !hasWarm) {
			scale = "standard" // (no σ at all: standardised, see the file comment)
		}
	}
	if scale != "standard" && scale != "none" {
		return nil, true, fmt.Errorf("learner %s: parameter scale: %q is not one of standard, none", name, scale)
	}
	if !hasWarm && !autoSigma && scale == "none" {
		if hasScale && !hasSigma {
			// A learner without σ is standardised by default, so its
			// canonical spec must say scale=none to rebuild the same
			// plain learner (the runtime rebuilds models from it).
			if b, ok := probe.(interface{ setSpec(string) }); ok {
				probeKV["scale"] = "none"
				b.setSpec(canonicalSpec(name, probeKV))
			}
		}
		return probe, true, nil // the plain learner: raw features, σ as given
	}
	w := defaultWarmup
	if hasWarm {
		v, err := ParseNumber(warm)
		if err != nil || v != math.Trunc(v) || v < 3 || v > 10000 {
			return nil, true, fmt.Errorf("learner %s: parameter warmup: %q must be an integer in [3, 10000]", name, warm)
		}
		w = int(v)
	}
	canon := probeKV
	canon["scale"] = scale
	canon["warmup"] = fmt.Sprint(w)
	if autoSigma {
		canon["sigma"] = "auto"
	}
	innerName := probe.Info().Name
	t := &selfTuned{
		base:      base{name: innerName, spec: canonicalSpec(innerName, canon), dim: dim, task: MultiClass},
		standard:  scale == "standard",
		autoSigma: autoSigma,
		warmup:    w,
		build: func() (Learner, error) {
			m, err := newPlainMulti(name, inner, dim)
			if err != nil {
				return nil, err
			}
			return &multiAsLearner{m: m}, nil
		},
		inner: &multiAsLearner{m: probe},
		st:    newStandardiser(dim+1, w),
		inv:   1,
		buf:   make([]float64, 0, w*(dim+1)),
		z:     make([]float64, dim),
	}
	if a, ok := probe.(*AutoMulti); ok && slices.Contains(a.views, 1) {
		if scale != "standard" {
			return nil, true, fmt.Errorf("learner auto: common=true needs scale=standard")
		}
		t.common = &commonView{}
		t.z = make([]float64, 2*dim)
	}
	t.setWarmupWidth()
	tellWidth(t.inner, t.inv)
	return &selfTunedMulti{t: t}, true, nil
}

// commonView is the second input transform of multi-class auto (see the
// file comment): y_j = clip((x_j − m_j)/c, ±clipOut)/σ̂', m_j the
// standardiser's frozen per-feature centres, c the root mean square over
// the features of their frozen scales s_j (one scale for all features, so
// relative units are kept) and σ̂' the median pairwise distance of the
// warm-up rows in these units (the median heuristic, as σ̂). During the
// warm-up c and σ̂' follow the standardiser's provisional statistics:
// σ₀' = sqrt(2·Σ_j s_j²)/c = sqrt(2d), the analytic width as selftune.go's
// σ₀. Only the self-tuning wrapper of multi-class auto has one; binary
// learners never do.
type commonView struct {
	c   float64 // common scale (0 before any spread is seen: the view is 0)
	inv float64 // 1/σ̂' (1/σ₀' during the warm-up)
}

// scaleOf returns the root mean square of the first d scales of st, over
// the coordinates in modeStd only when mode is not nil (declared kinds,
// selftune.go: an indicator is not in the common units, a pending late
// number has none yet); 1 when mode leaves no such coordinate.
func (cv *commonView) scaleOf(st *standardiser, d int, mode []uint8) float64 {
	var ss float64
	k := d
	if mode == nil {
		for _, s := range st.s[:d] {
			ss += s * s
		}
	} else {
		k = 0
		for j, s := range st.s[:d] {
			if mode[j] == modeStd {
				ss += s * s
				k++
			}
		}
		if k == 0 {
			return 1
		}
	}
	c := math.Sqrt(ss / float64(k))
	if !(c > 0) || math.IsInf(c, 0) {
		return 0
	}
	return c
}

// warmupWidth sets c from the provisional statistics and inv = 1/σ₀',
// σ₀' = sqrt(2d) (without declared kinds), else sqrt(2(d' + r)), d' the
// coordinates in modeStd and r the raw (indicator) variance the binary
// wrapper's σ₀ counts.
func (cv *commonView) warmupWidth(st *standardiser, d int, mode []uint8, raw float64) {
	cv.c = cv.scaleOf(st, d, mode)
	if mode == nil {
		cv.inv = 1 / math.Sqrt(2*float64(d))
		return
	}
	eff := 0.0
	for j := 0; j < d; j++ {
		if mode[j] == modeStd {
			eff++
		}
	}
	cv.inv = 1
	if w := math.Sqrt(2 * (eff + raw)); w > 0 {
		cv.inv = 1 / w
	}
}

// input writes the view of x into dst (len(x) entries). With declared
// kinds (mode not nil) an indicator enters as its value (clipped) and a
// pending late number as 0, as in the standardised view.
func (cv *commonView) input(dst []float64, st *standardiser, x []float64, mode []uint8) {
	if mode != nil {
		for j, v := range x {
			var z float64
			switch mode[j] {
			case modeRaw:
				z = math.Max(-clipOut, math.Min(clipOut, v))
			case modeStd:
				if cv.c > 0 {
					z = math.Max(-clipOut, math.Min(clipOut, (v-st.m[j])/cv.c))
				}
			}
			dst[j] = z * cv.inv
		}
		return
	}
	if cv.c == 0 {
		clear(dst[:len(x)])
		return
	}
	for j, v := range x {
		z := (v - st.m[j]) / cv.c
		dst[j] = math.Max(-clipOut, math.Min(clipOut, z)) * cv.inv
	}
}

// finishWarmup sets c from the frozen statistics and σ̂' from the n
// buffered rows (stride d+1).
func (cv *commonView) finishWarmup(st *standardiser, buf []float64, d, n int, mode []uint8) {
	cv.c = cv.scaleOf(st, d, mode) // > 0: every frozen scale is
	cv.inv = 1
	rows := make([]float64, n*d)
	for i := 0; i < n; i++ {
		cv.input(rows[i*d:(i+1)*d], st, buf[i*(d+1):i*(d+1)+d], mode)
	}
	cv.inv = 1 / medianDistance(rows, d, n)
}

// encode writes c and 1/σ̂'.
func (cv *commonView) encode(e *state.Encoder) {
	e.F64(cv.c)
	e.F64(cv.inv)
}

// decode reads what encode wrote; both must be positive and finite.
func (cv *commonView) decode(d *state.Decoder) {
	c, inv := d.F64(), d.F64()
	if d.Err() != nil {
		return
	}
	if !(c > 0) || math.IsInf(c, 0) || !(inv > 0) || math.IsInf(inv, 0) {
		d.Fail("bad common-scale view c=%v 1/σ̂'=%v", c, inv)
		return
	}
	cv.c, cv.inv = c, inv
}
