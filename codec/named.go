package codec

import (
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"
)

// NamedEventVersion is the Event schema version that adds named features
// ("f", Event.F). A record with "f" must say "v": 3; see the package
// documentation for why (decoders that predate it refuse it with
// unknown_version instead of ignoring the features).
const NamedEventVersion = 3

// DefaultMaxNameBytes is the length limit, in bytes, of a feature name and of
// a string feature value when Limits.MaxNameBytes is 0.
const DefaultMaxNameBytes = 256

// internCap bounds the Decoder's table of interned names and string values.
// When a record starts with more entries than this, the table is emptied and
// refilled: memory stays bounded by internCap + Limits.MaxFeatures strings,
// and a stream whose vocabulary fits decodes without allocating.
const internCap = 1 << 14

// FieldKind is the type of a named feature's value in the record.
type FieldKind uint8

const (
	// FieldNumber: an integer or a finite float (Num holds it as a float64).
	FieldNumber FieldKind = iota
	// FieldBool: true or false (Num is 1 or 0).
	FieldBool
	// FieldString: a categorical value (Str holds it; Num is 0).
	FieldString
	// FieldMissing: nil in msgpack, null in JSON, or a NaN float (Num is 0).
	FieldMissing
)

func (k FieldKind) String() string {
	switch k {
	case FieldNumber:
		return "number"
	case FieldBool:
		return "bool"
	case FieldString:
		return "string"
	case FieldMissing:
		return "missing"
	}
	return fmt.Sprintf("FieldKind(%d)", uint8(k))
}

// Field is one named feature of an event ("f"), in record order.
type Field struct {
	Name string    // the feature's name: valid UTF-8, at most Limits.MaxNameBytes bytes
	Kind FieldKind // what the value is
	Num  float64   // the value of a FieldNumber (finite) or FieldBool (0 or 1); 0 otherwise
	Str  string    // the value of a FieldString: valid UTF-8, at most Limits.MaxNameBytes bytes
}

// Named reports whether e carries named features ("f"): F is non-nil, possibly
// empty (a record whose every feature is absent). A named event has X, XI
// and XV nil.
func (e *Event) Named() bool { return e.F != nil }

// intern returns the interned string equal to b and its id, adding it to the
// table if it is new (b must then be valid UTF-8, else bad_field_type). The
// strings are ordinary Go strings: they stay valid forever.
// name is "" for a name and the feature's name for a string value (for the
// error message).
func (d *Decoder) intern(b []byte, name string) (string, int32, *Error) {
	if id, ok := d.internIDs[string(b)]; ok {
		return d.internStrs[id], id, nil
	}
	if !utf8.Valid(b) {
		if name != "" {
			return "", 0, newError(ReasonBadFieldType, "f", "feature %q: value %q is not valid UTF-8", name, b)
		}
		return "", 0, newError(ReasonBadFieldType, "f", "feature name %q is not valid UTF-8", b)
	}
	if d.internIDs == nil {
		d.internIDs = make(map[string]int32)
	}
	s := string(b)
	id := int32(len(d.internStrs))
	d.internIDs[s] = id
	d.internStrs = append(d.internStrs, s)
	d.internSeen = append(d.internSeen, 0)
	return s, id, nil
}

// startNamed prepares the intern table for a new record.
func (d *Decoder) startNamed() {
	if len(d.internStrs) > internCap {
		clear(d.internIDs)
		d.internStrs = d.internStrs[:0]
		d.internSeen = d.internSeen[:0]
		d.posName = d.posName[:0]
		d.posVal = d.posVal[:0]
		d.posValid = 0
	}
	d.gen++
	if d.gen == 0 { // wrapped: forget the old marks
		clear(d.internSeen)
		d.gen = 1
	}
}

