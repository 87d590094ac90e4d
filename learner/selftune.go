package learner

// Self-tuning wrapper: online standardisation and a data-driven kernel width
// for any learner, as part of the model.
//
// Spec keys (read by New for every learner, see selfTuneDocs):
//
//	scale=standard|none   standardise the features (and, for regression,
//	                      the label) online with outlier-robust
//	                      statistics of the warm-up window, then frozen
//	                      (scale.go); none feeds raw features.
//	sigma=auto            derive σ from the stream: the median heuristic
//	                      (Schölkopf & Smola 2002; Gretton et al., JMLR 2012,
//	                      §8) — σ̂ = median pairwise distance of the first
//	                      `warmup` events in the scaled space.
//	warmup=W              length of the warm-up window (default 300).
//
// Defaults: which parameters are data-driven. The rule is one sentence: a
// spec that does not give σ gets σ from the stream. For every learner with
// a shift-invariant kernel (gaussian, laplacian, cauchy), leaving sigma out
// means sigma=auto and scale=standard: `fogd`, `nogd`, `forks`, ... out of
// the box standardise their features (and, for regression, the label) and
// take σ̂ from the warm-up window. A spec that gives σ as a number keeps
// the papers' behaviour — raw features, that σ — unless it also says
// scale= (scale=standard with an explicit σ: σ in standardised units). So
// every spec written for the papers (they all give σ) means what it meant
// before, and `sigma=1,scale=none` (or just `sigma=1`) is the old bare
// default. When the learner chooses the length scale it also chooses the
// units: standardising first matters because one σ
// must serve every feature: on raw files a feature measured in thousands
// decides every kernel distance alone (cod-rna, cpusmall), and the median
// heuristic on raw features inherits that. For regression the label is
// standardised too (the inner learner learns (y − m_y)/s_y and the wrapper
// returns m_y + s_y·f), because the step sizes of the papers assume labels of
// order one. scale= given without sigma also selects sigma=auto; a learner
// without σ (polynomial or linear kernel) is wrapped only if scale= is given.
//
// Bare specs: the variant that learns. A spec that leaves σ to the stream
// has already left the papers' settings, so for FORKS, NOGD and SkeGD it
// also means "preset=wide" unless it names a preset (barePresetLearners;
// explicit values of the keys a preset sets still win, and preset=paper
// restores the papers' defaults with a data-driven σ). At the papers'
// settings all three are the constant majority-class predictor on
// class-imbalanced streams (w7a: 3.01, 2.91 and 2.99 % mistakes, majority
// rate 2.997 %); the wide presets learn (2.73, 2.15, 2.40; 3 permutations).
// What each preset changes, and why, is in the learners' comments
// (forks.go "Class imbalance", nogd.go and skegd.go "Class imbalance"):
// the FORKS slab C = 1 is the hinge's margin and holds w at the constant
// predictor; the rank k = 0.1B leaves the minority class outside the
// map's span; SkeGD's ridge λ = 0.01 erases what w learnt every 1/(ηλ)
// steps; SkeGD's Stage 2 from w = 0 discards what Stage 1 learnt; and a
// hinge step η = 0.2 asks for five steps of margin. A spec
// that gives σ as a number keeps every paper setting (every experiment in
// docs/results.md gives σ), and auto's members are built with σ given
// (auto sets preset=wide for its FORKS members itself).
//
// Why the median heuristic. The analytic width sqrt(2d) (exact for
// independent standardised features) was measured against it on the shared
// files, unscaled, FOGD and NOGD at their defaults (mistake %, analytic vs
// median): german 32.0/33.0 and 30.0/30.1, svmguide3 27.4/29.4 and
// 23.0/23.2, spambase 14.6/15.6 and 14.5/15.7, cod-rna 9.0/9.4 and
// 19.2/10.5, w7a 3.10/2.88 and 2.92/3.00. The analytic width is ahead by up
// to 2 points on dense files whose features are close to independent; the
// median heuristic never loses more than that and avoids the analytic
// width's 8.7-point failure on cod-rna (clustered, correlated features),
// so it is the default, and auto's σ grid covers the factor between them.
//
// How σ̂ is applied. For a shift-invariant kernel κ_σ(x, x') = g(‖x − x'‖/σ),
// κ_σ̂(x, x') = κ_1(x/σ̂, x'/σ̂), so the inner learner is built with its own
// σ (1, or the explicit value) and fed z/σ̂: the wrapper works for every
// learner without changing any of them.
//
// Warm-up (the first W events). The wrapper buffers the raw events
// (W·(d+1) floats, released afterwards). Meanwhile a provisional inner
// learner predicts and learns, on inputs standardised with the robust
// statistics of the buffer and scaled by the analytic width σ₀ =
// sqrt(2·Σ_j s_j²) (for standardised features sqrt(2·d'), d' the number of
// non-constant features: the median distance of independent standardised
// features), so predictions are meaningful from the second event on (the
// first event's input is all zeros and its score 0). The statistics and σ₀
// change only at events 1, 2, 4, 8, ... < W, and at each of those points
// the provisional learner is rebuilt and replays the buffer in the new
// coordinates (≤ 2W replayed events in all): a learner that stores
// examples never mixes coordinates of different statistics (scale.go says
// why that matters). After the W-th event the statistics are frozen, σ̂ is
// computed, and a fresh inner learner replays the W buffered events in the
// final coordinates; the provisional learner is dropped. σ̂ costs
// O(W²·d) once.
//
// State. During warm-up the state is the buffer; restoring replays it
// through a fresh wrapper, which reproduces the provisional learner bit for
// bit (everything is deterministic). After warm-up the state is the frozen
// statistics, σ̂ and the inner learner's own state. With declared
// coordinate kinds (KindAware: indicators unstandardised, late numeric
// coordinates standardised from their own first W values) the state also
// holds the kinds; see "Coordinate kinds" at the end of this file. A
// wrapper never told writes exactly the bytes of before.

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"okstream/learner/state"
)

