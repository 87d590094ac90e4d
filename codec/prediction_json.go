package codec

import (
	"math"
	"strconv"
	"unsafe"
)

// JSON prediction records: DecodePredictionJSON reads what
// AppendPredictionJSON writes, with DecodePrediction's schema, versions and
// checks, so that a consumer of JSON predictions (okstream inspect, the
// effectively-once scan of the output's tail) sees the Prediction a msgpack
// reader would see. The scanner is json.go's (jsonReader): strict RFC 8259,
// nesting bounded by MaxJSONDepth, every string valid UTF-8.

// DecodePredictionJSON decodes the JSON record b (one object, optionally
// surrounded by whitespace) written by AppendPredictionJSON, of version 1,
// 2, 3 or 4, with the rules of DecodePrediction: the same keys, the same
// checks on each value ("d" in {−1, 0, 1}, "pp" and every "pd" probability
// a number in [0, 1], at most MaxDist "pd" pairs summing to at most
// 1 + 1e-6, "ci" in [−1, MaxDist), "p" in the int32 range, "sv" 3), unknown
// keys skipped (checked to be well-formed JSON), "r" and "ro" fields of
// version 2 only, and null counting as absent for every key but a model's
// "s": AppendPredictionJSON writes a non-finite score as null (JSON has no
// NaN or ±Inf), so a null "s" decodes to NaN (which non-finite value it was
// is lost). Integers ("v", "p", "o", "ts", "ro", "d", "u", "ci") must have
// no fraction or exponent. Errors are *Error with the Reason of the first
// problem in byte order: not_json (malformed, truncated, invalid UTF-8,
// nested deeper than MaxJSONDepth), looks_like_msgpack (the record starts
// with a msgpack map code: a msgpack prediction, read it with
// DecodePrediction), not_a_map, duplicate_key, bad_field_type,
// unknown_version, trailing_bytes, and missing_version last. The memory it
// allocates is bounded by a constant times len(b): models and
// distribution entries grow as they are read, never from a declared count.
// It never panics and keeps no reference to b.
func DecodePredictionJSON(b []byte) (Prediction, error) {
	var p Prediction
	var j jsonReader
	j.reset(b)
	if e := decodePredictionJSON(&j, &p); e != nil {
		return Prediction{}, e
	}
	return p, nil
}

// IsJSONRecord reports whether b is a JSON record rather than msgpack: its
// first byte other than JSON whitespace is '{' or '['. No msgpack event or
// prediction (a map) starts so — those bytes are positive fixints — so a
// reader of either format can tell them apart by it.
func IsJSONRecord(b []byte) bool {
	c := firstNonSpace(b)
	return c == '{' || c == '['
}

// DecodePredictionAny decodes a prediction record of either format:
// DecodePredictionJSON when IsJSONRecord(b), else DecodePrediction. Readers
// of an output topic whose format may have changed (a consumer restarted
// with another --output-format) use it.
func DecodePredictionAny(b []byte) (Prediction, error) {
	if IsJSONRecord(b) {
		return DecodePredictionJSON(b)
	}
	return DecodePrediction(b)
}

// predTop checks the record's start: '{', with a hint for a msgpack record.
func (j *jsonReader) predTop() *Error {
	if len(j.b) > 0 && looksLikeMsgpackMap(j.b[0]) {
		return newError(ReasonLooksLikeMsgpack, "", "the record looks like a msgpack prediction (it starts with the map code 0x%02x), not JSON; read it with DecodePrediction (--output-format msgpack)", j.b[0])
	}
	return j.topObject()
}

// takeNull consumes a null value (after whitespace) and reports whether
// there was one.
func (j *jsonReader) takeNull(field string) (bool, *Error) {
	c, e := j.peek(field)
	if e != nil {
		return false, e
	}
	if c != 'n' {
		return false, nil
	}
	return true, j.lit(field, "null")
}

