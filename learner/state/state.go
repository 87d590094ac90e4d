// Package state is the binary encoding of learner state used by
// MarshalBinary/UnmarshalBinary.
//
// The format is deliberately simple and fully deterministic: fixed-width
// little-endian integers, IEEE-754 bit patterns for floats (so NaN payloads,
// signed zeros and every last bit survive a round trip), and length-prefixed
// slices and strings. The same state always encodes to the same bytes, which
// is what lets the runtime compare checkpoints byte for byte.
//
// Every encoded learner starts with a header (see Header): a magic number, the
// format version, the learner's registry name and its canonical spec, so that
// a state is never silently loaded into a learner with a different
// configuration.
//
// Decoder errors are sticky: after the first short read or bad length every
// further read returns a zero value, and Err reports the first problem. Callers
// read all fields and check Err once at the end.
package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Magic identifies an okstream learner state.
const Magic uint32 = 0x4c4b534f // "OSKL" little-endian

// FormatVersion is the version of the header layout.
const FormatVersion uint16 = 1

// maxLen bounds any single length prefix so a corrupt state cannot make the
// decoder allocate gigabytes.
const maxLen = 1 << 28

// ErrCorrupt is wrapped by every decoding error.
var ErrCorrupt = errors.New("learner state corrupt or truncated")

// Encoder appends encoded values to a buffer.
type Encoder struct {
	buf []byte
}

// NewEncoder returns an Encoder with capacity hint n bytes.
func NewEncoder(n int) *Encoder { return &Encoder{buf: make([]byte, 0, n)} }

// Bytes returns the encoded bytes.
func (e *Encoder) Bytes() []byte { return e.buf }

// U8 appends a byte.
func (e *Encoder) U8(v uint8) { e.buf = append(e.buf, v) }

// Bool appends a bool as one byte.
func (e *Encoder) Bool(v bool) {
	if v {
		e.U8(1)
	} else {
		e.U8(0)
	}
}

// U32 appends a uint32.
func (e *Encoder) U32(v uint32) { e.buf = binary.LittleEndian.AppendUint32(e.buf, v) }

// U64 appends a uint64.
func (e *Encoder) U64(v uint64) { e.buf = binary.LittleEndian.AppendUint64(e.buf, v) }

// I64 appends an int64.
func (e *Encoder) I64(v int64) { e.U64(uint64(v)) }

// Int appends an int as int64.
func (e *Encoder) Int(v int) { e.I64(int64(v)) }

// F64 appends a float64's bit pattern.
func (e *Encoder) F64(v float64) { e.U64(math.Float64bits(v)) }

// F64s appends a length-prefixed float64 slice.
func (e *Encoder) F64s(v []float64) {
	e.U32(uint32(len(v)))
	for _, x := range v {
		e.F64(x)
	}
}

// Ints appends a length-prefixed int slice.
func (e *Encoder) Ints(v []int) {
	e.U32(uint32(len(v)))
	for _, x := range v {
		e.Int(x)
	}
}

// String appends a length-prefixed string.
func (e *Encoder) String(s string) {
	e.U32(uint32(len(s)))
	e.buf = append(e.buf, s...)
}

// Blob appends a length-prefixed byte slice.
func (e *Encoder) Blob(b []byte) {
	e.U32(uint32(len(b)))
	e.buf = append(e.buf, b...)
}

// Header appends the common header: magic, format version, learner name,
// canonical spec and input dimension.
func (e *Encoder) Header(name, spec string, dim int) {
	e.U32(Magic)
	e.buf = binary.LittleEndian.AppendUint16(e.buf, FormatVersion)
	e.String(name)
	e.String(spec)
	e.Int(dim)
}

// Decoder reads values written by an Encoder.
type Decoder struct {
	b   []byte
	off int
	err error
}

// NewDecoder returns a Decoder over b.
func NewDecoder(b []byte) *Decoder { return &Decoder{b: b} }

// Err returns the first decoding error, if any.
func (d *Decoder) Err() error { return d.err }

// Fail records err (if no earlier error) so that callers can report semantic
// problems (e.g. a slice of the wrong length) through the same path.
func (d *Decoder) Fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
}

// Done reports an error if bytes remain unread, then returns Err.
func (d *Decoder) Done() error {
	if d.err == nil && d.off != len(d.b) {
		d.Fail("%d trailing bytes", len(d.b)-d.off)
	}
	return d.err
}

