package kernel

// Seeded random features: feature i of a model is a pure function of
// (family, width, dimension, model seed, i), regenerated on demand in O(d)
// from its own generator stream. This is what the doubly stochastic
// gradient method (Dai et al., NIPS 2014, Algorithms 1–2: "sample ω_i with
// seed i") needs: a model stores one coefficient per feature and never the
// frequencies, and a checkpoint restored anywhere regenerates exactly the
// same features.
//
// Portability: the samplers draw raw 64-bit words from package rng's
// PCG-DXSM and transform them with rng's portable Log, Sincos and Sqrt, and
// every product is rounded explicitly (float64(a*b)) so that no compiler may
// fuse it into an FMA. A feature's frequency vector and phase are therefore
// bit-identical on every platform and Go release; TestSeededGolden pins them.
// Project follows the same rule and CosFeature takes cos from rng.FastSincos,
// so φ(x) is portable too.

import (
	"fmt"
	"math"

	"okstream/learner/rng"
)

// Family is a shift-invariant kernel family with a seeded feature sampler.
type Family int

const (
	// FamilyGaussian is exp(−‖x−y‖²/(2σ²)); ω ~ N(0, σ⁻²I).
	FamilyGaussian Family = iota + 1
	// FamilyLaplacian is exp(−‖x−y‖₁/σ); ω_j ~ Cauchy(0, 1/σ) i.i.d.
	FamilyLaplacian
	// FamilyCauchy is ∏_j 1/(1+(x_j−y_j)²/σ²); ω_j ~ Laplace(0, 1/σ) i.i.d.
	FamilyCauchy
	// FamilyMatern is the Matérn kernel of smoothness ν ∈ {½, 3/2, 5/2} and
	// length-scale ℓ = σ (Rasmussen & Williams eq. 4.14, Euclidean
	// distance); ω = z·√(2ν/g)/ℓ with z ~ N(0, I_d), g ~ χ²_{2ν}: a
	// multivariate Student-t with 2ν degrees of freedom.
	FamilyMatern
)

var familyNames = []string{FamilyGaussian: "gaussian", FamilyLaplacian: "laplacian", FamilyCauchy: "cauchy", FamilyMatern: "matern"}

// FamilyNames lists the names accepted by ParseFamily.
func FamilyNames() []string { return []string{"gaussian", "laplacian", "cauchy", "matern"} }

// ParseFamily maps a name to a Family.
func ParseFamily(s string) (Family, error) {
	for f, n := range familyNames {
		if n != "" && n == s {
			return Family(f), nil
		}
	}
	return 0, fmt.Errorf("no seeded random features for kernel %q (known: gaussian, laplacian, cauchy, matern)", s)
}

func (f Family) String() string {
	if int(f) > 0 && int(f) < len(familyNames) {
		return familyNames[f]
	}
	return fmt.Sprintf("Family(%d)", int(f))
}

// MaternSmoothness lists the Matérn smoothness values ν supported: the
// half-integers, for which the kernel has a closed form and χ²_{2ν} is a sum
// of 2ν squared normals (no rejection sampler needed).
func MaternSmoothness() []float64 { return []float64{0.5, 1.5, 2.5} }

// seededStream separates the feature streams from every other use of a
// model seed (rng.Derive(seed, k) for small k).
const seededStream = 0x5eed_f0f0_d5a6_0001

// Seeded regenerates the random features of a shift-invariant kernel from
// (seed, i). Its methods do not allocate and do not modify it, so one
// Seeded may be shared (read-only) by several learners.
type Seeded struct {
	fam   Family
	sigma float64
	nu    float64
	dof   int // Matérn: 2ν
	d     int
	base  uint64
	kern  Kernel // exact kernel for the Gaussian, Laplacian and Cauchy families
}

