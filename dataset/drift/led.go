package drift

// LED display with drift: L. Breiman, J. H. Friedman, R. A. Olshen and
// C. J. Stone, Classification and Regression Trees, Wadsworth 1984, §2.6.1
// (the digit problem), in the form of MOA's LEDGenerator and
// LEDGeneratorDrift (Bifet, Holmes, Kirkby & Pfahringer, "MOA: Massive
// Online Analysis", JMLR 11, 2010).
//
// A digit c ∈ {0, …, 9}, uniform, lights the seven segments of a seven-
// segment display (LEDSegments: top, upper left, upper right, middle,
// lower left, lower right, bottom); each segment is inverted with
// probability Noise (the book and MOA: 10 %), and 17 irrelevant binary
// attributes, each 1 with probability 1/2, follow: 24 attributes in {0, 1}.
// The label is the class index c (a multi-class stream: labels 0..9, not
// ±1). The Bayes error at 10 % noise is about 26 % (Breiman et al.: the
// Bayes rule's accuracy is 0.74).
//
// Drift (LEDGeneratorDrift): from event Position on, attribute positions
// are swapped: Swaps times, a relevant position a ∈ {0..6} and an
// irrelevant one b ∈ {7..23}, drawn uniformly, are exchanged in a
// permutation π of the 24 positions (starting from the identity), and the
// example written is x_j = v_π(j), v the values above. A swap moves a
// segment to a position that was noise and noise onto a segment's
// position, so a model of the old concept loses that segment. MOA draws
// the swaps with the instance random generator at construction; here they
// are drawn from a generator of their own seeded with Seed (so the
// permutation does not depend on Position), before any example: the first
// Swaps pairs of draws (a = ⌊7u⌋, b = 7 + ⌊17u'⌋). MOA's
// numberAttributesDrift default is 1; the default here (Parse: k=7) swaps
// up to seven, a large abrupt change (pairs may repeat a position, as in
// MOA). A Position beyond the stream's length means no drift. Deviation: noise is a Bernoulli(Noise) flip per segment (MOA
// draws an integer percentage; the same distribution for integer
// percentages). Draws per example: the class (⌊10u⌋), the seven noise
// uniforms, the 17 irrelevant uniforms.

import (
	"fmt"

	"okstream/learner/rng"
	"okstream/learner/state"
)

// LEDSegments are the seven segments lit by each digit (Breiman et al.
// 1984; MOA's LEDGenerator table).
var LEDSegments = [10][7]float64{
	{1, 1, 1, 0, 1, 1, 1},
	{0, 0, 1, 0, 0, 1, 0},
	{1, 0, 1, 1, 1, 0, 1},
	{1, 0, 1, 1, 0, 1, 1},
	{0, 1, 1, 1, 0, 1, 0},
	{1, 1, 0, 1, 0, 1, 1},
	{1, 1, 0, 1, 1, 1, 1},
	{1, 0, 1, 0, 0, 1, 0},
	{1, 1, 1, 1, 1, 1, 1},
	{1, 1, 1, 1, 0, 1, 1},
}

// LEDDim is the number of attributes (7 segments + 17 irrelevant).
const LEDDim = 24

// LEDClasses is the number of classes (digits).
const LEDClasses = 10

// LEDConfig configures NewLED.
type LEDConfig struct {
	Seed     uint64
	Noise    float64 // segment inversion probability, in [0, 1]
	Position int     // first event of the drifted concept (≥ 0)
	Swaps    int     // relevant/irrelevant position swaps at the drift (0..24)
}

// LED is the LED display stream with an abrupt drift.
type LED struct {
	base
	cfg  LEDConfig
	spec string
	perm [LEDDim]int // π after the drift
	v    [LEDDim]float64
}

// NewLED returns the stream; it fails on Noise outside [0, 1], Position < 0
// or Swaps outside [0, 24].
func NewLED(c LEDConfig) (*LED, error) {
	if !(c.Noise >= 0 && c.Noise <= 1) || c.Position < 0 || c.Swaps < 0 || c.Swaps > LEDDim {
		return nil, fmt.Errorf("%w: led noise %v, position %d, swaps %d", errConfig, c.Noise, c.Position, c.Swaps)
	}
	g := &LED{cfg: c, spec: fmt.Sprintf("led,k=%d,noise=%s,p=%d,seed=%d", c.Swaps, fmtF(c.Noise), c.Position, c.Seed)}
	g.src.Seed(c.Seed)
	g.perm = LEDPermutation(c.Seed, c.Swaps)
	return g, nil
}

// LEDPermutation is the drifted concept's permutation π for seed and the
// number of swaps (see the file comment).
func LEDPermutation(seed uint64, swaps int) [LEDDim]int {
	var p [LEDDim]int
	for i := range p {
		p[i] = i
	}
	var r rng.Source
	r.Seed(seed ^ 0x4c45442d44524946) // "LED-DRIF": a stream of its own
	for range swaps {
		a := int(7 * r.Float64())
		b := 7 + int(17*r.Float64())
		p[a], p[b] = p[b], p[a]
	}
	return p
}

// Permutation returns π (the identity's positions before Position).
func (g *LED) Permutation() [LEDDim]int { return g.perm }

func (g *LED) Dim() int         { return LEDDim }
func (g *LED) Regression() bool { return false }
func (g *LED) Spec() string     { return g.spec }

// Classes is the number of classes (labels 0..9).
func (g *LED) Classes() int { return LEDClasses }

func (g *LED) Changes() []int { return []int{g.cfg.Position} }

// Next writes the next example and returns its class index (0..9) as a
// float64.
func (g *LED) Next(x []float64) float64 {
	c := min(int(10*g.src.Float64()), 9)
	seg := &LEDSegments[c]
	for i := range 7 {
		v := seg[i]
		if g.src.Float64() < g.cfg.Noise {
			v = 1 - v
		}
		g.v[i] = v
	}
	for i := 7; i < LEDDim; i++ {
		g.v[i] = 0
		if g.src.Float64() < 0.5 {
			g.v[i] = 1
		}
	}
	if g.t >= g.cfg.Position {
		for j := range LEDDim {
			x[j] = g.v[g.perm[j]]
		}
	} else {
		copy(x[:LEDDim], g.v[:])
	}
	g.t++
	return float64(c)
}

const ledName = "drift/led"

func (g *LED) MarshalBinary() ([]byte, error) {
	e := state.NewEncoder(64)
	g.encode(e, ledName, g.spec, LEDDim)
	return e.Bytes(), nil
}

func (g *LED) UnmarshalBinary(b []byte) error {
	d := state.NewDecoder(b)
	hi, lo, t := decodeBase(d, ledName, g.spec, LEDDim)
	if err := d.Done(); err != nil {
		return err
	}
	g.src.Restore(hi, lo)
	g.t = t
	return nil
}