// predInt reads an integer value for field.
func (j *jsonReader) predInt(field string) (int64, bool, *Error) {
	c, e := j.peek(field)
	if e != nil {
		return 0, false, e
	}
	return j.intJSON(field, c)
}

// predNumber reads any number for field (NaN and ±Infinity included, as a
// msgpack float may be non-finite).
func (j *jsonReader) predNumber(field string) (float64, *Error) {
	c, e := j.peek(field)
	if e != nil {
		return 0, e
	}
	if !isNumberStart(c) {
		return 0, j.badType(field, c, "a number")
	}
	v, _, _, _, e := j.number(field)
	return v, e
}

// predString reads a string value for field, copied.
func (j *jsonReader) predString(field string) (string, *Error) {
	c, e := j.peek(field)
	if e != nil {
		return "", e
	}
	if c != '"' {
		return "", j.badType(field, c, "a string")
	}
	s, e := j.str(field, &j.valBuf)
	if e != nil {
		return "", e
	}
	return string(s), nil
}

func decodePredictionJSON(j *jsonReader, p *Prediction) *Error {
	if e := j.predTop(); e != nil {
		return e
	}
	seen := 0
	version := int64(0) // 0 until known
	sv := int64(0)
	lookedAhead := false
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
		f := predictionField(key)
		if f == pR || f == pRO {
			// Fields of version 2, unknown keys in version 1.
			if version == 0 && seen&pV == 0 && !lookedAhead {
				version, lookedAhead = predictionVersionAheadJSON(j.b), true
			}
			if version != PredictionVersionOutcome {
				f = 0
			}
		}
		field := string(key)
		if e := j.expect(field, ':'); e != nil {
			return e
		}
		if f == 0 {
			if e := j.skip(field, 1); e != nil {
				return e
			}
			continue
		}
		if seen&f != 0 {
			return newError(ReasonDuplicateKey, field, "appears twice in the object")
		}
		seen |= f
		if null, e := j.takeNull(field); e != nil {
			return e
		} else if null {
			continue
		}
		switch f {
		case pV:
			v, ok, e := j.predInt("v")
			if e != nil {
				return e
			}
			if !ok || (v != PredictionVersion && v != PredictionVersionOutcome) {
				return newError(ReasonUnknownVersion, "v", "prediction version %d; this codec knows versions 1 and 2", v)
			}
			p.Version = int(v)
			version = v
		case pSV:
			v, ok, e := j.predInt("sv")
			if e != nil {
				return e
			}
			if !ok || v != PredictionVersionProb {
				return newError(ReasonUnknownVersion, "sv", "prediction schema version %d; this codec knows version 3", v)
			}
			sv = v
		case pID, pKey, pT, pR, pC:
			s, e := j.predString(field)
			if e != nil {
				return e
			}
			switch f {
			case pID:
				p.ID = s
			case pKey:
				p.Key = s
			case pR:
				p.Ref = s
			case pC:
				p.Class = s
			default:
				p.Topic = s
			}
		case pP:
			v, ok, e := j.predInt("p")
			if e != nil {
				return e
			}
			if !ok || v < math.MinInt32 || v > math.MaxInt32 {
				return newError(ReasonBadFieldType, "p", "partition out of int32 range")
			}
			p.Partition = int32(v)
		case pO, pTS, pRO:
			v, ok, e := j.predInt(field)
			if e != nil {
				return e
			}
			if !ok {
				return newError(ReasonBadFieldType, field, "integer outside the int64 range")
			}
			switch f {
			case pO:
				p.Offset = v
			case pTS:
				p.TS, p.HasTS = v, true
			default:
				p.RefOffset, p.HasRef = v, true
			}
		case pY:
			y, e := j.predNumber("y")
			if e != nil {
				return e
			}
			p.Y, p.HasY = y, true
		case pM:
			if e := decodeModelsJSON(j, p); e != nil {
				return e
			}
		}
	}
	if e := j.trailing(); e != nil {
		return e
	}
	return finishPrediction(p, seen&pV != 0, sv)
}

