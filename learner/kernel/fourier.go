package kernel

import (
	"fmt"

	"gonum.org/v1/gonum/blas/blas64"

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
type Fourier struct {
	d, nf int
	scale float64
	w     []float64 // d×D: row i holds coordinate i of every frequency
	proj  []float64 // scratch, len D
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
	f := &Fourier{d: d, nf: D, scale: scale, w: make([]float64, d*D), proj: make([]float64, D)}
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
	if len(x) != f.d {
		panic(fmt.Sprintf("kernel: Fourier.Map with len(x)=%d, want %d", len(x), f.d))
	}
	D := f.nf
	p := f.proj
	for j := range p {
		p[j] = 0
	}
	pv := blas64.Vector{N: D, Inc: 1, Data: p}
	for i, xi := range x {
		if xi != 0 {
			blas64.Axpy(xi, blas64.Vector{N: D, Inc: 1, Data: f.w[i*D : (i+1)*D]}, pv)
		}
	}
	dst = dst[:2*D]
	for j, v := range p {
		s, c := rng.Sincos(v)
		dst[j] = f.scale * c
		dst[D+j] = f.scale * s
	}
	return dst
}
