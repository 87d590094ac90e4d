// Package codec defines okstream's wire formats: the Event that upstream
// services publish to an input topic, and the Prediction record okstream
// publishes for each event. Both are msgpack maps with short string keys, so
// that any language with a msgpack library can produce and read them; both
// can also be JSON objects with the same keys (see JSON). This comment is the
// schema reference.
//
// # Event (schema versions 1 to 3)
//
// One Kafka record value holds exactly one msgpack map (nothing after it):
//
//	key   msgpack type                 rule
//	----  ---------------------------  --------------------------------------------------------
//	v     int                          required; the schema version, 1, 2 or 3
//	id    str (or bin)                 optional; event id. Absent or "": the runtime uses
//	                                   "topic/partition/offset". An event that is to receive
//	                                   feedback needs one
//	ts    int                          optional; event time, ms since the Unix epoch (a float
//	                                   is rejected: send int(time.time() * 1000))
//	key   str or bin                   optional; entity key
//	ref   str or bin                   version 2 only; optional. Non-empty: this is a feedback
//	                                   event, the label of the earlier event whose id is ref
//	                                   (see Feedback events)
//	x     array of numbers             dense features; non-empty; exactly Limits.Dim long when
//	                                   the consumer is configured with a dimension
//	xi    array of ints                sparse feature indices: 0-based, strictly increasing,
//	                                   each < Limits.Dim (or < 2^32 with no dimension)
//	xv    array of numbers             sparse feature values, one per index in xi
//	f     map: str → number, bool,     version 3 only: named features (Event.F, in record
//	      str or nil                   order); see Named features
//	y     number, bool, str or bin     the label (Event.YKind): binary classes as −1/+1, 0/1,
//	                                   true/false or two strings (at most Limits.MaxIDBytes
//	                                   long), a real number for regression; package label
//	                                   maps them. Optional (absent: predict only), except
//	                                   in a feedback event, which must have it
//
// An event that is not a feedback event gives its features in exactly one
// form: dense (x), sparse (xi and xv together) or named (f); a feedback
// event gives none. A
// "number" is any msgpack int, uint, float32 or float64, so Python's
// packb([1, 2.5]) (an int and a float) is fine; every feature value and y must
// be finite (no NaN, no ±Inf). int values are converted to float64 exactly up
// to 2^53.
//
// Version 2 only adds ref: a version 2 event without ref (or with ref nil or
// "") follows exactly the rules of version 1 and means the same. In a version
// 1 event ref is an unknown key and is ignored like any other, so a feedback
// event must say "v": 2; sent as version 1 it is an event without features
// (missing_features). Producers whose events must stay readable by okstream
// builds that predate version 2 may keep sending version 1 for everything but
// feedback.
//
// More rules:
//   - A key whose value is nil counts as absent ("y": None in Python means
//     "no label"; "v": None is a missing version; "x": None in a feedback
//     event is no features).
//   - Unknown keys are ignored, so producers may add their own keys (choose
//     names longer than three characters, to stay clear of keys a later version
//     of this schema may add). They must still be well-formed msgpack.
//   - Map keys are str (bin is accepted too); a known key may appear only once.
//   - Records larger than Limits.MaxBytes, and arrays longer than
//     Limits.MaxFeatures (default 2^20), are rejected.
//   - With Limits.MaxAbsValue set, a feature value or y whose magnitude is
//     above it is rejected (value_out_of_range); with Limits.MaxIDBytes set,
//     an id, key or ref longer than that many bytes is rejected (id_too_long).
//     Both are off in the zero Limits; the runtime turns them on by default.
//   - Any "v" other than 1, 2 and 3 is rejected as unknown_version.
//
// AppendEvent writes the canonical encoding: keys in the order v, id, ts, key,
// ref, x | xi, xv | f, y; absent fields omitted; "v" as the Event's Version
// (1, 2 or 3; Ref requires 2 or 3, F requires 3); integers (v, ts, xi) in
// their smallest msgpack form and feature values and y always as float64;
// id, key and ref as str (as bin if they are not valid UTF-8); f's entries
// in the order of F, numbers as float64, bools as bools, strings as str and
// missing values as nil. The same Event always gives the same bytes, and
// decoding canonical bytes and encoding again gives them back.
//
// # Named features (version 3)
//
// An upstream service publishes records with named fields, not a vector
// whose length and order the consumer must be told:
//
//	{"v": 3, "id": "order-42", "f": {"amount": 12.5, "country": "FR", "device": "ios", "age": None}, "y": 1}
//
// "f" maps a feature name to its value:
//   - a number (any msgpack int or float): a numeric feature (FieldNumber);
//   - a bool: a numeric feature, 1 or 0 (FieldBool);
//   - a str (bin accepted): a categorical value (FieldString), e.g. one
//     indicator per name=value for the model;
//   - nil, or a NaN float: a missing value (FieldMissing). NaN is missing
//     here because pandas and numpy mark missing values with it; ±Inf is
//     non_finite, as in x. A name that is absent from a record is missing
//     too: records need not carry every name, and an empty map {} (every
//     feature absent) is a valid event.
//
// Names and string values are valid UTF-8 (bad_field_type otherwise) of at
// most Limits.MaxNameBytes bytes (default DefaultMaxNameBytes, 256;
// name_too_long); a name appears once per record (duplicate_key, Field "f"); a
// record has at most Limits.MaxFeatures names (too_many_features); a number
// above Limits.MaxAbsValue is value_out_of_range. Map keys are str or bin,
// as at the top level. How names become a model's coordinates (a feature
// dictionary or hashing, and what missing values become) is the consumer's
// business: this package only decodes them, in record order, and Event.Dense
// returns nil for a named event.
//
// "f" needs "v": 3, a new version, so that no okstream build drops named
// features silently. A decoder of versions 1 and 2 — this package before
// version 3 — checks "v" first and refuses every version 3 record as
// unknown_version ("version 3; this codec knows versions 1 and 2"); had "f"
// been added to version 2, such a decoder would have skipped it as an
// unknown key, refused a record with only "f" as missing_features ("neither
// x nor xi/xv given", no hint why) and silently ignored "f" next to an "x".
// In a version 1 or 2 record, "f" is still an unknown key, as it was: a
// record with "f" and no other features is missing_features, with a detail
// that says "f" needs "v": 3, and a version 2 record with x and a
// producer's own "f" means what it meant. Everything else in version 3 is
// version 2 (feedback events included): a producer may write "v": 3 for
// every event once its consumers are on a build that reads version 3.
//
// # Feedback events (version 2)
//
// In a recommendation feed the outcome of an impression is known only later.
// Version 2 lets a producer send the two halves separately:
//
//  1. The impression: an event with an id, its features and no y (version 1
//     or 2). okstream scores it at once and publishes an ordinary Prediction,
//     and keeps the impression's features and scores.
//  2. Later, the feedback: a version 2 event whose ref is the impression's id
//     and whose y is the outcome, with no features. It may carry its own ts
//     (when the outcome happened) and id.
//  3. okstream finds the impression, the models learn from (the impression's
//     features, y), and it publishes an outcome record: a Prediction with the
//     scores the models gave at impression time (see below).
//
// Send the feedback with the same Kafka record key (and "key") as its
// impression: okstream matches feedback to impressions within one partition,
// and the key is what puts both in the same partition. Ids must be unique
// among the impressions awaiting feedback in a partition. What okstream does
// with feedback whose impression it does not hold (never seen, already
// resolved, or expired) is the runtime's business, as is how long impressions
// wait; see its documentation. An impression that already carries y is
// learned from at once and does not wait for feedback.
//
// The rules of a feedback event (version 2, ref present and not ""):
//   - no x, xi or xv, not even an empty array (feedback_with_features);
//   - y present and not nil (missing_label), and finite (non_finite);
//   - id, ts and key are allowed, with the usual rules.
//
// # Prediction (schema versions 1 to 4)
//
// okstream writes one Prediction record per input event, with the event key as
// the Kafka record key. Records are a pure function of their content: a record
// re-emitted after recovery (at-least-once delivery, or the rare duplicate of
// effectively-once delivery; see the consumer package) is byte-identical to
// the first, so downstream can de-duplicate by (t, p, o).
//
//	key   msgpack type      rule
//	----  ----------------  ---------------------------------------------------------
//	v     int               always; the schema version: 2 for an outcome record, else 1
//	sv    int               version 3 only, always there: 3 (see below)
//	id    str               the event's id, or "topic/partition/offset"; omitted if ""
//	key   str               the event's key; omitted if ""
//	t     str               always; source topic
//	p     int               always; source partition
//	o     int               always; source offset
//	ts    int               the event's ts; omitted if the event had none
//	y     float64           the event's label as the models learnt it (−1/+1 on a binary
//	                        stream, whatever the event's encoding; on a multi-class
//	                        stream the class's index in the partition's dictionary,
//	                        0, 1, ... in order of first appearance); omitted if none
//	r     str               outcome records only: the id of the impression resolved;
//	                        omitted if ""
//	ro    int               outcome records only, always there: the impression's offset
//	                        (same topic and partition as t and p)
//	c     str               version 3: the predicted class, the decision d of the first
//	                        classification model in m named as the stream writes its
//	                        labels (version 4: or that model's c when it is multi-class);
//	                        omitted if "" (not known yet, d = 0, no classifier)
//	m     array of maps     always; one map per configured model, in configuration order:
//	  n   str                 model name
//	  s   float64             score f_t(x), computed before the model learned from the event
//	  d   int                 decision: +1, −1, or 0 when s is exactly 0 (a mistake);
//	                          only for classification models
//	  pp  float64             version 3, classification models: P(y = +1) in [0, 1],
//	                          computed before the model learned from the event
//	  c   str                 version 4, multi-class models: the predicted class (the
//	                          most probable; "" before the model learnt a class); their
//	                          s is its probability
//	  ci  int                 version 4, multi-class models: the index of c in the
//	                          partition's class dictionary (−1: none); ci != y is a mistake
//	  pd  array of [str, float64]  version 4, multi-class models: the top of the class
//	                          distribution before the model learned from the event, most
//	                          probable first (ties: dictionary order), each probability
//	                          in [0, 1]; at most 4096 entries (the runtime writes
//	                          --top-k, default 3; 0: every class)
//	  u   uint                labelled events the model had learned from before this one
//
// Keys are written in the order of the table. Strings (id, key, t, r, n) are
// written as str, or as bin when they are not valid UTF-8. For a
// classification model the event counts as a mistake when d != y; since d is
// 0 for a score of exactly 0, such a score is always a mistake.
// DecodePrediction reads records of all three versions back.
//
// Version 1 records (everything but outcome records) are unchanged by version
// 2, byte for byte, so a reader that knows only version 1 keeps working if it
// skips records whose v is 2. The record for an impression is an ordinary
// version 1 record, without y.
//
// Version 3 adds probabilities to both kinds of record: "sv": 3 right after
// "v", "c" before "m", and "pp" after "d" in each classification model's map.
// Its "v" stays 1 or 2, so a reader of versions 1 and 2 that ignores unknown
// keys — this codec's DecodePrediction before version 3 did — reads a
// version 3 record as the version 1 or 2 record it extends. The runtime
// writes version 3; AppendPrediction writes it when Prediction.Version is 3.
//
// Version 4 adds multi-class models: "c", "ci" and "pd" in a multi-class
// model's map, before "u". Everything else is version 3's, "sv": 3 included (the
// oldest version whose readers read the record, as "v" is): a reader of
// version 3 that ignores unknown keys — this codec before version 4 did —
// reads it as the version 3 record it extends, where a multi-class model
// looks like a regression model scoring its class's probability. A record
// is version 4 exactly when it has "sv" and a model map with "c", "ci" or
// "pd";
// records without multi-class models are those of version 3, byte for
// byte.
//
// An outcome record (version 2, with ro) is written when a feedback event
// resolves an impression. t, p, o, ts and key are the feedback event's (its
// key is the impression's if the producer followed the protocol); id is the
// impression's id, as is r; y the label; ro the impression's offset; and m
// holds, for each model, the score, decision and update count
// it had at impression time, before it learned from this label. That is
// progressive validation with delayed labels: d against y is the mistake (or
// s against y the loss) the model made at the time it served the impression.
//
// # Errors
//
// Decoding reports problems as *Error, whose Reason is stable and of low
// cardinality (a Prometheus label value and the reason header on a
// dead-letter record) and whose Field names the offending key:
//
//	reason                   meaning
//	-----------------------  ----------------------------------------------------------
//	not_msgpack              the bytes are not valid msgpack, or are truncated
//	not_a_map                the top-level value is not a map
//	trailing_bytes           bytes follow the top-level map
//	oversized                the record is longer than Limits.MaxBytes
//	missing_version          no "v" (or "v" is nil)
//	unknown_version          "v" is an integer other than 1 and 2 (or a prediction
//	                         record's "sv" other than 3)
//	bad_field_type           a value has the wrong type (x a string, id an array, a
//	                         float where an int is required, a map key not a string),
//	                         or an int out of range (ts above 2^63-1)
//	duplicate_key            a known key appears twice in the same map
//	missing_features         none of x, xi/xv and f, or only one of xi and xv (an
//	                         event that is not a feedback event)
//	dense_and_sparse         features in two forms: x and xi/xv, or f with either
//	empty_features           x, or xi and xv, are empty arrays
//	too_many_features        more features than Limits.MaxFeatures
//	non_finite               NaN or ±Inf in x, xv or y; ±Inf in f
//	sparse_length_mismatch   len(xi) != len(xv)
//	sparse_unsorted          xi is not increasing
//	sparse_duplicate         an index appears twice in xi
//	sparse_out_of_range      an index is negative, >= Limits.Dim, or >= 2^32
//	dimension_mismatch       len(x) != Limits.Dim
//	missing_label            version 2: a feedback event without y (or with y nil)
//	feedback_with_features   versions 2 and 3: a feedback event with x, xi, xv or f
//	                         (even empty); Field names the first of them present
//	value_out_of_range       a finite value of x, xv or y with magnitude above
//	                         Limits.MaxAbsValue (only when that is set)
//	id_too_long              id, key or ref longer than Limits.MaxIDBytes bytes (only
//	                         when that is set)
//	name_too_long            a name or string value in f longer than
//	                         Limits.MaxNameBytes bytes (default 256)
//	looks_like_json          DecodeEvent: the record starts (after JSON whitespace)
//	                         with '{' or '[', so it is JSON, not msgpack; the detail
//	                         says to read it with --input-format json
//	not_json                 DecodeEventJSON: not valid JSON, not valid UTF-8,
//	                         truncated, or nested deeper than MaxJSONDepth (64)
//	looks_like_msgpack       DecodeEventJSON: the record starts with a msgpack map
//	                         code (0x80-0x8f, 0xde, 0xdf); the detail says to read
//	                         it with --input-format msgpack
//
// When an event has several problems, DecodeEvent reports the first that
// applies in this order: oversized; looks_like_json, not_msgpack,
// not_a_map, trailing_bytes (the record's framing); missing_version, unknown_version, or a bad_field_type
// or duplicate_key on "v" (what the record claims to be); then the first
// problem with a single field, in the order the bytes hold them (in a version
// 2 record this includes a mistyped or duplicated ref; wherever "v" stands in
// the record, ref is a field in version 2 and an unknown key in version 1);
// then the record-level rules, which depend on what the record is. For a
// feedback event they are feedback_with_features, then missing_label (a
// record with both problems looks more like an impression with a stray ref
// than like a feedback event without its label); for any other event, the
// feature rules: dense_and_sparse, missing_features, sparse_length_mismatch,
// empty_features. The rules of each field still come first in a feedback
// event: x: [NaN] there is non_finite, and x of the wrong length under
// Limits.Dim is dimension_mismatch; a well-formed x is
// feedback_with_features. DecodeEvent never panics and never allocates in
// proportion to a length the record declares before checking it against the
// record's size and the limits. Within one array or "f", the first of
// too_many_features, dimension_mismatch and the first bad element (in
// order) is reported. In a version 3 record, "f" (like "ref") is a field
// wherever "v" stands. DecodeEventJSON reports the same reasons in the same
// order, with looks_like_msgpack and not_json in place of looks_like_json
// and not_msgpack.
//
// # JSON
//
// Decoder.DecodeEventJSON reads the same schema from one JSON object (RFC
// 8259; whitespace around it is allowed, anything else after it is
// trailing_bytes), under the same Limits and with the same reasons, so that a
// JSON stream and the same msgpack stream decode to equal Events (the tests
// check it on random events, and that both refuse the same records with the
// same reason and field, for every reason that is not about framing):
//
//	msgpack            JSON
//	-----------------  -----------------------------------------------------------
//	map                object; keys are strings (escapes allowed: "\u0076" is v)
//	int (v, ts, xi)    a number without fraction or exponent, in the int64 range
//	                   (1.0 and 1e3 are floats: bad_field_type, as a msgpack float)
//	number             any number, parsed to the nearest float64 (exactly as
//	                   strconv.ParseFloat; past the float64 range it is ±Inf:
//	                   non_finite); also NaN, Infinity and -Infinity, which
//	                   Python's json.dumps writes for non-finite floats, with the
//	                   meaning they have in msgpack (NaN in f is missing)
//	bool, nil          true, false, null (null counts as absent, as nil does)
//	str, bin           a string: valid UTF-8 (escapes decoded, surrogate pairs
//	                   joined; a lone surrogate is not_json)
//	array              array (x, xi, xv)
//
// The decoder is strict: no comments, trailing commas, single quotes, leading
// zeros, unescaped control characters or byte order mark; nesting (in an
// unknown key's value) is bounded by MaxJSONDepth; the record's length by
// Limits.MaxBytes. It is a hand-written scanner, not encoding/json: it reads
// the record in place and allocates nothing in steady state beyond what
// DecodeEvent allocates (encoding/json into a map allocates per value, and
// the benchmark BenchmarkDecodeEvent30StdlibJSON measures it). Strings that
// are not UTF-8, which msgpack's bin can carry, cannot be sent in JSON.
//
// AppendEventJSON writes an Event as JSON, with AppendEvent's keys, order and
// omissions and numbers in the shortest form that parses back to the same
// float64; AppendPredictionJSON writes a Prediction as a JSON object whose
// keys are the msgpack keys below (same order, omissions and versions), a
// non-finite score or probability as null, and invalid UTF-8 replaced by
// U+FFFD. Both are deterministic.
//
// # Producing events from Python
//
// With the msgpack package and confluent-kafka (kafka-python's
// KafkaProducer.send(topic, key=..., value=...) works the same way):
//
//	import time, msgpack
//	from confluent_kafka import Producer
//
//	p = Producer({"bootstrap.servers": "localhost:9092"})
//	# named features (version 3): a dict as the service has it
//	named = {"v": 3, "id": "order-42", "key": "user-7",
//	         "f": {"amount": 12.5, "country": "FR", "is_new": True, "age": None},
//	         "y": 1}
//	p.produce("events", key=b"user-7", value=msgpack.packb(named, use_bin_type=True))
//	# or as JSON, for a consumer run with --input-format json:
//	#   value=json.dumps(named).encode()
//	# a dense vector instead (versions 1 and 2):
//	event = {
//	    "v": 1,
//	    "id": "click-000042",
//	    "ts": int(time.time() * 1000),  # an int: ms since the epoch
//	    "key": "user-7",
//	    "x": [0.5, 1, 0.0, -2.25],      # ints and floats both work
//	    "y": 1,                         # omit (or None) to predict only
//	}
//	# sparse instead: "xi": [0, 7, 300], "xv": [0.25, 1.0, -3.5]
//	p.produce("events", key=b"user-7", value=msgpack.packb(event, use_bin_type=True))
//	p.flush()
//
// With delayed feedback: first the impression, with an id and no y, then,
// once the outcome is known, a feedback event with the same key:
//
//	impression = {
//	    "v": 2,
//	    "id": "imp-000042",             # unique among the impressions awaiting feedback
//	    "ts": int(time.time() * 1000),
//	    "key": "user-7",
//	    "x": [0.5, 1, 0.0, -2.25],      # no "y": the outcome is not known yet
//	}
//	p.produce("events", key=b"user-7", value=msgpack.packb(impression, use_bin_type=True))
//	# ... later, e.g. when the user clicks (+1) or the impression times out (-1):
//	feedback = {
//	    "v": 2,                         # feedback needs version 2
//	    "ts": int(time.time() * 1000),
//	    "key": "user-7",                # the impression's key: same partition
//	    "ref": "imp-000042",            # the impression's id
//	    "y": 1,                         # required; no "x", "xi" or "xv"
//	}
//	p.produce("events", key=b"user-7", value=msgpack.packb(feedback, use_bin_type=True))
//	p.flush()
//
// # Producing events from Go
//
// Build an Event, encode it with AppendEvent and write it with
// segmentio/kafka-go (see Example for the encoding and decoding part, and
// Example_feedback for an impression and its feedback):
//
//	w := &kafka.Writer{Addr: kafka.TCP("localhost:9092"), Topic: "events"}
//	defer w.Close()
//	ev := codec.Event{Version: codec.EventVersion, ID: "click-000042", Key: "user-7",
//		TS: time.Now().UnixMilli(), HasTS: true, X: []float64{0.5, 1, 0, -2.25}, Y: 1, HasY: true}
//	value, err := codec.AppendEvent(nil, &ev)
//	if err != nil {
//		return err // an invalid event: err is a *codec.Error
//	}
//	err = w.WriteMessages(ctx, kafka.Message{Key: []byte(ev.Key), Value: value})
//
// With delayed feedback, the impression has an ID and no label, and the
// feedback event, later, has the impression's ID as Ref, the label, the same
// Key and no features:
//
//	imp := codec.Event{Version: 2, ID: "imp-000042", Key: "user-7",
//		TS: time.Now().UnixMilli(), HasTS: true, X: []float64{0.5, 1, 0, -2.25}}
//	// ... encode and write imp as above; later:
//	fb := codec.Event{Version: 2, Key: imp.Key, Ref: imp.ID,
//		TS: time.Now().UnixMilli(), HasTS: true, Y: 1, HasY: true}
//	value, err = codec.AppendEvent(nil, &fb) // Version 1 with Ref is an error
//	err = w.WriteMessages(ctx, kafka.Message{Key: []byte(fb.Key), Value: value})
package codec
