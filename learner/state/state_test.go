package state

import (
	"errors"
	"math"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	e := NewEncoder(0)
	e.Header("fogd", "fogd:sigma=1", 3)
	e.U8(7)
	e.Bool(true)
	e.Int(-5)
	e.F64(math.Copysign(0, -1))
	e.F64s([]float64{1, math.Inf(1), 3})
	e.Ints([]int{4, -2})
	e.String("héllo")
	e.Blob([]byte{1, 2})
	b := e.Bytes()

	d := NewDecoder(b)
	d.Header("fogd", "fogd:sigma=1", 3)
	if d.U8() != 7 || !d.Bool() || d.Int() != -5 {
		t.Fatal("scalars")
	}
	if z := d.F64(); z != 0 || !math.Signbit(z) {
		t.Fatal("negative zero lost")
	}
	f := d.F64s(nil)
	if len(f) != 3 || !math.IsInf(f[1], 1) {
		t.Fatal("floats")
	}
	if v := d.Ints(nil); len(v) != 2 || v[1] != -2 {
		t.Fatal("ints")
	}
	if d.String() != "héllo" || len(d.Blob()) != 2 {
		t.Fatal("string/blob")
	}
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
	name, spec, dim, err := PeekHeader(b)
	if err != nil || name != "fogd" || spec != "fogd:sigma=1" || dim != 3 {
		t.Fatalf("PeekHeader: %q %q %d %v", name, spec, dim, err)
	}
}

func TestTruncatedAndMismatch(t *testing.T) {
	e := NewEncoder(0)
	e.Header("nogd", "nogd:budget=10", 2)
	e.F64s([]float64{1, 2, 3})
	b := e.Bytes()
	for n := 0; n < len(b); n++ {
		d := NewDecoder(b[:n])
		d.Header("nogd", "nogd:budget=10", 2)
		d.F64s(nil)
		if d.Done() == nil {
			t.Fatalf("truncation at %d not detected", n)
		}
	}
	d := NewDecoder(b)
	d.Header("nogd", "nogd:budget=20", 2)
	var me *MismatchError
	if !errors.As(d.Err(), &me) {
		t.Fatalf("want MismatchError, got %v", d.Err())
	}
	d = NewDecoder(append(append([]byte(nil), b...), 0))
	d.Header("nogd", "nogd:budget=10", 2)
	d.F64s(nil)
	if d.Done() == nil {
		t.Fatal("trailing byte not detected")
	}
}

func TestNonFiniteCount(t *testing.T) {
	var sink int
	e := NewEncoder(0)
	e.CountNonFinite(&sink)
	e.F64(math.MaxFloat64)
	e.F64(math.SmallestNonzeroFloat64)
	e.F64(math.Copysign(0, -1))
	e.F64s([]float64{1, math.NaN(), math.Inf(1), math.Inf(-1), -math.MaxFloat64})
	e.U64(math.Float64bits(math.NaN())) // integers are not counted
	if e.NonFinite() != 3 || sink != 3 {
		t.Fatalf("NonFinite = %d, sink = %d, want 3", e.NonFinite(), sink)
	}
}

// Need and IntIn refuse sizes that the remaining bytes cannot hold, and
// IntIn never returns an out-of-range value.
func TestNeedAndIntIn(t *testing.T) {
	e := NewEncoder(0)
	e.Int(1 << 40)
	e.Int(3)
	e.F64s([]float64{1, 2, 3})
	d := NewDecoder(e.Bytes())
	if v := d.IntIn(0, 1<<16, "size"); v != 0 || !errors.Is(d.Err(), ErrCorrupt) {
		t.Fatalf("IntIn out of range: %d, %v", v, d.Err())
	}
	if d.IntIn(0, 10, "next") != 0 || d.Need(0, 8, "x") || d.Remaining() != 0 {
		t.Fatal("reads after an error must return zero values")
	}
	d = NewDecoder(e.Bytes()[8:])
	if v := d.IntIn(0, 3, "n"); v != 3 {
		t.Fatalf("IntIn = %d", v)
	}
	if !d.Need(3, 8, "floats") || d.Need(4, 8, "too many") || d.Need(1<<62, 1<<62, "overflow") {
		t.Fatal("Need")
	}
	d = NewDecoder(e.Bytes()[8:])
	d.Int()
	if !d.Need(1, 28, "all") || d.Need(1, 29, "one more") {
		t.Fatal("Need at the boundary")
	}
	d = NewDecoder(e.Bytes()[16:])
	if d.F64sN(nil, 2) != nil || !errors.Is(d.Err(), ErrCorrupt) {
		t.Fatal("F64sN must refuse a wrong length without allocating")
	}
}

// The one-copy decoding of float64 slices gives the bits the encoding has.
func TestF64sBits(t *testing.T) {
	v := []float64{0, math.Copysign(0, -1), 1.25, math.Inf(-1), math.Float64frombits(0x7ff8000000000123), 5e-324}
	e := NewEncoder(0)
	e.F64s(v)
	got := NewDecoder(e.Bytes()).F64s(nil)
	for i := range v {
		if math.Float64bits(got[i]) != math.Float64bits(v[i]) {
			t.Fatalf("element %d: %x, want %x", i, math.Float64bits(got[i]), math.Float64bits(v[i]))
		}
	}
}