func (d *Decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || len(d.b)-d.off < n {
		d.Fail("need %d bytes at offset %d, have %d", n, d.off, len(d.b)-d.off)
		return nil
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

// U8 reads a byte.
func (d *Decoder) U8() uint8 {
	p := d.take(1)
	if p == nil {
		return 0
	}
	return p[0]
}

// Bool reads a bool.
func (d *Decoder) Bool() bool {
	v := d.U8()
	if v > 1 {
		d.Fail("bad bool %d", v)
	}
	return v == 1
}

// U32 reads a uint32.
func (d *Decoder) U32() uint32 {
	p := d.take(4)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(p)
}

// U64 reads a uint64.
func (d *Decoder) U64() uint64 {
	p := d.take(8)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(p)
}

// I64 reads an int64.
func (d *Decoder) I64() int64 { return int64(d.U64()) }

// Int reads an int written by Encoder.Int.
func (d *Decoder) Int() int { return int(d.I64()) }

// F64 reads a float64.
func (d *Decoder) F64() float64 { return math.Float64frombits(d.U64()) }

func (d *Decoder) length() int {
	n := int(d.U32())
	if n > maxLen {
		d.Fail("length %d exceeds limit", n)
		return 0
	}
	return n
}

// F64s reads a float64 slice into dst (reusing its storage when it has the
// capacity) and returns it.
func (d *Decoder) F64s(dst []float64) []float64 {
	n := d.length()
	if d.err != nil {
		return dst[:0]
	}
	if len(d.b)-d.off < 8*n {
		d.Fail("slice of %d floats overruns state", n)
		return dst[:0]
	}
	if cap(dst) < n {
		dst = make([]float64, n)
	}
	dst = dst[:n]
	for i := range dst {
		dst[i] = d.F64()
	}
	return dst
}

// F64sN reads a float64 slice that must have exactly n elements.
func (d *Decoder) F64sN(dst []float64, n int) []float64 {
	dst = d.F64s(dst)
	if d.err == nil && len(dst) != n {
		d.Fail("slice has %d elements, want %d", len(dst), n)
	}
	return dst
}

// Ints reads an int slice.
func (d *Decoder) Ints(dst []int) []int {
	n := d.length()
	if d.err != nil {
		return dst[:0]
	}
	if len(d.b)-d.off < 8*n {
		d.Fail("slice of %d ints overruns state", n)
		return dst[:0]
	}
	if cap(dst) < n {
		dst = make([]int, n)
	}
	dst = dst[:n]
	for i := range dst {
		dst[i] = d.Int()
	}
	return dst
}

// String reads a string.
func (d *Decoder) String() string {
	n := d.length()
	p := d.take(n)
	return string(p)
}

// Blob reads a byte slice (a copy).
func (d *Decoder) Blob() []byte {
	n := d.length()
	p := d.take(n)
	if p == nil {
		return nil
	}
	return append([]byte(nil), p...)
}

// Header reads and checks the common header against the expected learner
// name, canonical spec and dimension.
func (d *Decoder) Header(name, spec string, dim int) {
	if m := d.U32(); d.err == nil && m != Magic {
		d.Fail("not an okstream learner state (magic %#x)", m)
		return
	}
	p := d.take(2)
	if p != nil {
		if v := binary.LittleEndian.Uint16(p); v != FormatVersion {
			d.Fail("state format version %d, this build reads %d", v, FormatVersion)
			return
		}
	}
	gotName := d.String()
	gotSpec := d.String()
	gotDim := d.Int()
	if d.err != nil {
		return
	}
	if gotName != name || gotSpec != spec || gotDim != dim {
		d.err = &MismatchError{WantName: name, WantSpec: spec, WantDim: dim, GotName: gotName, GotSpec: gotSpec, GotDim: gotDim}
	}
}

// PeekHeader returns the learner name, spec and dimension stored in an
// encoded state without decoding the rest.
func PeekHeader(b []byte) (name, spec string, dim int, err error) {
	d := NewDecoder(b)
	if m := d.U32(); d.err == nil && m != Magic {
		return "", "", 0, fmt.Errorf("%w: not an okstream learner state", ErrCorrupt)
	}
	d.take(2)
	name = d.String()
	spec = d.String()
	dim = d.Int()
	return name, spec, dim, d.err
}

// MismatchError reports a state that belongs to a differently configured
// learner: restoring it would silently change the model, so it is refused.
type MismatchError struct {
	WantName, WantSpec string
	WantDim            int
	GotName, GotSpec   string
	GotDim             int
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("learner state is for %q (dim %d), not %q (dim %d); the model configuration changed since the state was written",
		e.GotSpec, e.GotDim, e.WantSpec, e.WantDim)
}
