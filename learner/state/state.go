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
//
// # Untrusted input
//
// A state may come from anywhere a checkpoint is stored, so decoding treats
// it as hostile. The guarantee, for the Decoder and for every learner's
// UnmarshalBinary built on it: a state of n bytes never causes more than
// O(n) + O(configured budget) allocation — the configured budget being what
// the learner's own spec fixes (budget, rank, dictionary cap, feature count,
// dimension), which a freshly built learner already holds. The Decoder
// checks every length prefix against the bytes actually remaining before it
// allocates (a slice of k float64s needs 8k bytes present), and learners
// read every size they will allocate from (dimension, rank, dictionary size,
// count) with IntIn against their configuration, and reserve with Need the
// bytes a matrix's rows will occupy before sizing the matrix. A value out of
// range is an error and is never used afterwards (IntIn returns 0 for it),
// and no input makes a decoder panic.
//
// Every decoding error wraps ErrCorrupt, except a well-formed state of a
// differently configured learner, which is a *MismatchError. A learner whose
// UnmarshalBinary returns an error is left unchanged.
package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// Magic identifies an okstream learner state.
const Magic uint32 = 0x4c4b534f // "OSKL" little-endian

// FormatVersion is the version of the header layout.
const FormatVersion uint16 = 1

// maxLen bounds any single length prefix (a second line of defence: every
// prefix is also checked against the bytes remaining before allocating).
const maxLen = 1 << 28

// ErrCorrupt is wrapped by every decoding error.
var ErrCorrupt = errors.New("learner state corrupt or truncated")

// Encoder appends encoded values to a buffer.
type Encoder struct {
	buf       []byte
	nonFinite int
	sink      *int // also counts non-finite values, if set (CountNonFinite)
}

// NewEncoder returns an Encoder with capacity hint n bytes.
func NewEncoder(n int) *Encoder { return &Encoder{buf: make([]byte, 0, n)} }

// NewEncoderInto returns an Encoder that appends to buf[:0] (reusing its
// storage) when its capacity is at least n bytes, and to a new buffer of
// capacity n otherwise.
func NewEncoderInto(buf []byte, n int) *Encoder {
	if cap(buf) < n {
		return NewEncoder(n)
	}
	return &Encoder{buf: buf[:0]}
}

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

// F64 appends a float64's bit pattern, counting it if it is NaN or ±Inf.
func (e *Encoder) F64(v float64) {
	b := math.Float64bits(v)
	if b&expMask == expMask {
		e.nonFinite++
		if e.sink != nil {
			*e.sink++
		}
	}
	e.U64(b)
}

// expMask selects a float64's exponent bits: all set means NaN or ±Inf.
const expMask = 0x7ff0000000000000

// NonFinite returns how many NaN or infinite values F64 and F64s have
// written so far: a model state with a non-zero count is not fit to be
// checkpointed as a working model (learner.MarshalChecked reports it).
func (e *Encoder) NonFinite() int { return e.nonFinite }

// CountNonFinite makes the Encoder also add every NaN or infinite value it
// writes from now on to *n, so that the owner of a state can learn the
// count without holding on to the Encoder (and its buffer).
func (e *Encoder) CountNonFinite(n *int) { e.sink = n }

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

// Remaining returns the number of bytes not yet read (0 after an error).
func (d *Decoder) Remaining() int {
	if d.err != nil {
		return 0
	}
	return len(d.b) - d.off
}

// Need reports whether at least count×size more bytes are present (count,
// size ≥ 0; the product may not overflow into a pass). Otherwise it records
// an error naming what and returns false. Learners call it with the bytes a
// structure's encoding will occupy before allocating that structure, so
// that a declared size alone never sizes an allocation.
func (d *Decoder) Need(count, size int, what string) bool {
	if d.err != nil {
		return false
	}
	rem := len(d.b) - d.off
	if count < 0 || size < 0 || (size > 0 && count > rem/size) {
		d.Fail("%s: needs %d×%d bytes, %d remain", what, count, size, rem)
		return false
	}
	return true
}

// IntIn reads an int that must lie in [lo, hi]. Out of range, it records an
// error naming what and returns 0, so that the value read is never used
// (e.g. to size an allocation) after an error; after an earlier error it
// returns 0 too.
func (d *Decoder) IntIn(lo, hi int, what string) int {
	v := d.Int()
	if d.err != nil {
		return 0
	}
	if v < lo || v > hi {
		d.Fail("%s %d outside [%d, %d]", what, v, lo, hi)
		return 0
	}
	return v
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
	return d.f64s(dst, n)
}

// littleEndian: the machine stores a uint64 as the encoding does.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// f64s reads n floats (the length prefix already read) into dst.
func (d *Decoder) f64s(dst []float64, n int) []float64 {
	if !d.Need(n, 8, "float slice") {
		return dst[:0]
	}
	if cap(dst) < n {
		dst = make([]float64, n)
	}
	dst = dst[:n]
	b := d.take(8 * n) // Need has checked the bytes are there
	if littleEndian && n > 0 {
		// The encoding is the machine's own: one copy of the bits (the
		// same values as the loop below; merging shared deltas decodes
		// P of them per sync point, so this is on a hot path).
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), 8*n), b)
		return dst
	}
	for i := range dst {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return dst
}