// selfTuneDocs document the wrapper's keys; `okstream help learners` lists
// them once for all learners.
var selfTuneDocs = []ParamDoc{
	{Name: "scale", Default: "standard when σ comes from the stream (no sigma, sigma=auto, auto), else none", Doc: "standard: standardise features (and regression labels) online with outlier-robust statistics (median and 1 %-trimmed RMS deviation of the warm-up window, then frozen) stored in the model; none: raw features (the papers)", When: "any learner"},
	{Name: "sigma", Default: "auto (data-driven) when not given", Doc: "auto: σ = median pairwise distance of the first `warmup` events in the scaled space (median heuristic), stored in the model; a number fixes σ and, without scale=, keeps the papers' raw features", When: "shift-invariant kernel"},
	{Name: "warmup", Default: "300", Doc: "events in the warm-up window that σ and the initial statistics are computed from (the learner predicts from the first event)", When: "sigma=auto or scale="},
}

// SelfTuneDocs returns the documentation of the keys every learner accepts
// for online standardisation and data-driven σ.
func SelfTuneDocs() []ParamDoc { return slices.Clone(selfTuneDocs) }

const defaultWarmup = 300

// sigmaAutoByDefault selects what a spec that leaves σ out means. true (the
// current choice): sigma=auto and scale=standard (see the file comment).
// false would restore the meaning before self-tuning existed (σ = 1, raw
// features). A checkpoint records the canonical spec, which says
// sigma=auto,scale=standard for a bare spec: a checkpoint written by a
// build before the switch carries sigma=1 and is refused by a bare spec of
// this build (run it with sigma=1 to continue it).
const sigmaAutoByDefault = true

// selfTuned is the wrapper (see the file comment).
type selfTuned struct {
	base
	standard  bool // scale=standard
	autoSigma bool // sigma=auto
	scaleY    bool // standard and regression
	warmup    int
	build     func() (Learner, error) // a fresh inner learner
	// provisional builds the warm-up's provisional learner (nil: build).
	// For auto it is a smaller bank (provisionalAuto): the provisional
	// learner is rebuilt and replays the buffer at events 1, 2, 4, ... of
	// the warm-up, which with the whole bank cost more than the rest of a
	// short stream (issue 41).
	provisional func() (Learner, error)

	inner Learner
	st    *standardiser // coordinates 0..d−1 features, d the label
	// inv is 1/σ̂ (after warm-up) or 1/σ₀ (during warm-up); 1 without sigma=auto.
	inv float64

	// common: the second, common-scale view of multi-class auto
	// (selftune_multi.go); nil for every other learner, binary ones
	// included. With it the inner learner's input is [view 1; view 2]
	// (2·dim entries).
	common *commonView

	// Warm-up only: buffered raw rows (x, y), stride dim+1.
	buf []float64

	// Declared coordinate kinds (SetFeatureKinds, at the end of this file); all
	// nil until the first declaration, so a wrapper never told behaves and
	// writes its state exactly as before.
	kinds []FeatureKind // per feature coordinate
	from  []uint64      // updates at coordinate j's declaration
	mode  []uint8       // input transform of coordinate j: modeStd, modeRaw, modePending
	late  [][]float64   // a pending late numeric coordinate's values so far (else nil)
	// scratch
	z []float64
}

