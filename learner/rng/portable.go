package rng

import "math"

// Portable elementary functions.
//
// The Go specification lets the compiler fuse x*y+z into one FMA instruction
// on some architectures (arm64, ppc64le, s390x, riscv64) but not on amd64, so
// the same Go source can round differently per platform; math.Log also has an
// assembly version on amd64 only. Random features must be identical wherever a
// checkpoint is restored, so the samplers use these versions, in which every
// product is wrapped in an explicit float64 conversion (which the
// specification says prevents fusion). The algorithms are the classic
// fdlibm/Cephes ones (as in Go's own pure-Go math package); accuracy is within
// 1–2 ulp of math.Log/math.Sin/math.Cos, which rng_test.go checks.

// Pi is π.
const Pi = math.Pi

// Sqrt is math.Sqrt (IEEE 754 requires a correctly rounded square root, so it
// is already identical on every platform).
func Sqrt(x float64) float64 { return math.Sqrt(x) }

const (
	ln2Hi = 6.93147180369123816490e-01 // 0x3fe62e42fee00000
	ln2Lo = 1.90821492927058770002e-10 // 0x3dea39ef35793c76
	lg1   = 6.666666666666735130e-01   // 0x3FE5555555555593
	lg2   = 3.999999999940941908e-01   // 0x3FD999999997FA04
	lg3   = 2.857142874366239149e-01   // 0x3FD2492494229359
	lg4   = 2.222219843214978396e-01   // 0x3FCC71C51D8E78AF
	lg5   = 1.818357216161805012e-01   // 0x3FC7466496CB03DE
	lg6   = 1.531383769920937332e-01   // 0x3FC39A09D078C69F
	lg7   = 1.479819860511658591e-01   // 0x3FC2F112DF3E5244
)

// Log returns the natural logarithm of x (fdlibm's e_log algorithm).
func Log(x float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	}
	f1, ki := math.Frexp(x)
	if f1 < math.Sqrt2/2 {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float64(ki)

	s := f / (2 + f)
	s2 := float64(s * s)
	s4 := float64(s2 * s2)
	t1 := float64(s2 * (lg1 + float64(s4*(lg3+float64(s4*(lg5+float64(s4*lg7)))))))
	t2 := float64(s4 * (lg2 + float64(s4*(lg4+float64(s4*lg6)))))
	R := t1 + t2
	hfsq := float64(0.5 * float64(f*f))
	return float64(k*ln2Hi) - ((hfsq - (float64(s*(hfsq+R)) + float64(k*ln2Lo))) - f)
}

// Cody–Waite split of π/4 and the Cephes minimax coefficients.
const (
	pi4A = 7.85398125648498535156e-1  // 0x3fe921fb40000000
	pi4B = 3.77489470793079817668e-8  // 0x3e64442d00000000
	pi4C = 2.69515142907905952645e-15 // 0x3ce8469898cc5170

	// Arguments at or above this are reduced with math.Mod(x, 2π) first:
	// deterministic, but no longer accurate to an ulp (irrelevant for
	// random features, whose phase is uniform anyway).
	reduceThreshold = 1 << 29
)

var sinC = [...]float64{
	1.58962301576546568060e-10,
	-2.50507477628578072866e-8,
	2.75573136213857245213e-6,
	-1.98412698295895385996e-4,
	8.33333333332211858878e-3,
	-1.66666666666666307295e-1,
}

var cosC = [...]float64{
	-1.13585365213876817300e-11,
	2.08757008419747316778e-9,
	-2.75573141792967388112e-7,
	2.48015872888517045348e-5,
	-1.38888888888730564116e-3,
	4.16666666666665929218e-2,
}

// Octant tables for Sincos: after reduction x = jπ/4 + z with j even,
// sin(x) = sinS[j/2]·sin(z) + sinC[j/2]·cos(z) and likewise for cos. The
// coefficients are 0 or ±1, so the products are exact; table lookups instead
// of branches keep the routine fast on random phases.
var (
	octSinS = [4]float64{1, 0, -1, 0}
	octSinC = [4]float64{0, 1, 0, -1}
	octCosS = [4]float64{0, -1, 0, 1}
	octCosC = [4]float64{1, 0, -1, 0}
)

// Sincos returns sin(x) and cos(x). It is the samplers' routine (Normal,
// the Laplacian kernel's frequencies), whose bits are frozen because every
// seeded draw depends on them; random features are evaluated with the
// faster FastSincos (fastsincos.go).
func Sincos(x float64) (sin, cos float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return math.NaN(), math.NaN()
	}
	sign := math.Copysign(1, x)
	x = math.Abs(x)
	if x >= reduceThreshold {
		x = math.Mod(x, 2*Pi)
	}
	j := uint64(float64(x * (4 / Pi)))
	j += j & 1
	y := float64(j)
	q := (j >> 1) & 3
	z := ((x - float64(y*pi4A)) - float64(y*pi4B)) - float64(y*pi4C)
	zz := float64(z * z)
	pc := cosC[0]
	ps := sinC[0]
	for i := 1; i < 6; i++ {
		pc = float64(pc*zz) + cosC[i]
		ps = float64(ps*zz) + sinC[i]
	}
	c := 1.0 - float64(0.5*zz) + float64(float64(zz*zz)*pc)
	s := z + float64(float64(z*zz)*ps)
	sin = float64(octSinS[q]*s) + float64(octSinC[q]*c)
	cos = float64(octCosS[q]*s) + float64(octCosC[q]*c)
	return float64(sign * sin), cos
}

// Cos returns cos(x); see Sincos.
func Cos(x float64) float64 {
	_, c := Sincos(x)
	return c
}

// Sin returns sin(x); see Sincos.
func Sin(x float64) float64 {
	s, _ := Sincos(x)
	return s
}
