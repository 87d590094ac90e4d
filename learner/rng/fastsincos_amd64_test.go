//go:build amd64 && !purego

package rng

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// TestFastSincosSliceSSE2 is TestFastSincosSliceBits with the AVX2 loop
// turned off, so that the SSE2 loop is checked on every argument too (with
// AVX2 on, it only sees the last one to three of a run).
func TestFastSincosSliceSSE2(t *testing.T) {
	if !cpu.X86.HasAVX2 {
		t.Log("no AVX2 on this CPU: TestFastSincosSliceBits checked the SSE2 loop, fastSincosQuads is unchecked")
	}
	defer func(v bool) { useAVX2 = v }(useAVX2)
	useAVX2 = false
	checkFastSincosSlice(t)
}

// TestFastCosSinPairsNoAVX2 is TestFastCosSinPairsBits without the AVX2
// loop (the scalar fallback everywhere).
func TestFastCosSinPairsNoAVX2(t *testing.T) {
	defer func(v bool) { useAVX2 = v }(useAVX2)
	useAVX2 = false
	checkFastCosSinPairs(t)
}
