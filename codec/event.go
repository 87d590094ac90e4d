package codec

import (
	"bytes"
	"fmt"
	"math"
)

// EventVersion is the Event schema version to write for events without named
// features: 2, which adds feedback events (Ref) to version 1. DecodeEvent
// accepts versions 1 to 3 (NamedEventVersion, 3, adds named features: set it
// for an event with F). AppendEvent writes the Version the caller set: an
// event without Ref and F means the same in all three, so a producer whose
// events must stay readable by okstream builds that predate version 2 keeps
// setting Version 1 for them.
const EventVersion = 2

// DefaultMaxFeatures is the feature-count limit used when Limits.MaxFeatures is 0.
const DefaultMaxFeatures = 1 << 20

// Event is one decoded input event. An event with features (an impression,
// labelled or not) uses exactly one of the dense (X), sparse (XI, XV) and
// named (F, schema version 3) representations: after a successful decode,
// exactly one of X, XI (with XV) and F is non-nil. A feedback event
// (IsFeedback: Ref is not "", schema version 2 or 3) has no features at all:
// X, XI, XV and F are nil, and HasY is true.
type Event struct {
	Version int    // schema version ("v"): 1 or 2
	ID      string // "id"; "" when absent (the runtime then uses topic/partition/offset)
	TS      int64  // "ts", event time in ms since the Unix epoch; meaningful if HasTS
	HasTS   bool
	Key     string    // "key", entity key; "" when absent
	Ref     string    // "ref" (version 2): the ID of the earlier event whose label this is; "" for an event with features
	X       []float64 // "x", dense features; nil if sparse
	XI      []uint32  // "xi", sparse feature indices (0-based, strictly increasing); nil if dense
	XV      []float64 // "xv", sparse feature values, len(XV) == len(XI); nil if dense
	// F is "f" (version 3): the named features in record order, names
	// distinct; non-nil (possibly empty) exactly when the event is named
	// (Named). Its strings are ordinary Go strings that stay valid, but its
	// backing array is reused by the next decode into the same Event.
	F    []Field
	Y    float64 // "y", the label: a number as it is, a bool as 1 (true) or 0 (false), 0 for a string; meaningful if HasY
	HasY bool
	// YKind is what "y" is in the record: a number (LabelNumber, the zero
	// value), a bool (LabelBool) or a string (LabelString, in YStr).
	// Package label maps every kind to what a model learns from.
	YKind LabelKind
	YStr  string // "y" when YKind is LabelString
}

// LabelKind is the msgpack type of an event's label "y".
type LabelKind uint8

const (
	// LabelNumber: "y" is an integer or a float (Y holds it).
	LabelNumber LabelKind = iota
	// LabelBool: "y" is true or false (Y is 1 or 0).
	LabelBool
	// LabelString: "y" is a str or bin (YStr holds it; Y is 0). Its length
	// is bounded by Limits.MaxIDBytes, like id, key and ref.
	LabelString
)

func (k LabelKind) String() string {
	switch k {
	case LabelNumber:
		return "number"
	case LabelBool:
		return "bool"
	case LabelString:
		return "string"
	}
	return fmt.Sprintf("LabelKind(%d)", uint8(k))
}

// IsFeedback reports whether e is a feedback event: a label (Y) for the
// earlier event whose ID is e.Ref, with no features of its own. Only schema
// version 2 has feedback events; in a version 1 record "ref" is an unknown
// key, so a decoded version 1 event is never feedback.
func (e *Event) IsFeedback() bool { return e.Ref != "" }

// Dense writes the event's features into dst as a dense vector of length dim
// and returns it. It reuses dst's storage when cap(dst) >= dim and allocates
// otherwise. For a sparse event dst is zero-filled first.
//
// Dense panics if the event does not fit in dim: a dense event whose len(X) is
// not dim, or a sparse event with an index >= dim. An event decoded with
// Limits.Dim == dim always fits. It also panics for a feedback event
// (IsFeedback), which has no features: a learner must use the features of the
// impression that e.Ref names, and a zero vector in their place would be
// learned from silently.
//
// For a named event (Named) Dense returns nil, whatever dst and dim: names
// become coordinates only through a feature encoder that keeps its
// dictionary (or hash) in the model state, which this package does not
// have. Check Named before calling Dense; a nil result is never a valid
// vector of dim > 0 values.
func (e *Event) Dense(dst []float64, dim int) []float64 {
	if e.Ref != "" {
		panic(fmt.Sprintf("codec: Event.Dense: feedback event (ref %q) has no features; use those of the event it refers to", e.Ref))
	}
	if e.F != nil {
		return nil
	}
	if cap(dst) >= dim {
		dst = dst[:dim]
	} else {
		dst = make([]float64, dim)
	}
	if e.X != nil {
		if len(e.X) != dim {
			panic(fmt.Sprintf("codec: Event.Dense: dense event has %d features, want dim %d", len(e.X), dim))
		}
		copy(dst, e.X)
		return dst
	}
	clear(dst)
	for i, j := range e.XI {
		if int64(j) >= int64(dim) {
			panic(fmt.Sprintf("codec: Event.Dense: sparse index %d out of range for dim %d", j, dim))
		}
		dst[j] = e.XV[i]
	}
	return dst
}