// F64sN reads a float64 slice that must have exactly n elements; a slice
// of another length is an error, detected before anything is allocated.
func (d *Decoder) F64sN(dst []float64, n int) []float64 {
	got := d.length()
	if d.err != nil {
		return dst[:0]
	}
	if got != n {
		d.Fail("slice has %d elements, want %d", got, n)
		return dst[:0]
	}
	return d.f64s(dst, n)
}

// Ints reads an int slice.
func (d *Decoder) Ints(dst []int) []int {
	n := d.length()
	if d.err != nil {
		return dst[:0]
	}
	if !d.Need(n, 8, "int slice") {
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
	// Compared as bytes: no allocation unless they differ (a delta is
	// checked this way at every sync point).
	gotName := d.take(d.length())
	gotSpec := d.take(d.length())
	gotDim := d.Int()
	if d.err != nil {
		return
	}
	if string(gotName) != name || string(gotSpec) != spec || gotDim != dim {
		d.err = &MismatchError{WantName: name, WantSpec: spec, WantDim: dim, GotName: string(gotName), GotSpec: string(gotSpec), GotDim: gotDim}
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

// Quantize8 quantises x to 8 bits with one scale: s = max_i |x_i| / 127 and
// q_i = round(x_i · 127/max|x|) (ties away from zero, as math.Round) as an
// int8 in out[i] (len(out) ≥ len(x)); Dequant8(out[i], s) reads it back,
// within s/2 of x_i (up to a few ulp). All zero x gives s = 0; a NaN or
// infinite x_i gives s = NaN and every q_i = 0, so that every reader gets
// NaN (a diverged model stays visibly diverged). Deterministic and the
// same on every platform (no fused operations).
func Quantize8(x []float64, out []byte) float64 { return Quantize8Max(x, MaxAbs(x), out) }

// MaxAbs is max_i |x_i| (0 for an empty x), NaN if some x_i is NaN. A
// caller that computes x can track the same maximum as it goes (AbsMax)
// and call Quantize8Max, saving a pass.
func MaxAbs(x []float64) float64 {
	var amax float64
	for _, v := range x {
		amax = AbsMax(amax, v)
	}
	return amax
}

// AbsMax is max(m, |v|) for a running maximum m ≥ 0, sticky NaN: once m
// or v is NaN, NaN.
func AbsMax(m, v float64) float64 {
	if a := math.Abs(v); !(a <= m) && m == m { // a > m, or a NaN
		return a
	}
	return m
}

// Quantize8Max is Quantize8 for an amax already known to be MaxAbs(x).
func Quantize8Max(x []float64, amax float64, out []byte) float64 {
	out = out[:len(x)]
	if amax != amax || math.IsInf(amax, 0) {
		clear(out)
		return math.NaN()
	}
	if amax == 0 {
		clear(out)
		return 0
	}
	s := amax / 127
	// For an amax so small that 127/amax overflows, scale everything by
	// 2^600 first (exact: a power of two) so that inv is finite.
	pre := 1.0
	if amax < 0x1p-1000 {
		pre, amax = 0x1p600, amax*0x1p600
	}
	inv := 127 / amax // one division; v·inv is within 2 ulp of v/s
	for i, v := range x {
		// |y| ≤ 127·(1+2⁻⁵¹) since |v| ≤ amax, so q is in [-127, 127].
		// Rounding half away from zero, exactly as math.Round and
		// without branches: t = trunc(y), f = y − t (exact, |f| < 1),
		// and trunc(2f) is ±1 exactly when |f| ≥ 1/2 (2f is exact).
		y := v * pre * inv
		t := int64(y)
		f := y - float64(t)
		out[i] = byte(int8(t + int64(f*2)))
	}
	return s
}

// Dequant8 is the value an 8-bit code q of scale s stands for, q·s,
// rounded once.
func Dequant8(q byte, s float64) float64 { return float64(float64(int8(q)) * s) }

// Q8Codes appends codes made by Quantize8 with their scale: the length,
// the scale, and one byte per element (an eighth of F64s). A NaN scale is
// counted as non-finite. Decoder.Q8sRawN reads it back.
func (e *Encoder) Q8Codes(scale float64, codes []byte) {
	e.U32(uint32(len(codes)))
	if scale != scale {
		e.nonFinite++
		if e.sink != nil {
			*e.sink++
		}
	}
	e.U64(math.Float64bits(scale))
	e.buf = append(e.buf, codes...)
}

// Q8sRawN reads what Encoder.Q8Codes wrote, which must have exactly n
// elements: the scale and the n codes (a view of the input, read with
// Dequant8); a zero scale and nil after an error.
func (d *Decoder) Q8sRawN(n int) (float64, []byte) {
	got := d.length()
	if d.err != nil {
		return 0, nil
	}
	if got != n {
		d.Fail("slice has %d elements, want %d", got, n)
		return 0, nil
	}
	s := d.F64()
	if d.err != nil || !d.Need(n, 1, "8-bit slice") {
		return 0, nil
	}
	if s < 0 || math.IsInf(s, 0) {
		d.Fail("8-bit slice with scale %v", s)
		return 0, nil
	}
	return s, d.take(n)
}
