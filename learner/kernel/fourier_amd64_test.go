//go:build amd64 && !purego

package kernel

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// TestFourierAsmSSE2 is TestFourierAsmBits with the AVX2 loops turned off,
// so that the SSE2 loops are checked on every entry too.
func TestFourierAsmSSE2(t *testing.T) {
	if !cpu.X86.HasAVX2 {
		t.Log("no AVX2 on this CPU: TestFourierAsmBits checked the SSE2 loops, the AVX2 ones are unchecked")
	}
	defer func(v bool) { useAVX2 = v }(useAVX2)
	useAVX2 = false
	checkFourierAsm(t)
}

// TestSeededBlocksProjectGroupNoAVX2 is TestSeededBlocksProjectGroup with
// the AVX2 strips turned off (projectBlock's loops do everything).
func TestSeededBlocksProjectGroupNoAVX2(t *testing.T) {
	defer func(v bool) { useAVX2 = v }(useAVX2)
	useAVX2 = false
	checkProjectGroup(t)
}

// TestDot4NoAVX2 is TestDot4Bits with the AVX2 loops turned off.
func TestDot4NoAVX2(t *testing.T) {
	defer func(v bool) { useAVX2 = v }(useAVX2)
	useAVX2 = false
	checkDot4(t)
}

// TestSeededBlocksProjectGroupAVX2 is TestSeededBlocksProjectGroup with the
// AVX-512 strips turned off (the AVX2 strips do the work).
func TestSeededBlocksProjectGroupAVX2(t *testing.T) {
	defer func(v bool) { useAVX512 = v }(useAVX512)
	useAVX512 = false
	checkProjectGroup(t)
}