// predictionVersionAheadJSON is predictionVersionAhead for JSON: the integer
// value of the record's first "v", or 0 if there is none or the record is
// malformed before it (decodePredictionJSON reports that in byte order).
func predictionVersionAheadJSON(b []byte) int64 {
	var j jsonReader
	j.reset(b)
	if j.predTop() != nil {
		return 0
	}
	for i := 0; ; i++ {
		more, e := j.nextMember(i == 0)
		if e != nil || !more {
			return 0
		}
		key, e := j.str("", &j.keyBuf)
		if e != nil {
			return 0
		}
		isV := string(key) == "v"
		if j.expect("", ':') != nil {
			return 0
		}
		if isV {
			if v, ok, e := j.predInt("v"); e == nil && ok {
				return v
			}
			return 0
		}
		if j.skip("", 1) != nil {
			return 0
		}
	}
}

// arrayStart consumes the '[' of field's value.
func (j *jsonReader) arrayStart(field, want string) *Error {
	c, e := j.peek(field)
	if e != nil {
		return e
	}
	if c != '[' {
		return j.badType(field, c, want)
	}
	j.p++
	return nil
}

func decodeModelsJSON(j *jsonReader, p *Prediction) *Error {
	if e := j.arrayStart("m", "an array"); e != nil {
		return e
	}
	for i := 0; ; i++ {
		more, e := j.arrayNext("m", i == 0)
		if e != nil {
			return e
		}
		if !more {
			return nil
		}
		prefix := "m[" + strconv.Itoa(i) + "]"
		c, e := j.peek(prefix)
		if e != nil {
			return e
		}
		if c != '{' {
			return j.badType(prefix, c, "an object")
		}
		j.p++
		if p.Models == nil {
			p.Models = make([]ModelScore, 0, 4)
		}
		var m ModelScore
		if e := decodeModelJSON(j, prefix, &m); e != nil {
			return e
		}
		p.Models = append(p.Models, m)
	}
}

// decodeModelJSON reads one model's object after its '{'.
func decodeModelJSON(j *jsonReader, prefix string, m *ModelScore) *Error {
	seen := 0
	for k := 0; ; k++ {
		c, e := j.peek(prefix)
		if e != nil {
			return e
		}
		if c == '}' {
			j.p++
			break
		}
		if k > 0 {
			if c != ',' {
				return notJSON(prefix, "at offset %d: %s, want ',' or '}'", j.p, describeByte(c))
			}
			j.p++
			if c, e = j.peek(prefix); e != nil {
				return e
			}
		}
		if c != '"' {
			return notJSON(prefix, "at offset %d: %s, want a string key", j.p, describeByte(c))
		}
		key, e := j.str(prefix, &j.keyBuf)
		if e != nil {
			return e
		}
		field := prefix + "." + string(key)
		f := 0
		switch string(key) {
		case "n":
			f = 1
		case "s":
			f = 2
		case "d":
			f = 4
		case "u":
			f = 8
		case "pp":
			f = 16
		case "c":
			f = 32
		case "pd":
			f = 64
		case "ci":
			f = 128
		}
		if e := j.expect(field, ':'); e != nil {
			return e
		}
		if f == 0 {
			if e := j.skip(field, 3); e != nil {
				return e
			}
			continue
		}
		if seen&f != 0 {
			return newError(ReasonDuplicateKey, field, "appears twice in the object")
		}
		seen |= f
		if null, e := j.takeNull(field); e != nil {
			return e
		} else if null {
			if f == 2 {
				m.Score = math.NaN() // a non-finite score (AppendPredictionJSON)
			}
			continue
		}
		switch f {
		case 1:
			s, e := j.predString(field)
			if e != nil {
				return e
			}
			m.Name = s
		case 2:
			s, e := j.predNumber(field)
			if e != nil {
				return e
			}
			m.Score = s
		case 4:
			d, ok, e := j.predInt(field)
			if e != nil {
				return e
			}
			if !ok || d < -1 || d > 1 {
				return newError(ReasonBadFieldType, field, "decision must be -1, 0 or 1")
			}
			m.Decision, m.Classify = int8(d), true
		case 8:
			u, e := j.predUint(field)
			if e != nil {
				return e
			}
			m.Updates = u
		case 16:
			pp, e := j.predNumber(field)
			if e != nil {
				return e
			}
			if !(pp >= 0 && pp <= 1) {
				return newError(ReasonBadFieldType, field, "probability %v is not in [0, 1]", pp)
			}
			m.Prob, m.HasProb = pp, true
		case 32:
			s, e := j.predString(field)
			if e != nil {
				return e
			}
			m.Class, m.Multi = s, true
		case 64:
			if e := decodeDistJSON(j, field, m); e != nil {
				return e
			}
			m.Multi = true
		case 128:
			ci, ok, e := j.predInt(field)
			if e != nil {
				return e
			}
			if !ok || ci < -1 || ci >= MaxDist {
				return newError(ReasonBadFieldType, field, "class index %d out of range [-1, %d)", ci, MaxDist)
			}
			m.ClassIndex, m.Multi = int(ci), true
		}
	}
	if m.Multi && seen&128 == 0 {
		m.ClassIndex = -1 // not given: unknown
	}
	return nil
}

