package learner

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
	"testing"

	"okstream/learner/state"
)

// Regression tests for forged learner states (issue 12, item 3): each is
// refused with an error wrapping state.ErrCorrupt, quickly, allocating less
// than hostileAllocBound, and leaves the learner unchanged. Before the
// size checks, these states cost from half a gigabyte to a fatal
// out-of-memory.

// hostileAllocBound is the most a refused forged state may allocate here
// (the states are at most ~1 MiB; the configured budgets are small).
const hostileAllocBound = 16 << 20

// refuseCheaply unmarshals data into a fresh learner of spec (dimension
// dim) and checks the refusal, its allocation and that the learner is
// unchanged.
func refuseCheaply(t *testing.T, spec string, dim int, data []byte) {
	t.Helper()
	l, err := New(rawSpec(spec), dim)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := l.MarshalBinary()
	a0 := totalAlloc()
	err = l.UnmarshalBinary(data)
	alloc := totalAlloc() - a0
	if err == nil {
		t.Fatalf("%s: forged state of %d bytes accepted", spec, len(data))
	}
	if !errors.Is(err, state.ErrCorrupt) {
		t.Errorf("%s: error %v does not wrap state.ErrCorrupt", spec, err)
	}
	if alloc > hostileAllocBound {
		t.Errorf("%s: refusing a %d-byte state allocated %d bytes (bound %d)", spec, len(data), alloc, hostileAllocBound)
	}
	after, _ := l.MarshalBinary()
	if !bytes.Equal(before, after) {
		t.Errorf("%s: refused state changed the learner", spec)
	}
	t.Logf("%s: %d-byte state refused, %d bytes allocated: %v", spec, len(data), alloc, err)
}

// headerOf starts a state for the learner of spec: header and update count.
func headerOf(t *testing.T, spec string, dim int) *state.Encoder {
	t.Helper()
	l, err := New(rawSpec(spec), dim)
	if err != nil {
		t.Fatal(err)
	}
	in := l.Info()
	e := state.NewEncoder(0)
	e.Header(in.Name, in.Spec, in.Dim)
	e.U64(0)
	return e
}

// The 193-byte PROS-N-KONS / CON-KONS state: a valid state whose
// map rank is patched out of range. kons.go recorded the error but still
// sized the ONS (rank² floats) from it: 506 MB at rank 2^13, a fatal
// out-of-memory above.
func TestHostileKONSRank(t *testing.T) {
	for _, spec := range []string{"pros-n-kons", "con-kons"} {
		const dim = 1
		l, err := New(rawSpec(spec), dim)
		if err != nil {
			t.Fatal(err)
		}
		k := konsOf(l)
		k.Learn([]float64{0.5}, 1) // one dictionary point: rank 1
		valid, _ := l.MarshalBinary()
		// Offset of the rank: header and counter, then the dictionary.
		e := state.NewEncoder(0)
		k.dict.encode(e)
		off := len(k.encoder(0).Bytes()) + len(e.Bytes())
		if got := int64(binary.LittleEndian.Uint64(valid[off:])); got != int64(k.r) || k.r != 1 {
			t.Fatalf("%s: rank field at %d reads %d, rank is %d", spec, off, got, k.r)
		}
		for _, rank := range []int64{2, 1 << 13, 1 << 40, -1} {
			forged := bytes.Clone(valid)
			binary.LittleEndian.PutUint64(forged[off:], uint64(rank))
			refuseCheaply(t, spec, dim, forged)
		}
	}
}

// The KORS state: a dictionary of 2^16 one-dimensional points
// (points and weights present, ~1 MiB) whose factor rows are absent.
// decodeKORS reserved the 2^16 × 2^16 factor (32 GiB) before reading them.
func TestHostileKORSDictionary(t *testing.T) {
	for _, spec := range []string{"pros-n-kons", "con-kons", "pkawv:basis=nystrom,max_points=0"} {
		const m = 1 << 16
		e := headerOf(t, spec, 1)
		e.Int(m)
		ones := make([]float64, m)
		for i := range ones {
			ones[i] = 1
		}
		e.F64s(ones) // points
		e.F64s(ones) // weights
		e.F64s([]float64{1})
		refuseCheaply(t, spec, 1, e.Bytes())
	}
}

// A Cholesky factor (KAWV, PKAWV) declaring more rows than are present:
// decodeFactor sized the n×n factor first (2 GiB for KAWV's 16384).
func TestHostileFactorRows(t *testing.T) {
	spec := "kawv:max_points=16384"
	e := headerOf(t, spec, 1)
	e.U64(0) // ignored
	pts := make([]float64, 16384)
	e.F64s(pts) // points
	e.F64s(pts) // labels
	e.F64s(pts) // γ
	e.Int(16384)
	e.F64s([]float64{1})
	refuseCheaply(t, spec, 1, e.Bytes())
}

