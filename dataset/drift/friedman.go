package drift

// Friedman #1 with drift: E. Ikonomovska, J. Gama and S. Džeroski,
// "Learning model trees from evolving data streams", Data Mining and
// Knowledge Discovery 23(1), 2011, §5 (the drift scenarios of the
// Fried data set, after J. H. Friedman, Ann. Statist. 19(1), 1991).
//
// Ten features uniform in [0, 1] (only x1..x5 are relevant) and
//
//	F0: y = 10 sin(π x1 x2) + 20 (x3 − ½)² + 10 x4 + 5 x5 + ε,  ε ~ N(0, 1).
//
// The paper's three scenarios:
//
//   - "gra", global recurring abrupt drift: the relevant features swap
//     roles at P1, F1: y = 10 sin(π x4 x5) + 20 (x2 − ½)² + 10 x1 + 5 x3 + ε,
//     and the original concept F0 returns at P2.
//   - "gsg", global and slow gradual drift: F0, then F1 from P1, then
//     F2: y = 10 sin(π x2 x5) + 20 (x4 − ½)² + 10 x3 + 5 x1 + ε from P2; each
//     change is gradual: during the Width examples from a change point the
//     new concept's examples are introduced among the old one's, example
//     P + j (0 ≤ j < Width) coming from the new concept with probability
//     (j + 1)/(Width + 1), rising linearly; after the window only the new
//     concept remains. Width = 0 makes both changes abrupt.
//
//   - "lea", local expanding abrupt drift: F0 everywhere except in two
//     regions where the function changes, from P1 on, and which expand at
//     P2 and P3 (conditions dropped):
//     R1 = {x2 < 0.3, x3 < 0.3, x4 > 0.7, x5 < 0.3} with
//     y = 10 x1 x2 + 20 (x3 − ½) + 10 x4 + 5 x5 + ε, and
//     R2 = {x2 > 0.7, x3 > 0.7, x4 < 0.3, x5 > 0.7} with
//     y = 10 cos(x1 x2) + 20 (x3 − ½) + exp(x4) + 5 x5² + ε;
//     from P2 the x5 condition is dropped, from P3 the x4 condition too.
//     exp is computed portably (expUnit), cos is rng's.
//
// Deviations and choices: the linear ramp of "gsg" is ours
// (the paper says examples of the new concept are introduced gradually
// over a window; River's FriedmanDrift draws old or new with probability ½
// throughout the window); River's "gra" uses x4·x6 inside the sine, we
// follow the paper's x4·x5. Default change points (n/4, 3n/4) and window
// (n/20) are ours. ε is rng's Box–Muller normal.
// Draws per example: x1..x10, the normal's two uniforms, then (gsg only)
// the mixing uniform.

import (
	"fmt"

	"okstream/learner/rng"
	"okstream/learner/state"
)

// FriedmanConfig configures NewFriedman.
type FriedmanConfig struct {
	Seed   uint64
	Mode   string // "gra", "gsg" or "lea"
	P1, P2 int    // change points, 0 ≤ P1 < P2
	P3     int    // lea's third change point, P3 > P2 (lea only)
	Width  int    // gsg transition length (≥ 0, ≤ P2 − P1)
}

// Friedman is the drifting Friedman #1 stream.
type Friedman struct {
	base
	cfg  FriedmanConfig
	spec string
}

// NewFriedman returns the stream; it fails on an unknown mode, change
// points out of order, or a gsg window longer than P2 − P1.
func NewFriedman(c FriedmanConfig) (*Friedman, error) {
	if (c.Mode != "gra" && c.Mode != "gsg" && c.Mode != "lea") || c.P1 < 0 || c.P2 <= c.P1 || c.Width < 0 ||
		(c.Mode == "gsg" && c.Width > c.P2-c.P1) || (c.Mode == "lea" && c.P3 <= c.P2) {
		return nil, fmt.Errorf("%w: friedman %+v (mode gra, gsg or lea, 0 ≤ p1 < p2 (< p3 for lea), 0 ≤ w ≤ p2 − p1)", errConfig, c)
	}
	g := &Friedman{cfg: c}
	if c.Mode != "lea" {
		g.cfg.P3 = 0
	}
	switch c.Mode {
	case "lea":
		g.cfg.Width = 0
		g.spec = fmt.Sprintf("friedman,mode=lea,p1=%d,p2=%d,p3=%d,seed=%d", c.P1, c.P2, c.P3, c.Seed)
	case "gra":
		g.cfg.Width = 0
		g.spec = fmt.Sprintf("friedman,mode=gra,p1=%d,p2=%d,seed=%d", c.P1, c.P2, c.Seed)
	default:
		g.spec = fmt.Sprintf("friedman,mode=gsg,p1=%d,p2=%d,w=%d,seed=%d", c.P1, c.P2, c.Width, c.Seed)
	}
	g.src.Seed(c.Seed)
	return g, nil
}

