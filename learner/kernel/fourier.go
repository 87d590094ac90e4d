package kernel

import (
	"fmt"

	"okstream/learner/rng"
)

// Fourier is a random Fourier feature map (Rahimi & Recht 2007) of a
// shift-invariant kernel: z(x) = s·[cos(u_1ᵀx) … cos(u_Dᵀx), sin(u_1ᵀx) …
// sin(u_Dᵀx)] with D frequencies u_j drawn from the kernel's spectral
// density, so that z(x)ᵀz(y) ≈ κ(x, y) when s = 1/√D. Some papers (the
// LSOKL toolbox behind the FORKS paper's baselines) use s = 1; the scale is
// the caller's choice.
//
// The frequencies are a pure function of (kind, σ, d, D, seed): a learner
// does not need to store them in its state, it regenerates them. They are
// drawn frequency by frequency, input coordinate by coordinate, with the
// portable samplers of package rng.
//
// Evaluation is portable too: u_jᵀx is summed in coordinate order with every
// product rounded explicitly, cos and sin come from rng.FastSincos, and the
// products with the scale and (MapDot) the weights are rounded explicitly,
// so z(x) and wᵀz(x) have the same bits on every platform. (On amd64 the
// projection's multiply-adds and rng.FastSincosSlice run in assembly, four
// or two lanes at a time, with the same operations in the same order and
// no fused multiply-add: the same bits, TestFourierAsmBits.)
type Fourier struct {
	d, nf int
	scale float64
	w     []float64 // d×D: row i holds coordinate i of every frequency
	nz    []int     // scratch: indices of the non-zero input coordinates
}

// NewFourier draws D frequencies for d-dimensional inputs. kind must be
// Gaussian (u ~ N(0, σ⁻²I)), Laplacian (u_i ~ Cauchy(0, 1/σ)) or Cauchy
// (u_i ~ Laplace(0, 1/σ)).
func NewFourier(kind Kind, sigma float64, d, D int, scale float64, seed uint64) (*Fourier, error) {
	if d <= 0 || D <= 0 {
		return nil, fmt.Errorf("kernel: Fourier features need d > 0 and D > 0, got d=%d D=%d", d, D)
	}
	if !(sigma > 0) {
		return nil, fmt.Errorf("kernel: Fourier features need sigma > 0, got %v", sigma)
	}
	src := rng.New(seed)
	f := &Fourier{d: d, nf: D, scale: scale, w: make([]float64, d*D), nz: make([]int, 0, d)}
	for j := 0; j < D; j++ {
		for i := 0; i < d; i++ {
			v, err := SampleFrequency(kind, src)
			if err != nil {
				return nil, err
			}
			f.w[i*D+j] = v / sigma
		}
	}
	return f, nil
}

// SampleFrequency draws one coordinate of a unit-width frequency vector from
// the spectral density of a shift-invariant kernel: N(0,1) for Gaussian,
// standard Cauchy for Laplacian, standard Laplace for Cauchy. Divide by σ for
// width σ.
func SampleFrequency(kind Kind, src *rng.Source) (float64, error) {
	switch kind {
	case Gaussian:
		return src.Normal(), nil
	case Laplacian:
		// tan(π(u − ½)), u ∈ (0,1)
		s, c := rng.Sincos(rng.Pi * (src.OpenFloat64() - 0.5))
		return s / c, nil
	case Cauchy:
		// Laplace(0,1) by inversion: −sgn(v)·ln(1 − 2|v|), v ∈ (−½, ½)
		v := src.OpenFloat64() - 0.5
		if v < 0 {
			return rng.Log(1 + 2*v), nil
		}
		return -rng.Log(1 - 2*v), nil
	}
	return 0, fmt.Errorf("kernel: no random Fourier features for the %s kernel", kind)
}

// Dim returns the number of output features, 2D.
func (f *Fourier) Dim() int { return 2 * f.nf }

// Frequencies returns D.
func (f *Fourier) Frequencies() int { return f.nf }

// Map writes z(x) into dst (len ≥ 2D) and returns dst[:2D]. Zero input
// features are skipped, so sparse inputs cost O(nnz·D).
func (f *Fourier) Map(dst, x []float64) []float64 {
	z, _ := f.mapDot(dst, nil, x)
	return z
}

// MapDot writes z(x) into dst (len ≥ 2D) like Map and also returns wᵀz(x)
// for w of length 2D, without a separate dot-product call: Σ_j w_j·cos_j is accumulated in one
// sum and Σ_j w_{D+j}·sin_j in another, both in increasing j, and the
// score is their sum (a fixed order, the same on every platform).
func (f *Fourier) MapDot(dst, w, x []float64) (z []float64, score float64) {
	if len(w) != 2*f.nf {
		panic(fmt.Sprintf("kernel: Fourier.MapDot with len(w)=%d, want %d", len(w), 2*f.nf))
	}
	return f.mapDot(dst, w, x)
}

func (f *Fourier) mapDot(dst, w, x []float64) ([]float64, float64) {
	if len(x) != f.d {
		panic(fmt.Sprintf("kernel: Fourier.Map with len(x)=%d, want %d", len(x), f.d))
	}
	D := f.nf
	dst = dst[:2*D]
	sn := dst[D:]
	// Passes of independent iterations (one pass that projects and
	// evaluates frequency by frequency is bound by the latency of its
	// dependency chains, and measured 2× slower): the projections into sn,
	// then cos and sin, the scale, the score.
	f.project(sn, x)
	return f.evaluate(dst, w)
}

