package consumer

import (
	"encoding/binary"
	"testing"
)

// asV6 is a version 7 payload of n models, none multi-class and no
// multi-class candidate, as version 6 wrote it: without its version 7
// section (two 0 flags a model).
func asV6(t *testing.T, v7 []byte, n int) []byte {
	t.Helper()
	if binary.LittleEndian.Uint32(v7[4:]) != 7 {
		t.Fatalf("payload version %d, want 7", binary.LittleEndian.Uint32(v7[4:]))
	}
	tail := v7[len(v7)-2*n:]
	for _, b := range tail {
		if b != 0 {
			t.Fatalf("version 7 section %x: a multi-class model", tail)
		}
	}
	v6 := append([]byte(nil), v7[:len(v7)-2*n]...)
	binary.LittleEndian.PutUint32(v6[4:], 6)
	return v6
}
