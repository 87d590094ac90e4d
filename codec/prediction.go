package codec

import (
	"math"
	"strconv"
)

// Prediction schema versions. DecodePrediction reads all four.
// AppendPrediction writes PredictionVersion for an ordinary record, exactly
// as before version 2 existed, and PredictionVersionOutcome only for an
// outcome record (HasRef), so readers that know only version 1 see every
// ordinary record unchanged.
//
// Version 3 (PredictionVersionProb, asked for with Prediction.Version ≥ 3)
// adds probabilities: per model "pp", P(y = +1) for a classification model,
// and per record "c", the predicted class name. Its "v" stays 1 (ordinary)
// or 2 (outcome), the oldest version whose readers read it, and a key "sv"
// says 3: a reader of versions 1 and 2 (this codec before version 3
// included) reads a version 3 record as the version 1 or 2 record it
// extends, ignoring "sv", "c" and "pp" as unknown keys.
//
// Version 4 (PredictionVersionMulti) adds multi-class models: a model
// entry with Multi set carries its predicted class name ("c") and the top
// of its class distribution ("pd", an array of [class, probability] pairs,
// most probable first). It is version 3 by every key older readers know:
// "v" 1 or 2 and "sv" 3 — the oldest version whose readers read it, as "v"
// is — and the model entry's "c" and "pd" are unknown keys to them, which
// they ignore (this codec before version 4 did), so they read it as the
// version 3 record it extends: a multi-class model looks like a regression
// model whose score "s" is the probability of its predicted class. A record
// is version 4 when Version ≥ 3 and one of its models is Multi; the
// decoder gives Version 4 to a record with "sv" whose models include a
// multi-class one. Records without multi-class models are byte for byte
// what version 3 wrote.
const (
	PredictionVersion        = 1 // an ordinary record: the scores for one event with features
	PredictionVersionOutcome = 2 // an outcome record (HasRef): a delayed label resolving an earlier prediction
	PredictionVersionProb    = 3 // version 1 or 2 plus probabilities ("sv": 3, "c", per model "pp")
	PredictionVersionMulti   = 4 // version 3 plus multi-class models (per model "c" and "pd")
)

// MaxDist is the longest class distribution ("pd") DecodePrediction
// accepts (learner.MaxClasses: the most classes a model may hold).
const MaxDist = 1 << 12

// ClassProb is one entry of a multi-class model's distribution: a class
// name and its probability.
type ClassProb struct {
	Class string
	Prob  float64
}

// ModelScore is one model's output for one event.
type ModelScore struct {
	Name     string  // model name ("fogd", or a user label)
	Score    float64 // f_t(x), the score before the model learned from this event
	Classify bool    // true for classification models: Decision is meaningful
	Decision int8    // Decision(Score) for classification models: +1, -1, or 0 when Score is exactly 0
	Updates  uint64  // labelled events the model had learned from before this prediction
	// Prob is P(y = +1), computed before the model learned from this
	// event's label (version 3, "pp"); meaningful if HasProb. A later
	// version may add a class distribution beside it for multi-class
	// models.
	Prob    float64
	HasProb bool
	// Multi marks a multi-class model (version 4): Class is its predicted
	// class name ("c" in its map; "" before it learnt a class), ClassIndex
	// that class's index in the partition's class dictionary ("ci"; −1
	// for none; the record's y is the label's index, so ClassIndex ≠ y is
	// a mistake), Dist the
	// top of its distribution over classes before it learned from this
	// event ("pd", most probable first; the runtime writes --top-k
	// entries), and Score the probability of Class. Classify is false for
	// it (no "d"). The runtime's Dist aliases the model's buffer: valid
	// until its next event.
	Multi      bool
	Class      string
	ClassIndex int
	Dist       []ClassProb
}