// Limits bounds what a Decoder accepts. The zero value accepts any dimension,
// up to DefaultMaxFeatures features, and records of any size.
type Limits struct {
	// Dim is the expected feature dimension; 0 means any. When set, a dense
	// event must have exactly Dim features and a sparse index must be < Dim.
	// When 0, sparse indices must fit in a uint32. Named features (f) have
	// no dimension: Dim does not apply to them.
	Dim int
	// MaxFeatures bounds len(x), len(xi)/len(xv) and the number of named
	// features in "f". 0 means DefaultMaxFeatures, or Dim if that is larger.
	MaxFeatures int
	// MaxBytes bounds the encoded record's length; 0 means no limit.
	MaxBytes int
	// MaxAbsValue bounds the magnitude of every feature value (x, xv) and of
	// y: a finite value v with |v| > MaxAbsValue is value_out_of_range. 0
	// (or a negative value, or NaN) means no limit. Finite but huge values
	// (±1e308) overflow the squares and products inside kernels to ±Inf and
	// then NaN, which poisons a model's state for good; a bound far below
	// sqrt(MaxFloat64) ≈ 1.3e154 keeps every kernel computation finite.
	MaxAbsValue float64
	// MaxIDBytes bounds the length in bytes of "id", "key" and "ref"; a
	// longer one is id_too_long. 0 means no limit. It is checked before the
	// string is copied out of the record.
	MaxIDBytes int
	// MaxNameBytes bounds the length in bytes of a feature name in "f" and
	// of a string feature value; a longer one is name_too_long. 0 means
	// DefaultMaxNameBytes (256): unlike id and key, names and categorical
	// values become entries of a model's feature dictionary.
	MaxNameBytes int
}

// A Decoder decodes Events under fixed Limits. It is reusable and not safe for
// concurrent use.
//
// Decoding into a reused *Event reuses its slices, so that decoding dense or
// sparse features allocates nothing once the slices have grown to size (the
// id, key and ref strings are still allocated). Named features (F) allocate
// nothing either once their names and string values have been seen: the
// Decoder interns them in a table of at most about 16384 strings (emptied
// when it overflows, so memory stays bounded), and F's strings are ordinary
// Go strings, valid forever. The storage ev's slices
// pointed to before a DecodeEvent call belongs to the Decoder afterwards (it
// keeps a buffer an event no longer needs, e.g. X when a sparse event or a
// feedback event follows a dense one, for a later event): copy features you
// want to keep past the next call.
type Decoder struct {
	lim         Limits
	maxFeatures int
	r           reader

	// present is the set of keys with a non-nil value in the record being decoded.
	present fieldSet

	spareX  []float64
	spareXI []uint32
	spareXV []float64
	spareF  []Field

	maxName int
	// sawF is set when a version 1 or 2 record has an "f" key (unknown
	// there), for the hint in its missing_features error.
	sawF bool
	// The intern table of names and string values (see intern): id → string,
	// string → id, and for each id the record (gen) that last used it as a
	// name, to find duplicates; posName and posVal are the ids the previous
	// records had at each position of "f".
	internIDs  map[string]int32
	internStrs []string
	internSeen []uint32
	gen        uint32
	posName    []posEntry
	posVal     []posEntry
	posValid   int // posName[:posValid] are the last record's names, distinct

	// js is the JSON scanner's state (json.go).
	js jsonReader

	// labels are the last two distinct string labels decoded: a binary
	// stream's string labels then allocate nothing (labelString).
	labels [2]string
}

// labelString returns s as a string, reusing one of the last two string
// labels when s equals it (the comparison does not allocate).
func (d *Decoder) labelString(s []byte) string {
	for _, l := range d.labels {
		if l == string(s) {
			return l
		}
	}
	l := string(s)
	d.labels[1], d.labels[0] = d.labels[0], l
	return l
}