// splitSelfTune decides whether spec (name, kv) needs the wrapper and, if
// so, builds it. ok is false when the spec is a plain learner's.
func splitSelfTune(name string, kv map[string]string, dim int) (l Learner, ok bool, err error) {
	inner := make(map[string]string, len(kv))
	for k, v := range kv {
		inner[k] = v
	}
	scale, hasScale := inner["scale"]
	delete(inner, "scale")
	warm, hasWarm := inner["warmup"]
	delete(inner, "warmup")
	sigmaAuto := inner["sigma"] == "auto"
	if sigmaAuto {
		delete(inner, "sigma")
	}
	_, sigmaGiven := inner["sigma"]
	_, wantsTuning := registry[name]
	wantsTuning = wantsTuning && name == "auto"
	if !hasScale && !hasWarm && !sigmaAuto && !wantsTuning && (sigmaGiven || !sigmaAutoByDefault) {
		return nil, false, nil // the papers' behaviour: raw features, σ as given (default 1)
	}
	probe, err := newPlain(name, inner, dim)
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
	autoSigma := hasSigma && !sigmaGiven && (sigmaAuto || wantsTuning || hasScale || hasWarm || sigmaAutoByDefault)
	if _, set := inner["preset"]; autoSigma && !set && slices.Contains(barePresetLearners, name) {
		// Bare specs (see the file comment): σ from the stream means the
		// variant that learns on class-imbalanced streams.
		inner["preset"] = "wide"
		for k, v := range bareExtras[name] {
			if _, given := inner[k]; !given && (k != "eta" || inner["loss"] == "" || inner["loss"] == "hinge") {
				inner[k] = v
			}
		}
		if probe, err = newPlain(name, inner, dim); err != nil {
			return nil, true, err
		}
		_, probeKV, _ = ParseSpec(probe.Info().Spec)
	}
	if !hasWarm && !autoSigma && (!hasScale || scale == "none") {
		return probe, true, nil // no σ to derive and no scaling asked for: the plain learner
	}
	if !hasScale {
		scale = "none"
		if autoSigma {
			scale = "standard"
		}
	}
	if scale != "standard" && scale != "none" {
		return nil, true, fmt.Errorf("learner %s: parameter scale: %q is not one of standard, none", name, scale)
	}
	w := defaultWarmup
	if hasWarm {
		v, err := ParseNumber(warm)
		if err != nil || v != math.Trunc(v) || v < 3 || v > 10000 {
			return nil, true, fmt.Errorf("learner %s: parameter warmup: %q must be an integer in [3, 10000]", name, warm)
		}
		w = int(v)
	}
	task := probe.Info().Task
	canon := probeKV
	canon["scale"] = scale
	canon["warmup"] = fmt.Sprint(w)
	if autoSigma {
		canon["sigma"] = "auto"
	}
	innerName := probe.Info().Name
	t := &selfTuned{
		base:      base{name: innerName, spec: canonicalSpec(innerName, canon), dim: dim, task: task},
		standard:  scale == "standard",
		autoSigma: autoSigma,
		scaleY:    scale == "standard" && task == Regression,
		warmup:    w,
		build:     func() (Learner, error) { return newPlain(name, inner, dim) },
		inner:     probe,
		st:        newStandardiser(dim+1, w),
		inv:       1,
		buf:       make([]float64, 0, w*(dim+1)),
		z:         make([]float64, dim),
	}
	if pkv := provisionalAuto(probe, inner); pkv != nil {
		t.provisional = func() (Learner, error) { return newPlain(name, pkv, dim) }
		if t.inner, err = t.provisional(); err != nil {
			return nil, true, err
		}
	}
	t.setWarmupWidth()
	return t, true, nil
}