// fieldName checks and interns the name of the i-th field, b, and rejects a
// duplicate. Producers send the same names in the same order, so the name
// the previous record had at position i is tried first (a byte comparison).
func (d *Decoder) fieldName(i int, b []byte) (string, *Error) {
	if len(b) > d.maxName {
		return "", newError(ReasonNameTooLong, "f", "feature name %q... is %d bytes, limit is %d", b[:min(32, len(b))], len(b), d.maxName)
	}
	pe := posEntry{id: -1}
	if i < len(d.posName) {
		pe = d.posName[i]
	}
	if pe.id < 0 || pe.s != string(b) {
		s, id, e := d.intern(b, "")
		if e != nil {
			return "", e
		}
		for len(d.posName) <= i {
			d.posName = append(d.posName, posEntry{id: -1})
		}
		pe = posEntry{s, id}
		d.posName[i] = pe
	}
	if uint(pe.id) >= uint(len(d.internSeen)) || d.internSeen[pe.id] == d.gen {
		return "", newError(ReasonDuplicateKey, "f", "feature %q appears twice", b)
	}
	d.internSeen[pe.id] = d.gen
	return pe.s, nil
}

// nameSlow is fieldName for the i-th name, nb, once it differs from the
// previous record's name at i (or from that position on): the names before
// it, which were the previous record's, are marked as seen first.
func (d *Decoder) nameSlow(i int, nb []byte, marking *bool) (string, *Error) {
	if !*marking {
		*marking = true
		for k := 0; k < i; k++ {
			d.internSeen[d.posName[k].id] = d.gen
		}
	}
	return d.fieldName(i, nb)
}

// posEntry is an interned string and its id, remembered for a position of
// "f"; id -1: none.
type posEntry struct {
	s  string
	id int32
}

// fieldString checks and interns the string value of the i-th field.
func (d *Decoder) fieldString(i int, name string, b []byte) (string, *Error) {
	if len(b) > d.maxName {
		return "", newError(ReasonNameTooLong, "f", "feature %q: string value is %d bytes, limit is %d", name, len(b), d.maxName)
	}
	if i < len(d.posVal) {
		if pe := d.posVal[i]; pe.id >= 0 && pe.s == string(b) {
			return pe.s, nil
		}
	}
	s, id, e := d.intern(b, name)
	if e != nil {
		return "", e
	}
	for len(d.posVal) <= i {
		d.posVal = append(d.posVal, posEntry{id: -1})
	}
	d.posVal[i] = posEntry{s, id}
	return s, nil
}

// fieldNumber applies the rules of a numeric feature value: NaN is missing,
// ±Inf is non_finite, and Limits.MaxAbsValue applies.
func (d *Decoder) fieldNumber(f *Field, v float64) *Error {
	if v != v {
		f.Kind, f.Num = FieldMissing, 0
		return nil
	}
	if math.IsInf(v, 0) {
		return newError(ReasonNonFinite, "f", "feature %q is %v", f.Name, v)
	}
	if d.outOfRange(v) {
		return newError(ReasonValueOutOfRange, "f", "feature %q is %v; the limit is |value| <= %v", f.Name, v, d.lim.MaxAbsValue)
	}
	f.Kind, f.Num = FieldNumber, v
	return nil
}

// growFields returns dst with length n and never nil (a named event is told
// apart by F != nil).
func growFields(dst []Field, n int) []Field {
	if cap(dst) >= n && dst != nil {
		return dst[:n]
	}
	return make([]Field, n, max(n, 1))
}

// fastStr decodes the header of a str or bin value at b[p:] by hand (the
// library costs about 20 ns a call, and a named event has two strings per
// feature). It returns the payload's offset and length and the total size, or
// size 0 when b[p] is not a str or bin code or the value is truncated.
func fastStr(b []byte, p int) (off, n, size int) {
	if p >= len(b) {
		return 0, 0, 0
	}
	c := b[p]
	var h int
	switch {
	case c >= 0xa0 && c <= 0xbf:
		h, n = 1, int(c&0x1f)
	case c == 0xd9 || c == 0xc4:
		if len(b)-p < 2 {
			return 0, 0, 0
		}
		h, n = 2, int(b[p+1])
	case c == 0xda || c == 0xc5:
		if len(b)-p < 3 {
			return 0, 0, 0
		}
		h, n = 3, int(binary.BigEndian.Uint16(b[p+1:]))
	case c == 0xdb || c == 0xc6:
		if len(b)-p < 5 {
			return 0, 0, 0
		}
		h, n = 5, int(binary.BigEndian.Uint32(b[p+1:]))
	default:
		return 0, 0, 0
	}
	if n > len(b)-p-h {
		return 0, 0, 0
	}
	return p + h, n, h + n
}