// Prediction is the record published for each input event.
//
// An outcome record (HasRef) is written for a feedback event: Topic,
// Partition and Offset are the feedback event's source record, ID is the id of
// the impression the feedback refers to, Y the label, Ref and RefOffset
// identify the impression, and Models holds the scores (and update counts)
// the models gave at impression time, before they learned from the label.
type Prediction struct {
	// Version as decoded: 1, or 2 for an outcome record, or 3 for a record
	// with "sv": 3 (either kind: HasRef tells), 4 for one of those with a
	// multi-class model. AppendPrediction derives "v" from HasRef and writes
	// version 3's (and 4's) fields only when Version ≥ 3.
	Version   int
	ID        string // event id (the runtime fills "topic/partition/offset" when the event had none)
	Key       string // event key
	Topic     string // source record's topic
	Partition int32  // source record's partition
	Offset    int64  // source record's offset
	TS        int64  // event time (ms since the Unix epoch); meaningful if HasTS
	HasTS     bool
	Y         float64 // the event's label; meaningful if HasY
	HasY      bool
	Ref       string // outcome records: the id of the impression this record resolves ("r"); meaningful if HasRef
	RefOffset int64  // outcome records: the impression's source offset, same topic and partition ("ro"); meaningful if HasRef
	HasRef    bool   // an outcome record
	// Class is the predicted class name (version 3, "c"; "" when unknown):
	// the class of the decision of the first classification model in
	// Models (binary or, version 4, multi-class).
	Class  string
	Models []ModelScore
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
// key, t, p, o, ts, y, r, ro, m; id and key omitted when "", ts when !HasTS, y
// when !HasY, r and ro when !HasRef, and r also when Ref is ""; t, p, o and m
// always present; m an array with one map per model, keys n, s, d, u, where d
// is omitted when !Classify; integers in their smallest msgpack form and
// scores and y as float64 (NaN and ±Inf are written as they are).
//
// "v" is PredictionVersionOutcome (2) when HasRef and PredictionVersion (1)
// otherwise, and a record without HasRef is byte for byte what this function
// wrote before version 2 (Ref and RefOffset are then ignored). p.Version is
// read only to tell version 3: when it is 3 or more, "sv": 3 follows "v",
// "c" (when Class is not "") comes before "m", and each model with HasProb
// has "pp" (float64) after "d"; below 3, Class and the models' HasProb and
// Prob are ignored and the bytes are those of version 1 or 2. From version 3
// on, a Multi model has "c" (str), "ci" (int) and "pd" (an array of [str,
// float64] pairs) after "pp"'s place and before "u" (version 4).
func AppendPrediction(dst []byte, p *Prediction) []byte {
	v3 := p.Version >= PredictionVersionProb
	n := 5 // v, t, p, o, m
	if v3 {
		n++ // sv
		if p.Class != "" {
			n++
		}
	}
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
	version := int64(PredictionVersion)
	if p.HasRef {
		version = PredictionVersionOutcome
		n++ // ro
		if p.Ref != "" {
			n++
		}
	}
	w := getWriter(dst)
	w.mapLen(n)
	w.key("v")
	w.int(version)
	if v3 {
		w.key("sv")
		w.int(PredictionVersionProb)
	}
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
	if p.HasRef {
		if p.Ref != "" {
			w.key("r")
			w.text(p.Ref)
		}
		w.key("ro")
		w.int(p.RefOffset)
	}
	if v3 && p.Class != "" {
		w.key("c")
		w.text(p.Class)
	}
	w.key("m")
	w.arrayLen(len(p.Models))
	for i := range p.Models {
		m := &p.Models[i]
		k := 3
		if m.Classify {
			k++
		}
		hasProb := v3 && m.HasProb
		if hasProb {
			k++
		}
		multi := v3 && m.Multi
		if multi {
			k += 3
		}
		w.mapLen(k)
		w.key("n")
		w.text(m.Name)
		w.key("s")
		w.float(m.Score)
		if m.Classify {
			w.key("d")
			w.int(int64(m.Decision))
		}
		if hasProb {
			w.key("pp")
			w.float(m.Prob)
		}
		if multi {
			w.key("c")
			w.text(m.Class)
			w.key("ci")
			w.int(int64(m.ClassIndex))
			w.key("pd")
			w.arrayLen(len(m.Dist))
			for _, cp := range m.Dist {
				w.arrayLen(2)
				w.text(cp.Class)
				w.float(cp.Prob)
			}
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
	pR
	pRO
	pSV
	pC
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
	case "r":
		return pR
	case "ro":
		return pRO
	case "sv":
		return pSV
	case "c":
		return pC
	}
	return 0
}

// DecodePrediction decodes a record written by AppendPrediction, of version
// 1, 2, 3 or 4 ("sv": 3, which must be 3 if present, makes Version 3, or 4
// when a model is multi-class; "c", "pp" and the models' "c", "ci" and
// "pd" are read in any record; "pp" must be a number in [0, 1], "ci" an
// integer in [−1, MaxDist) (−1 when absent), "pd" at most MaxDist [string,
// number in [0, 1]] pairs summing to at most 1 + 1e-6; a model with "c",
// "ci" or "pd" is Multi). Unknown keys are ignored and nil counts as absent; "v" is required,
// every other key is optional (absent means the zero value). "r" and "ro" are
// fields of version 2 only ("ro" sets HasRef); in a version 1 record they are
// unknown keys. Errors are *Error with the Reason of the first problem in
// byte order (ReasonMissingVersion last). A decision "d" must be -1, 0 or 1,
// and its presence sets Classify. Scores and y may be non-finite. An empty "m"
// decodes to nil Models. DecodePrediction never panics.
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
	version := int64(0) // 0 until known
	sv := int64(0)      // "sv" (version 3)
	lookedAhead := false
	for i := 0; i < n; i++ {
		key, e := r.key("", i)
		if e != nil {
			return e
		}
		f := predictionField(key)
		if f == pR || f == pRO {
			// Fields of version 2, unknown keys in version 1.
			if version == 0 && seen&pV == 0 && !lookedAhead {
				version, lookedAhead = predictionVersionAhead(r.b), true
			}
			if version != PredictionVersionOutcome {
				f = 0
			}
		}
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
			if !ok || (v != PredictionVersion && v != PredictionVersionOutcome) {
				return newError(ReasonUnknownVersion, "v", "prediction version %d; this codec knows versions 1 and 2", v)
			}
			p.Version = int(v)
			version = v
		case pSV:
			v, ok, e := r.int("sv")
			if e != nil {
				return e
			}
			if !ok || v != PredictionVersionProb {
				return newError(ReasonUnknownVersion, "sv", "prediction schema version %d; this codec knows version 3", v)
			}
			sv = v
		case pID, pKey, pT, pR, pC:
			s, e := r.str(string(key), "a string")
			if e != nil {
				return e
			}
			switch f {
			case pID:
				p.ID = string(s)
			case pKey:
				p.Key = string(s)
			case pR:
				p.Ref = string(s)
			case pC:
				p.Class = string(s)
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
		case pO, pTS, pRO:
			field := string(key)
			v, ok, e := r.int(field)
			if e != nil {
				return e
			}
			if !ok {
				return newError(ReasonBadFieldType, field, "integer above 2^63-1")
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
	return finishPrediction(p, seen&pV != 0, sv)
}

// finishPrediction checks a decoded record's version and sets the version
// a record with "sv" reads as (4 when a model is multi-class); both wire
// formats' decoders end with it.
func finishPrediction(p *Prediction, haveV bool, sv int64) *Error {
	if !haveV || p.Version == 0 {
		return newError(ReasonMissingVersion, "v", "no schema version")
	}
	if sv != 0 {
		p.Version = int(sv)
		for i := range p.Models {
			if p.Models[i].Multi {
				p.Version = PredictionVersionMulti
				break
			}
		}
	}
	return nil
}

// predictionVersionAhead returns the integer value of the first "v" key of
// the record b, reading it from the start, or 0 if there is none or the
// record is malformed before it. decodePrediction calls it when "r" or "ro"
// comes before "v"; it leaves every problem for decodePrediction to report in
// byte order.
func predictionVersionAhead(b []byte) int64 {
	var r reader
	r.init()
	r.reset(b)
	n, e := r.topMap()
	if e != nil {
		return 0
	}
	for i := 0; i < n; i++ {
		key, e := r.key("", i)
		if e != nil {
			return 0
		}
		if string(key) == "v" {
			if v, ok, e := r.int("v"); e == nil && ok {
				return v
			}
			return 0
		}
		if e := r.skip(""); e != nil {
			return 0
		}
	}
	return 0
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
			case "pp":
				f = 16
			case "c":
				f = 32
			case "pd":
				f = 64
			case "ci":
				f = 128
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
			case 16:
				pp, e := r.anyNumber(field)
				if e != nil {
					return e
				}
				if !(pp >= 0 && pp <= 1) {
					return newError(ReasonBadFieldType, field, "probability %v is not in [0, 1]", pp)
				}
				m.Prob, m.HasProb = pp, true
			case 32:
				s, e := r.str(field, "a string")
				if e != nil {
					return e
				}
				m.Class, m.Multi = string(s), true
			case 64:
				if e := decodeDist(r, field, &m); e != nil {
					return e
				}
				m.Multi = true
			case 128:
				ci, ok, e := r.int(field)
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
		p.Models = append(p.Models, m)
	}
	return nil
}

// decodeDist reads a model's "pd": at most MaxDist [class, probability]
// pairs, each probability a number in [0, 1], their sum at most 1 + 1e-6.
func decodeDist(r *reader, field string, m *ModelScore) *Error {
	n, e := r.arrayLen(field)
	if e != nil {
		return e
	}
	if n > MaxDist {
		return newError(ReasonBadFieldType, field, "%d classes, more than %d", n, MaxDist)
	}
	if n == 0 {
		return nil
	}
	m.Dist = make([]ClassProb, 0, min(n, 16)) // grown as entries are read
	sum := 0.0
	for i := 0; i < n; i++ {
		f := field + "[" + strconv.Itoa(i) + "]"
		c, e := r.peek(f)
		if e != nil {
			return e
		}
		if kindOf(c) != kArray {
			return badType(f, c, "a [class, probability] pair")
		}
		k, e := r.arrayLen(f)
		if e != nil {
			return e
		}
		if k != 2 {
			return newError(ReasonBadFieldType, f, "%d elements, want a [class, probability] pair", k)
		}
		s, e := r.str(f+"[0]", "a string")
		if e != nil {
			return e
		}
		pr, e := r.anyNumber(f + "[1]")
		if e != nil {
			return e
		}
		if !(pr >= 0 && pr <= 1) {
			return newError(ReasonBadFieldType, f+"[1]", "probability %v is not in [0, 1]", pr)
		}
		if sum += pr; sum > 1+1e-6 {
			return newError(ReasonBadFieldType, f+"[1]", "the probabilities sum to %v, above 1", sum)
		}
		m.Dist = append(m.Dist, ClassProb{Class: string(s), Prob: pr})
	}
	return nil
}
