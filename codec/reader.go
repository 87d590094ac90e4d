package codec

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"

	"github.com/vmihailenco/msgpack/v5"
)

// kind classifies a msgpack type code (the first byte of a value).
type kind uint8

const (
	kInvalid kind = iota // 0xc1, "never used" in the msgpack spec
	kNil
	kBool
	kUint // positive fixint, uint8..uint64
	kInt  // negative fixint, int8..int64
	kFloat32
	kFloat64
	kStr
	kBin
	kArray
	kMap
	kExt
)

// kindOf is a plain table of the msgpack spec's type codes. The library's
// msgpcode package exposes the codes as variables, not constants, so they
// cannot be used in a switch the compiler turns into a jump table.
func kindOf(c byte) kind {
	switch {
	case c <= 0x7f:
		return kUint
	case c <= 0x8f:
		return kMap
	case c <= 0x9f:
		return kArray
	case c <= 0xbf:
		return kStr
	case c >= 0xe0:
		return kInt
	}
	switch c {
	case 0xc0:
		return kNil
	case 0xc2, 0xc3:
		return kBool
	case 0xc4, 0xc5, 0xc6:
		return kBin
	case 0xc7, 0xc8, 0xc9, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8:
		return kExt
	case 0xca:
		return kFloat32
	case 0xcb:
		return kFloat64
	case 0xcc, 0xcd, 0xce, 0xcf:
		return kUint
	case 0xd0, 0xd1, 0xd2, 0xd3:
		return kInt
	case 0xd9, 0xda, 0xdb:
		return kStr
	case 0xdc, 0xdd:
		return kArray
	case 0xde, 0xdf:
		return kMap
	}
	return kInvalid
}

func (k kind) String() string {
	switch k {
	case kNil:
		return "nil"
	case kBool:
		return "boolean"
	case kUint, kInt:
		return "integer"
	case kFloat32:
		return "float32"
	case kFloat64:
		return "float64"
	case kStr:
		return "string"
	case kBin:
		return "binary"
	case kArray:
		return "array"
	case kMap:
		return "map"
	case kExt:
		return "extension"
	}
	return "invalid code"
}

const codeUint64 = 0xcf

// reader walks one msgpack record held in memory. Values are parsed with the
// msgpack library's low-level Decoder reading from a bytes.Reader (which the
// library uses directly, without its own buffering), so the position in b is
// always exact. Before the library is asked to read a value, reader looks at
// the type code itself; this is what lets it report a wrong type as
// bad_field_type (and not as a parse failure), and check every declared
// length against the bytes that remain before anything is allocated or
// skipped. After that check, an error from the library can only mean
// truncated or malformed input, reported as not_msgpack.
type reader struct {
	b   []byte
	br  bytes.Reader
	dec *msgpack.Decoder
}

func (r *reader) init() {
	r.dec = msgpack.NewDecoder(&r.br)
}

func (r *reader) reset(b []byte) {
	r.b = b
	r.br.Reset(b)
}

// rem is the number of unread bytes; pos the offset of the next one.
func (r *reader) rem() int { return r.br.Len() }
func (r *reader) pos() int { return len(r.b) - r.br.Len() }

// advance moves past n bytes; callers have checked n <= r.rem().
func (r *reader) advance(n int) {
	_, _ = r.br.Seek(int64(n), io.SeekCurrent)
}

// seekTo moves to offset p; callers have checked 0 <= p <= len(r.b).
func (r *reader) seekTo(p int) {
	_, _ = r.br.Seek(int64(p), io.SeekStart)
}

// peek returns the next type code without consuming it. It reads the byte
// from the buffer directly: the same as Decoder.PeekCode without the two
// interface calls (this runs once per feature value).
func (r *reader) peek(field string) (byte, *Error) {
	p := r.pos()
	if p >= len(r.b) {
		return 0, newError(ReasonNotMsgpack, field, "record ends where a value was expected (truncated)")
	}
	return r.b[p], nil
}

// malformed turns an error from the msgpack library into not_msgpack.
func malformed(field string, err error) *Error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return newError(ReasonNotMsgpack, field, "record ends inside a value (truncated)")
	}
	return newError(ReasonNotMsgpack, field, "malformed msgpack: %v", err)
}

func badType(field string, c byte, want string) *Error {
	k := kindOf(c)
	if k == kInvalid {
		return newError(ReasonNotMsgpack, field, "invalid msgpack type code 0x%02x", c)
	}
	return newError(ReasonBadFieldType, field, "is a %s, want %s", k, want)
}

