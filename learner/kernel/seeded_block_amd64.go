//go:build amd64 && !purego

package kernel

// The AVX2 kernel of projectBlock (seeded_block_amd64.s): four coordinates
// per pass, four features per instruction, VMULPD then VADDPD (no fused
// multiply-add), so every element gets the bits of the Go loop.

// projectRows4AVX2 sets dst[i] = (((dst[i] + x0·w0[i]) + x1·w1[i]) +
// x2·w2[i]) + x3·w3[i] for i < n, every product rounded.
//
//go:noescape
func projectRows4AVX2(dst, w0, w1, w2, w3 *float64, n int, x0, x1, x2, x3 float64)

func cpuidAVX2() (eax1ecx, eax7ebx uint32)

func xgetbvLow() uint32

// useAVX2 reports whether the CPU and the OS support AVX2.
var useAVX2 = func() bool {
	ecx1, ebx7 := cpuidAVX2()
	const osxsave, avx, avx2 = 1 << 27, 1 << 28, 1 << 5
	if ecx1&osxsave == 0 || ecx1&avx == 0 {
		return false
	}
	return xgetbvLow()&6 == 6 && ebx7&avx2 != 0
}()
