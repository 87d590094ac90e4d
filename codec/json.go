package codec

import (
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// JSON input: the Event schema read from a JSON object instead of a msgpack
// map. The scanner is hand-written (no encoding/json): it reads the record in
// place, allocates nothing in steady state beyond what DecodeEvent does, and
// checks every rule while it reads, with the limits and error reasons of
// msgpack. See the package documentation ("JSON") for the mapping of types.

// MaxJSONDepth bounds the nesting of a JSON record (the top-level object is
// depth 1); a deeper record is not_json. Only an unknown key's value can nest
// beyond depth 2 in a valid event.
const MaxJSONDepth = 64

// jsonReader walks one JSON record held in memory.
type jsonReader struct {
	b []byte
	p int
	// keyBuf and valBuf hold the unescaped text of the last key and the
	// last string value that had escapes (other strings are views of b);
	// skipBuf is skip's, so that skipping keeps the key being decoded.
	keyBuf, valBuf, skipBuf []byte
	// prefix makes trailing accept anything after the object
	// (DecodeEventJSONPrefix).
	prefix bool
}

func (j *jsonReader) reset(b []byte) { j.b, j.p = b, 0 }

func notJSON(field, format string, args ...any) *Error {
	return newError(ReasonNotJSON, field, format, args...)
}

// ws skips JSON whitespace.
func (j *jsonReader) ws() {
	if j.p < len(j.b) && j.b[j.p] > ' ' {
		return // no whitespace: the common case in compact JSON
	}
	for j.p < len(j.b) {
		switch j.b[j.p] {
		case ' ', '\t', '\n', '\r':
			j.p++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace, or a not_json error at the end.
func (j *jsonReader) peek(field string) (byte, *Error) {
	j.ws()
	if j.p >= len(j.b) {
		return 0, notJSON(field, "record ends where a value was expected (truncated)")
	}
	return j.b[j.p], nil
}

// expect consumes c after whitespace.
func (j *jsonReader) expect(field string, c byte) *Error {
	got, e := j.peek(field)
	if e != nil {
		return e
	}
	if got != c {
		return notJSON(field, "at offset %d: %s, want %q", j.p, describeByte(got), c)
	}
	j.p++
	return nil
}

func describeByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return "byte 0x" + strconv.FormatUint(uint64(c), 16)
}

// jsonKind names the JSON type a value starting with c has, for errors; ""
// when c starts no JSON value.
func jsonKind(c byte) string {
	switch {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9' || c == 'N' || c == 'I':
		return "a number"
	}
	return ""
}

// badTypeJSON is bad_field_type for a value starting with c, or not_json if
// c starts no value.
func (j *jsonReader) badType(field string, c byte, want string) *Error {
	k := jsonKind(c)
	if k == "" {
		return notJSON(field, "at offset %d: %s starts no JSON value", j.p, describeByte(c))
	}
	return newError(ReasonBadFieldType, field, "is %s, want %s", k, want)
}

func (j *jsonReader) badElemType(field string, i int, c byte, want string) *Error {
	k := jsonKind(c)
	if k == "" {
		return notJSON(field, "element %d: at offset %d: %s starts no JSON value", i, j.p, describeByte(c))
	}
	return newError(ReasonBadFieldType, field, "element %d is %s, want %s", i, k, want)
}

// lit consumes the literal word (true, false, null, NaN, Infinity).
func (j *jsonReader) lit(field, word string) *Error {
	if len(j.b)-j.p < len(word) || string(j.b[j.p:j.p+len(word)]) != word {
		return notJSON(field, "at offset %d: invalid literal (want %s)", j.p, word)
	}
	j.p += len(word)
	return nil
}

// str reads a string (the next byte is '"'). It returns a view of b when the
// string has no escapes, else its unescaped text in *buf. It refuses invalid
// UTF-8, unescaped control characters and lone surrogates.
func (j *jsonReader) str(field string, buf *[]byte) ([]byte, *Error) {
	b := j.b
	start := j.p + 1
	p := start
	for {
		for p < len(b) && plainByte[b[p]] {
			p++ // the common case: printable ASCII other than '"' and '\\'
		}
		if p >= len(b) {
			return nil, notJSON(field, "string not terminated (truncated)")
		}
		c := b[p]
		switch {
		case c == '"':
			j.p = p + 1
			return b[start:p:p], nil
		case c == '\\':
			*buf = append((*buf)[:0], b[start:p]...)
			return j.strEscaped(field, p, buf)
		case c < 0x20:
			return nil, notJSON(field, "control character 0x%02x in a string (escape it)", c)
		case c < 0x80:
			p++
		default:
			r, size := utf8.DecodeRune(b[p:])
			if r == utf8.RuneError && size <= 1 {
				return nil, notJSON(field, "invalid UTF-8 in a string at offset %d", p)
			}
			p += size
		}
	}
}

// plainByte marks the bytes that a string holds as they are, with no check:
// printable ASCII other than '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// strEscaped continues str from the first backslash, at p.
func (j *jsonReader) strEscaped(field string, p int, buf *[]byte) ([]byte, *Error) {
	b := j.b
	out := *buf
	defer func() { *buf = out }()
	for {
		if p >= len(b) {
			return nil, notJSON(field, "string not terminated (truncated)")
		}
		c := b[p]
		switch {
		case c == '"':
			j.p = p + 1
			return out, nil
		case c == '\\':
			if p+1 >= len(b) {
				return nil, notJSON(field, "string not terminated (truncated)")
			}
			p += 2
			switch b[p-1] {
			case '"', '\\', '/':
				out = append(out, b[p-1])
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(b, p)
				if !ok {
					return nil, notJSON(field, "invalid \\u escape at offset %d", p-2)
				}
				p += 4
				if r >= 0xd800 && r < 0xdc00 { // a high surrogate: its pair must follow
					r2, ok := rune(0), false
					if p+1 < len(b) && b[p] == '\\' && b[p+1] == 'u' {
						r2, ok = hex4(b, p+2)
					}
					if !ok || r2 < 0xdc00 || r2 >= 0xe000 {
						return nil, notJSON(field, "lone surrogate \\u%04x at offset %d", r, p-6)
					}
					p += 6
					r = 0x10000 + (r-0xd800)<<10 + (r2 - 0xdc00)
				} else if r >= 0xdc00 && r < 0xe000 {
					return nil, notJSON(field, "lone surrogate \\u%04x at offset %d", r, p-6)
				}
				out = utf8.AppendRune(out, r)
			default:
				return nil, notJSON(field, "invalid escape \\%c at offset %d", b[p-1], p-2)
			}
		case c < 0x20:
			return nil, notJSON(field, "control character 0x%02x in a string (escape it)", c)
		case c < 0x80:
			out = append(out, c)
			p++
		default:
			r, size := utf8.DecodeRune(b[p:])
			if r == utf8.RuneError && size <= 1 {
				return nil, notJSON(field, "invalid UTF-8 in a string at offset %d", p)
			}
			out = append(out, b[p:p+size]...)
			p += size
		}
	}
}

func hex4(b []byte, p int) (rune, bool) {
	if len(b)-p < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[p : p+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// eightDigits returns the value of the eight bytes b[:8] read as decimal
// digits, and whether they all are digits (len(b) >= 8). It works on the
// eight bytes at once as one little-endian uint64 (SWAR), after Lemire's
// "parse eight digits" technique.
func eightDigits(b []byte) (uint64, bool) {
	x := binary.LittleEndian.Uint64(b)
	// A byte is a digit when its high nibble is 3 and adding 6 leaves it 3
	// (low nibble at most 9). A byte whose +6 carries into the next one has
	// high nibble 0xf itself, so the check fails whatever the carry does.
	if x&0xf0f0f0f0f0f0f0f0|((x+0x0606060606060606)&0xf0f0f0f0f0f0f0f0)>>4 != 0x3333333333333333 {
		return 0, false
	}
	x -= 0x3030303030303030 // bytes d0..d7, d0 the first digit (lowest byte)
	// Byte i becomes 10·d(i) + d(i+1): the two-digit pairs P0..P3 in
	// bytes 0, 2, 4, 6 (at most 99, so no byte carries).
	x = x*10 + (x >> 8)
	// High 32 bits of P0·(100 + 10^6·2^32) + P2·2^32·100 are
	// P0·10^6 + P2·100; of P1·(1 + 10^4·2^32) + P3·2^32 they are
	// P1·10^4 + P3. The low halves (at most 9999) never carry.
	const m = 0x000000ff000000ff
	a := (x & m) * (100 + 1000000<<32)
	c := ((x >> 16) & m) * (1 + 10000<<32)
	return (a + c) >> 32, true
}

var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// number reads a number: JSON's grammar, plus the tokens NaN, Infinity and
// -Infinity that Python's json.dumps writes for non-finite floats (so that a
// Python producer's NaN means in JSON what it means in msgpack). isInt is
// true when the text has no fraction and no exponent; then iv holds it and
// iok says whether it fits in an int64. v is the value correctly rounded to
// float64 (±Inf past the float64 range).
func (j *jsonReader) number(field string) (v float64, isInt bool, iv int64, iok bool, e *Error) {
	b := j.b
	s := j.p
	p := s
	if p < len(b) && b[p] == 'N' {
		if e := j.lit(field, "NaN"); e != nil {
			return 0, false, 0, false, e
		}
		return math.NaN(), false, 0, false, nil
	}
	neg := p < len(b) && b[p] == '-'
	if neg {
		p++
	}
	if p < len(b) && b[p] == 'I' {
		j.p = p
		if e := j.lit(field, "Infinity"); e != nil {
			return 0, false, 0, false, e
		}
		if neg {
			return math.Inf(-1), false, 0, false, nil
		}
		return math.Inf(1), false, 0, false, nil
	}
	// Integer part, accumulating up to 19 significant digits.
	var mant uint64
	digits := 0 // significant digits in mant
	dropped := 0
	switch {
	case p < len(b) && b[p] == '0':
		p++
	case p < len(b) && b[p] >= '1' && b[p] <= '9':
		// (No eight-digit step here: integer parts of floats are short,
		// and the fraction's step below is where the digits are.)
		for p < len(b) && b[p] >= '0' && b[p] <= '9' {
			if digits < 19 {
				mant = mant*10 + uint64(b[p]-'0')
				digits++
			} else {
				dropped++
			}
			p++
		}
	default:
		return 0, false, 0, false, badNumber(field, s, "")
	}
	isInt = true
	exp10 := dropped
	if p < len(b) && b[p] == '.' {
		isInt = false
		p++
		if p >= len(b) || b[p] < '0' || b[p] > '9' {
			return 0, false, 0, false, badNumber(field, s, " (no digit after '.')")
		}
		if mant == 0 { // leading zeros of a fraction: not significant
			for p < len(b) && b[p] == '0' {
				exp10--
				p++
			}
		}
		// The eighth byte first: a cheap test that spares short
		// fractions (12.5, 0.25) the eight-byte load and check.
		for digits <= 19-8 && len(b)-p >= 8 && b[p+7]-'0' <= 9 {
			d, ok := eightDigits(b[p:])
			if !ok {
				break
			}
			mant = mant*1e8 + d
			digits += 8
			exp10 -= 8
			p += 8
		}
		for p < len(b) && b[p] >= '0' && b[p] <= '9' {
			if digits < 19 {
				mant = mant*10 + uint64(b[p]-'0')
				digits++
				exp10--
			} else {
				dropped++
			}
			p++
		}
	}
	if p < len(b) && (b[p] == 'e' || b[p] == 'E') {
		isInt = false
		p++
		eneg := false
		if p < len(b) && (b[p] == '+' || b[p] == '-') {
			eneg = b[p] == '-'
			p++
		}
		if p >= len(b) || b[p] < '0' || b[p] > '9' {
			return 0, false, 0, false, badNumber(field, s, " (no digit in the exponent)")
		}
		x := 0
		for p < len(b) && b[p] >= '0' && b[p] <= '9' {
			if x < 100000 {
				x = x*10 + int(b[p]-'0')
			}
			p++
		}
		if eneg {
			x = -x
		}
		exp10 += x
	}
	j.p = p
	if isInt {
		iok = dropped == 0 && (mant <= math.MaxInt64 || neg && mant == 1<<63)
		iv = int64(mant)
		if neg {
			iv = -iv
		}
	}
	// Exact fast path (Clinger): a mantissa below 2^53 and a power of ten
	// that float64 holds exactly give a correctly rounded product.
	if dropped == 0 && mant < 1<<53 && exp10 >= -22 && exp10 <= 22 {
		v = float64(mant)
		if exp10 < 0 {
			v /= pow10[-exp10]
		} else {
			v *= pow10[exp10]
		}
		return math.Float64frombits(math.Float64bits(v) | signBit(neg)), isInt, iv, iok, nil
	}
	// Eisel–Lemire on the digits kept. With digits dropped, the value lies
	// in [mant, mant+1) · 10^exp10: when both ends round to the same float,
	// so does the value.
	if f, ok := eiselLemire(mant, exp10, neg); ok {
		if dropped == 0 {
			return f, isInt, iv, iok, nil
		}
		if f1, ok := eiselLemire(mant+1, exp10, neg); ok && f1 == f {
			return f, isInt, iv, iok, nil
		}
	}
	v, ok := parseFloatText(b[s:p])
	if !ok {
		return 0, false, 0, false, badNumber(field, s, "")
	}
	return v, isInt, iv, iok, nil
}

// badNumber is number's error for the number at offset s, kept out of
// number's body (its formatting would weigh on every call).
//
//go:noinline
func badNumber(field string, s int, why string) *Error {
	return notJSON(field, "at offset %d: invalid number%s", s, why)
}

// parseFloatText is number's exact fallback: strconv.ParseFloat on the
// number's text, ±Inf past the float64 range and ±0 below it. ok is false
// when strconv refuses the text.
//
//go:noinline
func parseFloatText(txt []byte) (float64, bool) {
	v, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(txt), len(txt)), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, false
		}
		// ErrRange: v is ±Inf (overflow) or ±0 (underflow), as wanted.
	}
	return v, true
}

// isSignOrDigit reports whether c is '-' or a digit, with no branch
// between the two (signs and digits alternate unpredictably in arrays of
// random values): a range test, then c's bit in the mask of '-' and
// '0'-'9' (bits 0 and 3-12 counting from '-').
func isSignOrDigit(c byte) bool {
	d := c - '-'
	return d <= 12 && (0x1ff9>>d)&1 != 0
}

// signBit is the sign bit of a float64, set when neg (a conditional move,
// not a branch: signs of random values are unpredictable).
func signBit(neg bool) uint64 {
	if neg {
		return 1 << 63
	}
	return 0
}

// isNumberStart reports whether c starts a number (or NaN, Infinity).
func isNumberStart(c byte) bool {
	return c == '-' || c >= '0' && c <= '9' || c == 'N' || c == 'I'
}

// skip moves past one value of any type, checking that it is well-formed
// JSON, without recursion: a 64-bit stack records, for each open container,
// whether it is an object.
func (j *jsonReader) skip(field string, depth int) *Error {
	var stack uint64 // bit k: the container at relative depth k+1 is an object
	n := 0           // open containers
	for {
		// A value.
		c, e := j.peek(field)
		if e != nil {
			return e
		}
		switch {
		case c == '{' || c == '[':
			if depth+n+1 > MaxJSONDepth {
				return notJSON(field, "nested deeper than %d levels", MaxJSONDepth)
			}
			j.p++
			obj := c == '{'
			if obj {
				stack |= 1 << n
			} else {
				stack &^= 1 << n
			}
			n++
			end := byte(']')
			if obj {
				end = '}'
			}
			c2, e := j.peek(field)
			if e != nil {
				return e
			}
			if c2 == end {
				j.p++
				n--
			} else if obj {
				if e := j.objKey(field); e != nil {
					return e
				}
				continue
			} else {
				continue
			}
		case c == '"':
			if _, e := j.str(field, &j.skipBuf); e != nil {
				return e
			}
		case c == 't':
			e = j.lit(field, "true")
		case c == 'f':
			e = j.lit(field, "false")
		case c == 'n':
			e = j.lit(field, "null")
		case isNumberStart(c):
			_, _, _, _, e = j.number(field)
		default:
			return notJSON(field, "at offset %d: %s starts no JSON value", j.p, describeByte(c))
		}
		if e != nil {
			return e
		}
		// After a value: close containers or move to the next element.
		for {
			if n == 0 {
				return nil
			}
			c, e := j.peek(field)
			if e != nil {
				return e
			}
			obj := stack&(1<<(n-1)) != 0
			end := byte(']')
			if obj {
				end = '}'
			}
			if c == end {
				j.p++
				n--
				continue
			}
			if c != ',' {
				return notJSON(field, "at offset %d: %s, want ',' or %q", j.p, describeByte(c), end)
			}
			j.p++
			if obj {
				if e := j.objKey(field); e != nil {
					return e
				}
			}
			break
		}
	}
}

// objKey reads an object key and the colon after it.
func (j *jsonReader) objKey(field string) *Error {
	c, e := j.peek(field)
	if e != nil {
		return e
	}
	if c != '"' {
		return notJSON(field, "at offset %d: %s, want a string key", j.p, describeByte(c))
	}
	if _, e := j.str(field, &j.skipBuf); e != nil {
		return e
	}
	return j.expect(field, ':')
}

// looksLikeMsgpackMap reports whether c is a msgpack map code (fixmap, map16,
// map32): never the first byte of a JSON text.
func looksLikeMsgpackMap(c byte) bool {
	return c >= 0x80 && c <= 0x8f || c == 0xde || c == 0xdf
}

// topObject checks the record's start: '{' after whitespace.
func (j *jsonReader) topObject() *Error {
	if len(j.b) > 0 && looksLikeMsgpackMap(j.b[0]) {
		return newError(ReasonLooksLikeMsgpack, "", "the record looks like msgpack (it starts with the map code 0x%02x), not JSON; read msgpack records with --input-format msgpack (Decoder.DecodeEvent)", j.b[0])
	}
	j.ws()
	if j.p >= len(j.b) {
		return notJSON("", "empty record")
	}
	c := j.b[j.p]
	if c == '{' {
		j.p++
		return nil
	}
	if k := jsonKind(c); k != "" {
		return newError(ReasonNotMap, "", "top-level value is %s, want an object", k)
	}
	return notJSON("", "at offset %d: %s starts no JSON value", j.p, describeByte(c))
}

// nextMember moves past the ',' between members (more is true) or the closing
// '}' (more is false). first is true before the first member.
func (j *jsonReader) nextMember(first bool) (more bool, e *Error) {
	c, e := j.peek("")
	if e != nil {
		return false, e
	}
	if c == '}' {
		j.p++
		return false, nil
	}
	if !first {
		if c != ',' {
			return false, notJSON("", "at offset %d: %s, want ',' or '}'", j.p, describeByte(c))
		}
		j.p++
		if c, e = j.peek(""); e != nil {
			return false, e
		}
	}
	if c != '"' {
		return false, notJSON("", "at offset %d: %s, want a string key", j.p, describeByte(c))
	}
	return true, nil
}

func (j *jsonReader) trailing() *Error {
	if j.prefix {
		return nil // p stays just past the object
	}
	j.ws()
	if n := len(j.b) - j.p; n > 0 {
		return newError(ReasonTrailingBytes, "", "%d bytes after the object", n)
	}
	return nil
}

// DecodeEventJSON decodes the JSON record b (one JSON object, optionally
// surrounded by whitespace) into ev, with the same schema, limits, buffer
// reuse and error reasons as DecodeEvent (not_json in place of not_msgpack).
// See the package documentation ("JSON") for the mapping of types. It never
// panics and keeps no reference to b.
func (d *Decoder) DecodeEventJSON(b []byte, ev *Event) error {
	return d.decodeEvent(b, ev, true)
}

// DecodeEventJSONPrefix decodes the JSON object at the start of b (after
// optional whitespace) into ev as DecodeEventJSON does, ignoring whatever
// follows the object, and returns the offset in b just past its closing
// '}'. It is for records packed in a larger document (a batch's array):
// the object is read in place, with no separate pass to find its end.
//
// Limits.MaxBytes bounds the object's bytes (its leading whitespace
// included): the decoder reads at most MaxBytes of b, and a well-formed
// object longer than that is refused as oversized, as DecodeEventJSON
// refuses it, before any problem inside it. A malformed value that does
// not end within MaxBytes is refused as what the first MaxBytes bytes show
// (typically not_json, truncated). Every other error is DecodeEventJSON's
// on the object's bytes. On error n is 0 and ev is the zero Event. It
// never panics and keeps no reference to b.
func (d *Decoder) DecodeEventJSONPrefix(b []byte, ev *Event) (n int, err error) {
	full := b
	if d.lim.MaxBytes > 0 && len(b) > d.lim.MaxBytes {
		b = b[:d.lim.MaxBytes]
	}
	d.js.prefix = true
	err = d.decodeEvent(b, ev, true)
	d.js.prefix = false
	if err == nil {
		return d.js.p, nil
	}
	if len(b) < len(full) {
		// Where the value really ends decides between oversized and the
		// error found in its first MaxBytes bytes.
		j := &d.js
		j.reset(full)
		j.ws()
		if j.skip("", 0) == nil && j.p > d.lim.MaxBytes {
			err = newError(ReasonOversized, "", "record is %d bytes, limit is %d", j.p, d.lim.MaxBytes)
		}
	}
	return 0, err
}

// decodeJSON is decode for JSON: one pass that checks each field as it reads
// it, then the record-level rules.
func (d *Decoder) decodeJSON(b []byte, ev *Event) *Error {
	j := &d.js
	j.reset(b)
	d.present = 0
	if e := j.topObject(); e != nil {
		return e
	}
	var seen fieldSet
	for i := 0; ; i++ {
		more, e := j.nextMember(i == 0)
		if e != nil {
			return e
		}
		if !more {
			break
		}
		key, e := j.str("", &j.keyBuf)
		if e != nil {
			return e
		}
		f := eventField(key)
		if f == fRef || f == fF {
			if ev.Version == 0 {
				v, e := d.versionAheadJSON(b)
				if e != nil {
					return e
				}
				ev.Version = v
			}
			isF := f == fF
			f = versionField(f, ev.Version)
			d.sawF = d.sawF || isF && f == 0
		}
		if e := j.expect("", ':'); e != nil {
			return e
		}
		if f == 0 {
			name := key
			if e := j.skip("", 1); e != nil {
				e.Field = string(name)
				return e
			}
			continue
		}
		if seen&f != 0 {
			return newError(ReasonDuplicateKey, f.name(), "appears twice in the object")
		}
		seen |= f
		c, e := j.peek(f.name())
		if e != nil {
			return e
		}
		if c == 'n' {
			if e := j.lit(f.name(), "null"); e != nil {
				return e
			}
			continue // null means absent, for every key
		}
		d.present |= f
		if e := d.fieldJSON(f, ev, c); e != nil {
			return e
		}
	}
	if e := j.trailing(); e != nil {
		return e
	}
	if d.present&fV == 0 {
		return newError(ReasonMissingVersion, "v", "no schema version")
	}
	return d.check(ev)
}

func (d *Decoder) versionAheadJSON(b []byte) (int, *Error) {
	p := d.js.p
	v, e := d.scanJSON(b)
	d.js.reset(b)
	d.js.p = p
	return v, e
}

// intJSON reads an integer value (c is its first byte) for v, ts or xi.
// ok is false for an integer outside the int64 range.
func (j *jsonReader) intJSON(field string, c byte) (v int64, ok bool, e *Error) {
	if !isNumberStart(c) {
		return 0, false, j.badType(field, c, "an integer")
	}
	_, isInt, iv, iok, e := j.number(field)
	if e != nil {
		return 0, false, e
	}
	if !isInt {
		return 0, false, newError(ReasonBadFieldType, field, "is a float, want an integer")
	}
	return iv, iok, nil
}

// fieldJSON decodes the value of the known key f (starting with c) into ev.
func (d *Decoder) fieldJSON(f fieldSet, ev *Event, c byte) *Error {
	j := &d.js
	switch f {
	case fV:
		v, ok, e := j.intJSON("v", c)
		if e != nil {
			return e
		}
		if !knownVersion(v, ok) {
			return unknownVersion(v, ok)
		}
		ev.Version = int(v)
	case fTS:
		v, ok, e := j.intJSON("ts", c)
		if e != nil {
			return e
		}
		if !ok {
			return newError(ReasonBadFieldType, "ts", "integer outside the int64 range")
		}
		ev.TS, ev.HasTS = v, true
	case fID, fKey, fRef:
		field := "id"
		if f == fKey {
			field = "key"
		} else if f == fRef {
			field = "ref"
		}
		if c != '"' {
			return j.badType(field, c, "a string")
		}
		s, e := j.str(field, &j.valBuf)
		if e != nil {
			return e
		}
		if e := d.checkIDLen(field, s); e != nil {
			return e
		}
		switch f {
		case fID:
			ev.ID = string(s)
		case fKey:
			ev.Key = string(s)
		default:
			ev.Ref = string(s)
		}
	case fX:
		x, e := d.floatsJSON("x", ev.X, d.lim.Dim, c)
		ev.X = x
		return e
	case fXV:
		xv, e := d.floatsJSON("xv", ev.XV, 0, c)
		ev.XV = xv
		return e
	case fXI:
		xi, e := d.indicesJSON("xi", ev.XI, c)
		ev.XI = xi
		return e
	case fF:
		return d.namedJSON(ev, c)
	case fY:
		switch {
		case c == 't' || c == 'f':
			word := "true"
			if c == 'f' {
				word = "false"
			}
			if e := j.lit("y", word); e != nil {
				return e
			}
			ev.Y, ev.HasY, ev.YKind = 0, true, LabelBool
			if c == 't' {
				ev.Y = 1
			}
			return nil
		case c == '"':
			s, e := j.str("y", &j.valBuf)
			if e != nil {
				return e
			}
			if e := d.checkIDLen("y", s); e != nil {
				return e
			}
			ev.YStr, ev.HasY, ev.YKind = d.labelString(s), true, LabelString
			return nil
		case !isNumberStart(c):
			return j.badType("y", c, "a number, a bool or a string")
		}
		y, _, _, _, e := j.number("y")
		if e != nil {
			return e
		}
		if !finite(y) {
			return newError(ReasonNonFinite, "y", "is %v", y)
		}
		if d.outOfRange(y) {
			return newError(ReasonValueOutOfRange, "y", "is %v; the limit is |y| <= %v", y, d.lim.MaxAbsValue)
		}
		ev.Y, ev.HasY = y, true
	}
	return nil
}

// arrayNext moves past the ',' between elements (more true) or the closing
// ']' (more false); first is true before the first element.
func (j *jsonReader) arrayNext(field string, first bool) (bool, *Error) {
	c, e := j.peek(field)
	if e != nil {
		return false, e
	}
	if c == ']' {
		j.p++
		return false, nil
	}
	if !first {
		if c != ',' {
			return false, notJSON(field, "at offset %d: %s, want ',' or ']'", j.p, describeByte(c))
		}
		j.p++
	}
	return true, nil
}

// floatsJSON decodes an array of numbers into dst's storage, reporting the
// problems DecodeEvent reports for the same array in the same precedence:
// too_many_features, then dimension_mismatch, then the first element's
// problem (a wrong type, non_finite, value_out_of_range).
func (d *Decoder) floatsJSON(field string, dst []float64, dim int, c byte) ([]float64, *Error) {
	j := &d.js
	if c != '[' {
		return dst[:0], j.badType(field, c, "an array")
	}
	j.p++
	dst = dst[:0]
	var first *Error
	for i := 0; ; i++ {
		var c byte
		if b, p := j.b, j.p; i > 0 && p+1 < len(b) && b[p] == ',' && isSignOrDigit(b[p+1]) {
			// The common case, a number right after the comma: what
			// arrayNext and peek would find, without their whitespace
			// checks.
			j.p++
			c = b[p+1]
		} else {
			more, e := j.arrayNext(field, i == 0)
			if e != nil {
				return dst[:0], e
			}
			if !more {
				break
			}
			if c, e = j.peek(field); e != nil && i < d.maxFeatures {
				return dst[:0], e
			}
		}
		if i >= d.maxFeatures {
			return dst[:0], newError(ReasonTooManyFeatures, field, "more than %d features, limit is %d", i, d.maxFeatures)
		}
		if !isNumberStart(c) {
			if first == nil {
				first = j.badElemType(field, i, c, "a number")
			}
			if e := j.skip(field, 2); e != nil {
				return dst[:0], e
			}
			dst = append(dst, 0)
			continue
		}
		v, _, _, _, e := j.number(field)
		if e != nil {
			return dst[:0], e
		}
		if first == nil {
			if !finite(v) {
				first = newError(ReasonNonFinite, field, "element %d is %v", i, v)
			} else if d.outOfRange(v) {
				first = newError(ReasonValueOutOfRange, field, "element %d is %v; the limit is |value| <= %v", i, v, d.lim.MaxAbsValue)
			}
		}
		dst = append(dst, v)
	}
	if n := len(dst); dim > 0 && n > 0 && n != dim {
		return dst[:0], newError(ReasonDimensionMismatch, field, "%d features, want %d", n, dim)
	}
	if first != nil {
		return dst[:0], first
	}
	return dst, nil
}

// indicesJSON is indices for JSON, with floatsJSON's precedence.
func (d *Decoder) indicesJSON(field string, dst []uint32, c byte) ([]uint32, *Error) {
	j := &d.js
	if c != '[' {
		return dst[:0], j.badType(field, c, "an array")
	}
	j.p++
	dst = dst[:0]
	limit := int64(math.MaxUint32) + 1
	if d.lim.Dim > 0 {
		limit = int64(d.lim.Dim)
	}
	var first *Error
	prev := int64(-1)
	for i := 0; ; i++ {
		more, e := j.arrayNext(field, i == 0)
		if e != nil {
			return dst[:0], e
		}
		if !more {
			break
		}
		if i >= d.maxFeatures {
			return dst[:0], newError(ReasonTooManyFeatures, field, "more than %d features, limit is %d", i, d.maxFeatures)
		}
		c, e := j.peek(field)
		if e != nil {
			return dst[:0], e
		}
		if !isNumberStart(c) {
			if first == nil {
				first = j.badElemType(field, i, c, "a non-negative integer")
			}
			if e := j.skip(field, 2); e != nil {
				return dst[:0], e
			}
			dst = append(dst, 0)
			continue
		}
		_, isInt, v, ok, e := j.number(field)
		if e != nil {
			return dst[:0], e
		}
		dst = append(dst, uint32(v))
		if first != nil {
			continue
		}
		switch {
		case !isInt:
			first = newError(ReasonBadFieldType, field, "element %d is a float, want a non-negative integer", i)
		case !ok:
			first = newError(ReasonSparseOutOfRange, field, "element %d is outside the int64 range; want 0 <= index < %d", i, limit)
		case v < 0 || v >= limit:
			first = newError(ReasonSparseOutOfRange, field, "element %d is %d; want 0 <= index < %d", i, v, limit)
		case v == prev:
			first = newError(ReasonSparseDuplicate, field, "element %d repeats index %d", i, v)
		case v < prev:
			first = newError(ReasonSparseUnsorted, field, "element %d (%d) is below element %d (%d); indices must be strictly increasing", i, v, i-1, prev)
		}
		prev = v
	}
	if first != nil {
		return dst[:0], first
	}
	return dst, nil
}

// namedJSON decodes "f" (an object) into ev.F, with the precedence of named:
// too_many_features, then the first field's problem.
func (d *Decoder) namedJSON(ev *Event, c byte) *Error {
	j := &d.js
	if c != '{' {
		return j.badType("f", c, "an object from feature name to value")
	}
	j.p++
	fs := growFields(ev.F, 0)
	ev.F = fs
	var first *Error
	valid := d.posValid // as in named
	d.posValid = 0
	marking := false
	for i := 0; ; i++ {
		c, e := j.peek("f")
		if e != nil {
			return e
		}
		if c == '}' {
			j.p++
			break
		}
		if i > 0 {
			if c != ',' {
				return notJSON("f", "at offset %d: %s, want ',' or '}'", j.p, describeByte(c))
			}
			j.p++
			if c, e = j.peek("f"); e != nil {
				return e
			}
		}
		if c != '"' {
			return notJSON("f", "at offset %d: %s, want a string key", j.p, describeByte(c))
		}
		if i >= d.maxFeatures {
			return newError(ReasonTooManyFeatures, "f", "more than %d features, limit is %d", i, d.maxFeatures)
		}
		nb, e := j.str("f", &j.keyBuf)
		if e != nil {
			return e
		}
		if e := j.expect("f", ':'); e != nil {
			return e
		}
		// The field is written in place, its strings only when they
		// change (see named); after an error it is a scratch copy.
		var scratch Field
		f := &scratch
		if first == nil {
			var name string
			if pos := d.posName; i < valid && !marking && i < len(pos) && pos[i].s == string(nb) {
				name = pos[i].s
			} else {
				name, first = d.nameSlow(i, nb, &marking)
			}
			if first == nil {
				if len(fs) < cap(fs) {
					fs = fs[:len(fs)+1]
				} else {
					fs = append(fs, Field{})
				}
				f = &fs[len(fs)-1]
				if f.Name != name {
					f.Name = name
				}
				if f.Str != "" {
					f.Str = ""
				}
				f.Kind, f.Num = FieldNumber, 0
			}
		}
		c, e = j.peek("f")
		if e != nil {
			return e
		}
		switch {
		case c == '"':
			s, e := j.str("f", &j.valBuf)
			if e != nil {
				return e
			}
			if first == nil {
				var v string
				v, first = d.fieldString(i, f.Name, s)
				f.Kind = FieldString
				if f.Str != v {
					f.Str = v
				}
			}
		case c == 't':
			e = j.lit("f", "true")
			f.Kind, f.Num = FieldBool, 1
		case c == 'f':
			e = j.lit("f", "false")
			f.Kind = FieldBool
		case c == 'n':
			e = j.lit("f", "null")
			f.Kind = FieldMissing
		case isNumberStart(c):
			var v float64
			v, _, _, _, e = j.number("f")
			if e == nil && first == nil {
				if v-v == 0 && (d.lim.MaxAbsValue == 0 || math.Abs(v) <= d.lim.MaxAbsValue) {
					f.Num = v
				} else {
					first = d.fieldNumber(f, v)
				}
			}
		case c == '{' || c == '[':
			if first == nil {
				first = newError(ReasonBadFieldType, "f", "feature %q is %s, want a number, a bool, a string or null", f.Name, jsonKind(c))
			}
			e = j.skip("f", 2)
		default:
			return notJSON("f", "at offset %d: %s starts no JSON value", j.p, describeByte(c))
		}
		if e != nil {
			return e
		}
	}
	if first != nil {
		return first
	}
	ev.F = fs
	d.posValid = len(fs)
	return nil
}

// scanJSON is scan for JSON: it re-reads the whole record for the problems
// that take precedence over a field error (not_json anywhere, trailing bytes,
// a missing, mistyped, duplicated or unknown version) and returns the
// record's version when there is none.
func (d *Decoder) scanJSON(b []byte) (int, *Error) {
	j := &d.js
	j.reset(b)
	if e := j.topObject(); e != nil {
		return 0, e
	}
	var verr *Error
	sawKey, hasV, version := false, false, 0
	for i := 0; ; i++ {
		more, e := j.nextMember(i == 0)
		if e != nil {
			return 0, e
		}
		if !more {
			break
		}
		key, e := j.str("", &j.keyBuf)
		if e != nil {
			return 0, e
		}
		isV := string(key) == "v"
		if e := j.expect("", ':'); e != nil {
			return 0, e
		}
		if !isV || verr != nil {
			if e := j.skip("", 1); e != nil {
				return 0, e
			}
			continue
		}
		if sawKey {
			verr = newError(ReasonDuplicateKey, "v", "appears twice in the object")
			if e := j.skip("v", 1); e != nil {
				return 0, e
			}
			continue
		}
		sawKey = true
		c, e := j.peek("v")
		if e != nil {
			return 0, e
		}
		if c == 'n' {
			if e := j.lit("v", "null"); e != nil {
				return 0, e
			}
			continue
		}
		hasV = true
		if !isNumberStart(c) {
			verr = j.badType("v", c, "an integer")
			if e := j.skip("v", 1); e != nil {
				return 0, e
			}
			continue
		}
		_, isInt, v, ok, e := j.number("v")
		if e != nil {
			return 0, e
		}
		switch {
		case !isInt:
			verr = newError(ReasonBadFieldType, "v", "is a float, want an integer")
		case !knownVersion(v, ok):
			verr = unknownVersion(v, ok)
		default:
			version = int(v)
		}
	}
	if e := j.trailing(); e != nil {
		return 0, e
	}
	if verr != nil {
		return 0, verr
	}
	if !hasV {
		return 0, newError(ReasonMissingVersion, "v", "no schema version")
	}
	return version, nil
}

// appendJSONString appends s as a JSON string. Invalid UTF-8 is an error
// unless lossy, where each invalid byte becomes U+FFFD.
func appendJSONString(dst []byte, s string, lossy bool) ([]byte, bool) {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x80 && c != '"' && c != '\\' {
			i++
			continue
		}
		if c < 0x80 {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			if !lossy {
				return dst, false
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), true
}

// appendJSONFloat appends a finite v in its shortest form that parses back
// to v (strconv's), in exponent notation below 1e-6 and from 1e21 on (as
// encoding/json does); a non-finite v as null (JSON has no NaN or ±Inf).
func appendJSONFloat(dst []byte, v float64) []byte {
	if !finite(v) {
		return append(dst, "null"...)
	}
	format := byte('f')
	if a := math.Abs(v); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(dst, v, format, -1, 64)
}

func appendJSONFloats(dst []byte, v []float64) []byte {
	dst = append(dst, '[')
	for i, x := range v {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONFloat(dst, x)
	}
	return append(dst, ']')
}

func appendJSONKey(dst []byte, k string, first bool) []byte {
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, k...)
	return append(dst, '"', ':')
}

// AppendEventJSON appends the JSON encoding of ev to dst: one object with the
// keys, order and omissions of AppendEvent, numbers in the shortest form that
// parses back to the same float64 (so DecodeEventJSON gives back an Event
// equal to ev), no whitespace. ev is validated as AppendEvent validates it;
// besides, id, key, ref, a string y and every name and string value must be
// valid UTF-8 (JSON cannot carry other bytes): bad_field_type otherwise. On
// error dst is returned unchanged.
func AppendEventJSON(dst []byte, ev *Event) ([]byte, error) {
	if e := validateEvent(ev); e != nil {
		return dst, e
	}
	for _, s := range [...]struct{ field, s string }{{"id", ev.ID}, {"key", ev.Key}, {"ref", ev.Ref}, {"y", ev.YStr}} {
		if !utf8.ValidString(s.s) {
			return dst, newError(ReasonBadFieldType, s.field, "is not valid UTF-8, which JSON cannot carry")
		}
	}
	out := append(dst, '{')
	out = appendJSONKey(out, "v", true)
	out = strconv.AppendInt(out, int64(ev.Version), 10)
	if ev.ID != "" {
		out = appendJSONKey(out, "id", false)
		out, _ = appendJSONString(out, ev.ID, false)
	}
	if ev.HasTS {
		out = appendJSONKey(out, "ts", false)
		out = strconv.AppendInt(out, ev.TS, 10)
	}
	if ev.Key != "" {
		out = appendJSONKey(out, "key", false)
		out, _ = appendJSONString(out, ev.Key, false)
	}
	if ev.Ref != "" {
		out = appendJSONKey(out, "ref", false)
		out, _ = appendJSONString(out, ev.Ref, false)
	}
	switch {
	case ev.X != nil:
		out = appendJSONKey(out, "x", false)
		out = appendJSONFloats(out, ev.X)
	case ev.XI != nil:
		out = appendJSONKey(out, "xi", false)
		out = append(out, '[')
		for i, j := range ev.XI {
			if i > 0 {
				out = append(out, ',')
			}
			out = strconv.AppendUint(out, uint64(j), 10)
		}
		out = append(out, ']')
		out = appendJSONKey(out, "xv", false)
		out = appendJSONFloats(out, ev.XV)
	case ev.F != nil:
		out = appendJSONKey(out, "f", false)
		out = append(out, '{')
		for i := range ev.F {
			f := &ev.F[i]
			if i > 0 {
				out = append(out, ',')
			}
			out, _ = appendJSONString(out, f.Name, true) // validated: UTF-8
			out = append(out, ':')
			switch f.Kind {
			case FieldNumber:
				out = appendJSONFloat(out, f.Num)
			case FieldBool:
				out = strconv.AppendBool(out, f.Num != 0)
			case FieldString:
				out, _ = appendJSONString(out, f.Str, true) // validated: UTF-8
			default:
				out = append(out, "null"...)
			}
		}
		out = append(out, '}')
	}
	if ev.HasY {
		out = appendJSONKey(out, "y", false)
		switch ev.YKind {
		case LabelBool:
			out = strconv.AppendBool(out, ev.Y != 0)
		case LabelString:
			out, _ = appendJSONString(out, ev.YStr, false)
		default:
			out = appendJSONFloat(out, ev.Y)
		}
	}
	return append(out, '}'), nil
}

// AppendPredictionJSON appends the JSON encoding of p to dst: one object
// whose keys are AppendPrediction's msgpack keys, with the same order,
// omissions and versions ("v", "sv", "id", "key", "t", "p", "o", "ts", "y",
// "r", "ro", "c", "m": [{"n", "s", "d", "pp", "c", "ci", "pd": [[class,
// prob], ...], "u"}]), no whitespace. Floats are written in the shortest form
// that parses back to the same float64, and a non-finite score or
// probability as null (JSON has no NaN or ±Inf); strings that are not valid
// UTF-8 have each invalid byte replaced by U+FFFD. The bytes are a pure
// function of p.
func AppendPredictionJSON(dst []byte, p *Prediction) []byte {
	v3 := p.Version >= PredictionVersionProb
	version := int64(PredictionVersion)
	if p.HasRef {
		version = PredictionVersionOutcome
	}
	dst = append(dst, '{')
	dst = appendJSONKey(dst, "v", true)
	dst = strconv.AppendInt(dst, version, 10)
	if v3 {
		dst = appendJSONKey(dst, "sv", false)
		dst = strconv.AppendInt(dst, PredictionVersionProb, 10)
	}
	if p.ID != "" {
		dst = appendJSONKey(dst, "id", false)
		dst, _ = appendJSONString(dst, p.ID, true)
	}
	if p.Key != "" {
		dst = appendJSONKey(dst, "key", false)
		dst, _ = appendJSONString(dst, p.Key, true)
	}
	dst = appendJSONKey(dst, "t", false)
	dst, _ = appendJSONString(dst, p.Topic, true)
	dst = appendJSONKey(dst, "p", false)
	dst = strconv.AppendInt(dst, int64(p.Partition), 10)
	dst = appendJSONKey(dst, "o", false)
	dst = strconv.AppendInt(dst, p.Offset, 10)
	if p.HasTS {
		dst = appendJSONKey(dst, "ts", false)
		dst = strconv.AppendInt(dst, p.TS, 10)
	}
	if p.HasY {
		dst = appendJSONKey(dst, "y", false)
		dst = appendJSONFloat(dst, p.Y)
	}
	if p.HasRef {
		if p.Ref != "" {
			dst = appendJSONKey(dst, "r", false)
			dst, _ = appendJSONString(dst, p.Ref, true)
		}
		dst = appendJSONKey(dst, "ro", false)
		dst = strconv.AppendInt(dst, p.RefOffset, 10)
	}
	if v3 && p.Class != "" {
		dst = appendJSONKey(dst, "c", false)
		dst, _ = appendJSONString(dst, p.Class, true)
	}
	dst = appendJSONKey(dst, "m", false)
	dst = append(dst, '[')
	for i := range p.Models {
		m := &p.Models[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '{')
		dst = appendJSONKey(dst, "n", true)
		dst, _ = appendJSONString(dst, m.Name, true)
		dst = appendJSONKey(dst, "s", false)
		dst = appendJSONFloat(dst, m.Score)
		if m.Classify {
			dst = appendJSONKey(dst, "d", false)
			dst = strconv.AppendInt(dst, int64(m.Decision), 10)
		}
		if v3 && m.HasProb {
			dst = appendJSONKey(dst, "pp", false)
			dst = appendJSONFloat(dst, m.Prob)
		}
		if v3 && m.Multi {
			dst = appendJSONKey(dst, "c", false)
			dst, _ = appendJSONString(dst, m.Class, true)
			dst = appendJSONKey(dst, "ci", false)
			dst = strconv.AppendInt(dst, int64(m.ClassIndex), 10)
			dst = appendJSONKey(dst, "pd", false)
			dst = append(dst, '[')
			for k, cp := range m.Dist {
				if k > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, '[')
				dst, _ = appendJSONString(dst, cp.Class, true)
				dst = append(dst, ',')
				dst = appendJSONFloat(dst, cp.Prob)
				dst = append(dst, ']')
			}
			dst = append(dst, ']')
		}
		dst = appendJSONKey(dst, "u", false)
		dst = strconv.AppendUint(dst, m.Updates, 10)
		dst = append(dst, '}')
	}
	return append(dst, ']', '}')
}
