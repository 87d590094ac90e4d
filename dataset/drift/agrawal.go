package drift

// Agrawal's loan functions: R. Agrawal, T. Imielinski and A. Swami,
// "Database mining: a performance perspective", IEEE TKDE 5(6), 1993, §4
// (the synthetic classification benchmark: nine attributes, ten functions).
//
// Attributes, in feature order (x[0..8]), with their distributions:
//
//	salary      uniform in [20 000, 150 000]
//	commission  0 if salary ≥ 75 000, else uniform in [10 000, 75 000]
//	age         uniform integer in 20..80
//	elevel      uniform integer in 0..4 (education level, categorical)
//	car         uniform integer in 1..20 (make of car, categorical)
//	zipcode     uniform integer in 0..8 (nine zipcodes, categorical)
//	hvalue      uniform in [0.5·k·100 000, 1.5·k·100 000], k = 9 − zipcode
//	hyears      uniform integer in 1..30
//	loan        uniform in [0, 500 000]
//
// Categorical attributes are given as their codes (numbers), as MOA's
// nominal indices are, except car, which keeps the paper's 1..20 (MOA's
// index is 0..19); a learner sees them as ordinal numbers (no one-hot).
//
// The ten functions (AgrawalFunction) assign group A (class 0, y = −1) or
// group B (class 1, y = +1); their thresholds follow the paper's Figure and
// MOA's AgrawalGenerator (Kirkby), which we checked them against. The
// label is computed on the attributes before perturbation; then, with
// Perturb = p > 0, each numeric attribute v with range [lo, hi] (salary,
// commission when non-zero, age, hvalue, hyears, loan) moves by
// (hi − lo)·p·U[−1, 1] and is clipped to [lo, hi] (age and hyears rounded),
// the paper's perturbation factor; MOA's default p = 0.05 is ours.
// Deviation: MOA clips a perturbed hvalue to [0, 135 000], which flattens
// most house values; we clip to [0, 1 350 000] (the attribute's range) and
// perturb with range k·100 000 as MOA does.
//
// Drift (MOA's ConceptDriftStream, Bifet et al.): with To ≠ 0 the stream
// switches from function Function to function To. Width = 0 is abrupt:
// examples t ≥ Position use To. Width w > 0 is gradual: example t uses To
// with probability 1/(1 + exp(−4(t − Position)/w)) (so ½ at Position, and
// the transition takes about w examples). MOA mixes two independent
// generators; because the attributes are i.i.d. and do not depend on the
// function, drawing one attribute vector and choosing the function is the
// same distribution. MOA's balanceClasses option is not offered.
// Draws per example: salary, commission (when salary < 75 000), age,
// elevel, car, zipcode, hvalue, hyears, loan; the mixing uniform (gradual
// only); then, with Perturb > 0, one uniform per perturbed attribute.

import (
	"fmt"
	"math"

	"okstream/learner/state"
)

// AgrawalConfig configures NewAgrawal.
type AgrawalConfig struct {
	Seed     uint64
	Function int     // 1..10
	To       int     // 0 (no drift) or 1..10
	Position int     // first example of To (abrupt), or the centre (gradual)
	Width    int     // 0: abrupt; > 0: sigmoid transition width
	Perturb  float64 // perturbation fraction in [0, 1]
}

// Agrawal is the Agrawal stream with an optional switch of function.
type Agrawal struct {
	base
	cfg  AgrawalConfig
	spec string
}

// NewAgrawal returns the stream; it fails on a function outside 1..10, To
// outside 0..10, a negative Position or Width, or Perturb outside [0, 1].
func NewAgrawal(c AgrawalConfig) (*Agrawal, error) {
	if c.Function < 1 || c.Function > 10 || c.To < 0 || c.To > 10 || c.Position < 0 || c.Width < 0 || !(c.Perturb >= 0 && c.Perturb <= 1) {
		return nil, fmt.Errorf("%w: agrawal %+v", errConfig, c)
	}
	g := &Agrawal{cfg: c}
	g.spec = fmt.Sprintf("agrawal,f=%d,perturb=%s,seed=%d", c.Function, fmtF(c.Perturb), c.Seed)
	if c.To != 0 {
		g.spec = fmt.Sprintf("agrawal,f=%d,to=%d,p=%d,w=%d,perturb=%s,seed=%d", c.Function, c.To, c.Position, c.Width, fmtF(c.Perturb), c.Seed)
	}
	g.src.Seed(c.Seed)
	return g, nil
}

// Feature indices of the Agrawal attributes.
const (
	AgSalary = iota
	AgCommission
	AgAge
	AgElevel
	AgCar
	AgZipcode
	AgHvalue
	AgHyears
	AgLoan
)

func within(v, lo, hi float64) bool { return lo <= v && v <= hi }

// byAge picks the band of an age: < 40, 40..59, ≥ 60.
func byAge(age float64, young, middle, old bool) bool {
	switch {
	case age < 40:
		return young
	case age < 60:
		return middle
	}
	return old
}

