package kuairec

import (
	"math"

	"okstream/learner/rng"
)

// Portable arithmetic for the generator.
//
// A seed must give the same files on every machine. Go may fuse x*y+z into
// one FMA instruction on arm64, ppc64le, s390x and riscv64 (not on amd64),
// and some math functions have per-architecture assembly, so the generator
// uses only: the rng package's draws and its portable Log and Sincos,
// math.Sqrt (correctly rounded everywhere), the functions below, and
// products wrapped in an explicit float64 conversion wherever a sum
// follows (the Go specification says the conversion prevents fusion).

// pexp returns e^x: the classic fdlibm algorithm (argument reduction by
// k·ln2 split in two parts, a degree-5 minimax polynomial for the
// remainder), with every product rounded explicitly.
func pexp(x float64) float64 {
	const (
		ln2Hi     = 6.93147180369123816490e-01
		ln2Lo     = 1.90821492927058770002e-10
		log2e     = 1.44269504088896338700e+00
		overflow  = 7.09782712893383973096e+02
		underflow = -7.45133219101941108420e+02
		p1        = 1.66666666666666657415e-01
		p2        = -2.77777777770155933842e-03
		p3        = 6.61375632143793436117e-05
		p4        = -1.65339022054652515390e-06
		p5        = 4.13813679705723846039e-08
	)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case math.IsInf(x, -1):
		return 0
	case x > overflow:
		return math.Inf(1)
	case x < underflow:
		return 0
	case x > -1.0/(1<<28) && x < 1.0/(1<<28):
		return 1 + x
	}
	var k int
	if x < 0 {
		k = int(float64(log2e*x) - 0.5)
	} else {
		k = int(float64(log2e*x) + 0.5)
	}
	hi := x - float64(float64(k)*ln2Hi)
	lo := float64(float64(k) * ln2Lo)
	r := hi - lo
	t := float64(r * r)
	poly := p4 + float64(t*p5)
	poly = p3 + float64(t*poly)
	poly = p2 + float64(t*poly)
	poly = p1 + float64(t*poly)
	c := r - float64(t*poly)
	y := 1 - ((lo - float64(r*c)/(2-c)) - hi)
	return math.Ldexp(y, k)
}

// plog is rng.Log (portable).
func plog(x float64) float64 { return rng.Log(x) }

// phi is the standard normal CDF Φ(x), by Zelen & Severo's approximation
// (Abramowitz & Stegun 26.2.17, absolute error < 7.5e-8).
func phi(x float64) float64 {
	const (
		p  = 0.2316419
		b1 = 0.319381530
		b2 = -0.356563782
		b3 = 1.781477937
		b4 = -1.821255978
		b5 = 1.330274429
	)
	ax := math.Abs(x)
	if ax > 12 {
		if x > 0 {
			return 1
		}
		return 0
	}
	t := 1 / (1 + float64(p*ax))
	poly := b4 + float64(t*b5)
	poly = b3 + float64(t*poly)
	poly = b2 + float64(t*poly)
	poly = b1 + float64(t*poly)
	poly = float64(t * poly)
	dens := float64(pexp(float64(-0.5*float64(ax*ax))) * 0.3989422804014327)
	q := float64(dens * poly) // upper tail
	if x >= 0 {
		return 1 - q
	}
	return q
}

// logistic returns 1/(1+e^−x).
func logistic(x float64) float64 { return 1 / (1 + pexp(-x)) }

// gauss returns a normal variate with mean m and sd s.
func gauss(r *rng.Source, m, s float64) float64 { return m + float64(s*r.Normal()) }

// lognormal returns e^N(ln median, s²).
func lognormal(r *rng.Source, median, s float64) float64 {
	return float64(median * pexp(float64(s*r.Normal())))
}

// gamma draws a Gamma(shape, 1) variate (Marsaglia & Tsang, 2000; shape < 1
// by the boost Gamma(shape+1)·U^(1/shape)).
func gamma(r *rng.Source, shape float64) float64 {
	if shape < 1 {
		g := gamma(r, shape+1)
		return float64(g * pexp(plog(r.OpenFloat64())/shape))
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(float64(9*d))
	for {
		x := r.Normal()
		v := 1 + float64(c*x)
		if v <= 0 {
			continue
		}
		v = float64(float64(v*v) * v)
		u := r.OpenFloat64()
		x2 := float64(x * x)
		if u < 1-float64(0.0331*float64(x2*x2)) {
			return float64(d * v)
		}
		if plog(u) < float64(0.5*x2)+float64(d*(1-v+plog(v))) {
			return float64(d * v)
		}
	}
}

// poisson draws a Poisson(lambda) variate: by multiplication of uniforms
// for lambda ≤ 30, else by a rounded normal approximation (the generator
// only needs large means approximately).
func poisson(r *rng.Source, lambda float64) int {
	switch {
	case lambda <= 0:
		return 0
	case lambda > 30:
		v := math.Round(gauss(r, lambda, math.Sqrt(lambda)))
		return int(math.Max(v, 0))
	}
	l := pexp(-lambda)
	k := 0
	p := r.Float64()
	for p > l {
		k++
		p = float64(p * r.Float64())
	}
	return k
}

// categorical draws an index with probability proportional to w (cum is
// the running sum of w, cum[len-1] the total).
func categorical(r *rng.Source, cum []float64) int {
	u := float64(r.Float64() * cum[len(cum)-1])
	lo, hi := 0, len(cum)-1
	for lo < hi {
		m := (lo + hi) / 2
		if cum[m] > u {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// cumsum returns the running sums of w.
func cumsum(w []float64) []float64 {
	c := make([]float64, len(w))
	s := 0.0
	for i, x := range w {
		s += x
		c[i] = s
	}
	return c
}

// stochRound rounds x ≥ 0 up with probability frac(x), so that counts
// keep their mean.
func stochRound(r *rng.Source, x float64) int64 {
	if x <= 0 || math.IsNaN(x) {
		return 0
	}
	f := math.Floor(x)
	if r.Float64() < x-f {
		f++
	}
	return int64(f)
}
