package learner

// fogd (multi-class) — random Fourier features + the softmax head.
//
// Reference: the feature map of FOGD (Lu, Hoi, Wang, Zhao & Liu, "Large
// Scale Online Kernel Learning", JMLR 17(47), 2016, Algorithm "FOGD"; random
// Fourier features of Rahimi & Recht, NIPS 2007) with the multinomial
// logistic head of softmax.go (Bishop 2006, §4.3.4) in place of the binary
// hinge step: kernel multinomial logistic regression in the span of D
// random frequencies. Notes: docs/algorithms/multiclass.md.
//
// Model: P(k | x) ∝ exp(w_kᵀz(x) + b_k), z(x) = s·[cos(Uᵀx); sin(Uᵀx)] the
// binary FOGD's map (kernel.Fourier, the same frequencies for the same
// kernel, σ, D and seed), computed ONCE per event and shared by the K
// class rows. Shapes: U is d×D, z has 2D entries, the head holds K×(2D+1)
// weights.
//
// Choices and deviations from binary FOGD:
//   - Loss: the log loss of the softmax (the binary learner's hinge has no
//     probability); the step is the head's AdaGrad with one scale per
//     feature shared by the classes (column mode, softmax.go) rather than
//     a fixed η: no horizon is needed, and per event the head costs two
//     passes over the K×2D weights and 2D square roots
//     (BenchmarkFOGDMulti compares it with binary FOGD).
//   - normalize defaults to true (s = 1/√D, ‖z‖ = 1, z(x)ᵀz(y) ≈ κ(x, y)):
//     the head's η is then in units of logits per step (softmax.go).
//   - eta defaults to 1 (measured on letter and mnist, docs/algorithms/
//     multiclass.md); auto's members take a grid around it.
//   - raw=true (not in the paper; auto's members): the head sees
//     [z(x); x], a kernel model and a linear one in one softmax, so that on
//     streams where a linear model leads at the start (mnist's first
//     thousands of events) the member is not worse than either part. The
//     head's per-feature AdaGrad scales adapt to the two kinds of feature.
//   - A spec without sigma is self-tuned (selftune_multi.go): standardised
//     inputs and σ from the stream, as for binary FOGD.
//   - Shared map (auto's members only, newFOGDMultiOn): the member does not
//     draw its own frequencies but uses the map of width 1 that auto draws
//     once, its projections times 1/σ (σ a power of two: the same bits as
//     its own map, kernel.Fourier.MapProjected).
//
// State: the head (K, weights, accumulators) and the counter; the
// frequencies are regenerated from the seed. Per event: O(d·D) for the map
// (O(nnz(x)·D) for sparse x) and O(K·D) for the head; nothing is allocated
// in steady state (a new class grows the head once).

import (
	"fmt"
	"math"

	"okstream/learner/kernel"
)

func init() {
	RegisterMulti(MultiRegistration{
		Name:    "fogd",
		Summary: "Fourier online gradient descent, multi-class: random Fourier features (computed once per event) + softmax head (AdaGrad, one scale per feature)",
		Paper:   "Lu et al., Large Scale Online Kernel Learning, JMLR 2016 (map); Bishop 2006 §4.3.4 (softmax)",
		Params: []ParamDoc{
			{Name: "kernel", Default: "gaussian", Doc: "gaussian, laplacian or cauchy (shift-invariant kernels only)"},
			{Name: "sigma", Default: "from the stream (sigma=auto, scale=standard)", Doc: "kernel width σ > 0"},
			docBudget,
			{Name: "features", Default: "4×budget", Doc: "number D of random frequencies (2D features), as binary FOGD"},
			{Name: "eta", Default: "1", Doc: "AdaGrad step η of the softmax head"},
			{Name: "normalize", Default: "true", Doc: "scale features by 1/√D (‖z‖ = 1) instead of 1"},
			{Name: "raw", Default: "false", Doc: "also give the head the input x itself: features [z(x); x] (kernel plus linear model in one softmax; auto's members use it)"},
			docSeed,
		},
		New: newFOGDMulti,
	})
}

// FOGDMulti is multi-class FOGD. Build it with NewMulti("fogd:...").
type FOGDMulti struct {
	base
	nfreq  int
	budget int
	rff    *kernel.Fourier
	// mult ≠ 0: rff is a map shared with other members, drawn at width
	// σ·mult (a power of two), and this member's projections are rff's
	// times mult (kernel.Fourier.MapProjected: the same bits as a map of
	// its own); proj is the scratch for them (D). 0: rff is its own.
	mult float64
	proj []float64
	lin  bool // the head also sees x (features [z(x); x])
	head *softmaxHead
	z    []float64 // scratch: 2D (+ d with lin)
}

func newFOGDMulti(p *Params, dim int) (Multi, error) { return newFOGDMultiOn(p, dim, nil) }