// evaluate turns the projections in dst[D:2D] into z in dst[:2D] (and
// wᵀz with w non-nil): mapDot after its projection. cos and sin come from
// rng.FastSincosSlice (no call per frequency), the scale and the two sums
// share one pass. (Blocks of 8 to 64 frequencies, to overlap the sums'
// chains of dependent additions with the next block's cos and sin, measured
// 5–27 % slower than one pass each once the kernel ran in SSE2.) The order
// of every operation is that of a pass per step: scale first, then the
// sums in increasing j.
func (f *Fourier) evaluate(dst, w []float64) ([]float64, float64) {
	D := f.nf
	cs, sn := dst[:D], dst[D:2*D]
	scale := f.scale
	rng.FastSincosSlice(sn, cs, sn) // sn held the projections
	if w == nil {
		if scale != 1 { // (a product with 1 is exact: skipping it changes no bit)
			for j := range dst[:2*D] {
				dst[j] = float64(scale * dst[j])
			}
		}
		return dst, 0
	}
	var fc, fs float64
	wc, ws := w[:D], w[D:2*D]
	sn, wc, ws = sn[:len(cs)], wc[:len(cs)], ws[:len(cs)]
	if scale != 1 {
		for j, c := range cs {
			c, s := float64(scale*c), float64(scale*sn[j])
			cs[j], sn[j] = c, s
			fc += float64(wc[j] * c)
			fs += float64(ws[j] * s)
		}
	} else {
		return dst, scoreSums(w, dst[:2*D])
	}
	return dst, fc + fs
}

// Project writes the projections p_j = u_jᵀx into p (len ≥ D) and returns
// p[:D]: the first step of Map, for callers that share it (MapProjected).
func (f *Fourier) Project(p, x []float64) []float64 {
	if len(x) != f.d {
		panic(fmt.Sprintf("kernel: Fourier.Project with len(x)=%d, want %d", len(x), f.d))
	}
	f.project(p, x)
	return p[:f.nf]
}

// MapProjected writes z into dst (len ≥ 2D) from given projections: the
// projection of frequency j is taken as p_j·mult, the rest is Map's. With
// p from Project of a map g of the same kind, d, D and seed at width σ_g,
// and this map's width σ = σ_g/mult with mult a power of two, the result
// has the bits of Map(dst, x): the frequencies are then g's times mult,
// exactly, and so is every product and partial sum of the projection
// (barring subnormal products). That lets several widths share one O(d·D)
// projection (multi-class auto).
func (f *Fourier) MapProjected(dst, p []float64, mult float64) []float64 {
	D := f.nf
	dst = dst[:2*D]
	sn := dst[D:]
	for j, v := range p[:D] {
		sn[j] = float64(v * mult)
	}
	z, _ := f.evaluate(dst, nil)
	return z
}

// project writes p_j = u_jᵀx into p[:D]: summed in coordinate order from 0
// with each product rounded, zero coordinates skipped (so sparse inputs cost
// O(nnz·D)). The sums advance four coordinates per pass over p, every
// frequency's sum independent of the others; on amd64 the passes run four
// frequencies at a time in AVX2 or two in SSE2 (axpy4Run, axpyRun: the same
// operations, the same bits), elsewhere (and for an odd last frequency) in
// the Go loops.
func (f *Fourier) project(p, x []float64) {
	D := f.nf
	nz := NonZero(f.nz, x)
	f.nz = nz
	p = p[:D]
	for j := range p {
		p[j] = 0
	}
	row := func(i int) []float64 { return f.w[i*D : (i+1)*D] }
	k := 0
	for ; k+4 <= len(nz); k += 4 {
		i0, i1, i2, i3 := nz[k], nz[k+1], nz[k+2], nz[k+3]
		xs := [4]float64{x[i0], x[i1], x[i2], x[i3]}
		w0, w1, w2, w3 := row(i0), row(i1), row(i2), row(i3)
		axpy4Rounded(p, w0, w1, w2, w3, &xs)
	}
	for ; k < len(nz); k++ {
		AxpyRounded(x[nz[k]], row(nz[k]), p)
	}
}

// axpy4Rounded sets p[j] = (((p[j] + x0·w0[j]) + x1·w1[j]) + x2·w2[j]) +
// x3·w3[j] for j < len(p), every product and sum rounded (no fused
// multiply-add; AVX2 or SSE2 on amd64, the same bits): four coordinates of
// a projection per pass. w0…w3 must be at least len(p) long.
func axpy4Rounded(p, w0, w1, w2, w3 []float64, xs *[4]float64) {
	w0, w1, w2, w3 = w0[:len(p)], w1[:len(p)], w2[:len(p)], w3[:len(p)]
	j := axpy4Run(p, w0, w1, w2, w3, xs)
	for ; j < len(p); j++ {
		pj := p[j]
		pj += float64(xs[0] * w0[j])
		pj += float64(xs[1] * w1[j])
		pj += float64(xs[2] * w2[j])
		pj += float64(xs[3] * w3[j])
		p[j] = pj
	}
}

// AxpyRounded sets y[j] += a·x[j] for j < len(y) with every product rounded
// (float64(a·x[j]): never fused into a multiply-add), so the bits are the
// same on every platform (on amd64 four entries at a time in AVX2 or two
// in SSE2, the same operations). x must be at least len(y) long; it panics
// otherwise. FOGD's gradient step and the projection's single coordinates
// use it.
func AxpyRounded(a float64, x, y []float64) {
	x = x[:len(y)]
	for j := axpyRun(y, x, a); j < len(y); j++ {
		y[j] += float64(a * x[j])
	}
}
