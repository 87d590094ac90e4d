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