// predUint reads a non-negative integer up to 2^64−1 (an update count).
func (j *jsonReader) predUint(field string) (uint64, *Error) {
	c, e := j.peek(field)
	if e != nil {
		return 0, e
	}
	s := j.p
	v, ok, e := j.intJSON(field, c)
	if e != nil {
		return 0, e
	}
	if ok {
		if v < 0 {
			return 0, newError(ReasonBadFieldType, field, "update count %d is negative", v)
		}
		return uint64(v), nil
	}
	txt := j.b[s:j.p]
	u, err := strconv.ParseUint(unsafe.String(unsafe.SliceData(txt), len(txt)), 10, 64)
	if err != nil {
		return 0, newError(ReasonBadFieldType, field, "update count outside the uint64 range")
	}
	return u, nil
}

// decodeDistJSON reads a model's "pd", with decodeDist's rules.
func decodeDistJSON(j *jsonReader, field string, m *ModelScore) *Error {
	if e := j.arrayStart(field, "an array"); e != nil {
		return e
	}
	sum := 0.0
	for i := 0; ; i++ {
		more, e := j.arrayNext(field, i == 0)
		if e != nil {
			return e
		}
		if !more {
			return nil
		}
		if i >= MaxDist {
			return newError(ReasonBadFieldType, field, "more than %d classes", MaxDist)
		}
		f := field + "[" + strconv.Itoa(i) + "]"
		if e := j.arrayStart(f, "a [class, probability] pair"); e != nil {
			return e
		}
		var cls string
		var pr float64
		for k := 0; ; k++ {
			more, e := j.arrayNext(f, k == 0)
			if e != nil {
				return e
			}
			if !more {
				if k != 2 {
					return newError(ReasonBadFieldType, f, "%d elements, want a [class, probability] pair", k)
				}
				break
			}
			switch k {
			case 0:
				if cls, e = j.predString(f + "[0]"); e != nil {
					return e
				}
			case 1:
				if pr, e = j.predNumber(f + "[1]"); e != nil {
					return e
				}
				if !(pr >= 0 && pr <= 1) {
					return newError(ReasonBadFieldType, f+"[1]", "probability %v is not in [0, 1]", pr)
				}
			default:
				return newError(ReasonBadFieldType, f, "more than 2 elements, want a [class, probability] pair")
			}
		}
		if sum += pr; sum > 1+1e-6 {
			return newError(ReasonBadFieldType, f+"[1]", "the probabilities sum to %v, above 1", sum)
		}
		if m.Dist == nil {
			m.Dist = make([]ClassProb, 0, 4)
		}
		m.Dist = append(m.Dist, ClassProb{Class: cls, Prob: pr})
	}
}