// provisionalAuto returns the spec of auto's provisional learner during the
// wrapper's warm-up, or nil when inner (the probe built from kv) is not
// binary or regression auto or its σ grid is already one octave or less:
// the same spec with a σ grid of one octave each way (octaves=1) — 3 σ ×
// the η grid, 9 kernel members instead of 21 for FOGD, and the linear
// ones. It depends on the resolved octaves, not on whether kv spells them
// out, so that a learner built from its own canonical spec (a restore)
// warms up exactly as the original. The provisional learner only predicts
// the warm-up's events (and is rebuilt at each doubling of the buffer); the
// whole bank replays the buffer when the warm-up ends, as before. Measured
// (10 permutations, seed 1, against the whole bank): german 25.57 → 25.41 %
// (base FOGD), svmguide3 19.32 → 19.41, spambase 8.75 → 8.73, NOGD and
// FORKS within 0.03 point; one step size instead of three (etas=1, 3
// members) cost svmguide3 0.5 point.
//
// For regression the provisional bank's two kernel ridge members use 32
// random features instead of 128 (ridge_features=32): they are O(D²) per
// event, and in the pipeline every partition of an undecided stream runs a
// regression candidate through its first 100 labels, all of them in this
// warm-up; on a binary stream that candidate's 128-feature ridges were a
// quarter of auto's whole warm-up cost (BenchmarkPipelineFloor/auto:
// auto/steady 3.88 → 2.61). Measured (eval, 10 permutations, seed 1, MSE
// against 128): parkinsons 85.83 → 85.88, cpusmall 22.400 → 22.409, casp
// 22.056 → 22.059, bank32nh, elevators and ailerons unchanged in four
// digits (without the ridges at all: parkinsons 86.11).
func provisionalAuto(inner Learner, kv map[string]string) map[string]string {
	a, ok := inner.(*Auto)
	if !ok {
		return nil
	}
	_, ckv, err := ParseSpec(a.Info().Spec)
	if err != nil {
		return nil
	}
	if oct, err := strconv.Atoi(ckv["octaves"]); err != nil || oct <= 1 {
		return nil
	}
	pkv := make(map[string]string, len(kv)+1)
	for k, v := range kv {
		pkv[k] = v
	}
	pkv["octaves"] = "1"
	if a.task == Regression {
		pkv["ridge_features"] = strconv.Itoa(provisionalRidgeFeatures)
	}
	return pkv
}

// provisionalRidgeFeatures is the random features D of the regression
// provisional bank's kernel ridge members (provisionalAuto).
const provisionalRidgeFeatures = 32

// buildWarm builds the warm-up's provisional learner.
func (t *selfTuned) buildWarm() (Learner, error) {
	if t.provisional != nil {
		return t.provisional()
	}
	return t.build()
}

// canonicalSpec writes name:k=v,... with keys sorted.
func canonicalSpec(name string, kv map[string]string) string {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(name)
	for i, k := range keys {
		if i == 0 {
			b.WriteByte(':')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + kv[k])
	}
	return b.String()
}

func (t *selfTuned) warm() bool { return t.buf != nil }

// setWarmupWidth sets inv = 1/σ₀ from the current statistics (warm-up).
func (t *selfTuned) setWarmupWidth() {
	if !t.autoSigma {
		return
	}
	var ss, raw float64
	for j := 0; j < t.dim; j++ {
		s := t.st.s[j]
		if t.standard && t.mode != nil && t.mode[j] != modeStd {
			v := t.rawVariance(j) // an indicator's variance; 0 for a pending late number
			ss += v
			raw += v
			continue
		}
		if t.standard {
			s = math.Min(s, 1) // standardised: 1 if the feature varies, else 0
			if s > 0 {
				s = 1
			}
		}
		ss += s * s
	}
	t.inv = 1
	if s0 := math.Sqrt(2 * ss); s0 > 0 && !math.IsInf(s0, 0) {
		t.inv = 1 / s0
	}
	if t.common != nil {
		t.common.warmupWidth(t.st, t.dim, t.mode, raw)
	}
}

// input writes the inner learner's input for x into t.z.
func (t *selfTuned) input(x []float64) []float64 {
	t.checkDim(x)
	for j, v := range x {
		if t.standard {
			if t.mode == nil || t.mode[j] == modeStd {
				v = t.st.z(j, v)
			} else {
				v = t.kindInput(j, v)
			}
		}
		t.z[j] = v * t.inv
	}
	if t.common != nil {
		t.common.input(t.z[t.dim:], t.st, x, t.mode)
	}
	return t.z
}

// label maps y to the inner learner's label and back.
func (t *selfTuned) label(y float64) float64 {
	if !t.scaleY {
		return y
	}
	return t.st.zLabel(t.dim, y)
}

func (t *selfTuned) output(f float64) float64 {
	if !t.scaleY {
		return f
	}
	return t.st.m[t.dim] + t.st.s[t.dim]*f
}

// Predict returns the inner learner's score on the scaled input.
func (t *selfTuned) Predict(x []float64) float64 {
	return t.output(t.inner.Predict(t.input(x)))
}

