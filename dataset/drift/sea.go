package drift

// SEA concepts: W. N. Street and Y. Kim, "A streaming ensemble algorithm
// (SEA) for large-scale classification", KDD 2001, §4.1 (synthetic data).
//
// Three features uniform in [0, 10] (only the first two are relevant); the
// label says whether f1 + f2 ≤ θ. The concept is one of four thresholds
// θ = 8, 9, 7, 9.5, used in that order for consecutive blocks of equal
// length (the paper: 60,000 points, 4 blocks of 15,000; here Block, default
// n/4 of the requested length), so the drift is abrupt, at Block, 2·Block
// and 3·Block. After the fourth block the cycle starts again (θ = 8), as a
// fifth concept would be undefined. Class noise: each label is flipped with
// probability Noise (the paper: 10 %).
//
// Labels: the class index of MOA's SEAGenerator (0 when f1 + f2 ≤ θ, else
// 1) mapped to y = 2c − 1, so y = +1 iff f1 + f2 > θ (before noise).
// Deviations: features are drawn in [0, 10) (the source's Float64 never
// returns 1); noise is a Bernoulli(Noise) flip per example (MOA's
// noisePercentage draws an integer percentage; the same distribution for
// integer percentages). Draws per example: f1, f2, f3, then the noise
// uniform.

import (
	"fmt"

	"okstream/learner/state"
)

// SEAThetas are the paper's four thresholds, in order.
var SEAThetas = [4]float64{8, 9, 7, 9.5}

// SEAConfig configures NewSEA.
type SEAConfig struct {
	Seed  uint64
	Block int     // examples per concept (≥ 1)
	Noise float64 // label flip probability, in [0, 1]
}

// SEA is the SEA concepts stream.
type SEA struct {
	base
	cfg  SEAConfig
	spec string
}

// NewSEA returns the stream; it fails on Block < 1 or Noise outside [0, 1].
func NewSEA(c SEAConfig) (*SEA, error) {
	if c.Block < 1 || !(c.Noise >= 0 && c.Noise <= 1) {
		return nil, fmt.Errorf("%w: sea block %d, noise %v", errConfig, c.Block, c.Noise)
	}
	g := &SEA{cfg: c, spec: fmt.Sprintf("sea,block=%d,noise=%s,seed=%d", c.Block, fmtF(c.Noise), c.Seed)}
	g.src.Seed(c.Seed)
	return g, nil
}

// SEALabel is the noise-free label of (f1, f2) under threshold theta.
func SEALabel(f1, f2, theta float64) float64 {
	if f1+f2 <= theta {
		return -1
	}
	return 1
}

// Theta is the threshold of example t.
func (g *SEA) Theta(t int) float64 { return SEAThetas[(t/g.cfg.Block)%4] }

func (g *SEA) Dim() int         { return 3 }
func (g *SEA) Regression() bool { return false }
func (g *SEA) Spec() string     { return g.spec }

func (g *SEA) Changes() []int {
	return []int{g.cfg.Block, 2 * g.cfg.Block, 3 * g.cfg.Block}
}

func (g *SEA) Next(x []float64) float64 {
	x[0] = 10 * g.src.Float64()
	x[1] = 10 * g.src.Float64()
	x[2] = 10 * g.src.Float64()
	y := flip(&g.src, SEALabel(x[0], x[1], g.Theta(g.t)), g.cfg.Noise)
	g.t++
	return y
}

const seaName = "drift/sea"

func (g *SEA) MarshalBinary() ([]byte, error) {
	e := state.NewEncoder(64)
	g.encode(e, seaName, g.spec, 3)
	return e.Bytes(), nil
}

func (g *SEA) UnmarshalBinary(b []byte) error {
	d := state.NewDecoder(b)
	hi, lo, t := decodeBase(d, seaName, g.spec, 3)
	if err := d.Done(); err != nil {
		return err
	}
	g.src.Restore(hi, lo)
	g.t = t
	return nil
}
