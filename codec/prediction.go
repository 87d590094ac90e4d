package codec

import (
	"math"
	"strconv"
)

// PredictionVersion is the Prediction schema version this package writes and reads.
const PredictionVersion = 1

// ModelScore is one model's output for one event.
type ModelScore struct {
	Name     string  // model name ("fogd", or a user label)
	Score    float64 // f_t(x), the score before the model learned from this event
	Classify bool    // true for classification models: Decision is meaningful
	Decision int8    // Decision(Score) for classification models: +1, -1, or 0 when Score is exactly 0
	Updates  uint64  // labelled events the model had learned from before this prediction
}

// Prediction is the record published for each input event.
type Prediction struct {
	Version   int    // PredictionVersion; AppendPrediction always writes PredictionVersion
	ID        string // event id (the runtime fills "topic/partition/offset" when the event had none)
	Key       string // event key
	Topic     string // source record's topic
	Partition int32  // source record's partition
	Offset    int64  // source record's offset
	TS        int64  // event time (ms since the Unix epoch); meaningful if HasTS
	HasTS     bool
	Y         float64 // the event's label; meaningful if HasY
	HasY      bool
	Models    []ModelScore
}

// Decision is the classification decision for a score: +1 if score > 0, −1 if
// score < 0, and 0 if score is 0 (or NaN). A decision of 0 matches neither
// label, so it always counts as a mistake.
func Decision(score float64) int8 {
	switch {
	case score > 0:
		return 1
	case score < 0:
		return -1
	}
	return 0
}

// AppendPrediction appends the msgpack encoding of p to dst and returns the
// extended slice. The bytes are a pure function of p: keys in the order v, id,
// key, t, p, o, ts, y, m; id and key omitted when "", ts when !HasTS, y when
// !HasY; t, p, o and m always present; m an array with one map per model, keys
// n, s, d, u, where d is omitted when !Classify; integers in their smallest
// msgpack form and scores and y as float64 (NaN and ±Inf are written as they
// are). p.Version is not read: the record is always PredictionVersion.
func AppendPrediction(dst []byte, p *Prediction) []byte {
	n := 5 // v, t, p, o, m
	if p.ID != "" {
		n++
	}
	if p.Key != "" {
		n++
	}
	if p.HasTS {
		n++
	}
	if p.HasY {
		n++
	}
	w := getWriter(dst)
	w.mapLen(n)
	w.key("v")
	w.int(PredictionVersion)
	if p.ID != "" {
		w.key("id")
		w.text(p.ID)
	}
	if p.Key != "" {
		w.key("key")
		w.text(p.Key)
	}
	w.key("t")
	w.text(p.Topic)
	w.key("p")
	w.int(int64(p.Partition))
	w.key("o")
	w.int(p.Offset)
	if p.HasTS {
		w.key("ts")
		w.int(p.TS)
	}
	if p.HasY {
		w.key("y")
		w.float(p.Y)
	}
	w.key("m")
	w.arrayLen(len(p.Models))
	for i := range p.Models {
		m := &p.Models[i]
		if m.Classify {
			w.mapLen(4)
		} else {
			w.mapLen(3)
		}
		w.key("n")
		w.text(m.Name)
		w.key("s")
		w.float(m.Score)
		if m.Classify {
			w.key("d")
			w.int(int64(m.Decision))
		}
		w.key("u")
		w.uint(m.Updates)
	}
	return w.finish()
}

const (
	pV = 1 << iota
	pID
	pKey
	pT
	pP
	pO
	pTS
	pY
	pM
)

func predictionField(key []byte) int {
	switch string(key) {
	case "v":
		return pV
	case "id":
		return pID
	case "key":
		return pKey
	case "t":
		return pT
	case "p":
		return pP
	case "o":
		return pO
	case "ts":
		return pTS
	case "y":
		return pY
	case "m":
		return pM
	}
	return 0
}

// DecodePrediction decodes a record written by AppendPrediction. Unknown keys
// are ignored and nil counts as absent; "v" is required, every other key is
// optional (absent means the zero value). Errors are *Error with the Reason of
// the first problem in byte order (ReasonMissingVersion last). A decision "d"
// must be -1, 0 or 1, and its presence sets Classify. Scores and y may be
// non-finite. An empty "m" decodes to nil Models. DecodePrediction never
// panics.
func DecodePrediction(b []byte) (Prediction, error) {
	var p Prediction
	var r reader
	r.init()
	r.reset(b)
	if e := decodePrediction(&r, &p); e != nil {
		return Prediction{}, e
	}
	return p, nil
}