// Learn predicts x, updates the inner learner and the statistics, and
// returns the pre-update score.
func (t *selfTuned) Learn(x []float64, y float64) float64 {
	f := t.output(t.inner.Learn(t.input(x), t.label(y)))
	t.updates++
	if t.late != nil {
		t.collectLate(x)
	}
	if !t.warm() {
		return f // the statistics are frozen (scale.go)
	}
	t.buf = append(t.buf, x...)
	t.buf = append(t.buf, y)
	n := len(t.buf) / (t.dim + 1)
	if n < t.warmup {
		if n&(n-1) == 0 { // n = 1, 2, 4, 8, ...: new statistics, rebuilt learner
			if t.standard || t.autoSigma { // (scale=none: the raw scales, for σ₀ only)
				t.st.fromBuffer(t.buf, t.dim+1, n)
			}
			t.setWarmupWidth()
			if err := t.replay(n, t.buildWarm); err != nil {
				panic("learner " + t.name + ": rebuilding during warm-up: " + err.Error())
			}
		}
		return f
	}
	if err := t.finishWarmup(); err != nil {
		// The inner learner was built once from the same spec; a second
		// build cannot fail.
		panic("learner " + t.name + ": rebuilding after warm-up: " + err.Error())
	}
	return f
}

// finishWarmup freezes the statistics, computes σ̂ and replays the buffer
// into a fresh inner learner.
func (t *selfTuned) finishWarmup() error {
	stride := t.dim + 1
	n := len(t.buf) / stride
	t.st.fromBuffer(t.buf, stride, n)
	t.st.freeze(n)
	if t.autoSigma {
		rows := make([]float64, n*t.dim) // scaled rows, before 1/σ̂
		t.inv = 1
		for i := 0; i < n; i++ {
			copy(rows[i*t.dim:], t.input(t.buf[i*stride:i*stride+t.dim]))
		}
		t.inv = 1 / medianDistance(rows, t.dim, n)
	}
	if t.common != nil {
		t.common.finishWarmup(t.st, t.buf, t.dim, n, t.mode)
	}
	if err := t.replay(n, t.build); err != nil {
		return err
	}
	t.buf = nil
	if !t.standard {
		t.st = nil // statistics were needed for σ₀ only
	}
	return nil
}

// replay replaces the inner learner by a fresh one (from build) that has
// learned the first n buffered events in the current coordinates.
func (t *selfTuned) replay(n int, build func() (Learner, error)) error {
	inner, err := build()
	if err != nil {
		return err
	}
	tellWidth(inner, t.inv)
	stride := t.dim + 1
	for i := 0; i < n; i++ {
		inner.Learn(t.input(t.buf[i*stride:i*stride+t.dim]), t.label(t.buf[i*stride+t.dim]))
	}
	t.inner = inner
	return nil
}

// medianDistance returns the lower median of the n(n−1)/2 pairwise
// Euclidean distances of the rows (stride d), or 1 if it is 0.
func medianDistance(rows []float64, d, n int) float64 {
	if n < 2 {
		return 1
	}
	sq := make([]float64, 0, n*(n-1)/2)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			var s float64
			a, b := rows[i*d:(i+1)*d], rows[j*d:(j+1)*d]
			for k := range a {
				u := a[k] - b[k]
				s += u * u
			}
			sq = append(sq, s)
		}
	}
	m := math.Sqrt(kthSmallest(sq, (len(sq)-1)/2)) // the lower median, as a sorted copy's

	if !(m > 0) || math.IsInf(m, 0) {
		return 1
	}
	return m
}