func badElemType(field string, i int, c byte, want string) *Error {
	k := kindOf(c)
	if k == kInvalid {
		return newError(ReasonNotMsgpack, field, "element %d: invalid msgpack type code 0x%02x", i, c)
	}
	return newError(ReasonBadFieldType, field, "element %d is a %s, want %s", i, k, want)
}

// isNil reports whether the next value is nil, and if so consumes it.
func (r *reader) takeNil() bool {
	p := r.pos()
	if p < len(r.b) && r.b[p] == 0xc0 {
		r.advance(1)
		return true
	}
	return false
}

// bytesLen reads the header of a str or bin value and checks its length
// against the remaining bytes. It returns the offset of the payload.
func (r *reader) bytesLen(field string) (off, n int, e *Error) {
	n, err := r.dec.DecodeBytesLen()
	if err != nil {
		return 0, 0, malformed(field, err)
	}
	if n > r.rem() {
		return 0, 0, newError(ReasonNotMsgpack, field, "declares %d bytes but only %d remain (truncated)", n, r.rem())
	}
	return r.pos(), n, nil
}

// str reads a str or bin value and returns a view of its bytes in the record
// (valid as long as the record is). want names the expected type in errors.
func (r *reader) str(field, want string) ([]byte, *Error) {
	c, e := r.peek(field)
	if e != nil {
		return nil, e
	}
	if k := kindOf(c); k != kStr && k != kBin {
		return nil, badType(field, c, want)
	}
	off, n, e := r.bytesLen(field)
	if e != nil {
		return nil, e
	}
	r.advance(n)
	return r.b[off : off+n : off+n], nil
}

// int reads an integer. ok is false when the value is a uint64 above
// math.MaxInt64 (v is then meaningless). Floats are not integers.
func (r *reader) int(field string) (v int64, ok bool, e *Error) {
	c, e := r.peek(field)
	if e != nil {
		return 0, false, e
	}
	switch kindOf(c) {
	case kUint:
		if c == codeUint64 {
			u, err := r.dec.DecodeUint64()
			if err != nil {
				return 0, false, malformed(field, err)
			}
			return int64(u), u <= math.MaxInt64, nil
		}
	case kInt:
	default:
		return 0, false, badType(field, c, "an integer")
	}
	v, err := r.dec.DecodeInt64()
	if err != nil {
		return 0, false, malformed(field, err)
	}
	return v, true, nil
}

// number reads any msgpack number (int, uint, float32, float64) as a float64.
// c is the value's type code, already peeked by the caller; the caller also
// checks the kind (so the error can name an array element).
func (r *reader) number(field string, c byte) (float64, *Error) {
	if c == codeUint64 {
		// The library's DecodeFloat64 converts uint64 through int64, which
		// wraps values above math.MaxInt64.
		u, err := r.dec.DecodeUint64()
		if err != nil {
			return 0, malformed(field, err)
		}
		return float64(u), nil
	}
	v, err := r.dec.DecodeFloat64()
	if err != nil {
		return 0, malformed(field, err)
	}
	return v, nil
}

func isNumber(k kind) bool {
	return k == kUint || k == kInt || k == kFloat32 || k == kFloat64
}

// arrayLen reads an array header and checks that the declared length could fit
// in the remaining bytes (every element takes at least one byte).
func (r *reader) arrayLen(field string) (int, *Error) {
	c, e := r.peek(field)
	if e != nil {
		return 0, e
	}
	if kindOf(c) != kArray {
		return 0, badType(field, c, "an array")
	}
	n, err := r.dec.DecodeArrayLen()
	if err != nil {
		return 0, malformed(field, err)
	}
	if n > r.rem() {
		return 0, newError(ReasonNotMsgpack, field, "array declares %d elements but only %d bytes remain (truncated)", n, r.rem())
	}
	return n, nil
}

// mapLen reads a map header (the caller has checked the kind) and checks that
// the declared number of entries could fit in the remaining bytes.
func (r *reader) mapLen(field string) (int, *Error) {
	// Only reached with a map code: DecodeMapLen would also accept (and skip)
	// an extension header, which this format does not allow.
	n, err := r.dec.DecodeMapLen()
	if err != nil {
		return 0, malformed(field, err)
	}
	if 2*int64(n) > int64(r.rem()) {
		return 0, newError(ReasonNotMsgpack, field, "map declares %d entries but only %d bytes remain (truncated)", n, r.rem())
	}
	return n, nil
}