func decodePrediction(r *reader, p *Prediction) *Error {
	n, e := r.topMap()
	if e != nil {
		return e
	}
	seen := 0
	for i := 0; i < n; i++ {
		key, e := r.key("", i)
		if e != nil {
			return e
		}
		f := predictionField(key)
		if f == 0 {
			if e := r.skip(string(key)); e != nil {
				return e
			}
			continue
		}
		if seen&f != 0 {
			return newError(ReasonDuplicateKey, string(key), "appears twice in the map")
		}
		seen |= f
		if r.takeNil() {
			continue
		}
		switch f {
		case pV:
			v, ok, e := r.int("v")
			if e != nil {
				return e
			}
			if !ok || v != PredictionVersion {
				return newError(ReasonUnknownVersion, "v", "prediction version %d; this codec knows version %d", v, PredictionVersion)
			}
			p.Version = int(v)
		case pID, pKey, pT:
			s, e := r.str(string(key), "a string")
			if e != nil {
				return e
			}
			switch f {
			case pID:
				p.ID = string(s)
			case pKey:
				p.Key = string(s)
			default:
				p.Topic = string(s)
			}
		case pP:
			v, ok, e := r.int("p")
			if e != nil {
				return e
			}
			if !ok || v < math.MinInt32 || v > math.MaxInt32 {
				return newError(ReasonBadFieldType, "p", "partition out of int32 range")
			}
			p.Partition = int32(v)
		case pO, pTS:
			field := string(key)
			v, ok, e := r.int(field)
			if e != nil {
				return e
			}
			if !ok {
				return newError(ReasonBadFieldType, field, "integer above 2^63-1")
			}
			if f == pO {
				p.Offset = v
			} else {
				p.TS, p.HasTS = v, true
			}
		case pY:
			y, e := r.anyNumber("y")
			if e != nil {
				return e
			}
			p.Y, p.HasY = y, true
		case pM:
			if e := decodeModels(r, p); e != nil {
				return e
			}
		}
	}
	if e := r.trailing(); e != nil {
		return e
	}
	if seen&pV == 0 || p.Version == 0 {
		return newError(ReasonMissingVersion, "v", "no schema version")
	}
	return nil
}

// anyNumber reads a number of any msgpack numeric type as a float64.
func (r *reader) anyNumber(field string) (float64, *Error) {
	c, e := r.peek(field)
	if e != nil {
		return 0, e
	}
	if !isNumber(kindOf(c)) {
		return 0, badType(field, c, "a number")
	}
	return r.number(field, c)
}

func decodeModels(r *reader, p *Prediction) *Error {
	n, e := r.arrayLen("m")
	if e != nil {
		return e
	}
	if n == 0 {
		return nil
	}
	// n is bounded by the remaining bytes; still, grow as models are read
	// rather than trusting the declared count for the allocation.
	p.Models = make([]ModelScore, 0, min(n, 16))
	for i := 0; i < n; i++ {
		prefix := "m[" + strconv.Itoa(i) + "]"
		c, e := r.peek(prefix)
		if e != nil {
			return e
		}
		if kindOf(c) != kMap {
			return badType(prefix, c, "a map")
		}
		k, e := r.mapLen(prefix)
		if e != nil {
			return e
		}
		var m ModelScore
		seen := 0
		for j := 0; j < k; j++ {
			key, e := r.key(prefix, j)
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
			default:
				if e := r.skip(field); e != nil {
					return e
				}
				continue
			}
			if seen&f != 0 {
				return newError(ReasonDuplicateKey, field, "appears twice in the map")
			}
			seen |= f
			if r.takeNil() {
				continue
			}
			switch f {
			case 1:
				s, e := r.str(field, "a string")
				if e != nil {
					return e
				}
				m.Name = string(s)
			case 2:
				s, e := r.anyNumber(field)
				if e != nil {
					return e
				}
				m.Score = s
			case 4:
				d, ok, e := r.int(field)
				if e != nil {
					return e
				}
				if !ok || d < -1 || d > 1 {
					return newError(ReasonBadFieldType, field, "decision must be -1, 0 or 1")
				}
				m.Decision, m.Classify = int8(d), true
			case 8:
				u, ok, e := r.int(field)
				if e != nil {
					return e
				}
				if ok && u < 0 {
					return newError(ReasonBadFieldType, field, "update count %d is negative", u)
				}
				m.Updates = uint64(u)
			}
		}
		p.Models = append(p.Models, m)
	}
	return nil
}