// MarshalBinary writes the buffer (warm-up) or the statistics, σ̂ and the
// inner learner's state.
func (t *selfTuned) MarshalBinary() ([]byte, error) {
	e := t.encoder(8*len(t.buf) + 64)
	flag := uint8(0)
	if t.warm() {
		flag = 1
	}
	if t.kinds != nil {
		flag |= 2 // a kinds section follows (never written by a wrapper never told)
	}
	e.U8(flag)
	if t.kinds != nil {
		t.encodeKinds(e)
	}
	if t.warm() {
		e.F64s(t.buf)
		return e.Bytes(), nil
	}
	e.F64(t.inv)
	if t.standard {
		t.st.encode(e)
	}
	if t.common != nil {
		t.common.encode(e)
	}
	in, err := t.inner.MarshalBinary()
	if err != nil {
		return nil, err
	}
	e.Blob(in)
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state of an identically configured wrapper. On
// any error the learner is unchanged.
func (t *selfTuned) UnmarshalBinary(data []byte) error {
	d, updates := t.decoder(data)
	flag := d.U8()
	if flag > 3 || flag&2 != 0 && !t.standard {
		d.Fail("bad wrapper flags %d", flag)
	}
	warm := flag&1 == 1
	fresh, err := t.fresh(warm)
	if err != nil {
		return err
	}
	var ks *kindState
	if flag&2 != 0 {
		ks = decodeKinds(d, t.dim, t.warmup, updates, warm)
	}
	if warm {
		buf := d.F64s(nil)
		if err := d.Done(); err != nil {
			return err
		}
		stride := t.dim + 1
		if len(buf)%stride != 0 || len(buf)/stride >= t.warmup || uint64(len(buf)/stride) != updates {
			d.Fail("warm-up buffer of %d floats for %d updates", len(buf), updates)
			return d.Err()
		}
		if ks == nil {
			for i := 0; i < len(buf); i += stride {
				fresh.Learn(buf[i:i+t.dim], buf[i+t.dim])
			}
		} else if err := fresh.replayWithKinds(buf, ks); err != nil {
			d.Fail("%v", err)
			return d.Err()
		}
	} else {
		if updates < uint64(t.warmup) {
			d.Fail("%d updates but warm-up finished", updates)
		}
		inv := d.F64()
		if !(inv > 0) || math.IsInf(inv, 0) {
			d.Fail("bad 1/σ̂ %v", inv)
		}
		if t.standard {
			fresh.st.decode(d)
		}
		if t.common != nil {
			fresh.common.decode(d)
		}
		blob := d.Blob()
		if err := d.Done(); err != nil {
			return err
		}
		if err := fresh.inner.UnmarshalBinary(blob); err != nil {
			return err
		}
		fresh.inv = inv
		tellWidth(fresh.inner, inv)
		fresh.buf = nil
		if !t.standard {
			fresh.st = nil
		}
		fresh.updates = updates
		if ks != nil {
			fresh.installKinds(ks)
		}
	}
	fresh.z = t.z
	*t = *fresh
	return nil
}

// fresh returns a new wrapper with the same configuration, its inner
// learner the provisional one (warm) or the final one.
func (t *selfTuned) fresh(warm bool) (*selfTuned, error) {
	build := t.build
	if warm {
		build = t.buildWarm
	}
	inner, err := build()
	if err != nil {
		return nil, err
	}
	f := *t
	f.updates = 0
	f.inner = inner
	f.st = newStandardiser(t.dim+1, t.warmup)
	f.inv = 1
	f.buf = make([]float64, 0, t.warmup*(t.dim+1))
	f.z = make([]float64, len(t.z))
	f.kinds, f.from, f.mode, f.late = nil, nil, nil, nil
	if t.common != nil {
		f.common = &commonView{}
	}
	f.setWarmupWidth()
	tellWidth(f.inner, f.inv)
	return &f, nil
}

// tellWidth gives an inner learner that asks for it the width σ̂ = 1/inv
// its inputs are divided by, whenever the wrapper builds or restores it
// (multi-class auto's linear member scales its step by it: auto_multi.go).
// No binary learner asks: for them the wrapper is unchanged.
func tellWidth(inner Learner, inv float64) {
	if w, ok := inner.(interface{ setInputWidth(float64) }); ok {
		w.setInputWidth(1 / inv)
	}
}

// Info reports the inner learner's budget and use, under the wrapper's spec.
func (t *selfTuned) Info() Info {
	in := t.inner.Info()
	bytes := in.Bytes + 8*(cap(t.buf)+len(t.z))
	if t.st != nil {
		bytes += 8 * (3*len(t.st.m) + cap(t.st.col))
	}
	bytes += t.kindBytes()
	return t.info(in.Budget, in.Used, bytes)
}

// Coordinate kinds (KindAware, learner.go; docs/algorithms/selftune.md
// "Indicators and late numbers").
//
// With scale=standard, once the runtime has declared what its coordinates
// hold, each coordinate has one of three input transforms (mode):
//
//   - modeStd (undeclared, or numeric declared before the first Learn):
//     the standardiser's z, as before.
//   - modeRaw (an indicator or a missing indicator): the value itself,
//     centre 0 and scale 1 (clipped to ±clipOut against a caller that
//     lies). A one-hot field then adds at most 2 to a squared distance,
//     whatever its number of values, instead of ≈ 2(K − 1) standardised,
//     and the median heuristic's σ̂ is computed on these mixed inputs.
//   - modePending (a numeric coordinate declared after the first Learn: a
//     field that appears mid-stream, during or after the warm-up): 0 until
//     it has W values of its own (one per Learn from its declaration on,
//     imputed values included), whose robust centre and scale
//     (robustLocScale; scale 0: the freeze rule of scale.go) are then
//     frozen and the coordinate becomes modeStd. Feeding 0 before keeps
//     every stored example consistent: 0 is where those examples have it,
//     and after the freeze the coordinate only adds information. Without
//     this a late number was constant during the warm-up, got the scale
//     max(1, |m|)/√W and every value of it was clipped to ±10. σ̂ is not
//     revised when it joins (it cannot be: stored examples).
//
// Why the values are 0 before a declaration: the runtime declares a
// coordinate before the first event in which it can be non-zero, so every
// earlier event has 0 there, which every mode maps to 0. That is what makes
// a declaration in the middle of the warm-up consistent with a restore that
// replays the buffer: the replay declares each coordinate before the same
// event (from[j] records it), and a declaration for a coordinate that is
// already non-zero in the buffer is refused.
//
// State: the kinds are part of the model (so a restore needs no call from
// the runtime). After the flags byte (bit 0: warm-up, bit 1: a kinds
// section follows; a wrapper never told writes 0 or 1, the bytes of
// before) come the kinds (one byte per coordinate), from[j] of each
// declared coordinate and, after the warm-up, the values of each pending
// late coordinate (updates − from[j] of them, < W).

const (
	modeStd     = 0
	modeRaw     = 1
	modePending = 2
)

// kindInput is the input of coordinate j, value v, in a mode other than
// modeStd.
func (t *selfTuned) kindInput(j int, v float64) float64 {
	if t.mode[j] == modePending {
		return 0
	}
	return math.Max(-clipOut, math.Min(clipOut, v))
}

// rawVariance is the variance of buffered column j under its input
// transform (warm-up; 0 for a pending coordinate or an empty buffer).
func (t *selfTuned) rawVariance(j int) float64 {
	stride := t.dim + 1
	n := len(t.buf) / stride
	if n == 0 || t.mode[j] != modeRaw {
		return 0
	}
	var sum float64
	for i := 0; i < n; i++ {
		sum += t.kindInput(j, t.buf[i*stride+j])
	}
	mean := sum / float64(n)
	var ss float64
	for i := 0; i < n; i++ {
		u := t.kindInput(j, t.buf[i*stride+j]) - mean
		ss += u * u
	}
	return ss / float64(n)
}

// SetFeatureKinds declares coordinate kinds (KindAware, learner.go). With
// scale=none it checks its argument and records nothing (raw inputs have
// nothing to adapt). On error the wrapper is unchanged.
func (t *selfTuned) SetFeatureKinds(kinds []FeatureKind) error {
	if len(kinds) > t.dim {
		return fmt.Errorf("learner %s: %d feature kinds for dimension %d", t.name, len(kinds), t.dim)
	}
	news := 0
	for j, k := range kinds {
		if k > FeatureMissing {
			return fmt.Errorf("learner %s: coordinate %d: unknown feature kind %d", t.name, j, uint8(k))
		}
		if k == FeatureUnknown || !t.standard {
			continue
		}
		if t.kinds != nil && t.kinds[j] != FeatureUnknown {
			if t.kinds[j] != k {
				return fmt.Errorf("learner %s: coordinate %d declared %v, now %v", t.name, j, t.kinds[j], k)
			}
			continue
		}
		if t.warm() {
			stride := t.dim + 1
			for i := j; i < len(t.buf); i += stride {
				if t.buf[i] != 0 {
					return fmt.Errorf("learner %s: coordinate %d declared %v after it was non-zero (event %d)", t.name, j, k, i/stride)
				}
			}
		}
		news++
	}
	if news == 0 {
		return nil
	}
	if t.kinds == nil {
		t.kinds = make([]FeatureKind, t.dim)
		t.from = make([]uint64, t.dim)
		t.mode = make([]uint8, t.dim)
	}
	for j, k := range kinds {
		if k == FeatureUnknown || t.kinds[j] != FeatureUnknown {
			continue
		}
		t.kinds[j], t.from[j] = k, t.updates
		switch {
		case k == FeatureIndicator || k == FeatureMissing:
			t.mode[j] = modeRaw
		case t.updates > 0: // a late number
			t.mode[j] = modePending
			if t.late == nil {
				t.late = make([][]float64, t.dim)
			}
			t.late[j] = make([]float64, 0, t.warmup)
		}
	}
	return nil
}

// collectLate appends x's value of every pending late coordinate and
// freezes those that have W values (Learn, after the inner learner).
func (t *selfTuned) collectLate(x []float64) {
	for j, vals := range t.late {
		if vals == nil {
			continue
		}
		vals = append(vals, x[j])
		if len(vals) < t.warmup {
			t.late[j] = vals
			continue
		}
		// W values: freeze. (Not reachable during the warm-up: a late
		// coordinate is declared after the first Learn, so its W-th value
		// comes after the W-th event.)
		m, s := robustLocScale(vals)
		if math.IsNaN(m) || math.IsInf(m, 0) {
			m = 0
		}
		if s == 0 {
			s = math.Max(1, math.Abs(m)) / math.Sqrt(float64(t.warmup))
		}
		t.st.m[j], t.st.s[j] = m, s
		t.mode[j] = modeStd
		t.late[j] = nil
	}
}

// pending reports whether coordinate j, declared numeric at from after
// updates Learns, still collects its values (W = warmup).
func pendingLate(k FeatureKind, from, updates uint64, w int) bool {
	return k == FeatureNumeric && from > 0 && updates-from < uint64(w)
}

// encodeKinds writes the kinds section (see above).
func (t *selfTuned) encodeKinds(e *state.Encoder) {
	b := make([]byte, t.dim)
	for j, k := range t.kinds {
		b[j] = byte(k)
	}
	e.Blob(b)
	for j, k := range t.kinds {
		if k != FeatureUnknown {
			e.U64(t.from[j])
		}
	}
	if !t.warm() {
		for j := range t.kinds {
			if t.late != nil && t.late[j] != nil {
				e.F64s(t.late[j])
			}
		}
	}
}

// kindState is a decoded kinds section.
type kindState struct {
	kinds []FeatureKind
	from  []uint64
	late  [][]float64 // after the warm-up: the pending coordinates' values
}

// decodeKinds reads a kinds section of a wrapper of dimension dim and
// warm-up w after updates Learns; warm says whether the warm-up is still
// on (then no values follow). Failures go to d.
func decodeKinds(d *state.Decoder, dim, w int, updates uint64, warm bool) *kindState {
	b := d.Blob()
	if d.Err() != nil {
		return nil
	}
	if len(b) != dim {
		d.Fail("kinds section of %d coordinates for dimension %d", len(b), dim)
		return nil
	}
	ks := &kindState{kinds: make([]FeatureKind, dim), from: make([]uint64, dim)}
	declared := false
	for j, v := range b {
		if v > uint8(FeatureMissing) {
			d.Fail("coordinate %d: unknown feature kind %d", j, v)
			return nil
		}
		ks.kinds[j] = FeatureKind(v)
		declared = declared || v != 0
	}
	if !declared {
		d.Fail("empty kinds section")
		return nil
	}
	for j, k := range ks.kinds {
		if k == FeatureUnknown {
			continue
		}
		if ks.from[j] = d.U64(); d.Err() == nil && ks.from[j] > updates {
			d.Fail("coordinate %d declared at update %d of %d", j, ks.from[j], updates)
		}
		if d.Err() != nil {
			return nil
		}
	}
	if warm {
		return ks
	}
	for j, k := range ks.kinds {
		if !pendingLate(k, ks.from[j], updates, w) {
			continue
		}
		vals := d.F64sN(nil, int(updates-ks.from[j])) // (< w: pendingLate)
		if d.Err() != nil {
			return nil
		}
		vals = append(make([]float64, 0, w), vals...)
		for _, v := range vals {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				d.Fail("coordinate %d: late value not finite", j)
				return nil
			}
		}
		if ks.late == nil {
			ks.late = make([][]float64, dim)
		}
		ks.late[j] = vals
	}
	return ks
}

