// Package codec defines okstream's wire formats: the Event that upstream
// services publish to an input topic, and the Prediction record okstream
// publishes for each event. Both are msgpack maps with short string keys, so
// that any language with a msgpack library can produce and read them. This
// comment is the schema reference.
//
// # Event (schema version 1)
//
// One Kafka record value holds exactly one msgpack map (nothing after it):
//
//	key   msgpack type                 rule
//	----  ---------------------------  --------------------------------------------------------
//	v     int                          required; the schema version, 1
//	id    str (or bin)                 optional; event id. Absent or "": the runtime uses
//	                                   "topic/partition/offset"
//	ts    int                          optional; event time, ms since the Unix epoch (a float
//	                                   is rejected: send int(time.time() * 1000))
//	key   str or bin                   optional; entity key
//	x     array of numbers             dense features; non-empty; exactly Limits.Dim long when
//	                                   the consumer is configured with a dimension
//	xi    array of ints                sparse feature indices: 0-based, strictly increasing,
//	                                   each < Limits.Dim (or < 2^32 with no dimension)
//	xv    array of numbers             sparse feature values, one per index in xi
//	y     number                       optional; the label: −1 or +1 for classification, any
//	                                   real number for regression. Absent: predict only
//
// Features are given either dense (x) or sparse (xi and xv together), never
// both. A "number" is any msgpack int, uint, float32 or float64, so Python's
// packb([1, 2.5]) (an int and a float) is fine; every feature value and y must
// be finite (no NaN, no ±Inf). int values are converted to float64 exactly up
// to 2^53.
//
// More rules:
//   - A key whose value is nil counts as absent ("y": None in Python means
//     "no label"; "v": None is a missing version).
//   - Unknown keys are ignored, so producers may add their own keys (choose
//     names longer than three characters, to stay clear of keys a later version
//     of this schema may add). They must still be well-formed msgpack.
//   - Map keys are str (bin is accepted too); a known key may appear only once.
//   - Records larger than Limits.MaxBytes, and arrays longer than
//     Limits.MaxFeatures (default 2^20), are rejected.
//   - Version 2 (not yet defined) will add label-only feedback events that
//     refer to an earlier event's id. Until then any "v" other than 1 is
//     rejected as unknown_version.
//
// AppendEvent writes the canonical encoding: keys in the order v, id, ts, key,
// x | xi, xv, y; absent fields omitted; integers (v, ts, xi) in their smallest
// msgpack form and feature values and y always as float64; id and key as str
// (as bin if they are not valid UTF-8). The same Event always gives the same
// bytes, and decoding canonical bytes and encoding again gives them back.
//
// # Prediction (schema version 1)
//
// okstream writes one Prediction record per input event, with the event key as
// the Kafka record key. Records are a pure function of their content: a record
// re-emitted after recovery is byte-identical to the first, so downstream can
// de-duplicate by (t, p, o).
//
//	key   msgpack type      rule
//	----  ----------------  ---------------------------------------------------------
//	v     int               always; the schema version, 1
//	id    str               the event's id, or "topic/partition/offset"; omitted if ""
//	key   str               the event's key; omitted if ""
//	t     str               always; source topic
//	p     int               always; source partition
//	o     int               always; source offset
//	ts    int               the event's ts; omitted if the event had none
//	y     float64           the event's label; omitted if the event had none
//	m     array of maps     always; one map per configured model, in configuration order:
//	  n   str                 model name
//	  s   float64             score f_t(x), computed before the model learned from the event
//	  d   int                 decision: +1, −1, or 0 when s is exactly 0 (a mistake);
//	                          only for classification models
//	  u   uint                labelled events the model had learned from before this one
//
// Strings (id, key, t, n) are written as str, or as bin when they are not valid
// UTF-8. For a classification model the event counts as a mistake when d != y;
// since d is 0 for a score of exactly 0, such a score is always a mistake.
// DecodePrediction reads these records back.
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
//	unknown_version          "v" is an integer other than 1
//	bad_field_type           a value has the wrong type (x a string, id an array, a
//	                         float where an int is required, a map key not a string),
//	                         or an int out of range (ts above 2^63-1)
//	duplicate_key            a known key appears twice in the same map
//	missing_features         neither x nor xi/xv, or only one of xi and xv
//	dense_and_sparse         both x and xi/xv
//	empty_features           x, or xi and xv, are empty arrays
//	too_many_features        more features than Limits.MaxFeatures
//	non_finite               NaN or ±Inf in x, xv or y
//	sparse_length_mismatch   len(xi) != len(xv)
//	sparse_unsorted          xi is not increasing
//	sparse_duplicate         an index appears twice in xi
//	sparse_out_of_range      an index is negative, >= Limits.Dim, or >= 2^32
//	dimension_mismatch       len(x) != Limits.Dim
//
// When an event has several problems, DecodeEvent reports the first that
// applies in this order: oversized; not_msgpack, not_a_map, trailing_bytes
// (the record's framing); missing_version, unknown_version, or a bad_field_type
// or duplicate_key on "v" (what the record claims to be); then the first
// problem with a single field, in the order the bytes hold them; then the
// record-level feature rules (dense_and_sparse, missing_features,
// sparse_length_mismatch, empty_features). DecodeEvent never panics and never
// allocates in proportion to a length the record declares before checking it
// against the record's size and the limits.
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
// # Producing events from Go
//
// Build an Event, encode it with AppendEvent and write it with
// segmentio/kafka-go (see Example for the encoding and decoding part):
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
package codec