// NewDecoder returns a Decoder that enforces lim. Negative limits count as 0.
func NewDecoder(lim Limits) *Decoder {
	lim.Dim = max(lim.Dim, 0)
	lim.MaxFeatures = max(lim.MaxFeatures, 0)
	lim.MaxBytes = max(lim.MaxBytes, 0)
	if !(lim.MaxAbsValue > 0) { // negative or NaN: no limit
		lim.MaxAbsValue = 0
	}
	lim.MaxIDBytes = max(lim.MaxIDBytes, 0)
	lim.MaxNameBytes = max(lim.MaxNameBytes, 0)
	d := &Decoder{lim: lim, maxFeatures: lim.MaxFeatures, maxName: lim.MaxNameBytes}
	if d.maxName == 0 {
		d.maxName = DefaultMaxNameBytes
	}
	if d.maxFeatures == 0 {
		d.maxFeatures = max(DefaultMaxFeatures, lim.Dim)
	}
	d.r.init()
	return d
}

// DecodeEvent is a convenience for NewDecoder(lim).DecodeEvent into a new Event.
func DecodeEvent(b []byte, lim Limits) (Event, error) {
	var ev Event
	err := NewDecoder(lim).DecodeEvent(b, &ev)
	return ev, err
}

// fieldSet is a set of the Event keys this package knows.
type fieldSet uint16

const (
	fV fieldSet = 1 << iota
	fID
	fTS
	fKey
	fX
	fXI
	fXV
	fY
	fRef
	fF
)

// name is the key of the field f.
func (f fieldSet) name() string {
	switch f {
	case fV:
		return "v"
	case fID:
		return "id"
	case fTS:
		return "ts"
	case fKey:
		return "key"
	case fX:
		return "x"
	case fXI:
		return "xi"
	case fXV:
		return "xv"
	case fY:
		return "y"
	case fRef:
		return "ref"
	case fF:
		return "f"
	}
	return ""
}

func eventField(key []byte) fieldSet {
	switch string(key) {
	case "v":
		return fV
	case "id":
		return fID
	case "ts":
		return fTS
	case "key":
		return fKey
	case "x":
		return fX
	case "xi":
		return fXI
	case "xv":
		return fXV
	case "y":
		return fY
	case "ref":
		return fRef
	case "f":
		return fF
	}
	return 0
}

// DecodeEvent decodes the msgpack record b into ev, overwriting all of ev's
// fields. On error ev is left as the zero Event (its storage is kept by d for
// reuse) and the error is an *Error; see the package documentation for the
// rules and for which Reason is reported when b has several problems.
// DecodeEvent never panics, whatever b holds, and keeps no reference to b.
func (d *Decoder) DecodeEvent(b []byte, ev *Event) error {
	return d.decodeEvent(b, ev, false)
}

// decodeEvent is DecodeEvent (json false) and DecodeEventJSON (json true):
// the same limits, buffer reuse and precedence of errors.
func (d *Decoder) decodeEvent(b []byte, ev *Event, json bool) error {
	if d.lim.MaxBytes > 0 && len(b) > d.lim.MaxBytes {
		d.release(ev)
		*ev = Event{}
		return newError(ReasonOversized, "", "record is %d bytes, limit is %d", len(b), d.lim.MaxBytes)
	}
	x, xi, xv, fs := ev.X[:0], ev.XI[:0], ev.XV[:0], ev.F[:0]
	if cap(x) == 0 {
		x, d.spareX = d.spareX, nil
	}
	if cap(xi) == 0 {
		xi, d.spareXI = d.spareXI, nil
	}
	if cap(xv) == 0 {
		xv, d.spareXV = d.spareXV, nil
	}
	if cap(fs) == 0 {
		fs, d.spareF = d.spareF, nil
	}
	*ev = Event{X: x, XI: xi, XV: xv, F: fs}
	d.startNamed()
	d.sawF = false

	var e *Error
	if json {
		e = d.decodeJSON(b, ev)
		if e != nil && e.Reason != ReasonNotJSON && e.Reason != ReasonLooksLikeMsgpack {
			if _, e2 := d.scanJSON(b); e2 != nil {
				e = e2
			}
		}
	} else {
		e = d.decode(b, ev)
		if e != nil && e.Reason != ReasonNotMsgpack && e.Reason != ReasonLooksLikeJSON {
			// An earlier field error may hide a problem of higher precedence
			// further on (truncation, trailing bytes, an unknown version).
			if _, e2 := d.scan(b); e2 != nil {
				e = e2
			}
		}
	}
	if e != nil {
		d.release(ev)
		*ev = Event{}
		return e
	}
	switch {
	case ev.Ref != "": // feedback: no features
		d.finish(ev, fRef)
	case d.present&fX != 0:
		d.finish(ev, fX)
	case d.present&fF != 0:
		d.finish(ev, fF)
	default:
		d.finish(ev, fXI)
	}
	return nil
}