// An ALD dictionary (AOGD-ALD, NONS-ALD without a cap) of 50,000 points
// present but without its factor rows: the dictionary sized a
// 100,000 × 100,000 factor (80 GB) first.
func TestHostileALDDictionary(t *testing.T) {
	for _, spec := range []string{"aogd-ald:budget=0", "nons-ald:budget=0"} {
		const n = 50000
		e := headerOf(t, spec, 1)
		e.F64s(make([]float64, n))
		e.Int(n)
		e.F64s([]float64{1})
		refuseCheaply(t, spec, 1, e.Bytes())
	}
}

// An ONS state (NONS-ALD after an empty dictionary) declaring dimension
// 2^16 without its 2^32 entries.
func TestHostileONSDimension(t *testing.T) {
	spec := "nons-ald:budget=0"
	e := headerOf(t, spec, 1)
	e.F64s(nil) // no dictionary points
	e.Int(0)
	e.Int(1 << 16)
	e.F64s(make([]float64, 1<<16))
	refuseCheaply(t, spec, 1, e.Bytes())
}

// Length prefixes larger than the state: every slice reader refuses them
// before allocating.
func TestHostileLengthPrefix(t *testing.T) {
	for _, spec := range []string{"fogd", "nogd", "rbp", "dsg", "forks", "kawv", "pkawv"} {
		e := headerOf(t, spec, 2)
		e.U32(1<<28 - 1)
		refuseCheaply(t, spec, 2, e.Bytes())
	}
}

// sweepValues are the hostile sizes written over every field position of
// a valid state in TestUnmarshalFieldSweep.
// (2^11 is in range for most sizes but would cost 2^22 floats as a square,
// 2^16+1 is just past the 2^16 limits, the others overflow products).
var sweepValues = []uint64{1 << 11, 1<<16 + 1, 1<<62 + 3, 1<<64 - 1}

// TestUnmarshalFieldSweep is the systematic complement of FuzzUnmarshal:
// for a valid state of every fuzz spec, it overwrites each position in
// turn with hostile sizes, as a 64-bit integer (Int, U64) and as a 32-bit
// length prefix, and checks that UnmarshalBinary never panics, stays within
// fuzzAllocBound, and refuses with an error wrapping ErrCorrupt or
// MismatchError — or accepts a state that re-marshals to the same bytes.
// It takes tens of seconds; -short skips it.
func TestUnmarshalFieldSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("sweep of every field of every fuzz spec's state (-short)")
	}
	for i, spec := range fuzzSpecs {
		l := newFuzzLearner(t, spec)
		feedStream(l, 40, uint64(7+i))
		valid, _ := l.MarshalBinary()
		fresh := newFuzzLearner(t, spec)
		before, _ := fresh.MarshalBinary()
		try := func(data []byte, what string) {
			a0 := totalAlloc()
			err := fresh.UnmarshalBinary(data)
			if got := totalAlloc() - a0; got > fuzzAllocBound(len(data)) {
				t.Fatalf("%s: %s: %d-byte state allocated %d bytes (err %v)", spec, what, len(data), got, err)
			}
			if err != nil {
				var me *state.MismatchError
				if !errors.Is(err, state.ErrCorrupt) && !errors.As(err, &me) {
					t.Fatalf("%s: %s: error %v wraps neither ErrCorrupt nor MismatchError", spec, what, err)
				}
				return
			}
			again, _ := fresh.MarshalBinary()
			if !bytes.Equal(again, data) {
				t.Fatalf("%s: %s: accepted state re-marshals differently", spec, what)
			}
			fresh = newFuzzLearner(t, spec)
		}
		buf := make([]byte, len(valid))
		for off := 0; off+4 <= len(valid); off++ {
			for _, v := range sweepValues {
				if off+8 <= len(valid) {
					copy(buf, valid)
					binary.LittleEndian.PutUint64(buf[off:], v)
					try(buf, "int64 at "+itoa(off))
				}
				copy(buf, valid)
				binary.LittleEndian.PutUint32(buf[off:], uint32(v))
				try(buf, "uint32 at "+itoa(off))
			}
		}
		if after, _ := fresh.MarshalBinary(); !bytes.Equal(after, before) && !bytes.Equal(after, valid) {
			t.Fatalf("%s: refused states changed the learner", spec)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