// replayWithKinds restores a warm-up: it learns the buffered rows, each
// after the declarations made before it (from[j] = its index), then the
// declarations made after the last one.
func (t *selfTuned) replayWithKinds(buf []float64, ks *kindState) error {
	stride := t.dim + 1
	n := len(buf) / stride
	step := make([]FeatureKind, t.dim)
	for i := 0; i <= n; i++ {
		clear(step)
		some := false
		for j, k := range ks.kinds {
			if k != FeatureUnknown && ks.from[j] == uint64(i) {
				step[j], some = k, true
			}
		}
		if some {
			if err := t.SetFeatureKinds(step); err != nil {
				return err
			}
		}
		if i < n {
			t.Learn(buf[i*stride:i*stride+t.dim], buf[i*stride+t.dim])
		}
	}
	return nil
}

// installKinds sets a decoded kinds section on a wrapper restored after
// its warm-up.
func (t *selfTuned) installKinds(ks *kindState) {
	t.kinds, t.from = ks.kinds, ks.from
	t.mode = make([]uint8, t.dim)
	for j, k := range ks.kinds {
		switch {
		case k == FeatureIndicator || k == FeatureMissing:
			t.mode[j] = modeRaw
		case pendingLate(k, ks.from[j], t.updates, t.warmup):
			t.mode[j] = modePending
		}
	}
	t.late = ks.late
}

// kindBytes is the memory the kinds take.
func (t *selfTuned) kindBytes() int {
	n := len(t.kinds) + 8*len(t.from) + len(t.mode) + 24*len(t.late)
	for _, v := range t.late {
		n += 8 * cap(v)
	}
	return n
}