// AgrawalFunction returns the label (−1 for group A, +1 for group B) of
// the attribute vector x (feature order of the file comment) under
// function f (1..10; other values give +1).
func AgrawalFunction(f int, x []float64) float64 {
	sal, com, age, el, loan := x[AgSalary], x[AgCommission], x[AgAge], x[AgElevel], x[AgLoan]
	var a bool // group A
	switch f {
	case 1:
		a = age < 40 || age >= 60
	case 2:
		a = byAge(age, within(sal, 50000, 100000), within(sal, 75000, 125000), within(sal, 25000, 75000))
	case 3:
		a = byAge(age, el <= 1, el >= 1 && el <= 3, el >= 2)
	case 4:
		switch {
		case age < 40:
			a = within(sal, 50000, 100000)
			if el <= 1 {
				a = within(sal, 25000, 75000)
			}
		case age < 60:
			a = within(sal, 75000, 125000)
			if el >= 1 && el <= 3 {
				a = within(sal, 50000, 100000)
			}
		default:
			a = within(sal, 25000, 75000)
			if el >= 2 {
				a = within(sal, 50000, 100000)
			}
		}
	case 5:
		switch {
		case age < 40:
			a = within(loan, 200000, 400000)
			if within(sal, 50000, 100000) {
				a = within(loan, 100000, 300000)
			}
		case age < 60:
			a = within(loan, 300000, 500000)
			if within(sal, 75000, 125000) {
				a = within(loan, 200000, 400000)
			}
		default:
			a = within(loan, 100000, 300000)
			if within(sal, 25000, 75000) {
				a = within(loan, 300000, 500000)
			}
		}
	case 6:
		tot := sal + com
		a = byAge(age, within(tot, 50000, 100000), within(tot, 75000, 125000), within(tot, 25000, 75000))
	case 7:
		a = 2*(sal+com)/3-loan/5-20000 > 0 // divisions and sums only: never fused
	case 8:
		a = 2*(sal+com)/3-float64(5000*el)-20000 > 0
	case 9:
		a = 2*(sal+com)/3-float64(5000*el)-loan/5-10000 > 0
	case 10:
		equity := 0.0
		if x[AgHyears] >= 20 {
			equity = x[AgHvalue] * (x[AgHyears] - 20) / 10
		}
		a = 2*(sal+com)/3-float64(5000*el)+equity/5-10000 > 0
	}
	if a {
		return -1
	}
	return 1
}

// FunctionAt returns the function example t uses for an abrupt switch
// (for a gradual one the choice is random; see the file comment).
func (g *Agrawal) FunctionAt(t int) int {
	if g.cfg.To != 0 && t >= g.cfg.Position {
		return g.cfg.To
	}
	return g.cfg.Function
}

func (g *Agrawal) Dim() int         { return 9 }
func (g *Agrawal) Regression() bool { return false }
func (g *Agrawal) Spec() string     { return g.spec }

func (g *Agrawal) Changes() []int {
	if g.cfg.To == 0 {
		return nil
	}
	return []int{g.cfg.Position}
}

func (g *Agrawal) perturb(v, rangeV, lo, hi float64) float64 {
	v += float64(float64(rangeV*g.cfg.Perturb) * (float64(2*g.src.Float64()) - 1))
	return min(max(v, lo), hi)
}

func (g *Agrawal) Next(x []float64) float64 {
	s := &g.src
	sal := 20000 + float64(130000*s.Float64())
	com := 0.0
	if sal < 75000 {
		com = 10000 + float64(65000*s.Float64())
	}
	x[AgSalary], x[AgCommission] = sal, com
	x[AgAge] = float64(20 + s.IntN(61))
	x[AgElevel] = float64(s.IntN(5))
	x[AgCar] = float64(1 + s.IntN(20))
	zip := s.IntN(9)
	x[AgZipcode] = float64(zip)
	k := float64(9 - zip)
	x[AgHvalue] = float64(k*100000) * (0.5 + s.Float64())
	x[AgHyears] = float64(1 + s.IntN(30))
	x[AgLoan] = float64(500000 * s.Float64())
	f := g.cfg.Function
	if g.cfg.To != 0 {
		if g.cfg.Width == 0 {
			f = g.FunctionAt(g.t)
		} else if mixNew(s, g.t, g.cfg.Position, g.cfg.Width) {
			f = g.cfg.To
		}
	}
	y := AgrawalFunction(f, x[:9])
	if g.cfg.Perturb > 0 {
		x[AgSalary] = g.perturb(sal, 130000, 20000, 150000)
		if com > 0 {
			x[AgCommission] = g.perturb(com, 65000, 10000, 75000)
		}
		x[AgAge] = math.Round(g.perturb(x[AgAge], 60, 20, 80))
		x[AgHvalue] = g.perturb(x[AgHvalue], k*100000, 0, 1350000)
		x[AgHyears] = math.Round(g.perturb(x[AgHyears], 29, 1, 30))
		x[AgLoan] = g.perturb(x[AgLoan], 500000, 0, 500000)
	}
	g.t++
	return y
}

const agrawalName = "drift/agrawal"

func (g *Agrawal) MarshalBinary() ([]byte, error) {
	e := state.NewEncoder(64)
	g.encode(e, agrawalName, g.spec, 9)
	return e.Bytes(), nil
}

func (g *Agrawal) UnmarshalBinary(b []byte) error {
	d := state.NewDecoder(b)
	hi, lo, t := decodeBase(d, agrawalName, g.spec, 9)
	if err := d.Done(); err != nil {
		return err
	}
	g.src.Restore(hi, lo)
	g.t = t
	return nil
}
