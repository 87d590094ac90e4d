package drift

// Rotating hyperplane: G. Hulten, L. Spencer and P. Domingos, "Mining
// time-changing data streams", KDD 2001, §5 (the CVFDT experiments).
//
// d features uniform in [0, 1]; the label says whether Σ wᵢxᵢ ≥ w₀ with
// w₀ = ½ Σ wᵢ, so that about half the examples fall on each side whatever
// the weights. Drift: the weights of the first k features move by t per
// example in a direction σᵢ ∈ {−1, +1}, and each σᵢ reverses with
// probability Reverse after each example; the hyperplane therefore rotates
// smoothly and continuously. Class noise: each label is flipped with
// probability Noise.
//
// The paper changes the weights by d·σ every N examples with reversal
// probability 10 % and 5 % class noise; we follow the per-example form of
// MOA's HyperplaneGenerator (Bifet et al.), whose parameters we take as
// defaults: d = 10 features, k = 2 drifting, t = 0.001 (the magnitude used
// in MOA's published hyperplane benchmarks; MOA's own default is 0, no
// drift), reversal 10 %, noise 5 %. Initial weights wᵢ ~ U[0, 1), σᵢ = +1
// for i < k. The label uses the weights before the example's drift step.
// Labels: MOA's class 1 (Σ wᵢxᵢ ≥ w₀) is y = +1, class 0 is y = −1.
// Deviations: Bernoulli draws use a uniform < p (MOA: an integer
// percentage); weights are not clipped (neither are MOA's).
// Draws per example: x₁..x_d, the noise uniform, then one reversal uniform
// per drifting feature.

import (
	"fmt"
	"math"

	"okstream/learner/state"
)

// HyperplaneConfig configures NewHyperplane.
type HyperplaneConfig struct {
	Seed      uint64
	Dim       int     // d ≥ 1
	DriftDims int     // k in [0, d]
	Mag       float64 // t ≥ 0, weight change per example
	Reverse   float64 // probability that σᵢ reverses after an example
	Noise     float64 // label flip probability
}

// Hyperplane is the rotating hyperplane stream.
type Hyperplane struct {
	base
	cfg   HyperplaneConfig
	spec  string
	w     []float64
	sigma []float64
}

// NewHyperplane returns the stream; it fails on a configuration outside
// the documented ranges.
func NewHyperplane(c HyperplaneConfig) (*Hyperplane, error) {
	if c.Dim < 1 || c.DriftDims < 0 || c.DriftDims > c.Dim || !(c.Mag >= 0 && c.Mag <= 1) ||
		!(c.Reverse >= 0 && c.Reverse <= 1) || !(c.Noise >= 0 && c.Noise <= 1) {
		return nil, fmt.Errorf("%w: hyperplane %+v", errConfig, c)
	}
	g := &Hyperplane{cfg: c, w: make([]float64, c.Dim), sigma: make([]float64, c.Dim)}
	g.spec = fmt.Sprintf("hyperplane,d=%d,k=%d,t=%s,reverse=%s,noise=%s,seed=%d", c.Dim, c.DriftDims, fmtF(c.Mag), fmtF(c.Reverse), fmtF(c.Noise), c.Seed)
	g.src.Seed(c.Seed)
	for i := range g.w {
		g.w[i] = g.src.Float64()
		if i < c.DriftDims {
			g.sigma[i] = 1
		}
	}
	return g, nil
}

// HyperplaneLabel is the noise-free label of x under weights w.
func HyperplaneLabel(w, x []float64) float64 {
	var s, sw float64
	for i, wi := range w {
		s += float64(wi * x[i]) // explicit rounding: no FMA on any platform
		sw += wi
	}
	if s >= float64(0.5*sw) {
		return 1
	}
	return -1
}

// Weights returns the current weights (a view; do not modify).
func (g *Hyperplane) Weights() []float64 { return g.w }

func (g *Hyperplane) Dim() int         { return g.cfg.Dim }
func (g *Hyperplane) Regression() bool { return false }
func (g *Hyperplane) Spec() string     { return g.spec }

// Changes is empty: the drift is continuous.
func (g *Hyperplane) Changes() []int { return nil }

func (g *Hyperplane) Next(x []float64) float64 {
	x = x[:g.cfg.Dim]
	for i := range x {
		x[i] = g.src.Float64()
	}
	y := flip(&g.src, HyperplaneLabel(g.w, x), g.cfg.Noise)
	for i := 0; i < g.cfg.DriftDims; i++ {
		g.w[i] += float64(g.sigma[i] * g.cfg.Mag)
		if g.src.Float64() < g.cfg.Reverse {
			g.sigma[i] = -g.sigma[i]
		}
	}
	g.t++
	return y
}

const hyperplaneName = "drift/hyperplane"

func (g *Hyperplane) MarshalBinary() ([]byte, error) {
	e := state.NewEncoder(64 + 16*g.cfg.Dim)
	g.encode(e, hyperplaneName, g.spec, g.cfg.Dim)
	e.F64s(g.w)
	e.F64s(g.sigma)
	return e.Bytes(), nil
}

func (g *Hyperplane) UnmarshalBinary(b []byte) error {
	d := state.NewDecoder(b)
	hi, lo, t := decodeBase(d, hyperplaneName, g.spec, g.cfg.Dim)
	w := d.F64s(nil)
	sigma := d.F64s(nil)
	if d.Err() == nil && (len(w) != g.cfg.Dim || len(sigma) != g.cfg.Dim) {
		d.Fail("hyperplane weights %d and directions %d, want %d", len(w), len(sigma), g.cfg.Dim)
	}
	for _, v := range w {
		if d.Err() == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			d.Fail("hyperplane weight %v", v)
		}
	}
	for _, s := range sigma {
		if d.Err() == nil && s != 1 && s != -1 && s != 0 {
			d.Fail("hyperplane direction %v", s)
		}
	}
	if err := d.Done(); err != nil {
		return err
	}
	g.src.Restore(hi, lo)
	g.t = t
	copy(g.w, w)
	copy(g.sigma, sigma)
	return nil
}
