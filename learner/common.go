package learner

import (
	"math"

	"okstream/learner/kernel"
	"okstream/learner/linalg"
	"okstream/learner/state"
)

// base holds what every learner has: its identity and update counter.
type base struct {
	name    string
	spec    string // canonical
	dim     int
	task    Task
	updates uint64
	// nonFinite is the number of NaN or infinite floats the last
	// MarshalBinary wrote (see MarshalChecked); not part of the state.
	nonFinite int
}

func newBase(p *Params, dim int, task Task) base {
	return base{name: p.learner, spec: p.Canonical(), dim: dim, task: task}
}

// encoder starts a state encoding with the common header and counters.
func (b *base) encoder(sizeHint int) *state.Encoder {
	e := state.NewEncoder(sizeHint + 64 + len(b.spec))
	b.nonFinite = 0
	e.CountNonFinite(&b.nonFinite)
	e.Header(b.name, b.spec, b.dim)
	e.U64(b.updates)
	return e
}

// decoder opens a state, checks its header and reads the counters.
func (b *base) decoder(data []byte) (*state.Decoder, uint64) {
	d := state.NewDecoder(data)
	d.Header(b.name, b.spec, b.dim)
	return d, d.U64()
}

func (b *base) lastNonFinite() int { return b.nonFinite }

// setSpec replaces the canonical spec (selftune_multi.go: a key the
// wrapper consumed that a rebuild needs).
func (b *base) setSpec(spec string) { b.spec = spec }

// MarshalChecked is MarshalBinary that also reports how many NaN or
// infinite values the state holds, at no extra pass over it (the state
// encoder counts them as it writes). A learner's state is all finite while
// its model is sound; a non-zero count means the model has diverged (e.g.
// after a huge input) and the state should not be checkpointed as a
// working model. nonFinite is −1 for a Learner implemented outside this
// package, whose states are not counted.
func MarshalChecked(l Learner) (data []byte, nonFinite int, err error) {
	data, err = l.MarshalBinary()
	if err != nil {
		return nil, 0, err
	}
	r, ok := l.(interface{ lastNonFinite() int })
	if !ok {
		return data, -1, nil
	}
	return data, r.lastNonFinite(), nil
}

func (b *base) info(budget, used, bytes int) Info {
	return Info{Name: b.name, Spec: b.spec, Task: b.task, Dim: b.dim, Updates: b.updates, Budget: budget, Used: used, Bytes: bytes}
}

func (b *base) checkDim(x []float64) {
	if len(x) != b.dim {
		panic("learner " + b.name + ": input of wrong dimension")
	}
}

// Parameter docs shared by several learners.
var (
	docKernel = ParamDoc{Name: "kernel", Default: "gaussian", Doc: "kernel: gaussian exp(−‖x−y‖²/2σ²), laplacian exp(−‖x−y‖₁/σ), cauchy ∏1/(1+Δ²/σ²), polynomial (xᵀy+coef0)^degree, linear"}
	docSigma  = ParamDoc{Name: "sigma", Default: "1", Doc: "kernel width σ (> 0); papers pick it from the grid 2^-5..2^7", When: "shift-invariant kernel"}
	docDegree = ParamDoc{Name: "degree", Default: "2", Doc: "polynomial degree", When: "kernel=polynomial"}
	docCoef0  = ParamDoc{Name: "coef0", Default: "1", Doc: "polynomial offset c ≥ 0", When: "kernel=polynomial"}
	docSeed   = ParamDoc{Name: "seed", Default: "1", Doc: "random seed (all randomness derives from it)"}
	docBudget = ParamDoc{Name: "budget", Default: "100", Doc: "budget B (the FORKS paper uses 50 for N ≤ 10,000, else 100)"}
	docLoss   = ParamDoc{Name: "loss", Default: "hinge", Doc: "hinge, squared_hinge, logistic (classification) or square (regression)"}
	docEta    = ParamDoc{Name: "eta", Default: "0.2 (classification); 10/√horizon (square loss)", Doc: "gradient step size"}
	docHorz   = ParamDoc{Name: "horizon", Default: "10000", Doc: "expected stream length T; used only for T-dependent defaults (okstream eval sets it to the dataset length)"}
)

