// Package rng is okstream's deterministic random number generator.
//
// Every random choice a learner or an experiment makes (random features, hash
// buckets, landmark sampling, permutations, adversarial draws) comes from a
// *Source. Its output is a pure function of the seed and the number of draws,
// defined entirely by this package, so it cannot drift with a Go release:
// math/rand/v2 documents its generators but not the algorithms behind
// Float64, IntN or NormFloat64, which are what reproducible experiments and
// exact checkpoint recovery depend on. Golden-value tests in rng_test.go pin
// the streams.
//
// The generator is PCG-DXSM (128-bit LCG state, "double xorshift multiply"
// output), the algorithm of math/rand/v2's PCG and of NumPy's PCG64DXSM. Its
// full state is two uint64 words, so it is cheap to checkpoint: see State and
// Restore.
//
// Cross-platform note: Uint64, Float64, IntN and Perm are pure integer
// arithmetic (plus one exact int→float conversion) and give identical
// streams on every platform. Normal uses Log, Sqrt, Cos and Sin; Sqrt is exact
// everywhere, and the others are computed by this package's own portable
// implementations (see portable.go) so that normal variates are
// bit-identical on every platform and Go version as well.
//
// A Source is not safe for concurrent use.
package rng

import "math/bits"

// PCG-DXSM constants: the 128-bit LCG multiplier and increment, and the
// 64-bit "cheap multiplier" of the DXSM output function. The increment is
// fixed (odd); streams differ by seed, not by increment.
const (
	mulHi    = 2549297995355413924
	mulLo    = 4865540595714422341
	incHi    = 6364136223846793005
	incLo    = 1442695040888963407
	cheapMul = 0xda942042e4dd58b5
)

// Source is a seeded PCG-DXSM generator. The zero value is a valid generator
// (seed state 0,0) but callers should use New.
type Source struct {
	hi, lo uint64
}

// New returns a Source whose stream is determined by seed alone.
// The two state words are derived from seed with SplitMix64, so nearby seeds
// (0, 1, 2, ...) give unrelated streams.
func New(seed uint64) *Source {
	s := &Source{}
	s.Seed(seed)
	return s
}

// Seed resets the generator to the stream of New(seed).
func (s *Source) Seed(seed uint64) {
	z := seed
	s.hi = splitmix64(&z)
	s.lo = splitmix64(&z)
}

// Derive returns a seed for an independent sub-stream, e.g. one per
// permutation run or one per model: Derive(seed, 3) is a different, fixed
// seed for every (seed, 3). It does not touch any Source.
func Derive(seed uint64, stream uint64) uint64 {
	z := seed ^ (stream * 0x9e3779b97f4a7c15)
	splitmix64(&z)
	return splitmix64(&z)
}

func splitmix64(z *uint64) uint64 {
	*z += 0x9e3779b97f4a7c15
	x := *z
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// State returns the generator's complete state.
func (s *Source) State() (hi, lo uint64) { return s.hi, s.lo }

// Restore sets the generator's complete state, as returned by State.
func (s *Source) Restore(hi, lo uint64) { s.hi, s.lo = hi, lo }

// Uint64 returns a uniformly distributed 64-bit value.
func (s *Source) Uint64() uint64 {
	// state = state * mul + inc (128-bit arithmetic)
	hi, lo := bits.Mul64(s.lo, mulLo)
	hi += s.hi*mulLo + s.lo*mulHi
	lo, c := bits.Add64(lo, incLo, 0)
	hi, _ = bits.Add64(hi, incHi, c)
	s.lo, s.hi = lo, hi

	// DXSM output function of the new state.
	h := hi
	l := lo | 1
	h ^= h >> 32
	h *= cheapMul
	h ^= h >> 48
	h *= l
	return h
}

// Float64 returns a uniform value in [0, 1) with 53 random bits.
func (s *Source) Float64() float64 {
	return float64(s.Uint64()>>11) * (1.0 / (1 << 53))
}

// OpenFloat64 returns a uniform value in (0, 1): never exactly 0, for
// samplers that take a logarithm.
func (s *Source) OpenFloat64() float64 {
	return (float64(s.Uint64()>>11) + 0.5) * (1.0 / (1 << 53))
}

// IntN returns a uniform integer in [0, n). It panics if n <= 0.
// Unbiased (Lemire's multiply-and-reject method).
func (s *Source) IntN(n int) int {
	if n <= 0 {
		panic("rng: IntN with n <= 0")
	}
	return int(s.Uint64N(uint64(n)))
}

// Uint64N returns a uniform integer in [0, n). It panics if n == 0.
func (s *Source) Uint64N(n uint64) uint64 {
	if n == 0 {
		panic("rng: Uint64N with n == 0")
	}
	hi, lo := bits.Mul64(s.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(s.Uint64(), n)
		}
	}
	return hi
}

// Sign returns +1 or -1 with equal probability.
func (s *Source) Sign() float64 {
	if s.Uint64()>>63 == 0 {
		return 1
	}
	return -1
}

// Perm returns a uniformly random permutation of 0..n-1 (Fisher–Yates).
func (s *Source) Perm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	s.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

// Shuffle permutes n elements through swap (Fisher–Yates, last to first).
func (s *Source) Shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		j := s.IntN(i + 1)
		swap(i, j)
	}
}

// Sample returns k distinct indices drawn uniformly without replacement
// from 0..n-1, in the order drawn. It panics if k > n or k < 0.
func (s *Source) Sample(n, k int) []int {
	if k < 0 || k > n {
		panic("rng: Sample with k outside [0, n]")
	}
	// Partial Fisher–Yates over a virtual identity array; only the touched
	// entries are stored.
	moved := make(map[int]int, 2*k)
	out := make([]int, k)
	for i := 0; i < k; i++ {
		j := i + s.IntN(n-i)
		vi, ok := moved[i]
		if !ok {
			vi = i
		}
		vj, ok := moved[j]
		if !ok {
			vj = j
		}
		out[i] = vj
		moved[j] = vi
	}
	return out
}

// Normal returns a standard normal variate (Box–Muller, one variate per two
// uniforms; the second variate is discarded so that the state stays two
// words).
func (s *Source) Normal() float64 {
	u1 := s.OpenFloat64()
	u2 := s.Float64()
	r := Sqrt(-2 * Log(u1))
	return r * Cos(2*Pi*u2)
}

// Exp returns an exponential variate with rate 1.
func (s *Source) Exp() float64 {
	return -Log(s.OpenFloat64())
}