// NewSeeded returns the feature generator of family fam with width sigma
// (Matérn: length-scale) for d-dimensional inputs. nu is the Matérn
// smoothness (ignored by the other families).
func NewSeeded(fam Family, sigma, nu float64, d int, seed uint64) (*Seeded, error) {
	if d <= 0 {
		return nil, fmt.Errorf("kernel: seeded features need d > 0, got %d", d)
	}
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return nil, fmt.Errorf("kernel: seeded features need a positive finite width, got %v", sigma)
	}
	s := &Seeded{fam: fam, sigma: sigma, d: d, base: rng.Derive(seed, seededStream)}
	var err error
	switch fam {
	case FamilyGaussian:
		s.kern, err = New(Gaussian, sigma, 0, 0)
	case FamilyLaplacian:
		s.kern, err = New(Laplacian, sigma, 0, 0)
	case FamilyCauchy:
		s.kern, err = New(Cauchy, sigma, 0, 0)
	case FamilyMatern:
		if nu != 0.5 && nu != 1.5 && nu != 2.5 {
			return nil, fmt.Errorf("kernel matern: smoothness must be 0.5, 1.5 or 2.5, got %v", nu)
		}
		s.nu, s.dof = nu, int(2*nu)
	default:
		return nil, fmt.Errorf("kernel: unknown feature family %d", int(fam))
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Family returns the kernel family.
func (s *Seeded) Family() Family { return s.fam }

// Dim returns the input dimension d.
func (s *Seeded) Dim() int { return s.d }

// Frequency writes the frequency vector ω_i of feature i into w[:d] and
// returns its phase b_i ∈ [0, 2π). It panics if len(w) < d. The draws, in
// order, from the feature's own PCG-DXSM stream (seeded with
// rng.Derive(base, i)): the d coordinates of the unit-width frequency
// (Gaussian: Box–Muller, two uniforms per coordinate; Laplacian:
// tan(π(u−½)); Cauchy: Laplace by inversion; Matérn: d normals, then 2ν
// normals for g), then one uniform for the phase.
func (s *Seeded) Frequency(w []float64, i uint64) (phase float64) {
	w = w[:s.d]
	var src rng.Source
	src.Seed(rng.Derive(s.base, i))
	switch s.fam {
	case FamilyGaussian, FamilyLaplacian, FamilyCauchy:
		kind := Gaussian
		if s.fam == FamilyLaplacian {
			kind = Laplacian
		} else if s.fam == FamilyCauchy {
			kind = Cauchy
		}
		for j := range w {
			v, _ := SampleFrequency(kind, &src)
			w[j] = v / s.sigma
		}
	case FamilyMatern:
		for j := range w {
			w[j] = src.Normal()
		}
		var g float64
		for k := 0; k < s.dof; k++ {
			z := src.Normal()
			g += float64(z * z)
		}
		scale := rng.Sqrt(float64(s.dof)/g) / s.sigma
		for j := range w {
			w[j] = float64(w[j] * scale)
		}
	}
	return float64(2*rng.Pi) * src.Float64()
}

// Eval returns the exact kernel value k(x, y) that the features
// approximate: E[2 cos(ωᵀx+b) cos(ωᵀy+b)] = k(x, y).
func (s *Seeded) Eval(x, y []float64) float64 {
	if s.fam != FamilyMatern {
		return s.kern.Eval(x, y)
	}
	var r2 float64
	for j, xj := range x {
		d := xj - y[j]
		r2 += d * d
	}
	return Matern(s.nu, math.Sqrt(r2)/s.sigma)
}

// Matern returns the Matérn correlation of smoothness nu ∈ {½, 3/2, 5/2}
// at scaled distance u = r/ℓ: exp(−u), (1+√3u)e^{−√3u},
// (1+√5u+5u²/3)e^{−√5u}. It panics for other nu.
func Matern(nu, u float64) float64 {
	switch nu {
	case 0.5:
		return math.Exp(-u)
	case 1.5:
		a := math.Sqrt(3) * u
		return (1 + a) * math.Exp(-a)
	case 2.5:
		a := math.Sqrt(5) * u
		return (1 + a + a*a/3) * math.Exp(-a)
	}
	panic(fmt.Sprintf("kernel: Matern smoothness %v not supported", nu))
}

// Project returns ωᵀx + b summed over the coordinates listed in nz (the
// non-zero coordinates of x, increasing), each product rounded before it
// is added. Every caller that must reproduce a feature bit for bit uses
// this one routine, so a cached and a regenerated feature give identical
// values.
func Project(w, x []float64, nz []int, b float64) float64 {
	p := b
	for _, j := range nz {
		p += float64(w[j] * x[j])
	}
	return p
}

// NonZero appends the indices of the non-zero coordinates of x to dst[:0]
// and returns it.
func NonZero(dst []int, x []float64) []int {
	dst = dst[:0]
	for j, v := range x {
		if v != 0 {
			dst = append(dst, j)
		}
	}
	return dst
}

// CosFeature returns the random-phase feature √2·cos(p) for a projection
// p = ωᵀx + b, with cos from rng.FastSincos (portable bits).
func CosFeature(p float64) float64 {
	_, c := rng.FastSincos(p)
	return float64(math.Sqrt2 * c)
}