// finish sets to nil the feature slices of ev other than those of the form
// keep (fX, fXI for sparse, fF; anything else: none), keeping their storage
// for a later event.
func (d *Decoder) finish(ev *Event, keep fieldSet) {
	var x, xv []float64
	var xi []uint32
	var fs []Field
	switch keep {
	case fX:
		xi, xv, fs = ev.XI, ev.XV, ev.F
		ev.XI, ev.XV, ev.F = nil, nil, nil
	case fXI:
		x, fs = ev.X, ev.F
		ev.X, ev.F = nil, nil
	case fF:
		x, xi, xv = ev.X, ev.XI, ev.XV
		ev.X, ev.XI, ev.XV = nil, nil, nil
	default:
		x, xi, xv, fs = ev.X, ev.XI, ev.XV, ev.F
		ev.X, ev.XI, ev.XV, ev.F = nil, nil, nil, nil
	}
	d.keep(x, xi, xv, fs)
}

// release keeps the buffers of ev, which is about to be zeroed.
func (d *Decoder) release(ev *Event) {
	d.keep(ev.X, ev.XI, ev.XV, ev.F)
}

// keep keeps buffers an event no longer uses, for a later event.
func (d *Decoder) keep(x []float64, xi []uint32, xv []float64, fs []Field) {
	if cap(x) > cap(d.spareX) {
		d.spareX = x[:0]
	}
	if cap(xi) > cap(d.spareXI) {
		d.spareXI = xi[:0]
	}
	if cap(xv) > cap(d.spareXV) {
		d.spareXV = xv[:0]
	}
	if cap(fs) > cap(d.spareF) {
		d.spareF = fs[:0]
	}
}

// topMap checks that the record is a map and reads its header.
func (r *reader) topMap() (int, *Error) {
	c, e := r.peek("")
	if e != nil {
		return 0, newError(ReasonNotMsgpack, "", "empty record")
	}
	switch k := kindOf(c); k {
	case kMap:
	case kInvalid:
		return 0, newError(ReasonNotMsgpack, "", "invalid msgpack type code 0x%02x", c)
	default:
		return 0, newError(ReasonNotMap, "", "top-level value is a %s, want a map", k)
	}
	return r.mapLen("")
}

func (r *reader) trailing() *Error {
	if n := r.rem(); n > 0 {
		return newError(ReasonTrailingBytes, "", "%d bytes after the map", n)
	}
	return nil
}

// decode is one pass over the record: it checks types and per-field rules as
// it reads each key (the same for every schema version, except that "ref" is
// a field only in version 2), then the record-level rules of the record's
// version.
func (d *Decoder) decode(b []byte, ev *Event) *Error {
	r := &d.r
	r.reset(b)
	d.present = 0
	if looksLikeJSON(b) {
		return newError(ReasonLooksLikeJSON, "", "the record looks like JSON (it starts with %q), not msgpack; read JSON records with --input-format json (Decoder.DecodeEventJSON)", firstNonSpace(b))
	}
	n, e := r.topMap()
	if e != nil {
		return e
	}
	var seen fieldSet
	for i := 0; i < n; i++ {
		key, e := r.key("", i)
		if e != nil {
			return e
		}
		f := eventField(key)
		if f == fRef || f == fF {
			// "ref" is a field from version 2 on and an unknown key in
			// version 1, "f" one from version 3 on, so they depend on
			// "v". Producers write "v" first; if this one did not, find
			// the version now.
			if ev.Version == 0 {
				v, e := d.versionAhead(b)
				if e != nil {
					return e // a framing or version problem: these come first anyway
				}
				ev.Version = v // "v" is read again later, with the same value
			}
			f = versionField(f, ev.Version)
			d.sawF = d.sawF || f == 0 && key[0] == 'f'
		}
		if f == 0 {
			// Unknown keys are ignored (forward compatibility), but must be
			// well-formed msgpack.
			if e := r.skip(""); e != nil {
				e.Field = string(key) // named only now: string(key) allocates
				return e
			}
			continue
		}
		if seen&f != 0 {
			return newError(ReasonDuplicateKey, string(key), "appears twice in the map")
		}
		seen |= f
		if r.takeNil() {
			continue // nil means absent, for every key
		}
		d.present |= f
		if e := d.field(f, ev); e != nil {
			return e
		}
	}
	if e := r.trailing(); e != nil {
		return e
	}
	if d.present&fV == 0 {
		return newError(ReasonMissingVersion, "v", "no schema version")
	}
	// The version was checked when "v" was read; a new version adds a case
	// here (and its own keys to field/eventField if it has any).
	return d.check(ev)
}

// versionField is f, a key that depends on the version, in a record of
// version v: itself, or 0 (an unknown key) in a version that lacks it.
func versionField(f fieldSet, v int) fieldSet {
	if f == fRef && v < 2 || f == fF && v < NamedEventVersion {
		return 0
	}
	return f
}

// check applies the record-level rules of the record's version.
func (d *Decoder) check(ev *Event) *Error {
	switch ev.Version {
	case 1:
		return d.checkV1(ev)
	case 2, 3:
		return d.checkV2(ev)
	}
	return unknownVersion(int64(ev.Version), true)
}