// named decodes the value of "f" (a version 3 record) into ev.F.
func (d *Decoder) named(ev *Event) *Error {
	r := &d.r
	c, e := r.peek("f")
	if e != nil {
		return e
	}
	if kindOf(c) != kMap {
		return badType("f", c, "a map from feature name to value")
	}
	n, e := r.mapLen("f")
	if e != nil {
		return e
	}
	if n > d.maxFeatures {
		return newError(ReasonTooManyFeatures, "f", "%d features, limit is %d", n, d.maxFeatures)
	}
	fs := growFields(ev.F, n)
	ev.F = fs[:0]
	b := r.b
	p := r.pos()
	// The names the previous record had at positions 0..valid-1 are
	// distinct: while this record's names equal them, position by
	// position, they need no duplicate check (fast); from the first that
	// differs on, every name is marked and checked (marking).
	valid := d.posValid
	d.posValid = 0
	marking := false
	pos := d.posName
	for i := range fs {
		f := &fs[i]
		var off, ln, size int
		if p < len(b) && b[p]&0xe0 == 0xa0 && p+1+int(b[p]&0x1f) <= len(b) {
			off, ln = p+1, int(b[p]&0x1f) // a fixstr, inline
			size = 1 + ln
		} else {
			off, ln, size = fastStr(b, p)
		}
		if size == 0 {
			r.seekTo(p)
			if _, e := r.key("f", i); e != nil {
				return e
			}
			return newError(ReasonNotMsgpack, "f", "key %d: malformed string", i) // unreachable: key failed above
		}
		p += size
		var name string
		if i < valid && !marking && i < len(pos) && pos[i].s == string(b[off:off+ln]) {
			name = pos[i].s
		} else {
			var e *Error
			if name, e = d.nameSlow(i, b[off:off+ln], &marking); e != nil {
				return e
			}
			pos = d.posName
		}
		// Field by field, and the strings only when they change: F's
		// array is on the heap, and each pointer written costs a write
		// barrier while the garbage collector runs.
		if f.Name != name {
			f.Name = name
		}
		if f.Str != "" {
			f.Str = ""
		}
		f.Kind, f.Num = FieldNumber, 0
		v, sz := 0.0, 0
		if p+9 <= len(b) && b[p] == 0xcb {
			v, sz = math.Float64frombits(binary.BigEndian.Uint64(b[p+1:])), 9 // a float64, inline
		} else {
			v, sz = fastFloat(b, p)
		}
		if sz > 0 {
			p += sz
			if v-v == 0 && (d.lim.MaxAbsValue == 0 || math.Abs(v) <= d.lim.MaxAbsValue) {
				f.Num = v // finite and in range: the common case, inline
			} else if e := d.fieldNumber(f, v); e != nil {
				return e
			}
			continue
		}
		if p >= len(b) {
			return newError(ReasonNotMsgpack, "f", "record ends where the value of feature %q was expected (truncated)", name)
		}
		if c := b[p]; c&0xe0 == 0xa0 && p+1+int(c&0x1f) <= len(b) {
			// A fixstr categorical value, inline; usually the one the
			// previous record had at this position.
			sb := b[p+1 : p+1+int(c&0x1f)]
			p += 1 + len(sb)
			var s string
			if i < len(d.posVal) && d.posVal[i].id >= 0 && d.posVal[i].s == string(sb) {
				s = d.posVal[i].s
			} else if s, e = d.fieldString(i, name, sb); e != nil {
				return e
			}
			f.Kind = FieldString
			if f.Str != s {
				f.Str = s
			}
			continue
		}
		switch c := b[p]; kindOf(c) {
		case kNil:
			p++
			f.Kind = FieldMissing
		case kBool:
			p++
			f.Kind = FieldBool
			if c == 0xc3 {
				f.Num = 1
			}
		case kStr, kBin:
			off, ln, size := fastStr(b, p)
			if size == 0 {
				return newError(ReasonNotMsgpack, "f", "feature %q: string value declares more bytes than remain (truncated)", name)
			}
			p += size
			s, e := d.fieldString(i, name, b[off:off+ln])
			if e != nil {
				return e
			}
			f.Kind, f.Str = FieldString, s
		case kUint, kInt, kFloat32, kFloat64:
			r.seekTo(p)
			v, e := r.number("f", c)
			if e != nil {
				return e
			}
			p = r.pos()
			if e := d.fieldNumber(f, v); e != nil {
				return e
			}
		case kInvalid:
			return newError(ReasonNotMsgpack, "f", "feature %q: invalid msgpack type code 0x%02x", name, c)
		default:
			return newError(ReasonBadFieldType, "f", "feature %q is a %s, want a number, a bool, a string or nil", name, kindOf(c))
		}
	}
	r.seekTo(p)
	ev.F = fs
	d.posValid = n
	return nil
}