// key reads a map key, which must be a str or bin. i is the entry's index,
// for the error message.
func (r *reader) key(prefix string, i int) ([]byte, *Error) {
	c, e := r.peek(prefix)
	if e != nil {
		return nil, e
	}
	if k := kindOf(c); k != kStr && k != kBin {
		if k == kInvalid {
			return nil, newError(ReasonNotMsgpack, prefix, "invalid msgpack type code 0x%02x", c)
		}
		return nil, newError(ReasonBadFieldType, prefix, "map key %d is a %s, want a string", i, k)
	}
	return r.str(prefix, "a string")
}

// skip moves past one value of any type, checking that it is well-formed.
//
// It is iterative rather than the library's Decoder.Skip, which recurses once
// per nesting level (a record of a million 0x91 bytes would nest a million
// frames deep) and, for str/bin/ext values, reads the declared length into a
// growing buffer before finding that the record is shorter. Here a pending
// count replaces the recursion, and every declared length is checked against
// the remaining bytes first; scalars are still skipped by the library.
func (r *reader) skip(field string) *Error {
	for pending := 1; pending > 0; pending-- {
		c, e := r.peek(field)
		if e != nil {
			return e
		}
		switch kindOf(c) {
		case kInvalid:
			return newError(ReasonNotMsgpack, field, "invalid msgpack type code 0x%02x", c)
		case kArray:
			n, e := r.arrayLen(field)
			if e != nil {
				return e
			}
			pending += n
		case kMap:
			n, e := r.mapLen(field)
			if e != nil {
				return e
			}
			pending += 2 * n
		case kStr, kBin:
			_, n, e := r.bytesLen(field)
			if e != nil {
				return e
			}
			r.advance(n)
		case kExt:
			_, n, err := r.dec.DecodeExtHeader()
			if err != nil {
				return malformed(field, err)
			}
			if n > r.rem() {
				return newError(ReasonNotMsgpack, field, "extension declares %d bytes but only %d remain (truncated)", n, r.rem())
			}
			r.advance(n)
		default:
			if err := r.dec.Skip(); err != nil {
				return malformed(field, err)
			}
		}
	}
	return nil
}

// fastFloat decodes the number at b[p:] directly when it is in one of the
// forms producers use for feature values: float64 (this package, Python
// floats), float32, or a fixint (Python's small ints). It returns the value
// and its encoded size, or size 0 for anything else (other integer forms,
// other types, truncated input), which the caller hands to the library.
//
// This is the one place numbers are parsed by hand: through the library each
// element costs interface calls per byte read plus io.ReadFull, about 20 ns:
// decoding a dense d = 300 event took 6.0 µs, comparable to a learner's update,
// against 1.45 µs with this fast path. The byte layouts are the msgpack spec's;
// the golden tests and the fuzzer check them against the library's encoder.
func fastFloat(b []byte, p int) (float64, int) {
	if p >= len(b) {
		return 0, 0
	}
	switch c := b[p]; {
	case c <= 0x7f:
		return float64(c), 1
	case c >= 0xe0:
		return float64(int8(c)), 1
	case c == 0xcb:
		if len(b)-p >= 9 {
			return math.Float64frombits(binary.BigEndian.Uint64(b[p+1:])), 9
		}
	case c == 0xca:
		if len(b)-p >= 5 {
			return float64(math.Float32frombits(binary.BigEndian.Uint32(b[p+1:]))), 5
		}
	}
	return 0, 0
}

// fastIndex is fastFloat for sparse indices: positive fixint and uint8/16/32,
// the forms any msgpack encoder uses for 0 <= index < 2^32. ok is always true
// when size > 0.
func fastIndex(b []byte, p int) (v int64, ok bool, size int) {
	if p >= len(b) {
		return 0, false, 0
	}
	switch c := b[p]; {
	case c <= 0x7f:
		return int64(c), true, 1
	case c == 0xcc:
		if len(b)-p >= 2 {
			return int64(b[p+1]), true, 2
		}
	case c == 0xcd:
		if len(b)-p >= 3 {
			return int64(binary.BigEndian.Uint16(b[p+1:])), true, 3
		}
	case c == 0xce:
		if len(b)-p >= 5 {
			return int64(binary.BigEndian.Uint32(b[p+1:])), true, 5
		}
	}
	return 0, false, 0
}