// FriedmanConcept is the noise-free target of concept c (0: F0, 1: F1,
// 2: F2 of the file comment) at x (x[0] is x1).
func FriedmanConcept(c int, x []float64) float64 {
	switch c {
	case 1:
		return friedman(x[3], x[4], x[1], x[0], x[2])
	case 2:
		return friedman(x[1], x[4], x[3], x[2], x[0])
	}
	return friedman(x[0], x[1], x[2], x[3], x[4])
}

// friedman is 10 sin(π a b) + 20(c − ½)² + 10 d + 5 e with every product
// rounded explicitly (no FMA on any platform), left to right.
func friedman(a, b, c, d, e float64) float64 {
	s := float64(10 * rng.Sin(float64(float64(rng.Pi*a)*b)))
	q := float64(20 * float64((c-0.5)*(c-0.5)))
	return ((s + q) + float64(10*d)) + float64(5*e)
}

// LEARegion is the region of x under lea at example t: 0 (F0), 1 (R1) or
// 2 (R2).
func (g *Friedman) LEARegion(t int, x []float64) int {
	if g.cfg.Mode != "lea" || t < g.cfg.P1 {
		return 0
	}
	x5, x4 := t < g.cfg.P2, t < g.cfg.P3 // conditions still in force
	switch {
	case x[1] < 0.3 && x[2] < 0.3 && (!x4 || x[3] > 0.7) && (!x5 || x[4] < 0.3):
		return 1
	case x[1] > 0.7 && x[2] > 0.7 && (!x4 || x[3] < 0.3) && (!x5 || x[4] > 0.7):
		return 2
	}
	return 0
}

// FriedmanLEA is the noise-free target of lea's region r (1: R1, 2: R2;
// else F0) at x.
func FriedmanLEA(r int, x []float64) float64 {
	switch r {
	case 1:
		return ((float64(float64(10*x[0])*x[1]) + float64(20*(x[2]-0.5))) + float64(10*x[3])) + float64(5*x[4])
	case 2:
		return ((float64(10*rng.Cos(float64(x[0]*x[1]))) + float64(20*(x[2]-0.5))) + expUnit(x[3])) + float64(float64(5*x[4])*x[4])
	}
	return FriedmanConcept(0, x)
}

// expUnit is exp(x) for x in [0, 1]: the Taylor series to the x¹⁸/18! term
// (truncation below 10⁻¹⁶ relative), by Horner's rule with every product
// rounded explicitly, so the same bits on every platform (math.Exp has
// assembly versions on some).
func expUnit(x float64) float64 {
	r := 1.0
	for k := 18; k >= 1; k-- {
		r = 1 + float64(float64(x/float64(k))*r)
	}
	return r
}

// ConceptAt is the concept of example t when the change is abrupt (gra, or
// gsg outside its windows).
func (g *Friedman) ConceptAt(t int) int {
	switch {
	case t < g.cfg.P1:
		return 0
	case t < g.cfg.P2:
		return 1
	case g.cfg.Mode == "gra":
		return 0
	}
	return 2
}

func (g *Friedman) Dim() int         { return 10 }
func (g *Friedman) Regression() bool { return true }
func (g *Friedman) Spec() string     { return g.spec }

func (g *Friedman) Changes() []int {
	if g.cfg.Mode == "lea" {
		return []int{g.cfg.P1, g.cfg.P2, g.cfg.P3}
	}
	return []int{g.cfg.P1, g.cfg.P2}
}

func (g *Friedman) Next(x []float64) float64 {
	x = x[:10]
	for i := range x {
		x[i] = g.src.Float64()
	}
	eps := g.src.Normal()
	if g.cfg.Mode == "lea" {
		y := FriedmanLEA(g.LEARegion(g.t, x), x) + eps
		g.t++
		return y
	}
	c := g.ConceptAt(g.t)
	if g.cfg.Mode == "gsg" {
		u := g.src.Float64()
		p := g.cfg.P1
		if g.t >= g.cfg.P2 {
			p = g.cfg.P2
		}
		if j := g.t - p; j >= 0 && j < g.cfg.Width && u*float64(g.cfg.Width+1) >= float64(j+1) {
			c-- // still the old concept
		}
	}
	g.t++
	return FriedmanConcept(c, x) + eps // a sum: no fusion
}

const friedmanName = "drift/friedman"

func (g *Friedman) MarshalBinary() ([]byte, error) {
	e := state.NewEncoder(64)
	g.encode(e, friedmanName, g.spec, 10)
	return e.Bytes(), nil
}

func (g *Friedman) UnmarshalBinary(b []byte) error {
	d := state.NewDecoder(b)
	hi, lo, t := decodeBase(d, friedmanName, g.spec, 10)
	if err := d.Done(); err != nil {
		return err
	}
	g.src.Restore(hi, lo)
	g.t = t
	return nil
}