// newFOGDMultiOn builds multi-class FOGD; with shared non-nil it does not
// draw frequencies but uses shared, which must be the map of the same
// kernel kind, d, D, scale and seed at width 1 (multi-class auto builds
// all its FOGD members on one map; a member drew ~d·D random numbers
// each, 78 % of auto's warm-up time at d = 784). σ must then be a power
// of two, so that the member's projections are shared's times 1/σ
// exactly.
func newFOGDMultiOn(p *Params, dim int, shared *kernel.Fourier) (Multi, error) {
	k := readKernel(p, "gaussian", "laplacian", "cauchy")
	budget := p.Int("budget", 100, Positive)
	nf := p.Int("features", 4*budget, InRange(1, 1<<20))
	eta := p.Float("eta", 1, Positive)
	norm := p.Bool("normalize", true)
	lin := p.Bool("raw", false)
	seed := p.Uint64("seed", 1)
	if err := p.Err(); err != nil {
		return nil, err
	}
	scale := 1.0
	if norm {
		scale = 1 / math.Sqrt(float64(nf))
	}
	var rff *kernel.Fourier
	var mult float64
	var proj []float64
	if shared != nil {
		if fr, _ := math.Frexp(k.Sigma); fr != 0.5 || shared.Frequencies() != nf || shared.Dim() != 2*nf {
			return nil, fmt.Errorf("learner fogd: a shared map needs σ a power of two and D = %d, got σ = %v", shared.Frequencies(), k.Sigma)
		}
		rff, mult, proj = shared, 1/k.Sigma, make([]float64, nf)
	} else {
		var err error
		if rff, err = kernel.NewFourier(k.Kind, k.Sigma, dim, nf, scale, seed); err != nil {
			return nil, err
		}
	}
	n := 2 * nf
	if lin {
		n += dim
	}
	return &FOGDMulti{
		base:   newBase(p, dim, MultiClass),
		nfreq:  nf,
		budget: budget,
		rff:    rff,
		mult:   mult,
		proj:   proj,
		lin:    lin,
		head:   newSoftmaxHeadCols(n, eta),
		z:      make([]float64, n),
	}, nil
}

// Classes returns the number of classes learnt so far.
func (l *FOGDMulti) Classes() int { return l.head.k }

// PredictProba writes the class distribution of x into p (and leaves z(x)
// in l.z).
func (l *FOGDMulti) PredictProba(x, p []float64) []float64 {
	l.checkDim(x)
	if l.mult != 0 {
		return l.predictProjected(x, l.rff.Project(l.proj, x), p)
	}
	l.rff.Map(l.z, x)
	if l.lin {
		copy(l.z[2*l.nfreq:], x)
	}
	return l.head.probs(l.z, p)
}

// LearnClass predicts x, takes the head's step for class c on the same
// z(x), and returns the pre-update distribution.
func (l *FOGDMulti) LearnClass(x []float64, c int, p []float64) []float64 {
	p = l.PredictProba(x, p)
	l.head.learn(l.z, p, c)
	l.updates++
	return p
}

// predictProjected is PredictProba of a member built on a shared map
// (newFOGDMultiOn) with the shared map's projections proj given: auto
// computes them once per event for all its members on one input.
func (l *FOGDMulti) predictProjected(x, proj []float64, p []float64) []float64 {
	l.rff.MapProjected(l.z, proj, l.mult)
	if l.lin {
		copy(l.z[2*l.nfreq:], x)
	}
	return l.head.probs(l.z, p)
}

// learnProjected is LearnClass with the projections given (predictProjected).
func (l *FOGDMulti) learnProjected(x, proj []float64, c int, p []float64) []float64 {
	p = l.predictProjected(x, proj, p)
	l.head.learn(l.z, p, c)
	l.updates++
	return p
}

// MarshalBinary encodes the head and counter (the frequencies are
// regenerated from the seed).
func (l *FOGDMulti) MarshalBinary() ([]byte, error) {
	e := l.encoder(l.head.bytes() + 16)
	l.head.encode(e)
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state of an identically configured learner;
// on error the learner is unchanged.
func (l *FOGDMulti) UnmarshalBinary(data []byte) error {
	d, updates := l.decoder(data)
	k, w, g2 := l.head.decode(d)
	if err := d.Done(); err != nil {
		return err
	}
	l.head.set(k, w, g2)
	l.updates = updates
	return nil
}

// Info reports the budget B (D = 4B by default) and D as the use.
func (l *FOGDMulti) Info() Info {
	bytes := l.head.bytes() + 8*(len(l.z)+len(l.proj))
	if l.mult == 0 {
		bytes += 8 * l.dim * l.nfreq // (a shared map is counted by its owner)
	}
	return l.info(l.budget, l.nfreq, bytes)
}