// looksLikeJSON reports whether b, after a UTF-8 byte order mark and JSON
// whitespace, starts with '{' or '[': never a valid msgpack event (those
// bytes are positive fixints, and 0xef is a negative one).
func looksLikeJSON(b []byte) bool {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	c := firstNonSpace(b)
	return c == '{' || c == '['
}

// firstNonSpace is the first byte of b that is not JSON whitespace, or 0.
func firstNonSpace(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}

// versionAhead returns the version of the record b, which is being decoded,
// when a key that depends on it comes before "v": it runs scan, then returns
// to where the decoding pass is.
func (d *Decoder) versionAhead(b []byte) (int, *Error) {
	p := d.r.pos()
	v, e := d.scan(b)
	d.r.reset(b)
	d.r.seekTo(p)
	return v, e
}

func unknownVersion(v int64, ok bool) *Error {
	if !ok {
		return newError(ReasonUnknownVersion, "v", "version out of range; this codec knows versions 1 to 3")
	}
	return newError(ReasonUnknownVersion, "v", "version %d; this codec knows versions 1 to 3", v)
}

func knownVersion(v int64, ok bool) bool {
	return ok && v >= 1 && v <= NamedEventVersion
}

// field decodes the value of the known key f into ev.
func (d *Decoder) field(f fieldSet, ev *Event) *Error {
	r := &d.r
	switch f {
	case fV:
		v, ok, e := r.int("v")
		if e != nil {
			return e
		}
		if !knownVersion(v, ok) {
			return unknownVersion(v, ok)
		}
		ev.Version = int(v)
	case fID:
		s, e := r.str("id", "a string")
		if e != nil {
			return e
		}
		if e := d.checkIDLen("id", s); e != nil {
			return e
		}
		ev.ID = string(s)
	case fTS:
		v, ok, e := r.int("ts")
		if e != nil {
			return e
		}
		if !ok {
			return newError(ReasonBadFieldType, "ts", "integer above 2^63-1")
		}
		ev.TS, ev.HasTS = v, true
	case fKey:
		s, e := r.str("key", "a string or binary")
		if e != nil {
			return e
		}
		if e := d.checkIDLen("key", s); e != nil {
			return e
		}
		ev.Key = string(s)
	case fRef: // only reached in a version 2 record
		s, e := r.str("ref", "a string or binary")
		if e != nil {
			return e
		}
		if e := d.checkIDLen("ref", s); e != nil {
			return e
		}
		ev.Ref = string(s)
	case fX:
		x, e := d.floats("x", ev.X, d.lim.Dim)
		ev.X = x
		return e
	case fXV:
		xv, e := d.floats("xv", ev.XV, 0)
		ev.XV = xv
		return e
	case fXI:
		xi, e := d.indices("xi", ev.XI)
		ev.XI = xi
		return e
	case fF: // only reached in a version 3 record
		return d.named(ev)
	case fY:
		c, e := r.peek("y")
		if e != nil {
			return e
		}
		switch k := kindOf(c); {
		case k == kBool:
			r.advance(1)
			ev.Y, ev.HasY, ev.YKind = 0, true, LabelBool
			if c == 0xc3 {
				ev.Y = 1
			}
			return nil
		case k == kStr || k == kBin:
			s, e := r.str("y", "a number, a bool or a string")
			if e != nil {
				return e
			}
			if e := d.checkIDLen("y", s); e != nil {
				return e
			}
			ev.YStr, ev.HasY, ev.YKind = d.labelString(s), true, LabelString
			return nil
		case !isNumber(k):
			return badType("y", c, "a number, a bool or a string")
		}
		y, e := r.number("y", c)
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

// outOfRange reports whether the finite value v is beyond Limits.MaxAbsValue.
func (d *Decoder) outOfRange(v float64) bool {
	return d.lim.MaxAbsValue > 0 && math.Abs(v) > d.lim.MaxAbsValue
}

// checkIDLen applies Limits.MaxIDBytes to the string field s.
func (d *Decoder) checkIDLen(field string, s []byte) *Error {
	if d.lim.MaxIDBytes > 0 && len(s) > d.lim.MaxIDBytes {
		return newError(ReasonIDTooLong, field, "%d bytes, limit is %d", len(s), d.lim.MaxIDBytes)
	}
	return nil
}

func finite(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0)
}

// grow returns s with length n, reusing its storage when it is large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

// floats decodes an array of numbers into dst's storage. If dim > 0, a
// non-empty array must have exactly dim elements.
func (d *Decoder) floats(field string, dst []float64, dim int) ([]float64, *Error) {
	r := &d.r
	n, e := r.arrayLen(field)
	if e != nil {
		return dst[:0], e
	}
	if n > d.maxFeatures {
		return dst[:0], newError(ReasonTooManyFeatures, field, "%d features, limit is %d", n, d.maxFeatures)
	}
	if dim > 0 && n > 0 && n != dim {
		return dst[:0], newError(ReasonDimensionMismatch, field, "%d features, want %d", n, dim)
	}
	dst = grow(dst, n)
	p := r.pos()
	for i := range dst {
		v, size := fastFloat(r.b, p)
		if size > 0 {
			p += size
		} else {
			r.seekTo(p)
			c, e := r.peek(field)
			if e != nil {
				return dst[:0], e
			}
			if !isNumber(kindOf(c)) {
				return dst[:0], badElemType(field, i, c, "a number")
			}
			if v, e = r.number(field, c); e != nil {
				return dst[:0], e
			}
			p = r.pos()
		}
		if !finite(v) {
			return dst[:0], newError(ReasonNonFinite, field, "element %d is %v", i, v)
		}
		if d.outOfRange(v) {
			return dst[:0], newError(ReasonValueOutOfRange, field, "element %d is %v; the limit is |value| <= %v", i, v, d.lim.MaxAbsValue)
		}
		dst[i] = v
	}
	r.seekTo(p)
	return dst, nil
}

// indices decodes xi: non-negative, strictly increasing integers, each below
// Limits.Dim (or 2^32 when Dim is 0).
func (d *Decoder) indices(field string, dst []uint32) ([]uint32, *Error) {
	r := &d.r
	n, e := r.arrayLen(field)
	if e != nil {
		return dst[:0], e
	}
	if n > d.maxFeatures {
		return dst[:0], newError(ReasonTooManyFeatures, field, "%d features, limit is %d", n, d.maxFeatures)
	}
	limit := int64(math.MaxUint32) + 1
	if d.lim.Dim > 0 {
		limit = int64(d.lim.Dim)
	}
	dst = grow(dst, n)
	prev := int64(-1)
	p := r.pos()
	for i := range dst {
		v, ok, size := fastIndex(r.b, p)
		if size > 0 {
			p += size
		} else {
			r.seekTo(p)
			c, e := r.peek(field)
			if e != nil {
				return dst[:0], e
			}
			if k := kindOf(c); k != kUint && k != kInt {
				return dst[:0], badElemType(field, i, c, "a non-negative integer")
			}
			if v, ok, e = r.int(field); e != nil {
				return dst[:0], e
			}
			p = r.pos()
		}
		if !ok || v < 0 || v >= limit {
			if !ok {
				return dst[:0], newError(ReasonSparseOutOfRange, field, "element %d is above 2^63-1; want 0 <= index < %d", i, limit)
			}
			return dst[:0], newError(ReasonSparseOutOfRange, field, "element %d is %d; want 0 <= index < %d", i, v, limit)
		}
		if v == prev {
			return dst[:0], newError(ReasonSparseDuplicate, field, "element %d repeats index %d", i, v)
		}
		if v < prev {
			return dst[:0], newError(ReasonSparseUnsorted, field, "element %d (%d) is below element %d (%d); indices must be strictly increasing", i, v, i-1, prev)
		}
		dst[i] = uint32(v)
		prev = v
	}
	r.seekTo(p)
	return dst, nil
}

// checkV1 applies the record-level rules of schema version 1 (and those of
// an event that is not feedback in versions 2 and 3).
func (d *Decoder) checkV1(ev *Event) *Error {
	e := checkFeatures(d.present&fX != 0, d.present&fXI != 0, d.present&fXV != 0, d.present&fF != 0, len(ev.X), len(ev.XI), len(ev.XV))
	if e != nil && e.Reason == ReasonMissingFeatures && e.Field == "" && d.sawF {
		e.Detail += fmt.Sprintf(`; this record has "f" (named features), which needs "v": %d (it is %d)`, NamedEventVersion, ev.Version)
	}
	return e
}

// checkV2 applies the record-level rules of schema versions 2 and 3: those of
// a feedback event when "ref" is non-empty, and version 1's otherwise.
func (d *Decoder) checkV2(ev *Event) *Error {
	if ev.Ref != "" {
		return checkFeedback(d.present&fX != 0, d.present&fXI != 0, d.present&fXV != 0, d.present&fF != 0, ev.HasY)
	}
	return d.checkV1(ev)
}

// checkFeedback applies the record-level rules of a feedback event, shared by
// decoding and encoding: no features (not even empty arrays or map), and a
// label.
func checkFeedback(hasX, hasXI, hasXV, hasF, hasY bool) *Error {
	const why = "a feedback event (one with ref) carries only a label; the features are those of the event it refers to"
	switch {
	case hasX:
		return newError(ReasonFeedbackWithFeatures, "x", why)
	case hasXI:
		return newError(ReasonFeedbackWithFeatures, "xi", why)
	case hasXV:
		return newError(ReasonFeedbackWithFeatures, "xv", why)
	case hasF:
		return newError(ReasonFeedbackWithFeatures, "f", why)
	case !hasY:
		return newError(ReasonMissingLabel, "y", "a feedback event (one with ref) must carry the label y")
	}
	return nil
}

// checkFeatures applies the record-level feature rules shared by decoding and
// encoding: exactly one representation, complete, and non-empty unless
// named (an empty "f" is an event whose every named feature is missing).
func checkFeatures(dense, hasXI, hasXV, named bool, nx, nxi, nxv int) *Error {
	switch {
	case named && dense:
		return newError(ReasonDenseAndSparse, "", "both named f and dense x given")
	case named && (hasXI || hasXV):
		return newError(ReasonDenseAndSparse, "", "both named f and sparse xi/xv given")
	case named:
		return nil
	case dense && (hasXI || hasXV):
		return newError(ReasonDenseAndSparse, "", "both dense x and sparse xi/xv given")
	case !dense && !hasXI && !hasXV:
		return newError(ReasonMissingFeatures, "", "none of x, xi/xv and f given")
	case dense:
		if nx == 0 {
			return newError(ReasonEmptyFeatures, "x", "no features")
		}
		return nil
	case !hasXI:
		return newError(ReasonMissingFeatures, "xi", "xv given without xi")
	case !hasXV:
		return newError(ReasonMissingFeatures, "xv", "xi given without xv")
	case nxi != nxv:
		return newError(ReasonSparseLength, "xv", "len(xi) = %d but len(xv) = %d", nxi, nxv)
	case nxi == 0:
		return newError(ReasonEmptyFeatures, "xi", "no features")
	}
	return nil
}

// scan re-reads the whole record for the problems that take precedence over
// a field error: malformed msgpack anywhere, trailing bytes, and a missing,
// mistyped, duplicated or unknown version. It runs only after decode failed,
// or when decode needs the version before it has read "v". With no such
// problem it returns the record's version (1 or 2).
func (d *Decoder) scan(b []byte) (int, *Error) {
	r := &d.r
	r.reset(b)
	n, e := r.topMap()
	if e != nil {
		return 0, e
	}
	var verr *Error
	sawKey, hasV, version := false, false, 0
	for i := 0; i < n; i++ {
		var key []byte
		if c, e := r.peek(""); e != nil {
			return 0, e
		} else if k := kindOf(c); k == kStr || k == kBin {
			if key, e = r.str("", "a string"); e != nil {
				return 0, e
			}
		} else if e := r.skip(""); e != nil { // a bad key is a field error; only its shape matters here
			return 0, e
		}
		if string(key) != "v" || verr != nil {
			if e := r.skip(string(key)); e != nil {
				return 0, e
			}
			continue
		}
		if sawKey {
			verr = newError(ReasonDuplicateKey, "v", "appears twice in the map")
			if e := r.skip("v"); e != nil {
				return 0, e
			}
			continue
		}
		sawKey = true
		if r.takeNil() {
			continue
		}
		hasV = true
		c, e := r.peek("v")
		if e != nil {
			return 0, e
		}
		if k := kindOf(c); k != kUint && k != kInt {
			verr = badType("v", c, "an integer")
			if e := r.skip("v"); e != nil {
				return 0, e
			}
			continue
		}
		v, ok, e := r.int("v")
		if e != nil {
			return 0, e
		}
		if !knownVersion(v, ok) {
			verr = unknownVersion(v, ok)
		} else {
			version = int(v)
		}
	}
	if e := r.trailing(); e != nil {
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

// AppendEvent appends the msgpack encoding of ev to dst and returns the
// extended slice. The encoding is deterministic: keys in the order v, id, ts,
// key, ref, x | xi, xv | f, y (the fields of f in the order of F); absent optional fields omitted (ID, Key and Ref
// when "", TS when !HasTS, Y when !HasY, the features of a feedback event);
// "v" is ev.Version, 1 or 2, as the caller set it; numbers in the smallest
// msgpack integer form and features and a number y always as float64 (a
// bool y as a bool, a string y as a str, or bin if not UTF-8). Equal events
// give equal bytes, and an event without Ref gives the same bytes in both
// versions except for "v".
//
// ev is validated first with the rules DecodeEvent applies under zero Limits
// to ev.Version; an invalid event gives an *Error and dst unchanged. Ref set
// with Version 1 is an error (bad_field_type on "ref"): set Version 2 for
// feedback events. The output decodes to an Event equal to ev in every
// encoded field.
func AppendEvent(dst []byte, ev *Event) ([]byte, error) {
	if e := validateEvent(ev); e != nil {
		return dst, e
	}
	n := 1 // v
	if ev.ID != "" {
		n++
	}
	if ev.HasTS {
		n++
	}
	if ev.Key != "" {
		n++
	}
	if ev.Ref != "" {
		n++
	}
	switch {
	case ev.X != nil, ev.F != nil:
		n++
	case ev.XI != nil:
		n += 2 // xi and xv
	}
	if ev.HasY {
		n++
	}
	w := getWriter(dst)
	w.mapLen(n)
	w.key("v")
	w.int(int64(ev.Version))
	if ev.ID != "" {
		w.key("id")
		w.text(ev.ID)
	}
	if ev.HasTS {
		w.key("ts")
		w.int(ev.TS)
	}
	if ev.Key != "" {
		w.key("key")
		w.text(ev.Key)
	}
	if ev.Ref != "" {
		w.key("ref")
		w.text(ev.Ref)
	}
	if ev.X != nil {
		w.key("x")
		w.floats(ev.X)
	} else if ev.XI != nil {
		w.key("xi")
		w.arrayLen(len(ev.XI))
		for _, j := range ev.XI {
			w.uint(uint64(j))
		}
		w.key("xv")
		w.floats(ev.XV)
	} else if ev.F != nil {
		w.key("f")
		w.named(ev.F)
	}
	if ev.HasY {
		w.key("y")
		switch ev.YKind {
		case LabelBool:
			_ = w.enc.EncodeBool(ev.Y != 0)
		case LabelString:
			w.text(ev.YStr)
		default:
			w.float(ev.Y)
		}
	}
	return w.finish(), nil
}

// validateEvent applies DecodeEvent's rules (under zero Limits) to a Go value.
func validateEvent(ev *Event) *Error {
	switch {
	case ev.Version == 0:
		return newError(ReasonMissingVersion, "v", "Version is 0; set it to 1 or 2 (codec.EventVersion), or 3 with named features")
	case !knownVersion(int64(ev.Version), true):
		return unknownVersion(int64(ev.Version), true)
	}
	if ev.F != nil && ev.Version < NamedEventVersion {
		return newError(ReasonBadFieldType, "f", "F is set but Version is %d, which has no named features; set Version %d (codec.NamedEventVersion)", ev.Version, NamedEventVersion)
	}
	if ev.Ref != "" {
		if ev.Version == 1 {
			return newError(ReasonBadFieldType, "ref", "Ref is set but Version is 1, which has no feedback events; set Version 2 for feedback events")
		}
		if e := checkFeedback(ev.X != nil, ev.XI != nil, ev.XV != nil, ev.F != nil, ev.HasY); e != nil {
			return e
		}
		return validateLabel(ev)
	}
	if e := checkFeatures(ev.X != nil, ev.XI != nil, ev.XV != nil, ev.F != nil, len(ev.X), len(ev.XI), len(ev.XV)); e != nil {
		return e
	}
	if ev.F != nil {
		if e := validateNamed(ev.F); e != nil {
			return e
		}
		return validateLabel(ev)
	}
	if max(len(ev.X), len(ev.XI)) > DefaultMaxFeatures {
		field := "x"
		if ev.X == nil {
			field = "xi"
		}
		return newError(ReasonTooManyFeatures, field, "%d features, limit is %d", max(len(ev.X), len(ev.XI)), DefaultMaxFeatures)
	}
	for i, v := range ev.X {
		if !finite(v) {
			return newError(ReasonNonFinite, "x", "element %d is %v", i, v)
		}
	}
	for i, j := range ev.XI {
		if i > 0 && j == ev.XI[i-1] {
			return newError(ReasonSparseDuplicate, "xi", "element %d repeats index %d", i, j)
		}
		if i > 0 && j < ev.XI[i-1] {
			return newError(ReasonSparseUnsorted, "xi", "element %d (%d) is below element %d (%d); indices must be strictly increasing", i, j, i-1, ev.XI[i-1])
		}
	}
	for i, v := range ev.XV {
		if !finite(v) {
			return newError(ReasonNonFinite, "xv", "element %d is %v", i, v)
		}
	}
	return validateLabel(ev)
}

// validateLabel applies the rules of "y" to a Go value.
func validateLabel(ev *Event) *Error {
	if !ev.HasY {
		return nil
	}
	switch ev.YKind {
	case LabelNumber:
		if !finite(ev.Y) {
			return newError(ReasonNonFinite, "y", "is %v", ev.Y)
		}
	case LabelBool:
		if ev.Y != 0 && ev.Y != 1 {
			return newError(ReasonBadFieldType, "y", "a bool label has Y 1 (true) or 0 (false), not %v", ev.Y)
		}
	case LabelString:
	default:
		return newError(ReasonBadFieldType, "y", "YKind %v is not a label kind", ev.YKind)
	}
	return nil
}