// validateNamed applies the decoder's rules for "f" (under zero Limits) to a
// Go value, for AppendEvent and AppendEventJSON.
func validateNamed(fs []Field) *Error {
	if len(fs) > DefaultMaxFeatures {
		return newError(ReasonTooManyFeatures, "f", "%d features, limit is %d", len(fs), DefaultMaxFeatures)
	}
	var seen map[string]struct{}
	if len(fs) > 64 { // quadratic below: no allocation for a producer's usual event
		seen = make(map[string]struct{}, len(fs))
	}
	for i := range fs {
		f := &fs[i]
		if len(f.Name) > DefaultMaxNameBytes {
			return newError(ReasonNameTooLong, "f", "feature name of %d bytes, limit is %d", len(f.Name), DefaultMaxNameBytes)
		}
		if !utf8.ValidString(f.Name) {
			return newError(ReasonBadFieldType, "f", "feature name %q is not valid UTF-8", f.Name)
		}
		dup := false
		if seen != nil {
			_, dup = seen[f.Name]
			seen[f.Name] = struct{}{}
		} else {
			for j := 0; j < i; j++ {
				dup = dup || fs[j].Name == f.Name
			}
		}
		if dup {
			return newError(ReasonDuplicateKey, "f", "feature %q appears twice", f.Name)
		}
		switch f.Kind {
		case FieldNumber:
			if !finite(f.Num) {
				return newError(ReasonNonFinite, "f", "feature %q is %v (a missing value is FieldMissing)", f.Name, f.Num)
			}
		case FieldBool:
			if f.Num != 0 && f.Num != 1 {
				return newError(ReasonBadFieldType, "f", "feature %q: a FieldBool has Num 1 or 0, not %v", f.Name, f.Num)
			}
		case FieldString:
			if len(f.Str) > DefaultMaxNameBytes {
				return newError(ReasonNameTooLong, "f", "feature %q: string value of %d bytes, limit is %d", f.Name, len(f.Str), DefaultMaxNameBytes)
			}
			if !utf8.ValidString(f.Str) {
				return newError(ReasonBadFieldType, "f", "feature %q: value %q is not valid UTF-8", f.Name, f.Str)
			}
		case FieldMissing:
		default:
			return newError(ReasonBadFieldType, "f", "feature %q: Kind %v is not a field kind", f.Name, f.Kind)
		}
	}
	return nil
}

// writeNamed writes "f"'s value: a map in the order of fs; numbers as
// float64, bools as bools, strings as str, missing values as nil.
func (w *writer) named(fs []Field) {
	w.mapLen(len(fs))
	for i := range fs {
		f := &fs[i]
		_ = w.enc.EncodeString(f.Name)
		switch f.Kind {
		case FieldNumber:
			w.float(f.Num)
		case FieldBool:
			_ = w.enc.EncodeBool(f.Num != 0)
		case FieldString:
			_ = w.enc.EncodeString(f.Str)
		default:
			_ = w.enc.EncodeNil()
		}
	}
}
