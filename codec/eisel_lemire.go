package codec

import (
	"math"
	"math/bits"
)

//go:generate go run gen_pow10.go

// The range of exponents pow10Table covers. A nonzero mantissa of at most
// 19 digits times 10^q is below the smallest subnormal for q < -343 and
// past the float64 range for q > 308, so the table covers every exponent
// whose result is a finite nonzero float64 (those outside it are left to
// the fallback).
const (
	pow10MinExp = -348
	pow10MaxExp = 347
)

// pow10Exp2 returns floor(log2(10^q)) for q in [pow10MinExp, pow10MaxExp]
// (TestPow10Table checks it against math/big over that whole range): the
// binary exponent of pow10Table's entry, whose 128 bits m stand for
// 10^q ≈ m · 2^(pow10Exp2(q)-127).
func pow10Exp2(q int) int {
	// 217706/2^16 approximates log2(10) closely enough that the floor is
	// exact over the table's range.
	return (217706 * q) >> 16
}

// eiselLemire returns man · 10^exp10 (negated when neg) correctly rounded
// to the nearest float64, ties to even, by the Eisel–Lemire algorithm
// (Lemire, "Number parsing at a gigabyte per second", Software: Practice
// and Experience 51(8), 2021). ok is false when it cannot decide: an
// exponent outside the table, a result that is subnormal or past the
// float64 range, or a product too close to a rounding boundary for 128
// bits of 10^exp10 to tell which way it goes. The caller then falls back to
// an exact conversion; when ok is true the result is exact, never a guess.
func eiselLemire(man uint64, exp10 int, neg bool) (f float64, ok bool) {
	if man == 0 {
		if neg {
			return math.Copysign(0, -1), true
		}
		return 0, true
	}
	if exp10 < pow10MinExp || exp10 > pow10MaxExp {
		return 0, false
	}
	// Normalize the mantissa so that its top bit is set.
	lz := bits.LeadingZeros64(man)
	man <<= uint(lz)
	t := &pow10Table[exp10-pow10MinExp]
	// The product of the mantissa and the high 64 bits of 10^exp10. Its
	// error (the missing man·t[1]/2^64) is below man, so it can change the
	// bits kept only if adding up to man to the low word carries into a
	// high word whose 9 bits under the 54 kept are all ones.
	hi, lo := bits.Mul64(man, t[0])
	if hi&0x1ff == 0x1ff && lo+man < man {
		// Refine with the low 64 bits of 10^exp10. The remaining error is
		// below one unit of the 128-bit product's last place.
		hi2, lo2 := bits.Mul64(man, t[1])
		sumLo, carry := bits.Add64(lo, hi2, 0)
		sumHi := hi + carry
		if sumHi&0x1ff == 0x1ff && sumLo+1 == 0 && lo2+man < man {
			return 0, false
		}
		hi, lo = sumHi, sumLo
	}
	// hi has its top bit at 63 or 62; keep 54 bits (one beyond float64's
	// 53, to round with).
	top := hi >> 63
	m := hi >> (top + 9)
	// The unbiased exponent of m's leading bit in the result's value.
	e2 := pow10Exp2(exp10) + 63 + int(top) - lz
	// A product whose bits below the 54 kept are all zero could be an
	// exact tie or just above one; with an even 53-bit result (m&3 == 1)
	// the two round differently, and the truncated product cannot tell
	// them apart.
	if lo == 0 && hi&0x1ff == 0 && m&3 == 1 {
		return 0, false
	}
	// Round half up on the 54th bit; a carry out renormalizes.
	m += m & 1
	m >>= 1
	if m>>53 != 0 {
		m >>= 1
		e2++
	}
	biased := e2 + 1023
	if biased < 1 || biased > 2046 {
		return 0, false // subnormal, zero after rounding, or overflow
	}
	return math.Float64frombits(signBit(neg) | uint64(biased)<<52 | m&(1<<52-1)), true
}