// readKernel reads kernel, sigma (shift-invariant kinds) and degree/coef0
// (polynomial). allowed restricts the kinds (nil = all).
func readKernel(p *Params, allowed ...string) kernel.Kernel {
	if len(allowed) == 0 {
		allowed = kernel.Names()
	}
	name := p.Enum("kernel", "gaussian", allowed...)
	kind, err := kernel.ParseKind(name)
	if err != nil {
		return kernel.Kernel{}
	}
	var sigma, coef0 float64
	var degree int
	if kind.ShiftInvariant() {
		sigma = p.Float("sigma", 1, Positive)
	}
	if kind == kernel.Polynomial {
		degree = p.Int("degree", 2, InRange(1, 20))
		coef0 = p.Float("coef0", 1, NonNegative)
	}
	k, err := kernel.New(kind, sigma, degree, coef0)
	if err != nil && p.err == nil {
		p.fail("kernel", "%v", err)
	}
	return k
}

// readEta reads the gradient step: 0.2 for classification (the FORKS
// paper's setting for every first-order method), c/√horizon with c = 10 for
// the square loss (the ALD paper's code; its grid is {1,10,100,1000}/√T).
func readEta(p *Params, loss Loss) float64 { return readEtaHinge(p, loss, 0.2) }

// readEtaHinge is readEta with hingeEta as the default step of the hinge
// loss (the other losses keep readEta's defaults).
func readEtaHinge(p *Params, loss Loss, hingeEta float64) float64 {
	T := p.Int("horizon", 10000, Positive)
	switch loss {
	case Square:
		return p.Float("eta", 10/math.Sqrt(float64(T)), Positive)
	case Hinge:
		return p.Float("eta", hingeEta, Positive)
	}
	return p.Float("eta", 0.2, Positive)
}

// Bare specs (selftune.go): a spec that leaves σ to the stream runs FORKS,
// NOGD and SkeGD with "preset=wide" unless it names a preset. wideHingeEta
// is the hinge loss's step of NOGD's and SkeGD's wide preset: for kernel
// OGD from zero on the hinge, the step only sets the margin in units of
// steps (scores scale with η; the sign trajectory is that of step 1 and
// margin 1/η), and with κ(x, x) = 1 (every shift-invariant kernel of the
// self-tuned coordinates) η = 1 is the margin of one step, the
// passive-aggressive step at a score of 0 (Crammer et al., JMLR 2006, §3).
// The paper's η = 0.2 asks for five steps of margin, which keeps the
// majority class's examples inside the margin and updating (nogd.go,
// "Class imbalance").
const wideHingeEta = 1.0

// readPreset reads "preset" (paper or wide), a key left out of the
// canonical spec (the resolved values are in it); it reports wide.
func readPreset(p *Params) bool { return p.LocalEnum("preset", "paper", "paper", "wide") == "wide" }

// barePresetLearners are the learners whose spec without σ means
// preset=wide (selftune.go, "Bare specs").
var barePresetLearners = []string{"forks", "nogd", "skegd"}

// bareExtras are the keys a bare spec sets beyond preset=wide (explicit
// keys win; eta only for the hinge loss): FORKS carries its ONS over update
// rounds instead of resetting it (forks.go, carryUpdate) and takes Stage-1
// steps of η = 1, the margin argument NOGD's and SkeGD's wide presets
// follow (docs/algorithms/forks-and-baselines.md, "Bare specs"). They are
// not part of preset=wide itself, which the reproductions and auto's FORKS
// members pin.
var bareExtras = map[string]map[string]string{
	"forks": {"carry": "true", "eta": "1"},
}

// dot and axpy are linalg's (one implementation, so a score computed in a
// learner and in a linalg routine is the same floating-point expression).
func dot(a, b []float64) float64 { return linalg.Dot(a, b) }

func axpy(alpha float64, x, y []float64) { linalg.Axpy(alpha, x, y) }
