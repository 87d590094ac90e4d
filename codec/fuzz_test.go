package codec

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeEvent checks that DecodeEvent never panics, that every error is a
// *Error with a known Reason, that a decoded event has the shape its version
// allows (features in exactly one form, or a feedback event of version 2 with
// a label and none), and that it encodes and decodes back to an equal event
// (and to canonical bytes that are a fixed point).
// Run with: go test -run xxx -fuzz FuzzDecodeEvent -fuzztime 60s ./codec/
func FuzzDecodeEvent(f *testing.F) {
	rng0 := rand.New(rand.NewPCG(3, 9))
	for _, tc := range goldenEvents {
		f.Add(unhex(f, tc.hex), 0)
	}
	for _, tc := range goldenEventsV2 {
		f.Add(unhex(f, tc.hex), 0)
	}
	f.Add(unhex(f, goldPyInts), 7)
	f.Add(unhex(f, goldPyFloat32), 3)
	f.Add(unhex(f, goldV2PyFeedback), 4)
	f.Add(unhex(f, goldV1WithRef), 1)
	for _, tc := range goldenEventsNamed {
		f.Add(unhex(f, tc.hex), 0)
	}
	for i := 0; i < 8; i++ {
		ev := randomNamedEvent(rng0, 1+rng0.IntN(12))
		if b, _ := AppendEvent(nil, &ev); len(b) < 4096 {
			f.Add(b, 0)
		}
	}
	for _, tc := range reasonCases(f) {
		if len(tc.in) < 4096 {
			f.Add(tc.in, tc.lim.Dim)
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 8; i++ {
		ev := randomEvent(rng, 1+rng.IntN(12))
		if len(ev.ID) > 300 || len(ev.Key) > 300 {
			continue
		}
		b, _ := AppendEvent(nil, &ev)
		f.Add(b, 0)
	}
	for i := 0; i < 8; i++ {
		ev := randomEventV2(rng, 1+rng.IntN(12))
		if len(ev.ID) > 300 || len(ev.Key) > 300 || len(ev.Ref) > 300 {
			continue
		}
		b, _ := AppendEvent(nil, &ev)
		f.Add(b, 0)
	}
	// Finite values at the edge of float64 and float32, in every place a
	// value goes (features dense and sparse, the label of an impression and
	// of a feedback event), so that the fuzzer starts at the value checks.
	for _, v := range []any{1e308, -1e308, math.MaxFloat64, math.SmallestNonzeroFloat64, f32(math.MaxFloat32), f32(-math.MaxFloat32), nan, inf} {
		f.Add(mp(f, om{"v", 1, "x", []any{1.0, v}, "y", 1}), 2)
		f.Add(mp(f, om{"v", 2, "id", "e", "xi", []uint32{0, 7}, "xv", []any{v, 1.0}, "y", 1}), 8)
		f.Add(mp(f, om{"v", 1, "x", []float64{1}, "y", v}), 1)
		f.Add(mp(f, om{"v", 2, "ref", "e", "key", "k", "ts", 5, "y", v}), 0)
	}
	known := map[Reason]bool{}
	for _, r := range Reasons() {
		known[r] = true
	}
	f.Fuzz(func(t *testing.T, b []byte, dim int) {
		dim %= 1 << 16
		lim := Limits{Dim: dim, MaxFeatures: 1 << 12}
		d := NewDecoder(lim)
		var ev Event
		err := d.DecodeEvent(b, &ev)
		if err != nil {
			if r := ReasonOf(err); !known[r] {
				t.Fatalf("error %v has unknown reason %q", err, r)
			}
			return
		}
		switch {
		case ev.Version < 1 || ev.Version > 3:
			t.Fatalf("decoded version %d", ev.Version)
		case ev.IsFeedback():
			if ev.Version < 2 || !ev.HasY || ev.X != nil || ev.XI != nil || ev.XV != nil || ev.F != nil {
				t.Fatalf("feedback event of the wrong shape: %+v", ev)
			}
		case ev.Ref != "":
			t.Fatal("unreachable")
		case b2i(ev.X != nil)+b2i(ev.XI != nil)+b2i(ev.F != nil) != 1 || (ev.XI != nil) != (ev.XV != nil):
			t.Fatalf("event with features in no or several forms: %+v", ev)
		case ev.F != nil && ev.Version != 3:
			t.Fatalf("named event of version %d", ev.Version)
		}
		checkEventValues(t, &ev, lim)
		enc, err := AppendEvent(nil, &ev)
		if err != nil {
			t.Fatalf("decoded event %+v does not encode: %v", ev, err)
		}
		var ev2 Event
		if err := d.DecodeEvent(enc, &ev2); err != nil {
			t.Fatalf("re-encoded %x does not decode: %v", enc, err)
		}
		if !eventsEqualF(&ev, &ev2) {
			t.Fatalf("round trip\n got %+v\nwant %+v", ev2, ev)
		}
		enc2, _ := AppendEvent(nil, &ev2)
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("canonical bytes are not a fixed point:\n%x\n%x", enc, enc2)
		}
		// Decoding again into the same (now populated) Event gives the same result.
		if err := d.DecodeEvent(b, &ev2); err != nil || !eventsEqualF(&ev, &ev2) {
			t.Fatalf("decoding into a reused Event differs: %v", err)
		}
		// The JSON encoding of a decoded event (when its strings are UTF-8)
		// decodes to the same event.
		if j, err := AppendEventJSON(nil, &ev); err == nil {
			var evj Event
			if err := d.DecodeEventJSON(j, &evj); err != nil || !eventsEqualF(&ev, &evj) {
				t.Fatalf("JSON %s of a decoded event: %v\n got %+v\nwant %+v", j, err, evj, ev)
			}
		}
		if lim.Dim > 0 && !ev.IsFeedback() && !ev.Named() {
			_ = ev.Dense(nil, lim.Dim) // must not panic for an event decoded with Dim
		}
	})
}

// checkEventValues checks what a decoded event's values must satisfy: every
// feature value and the label are finite, the feature count is within
// lim.MaxFeatures, a dense event has lim.Dim features (if set), and sparse
// indices increase strictly and stay below lim.Dim (if set).
func checkEventValues(t *testing.T, ev *Event, lim Limits) {
	t.Helper()
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if ev.HasY && !finite(ev.Y) {
		t.Fatalf("decoded label %v", ev.Y)
	}
	if len(ev.X) > lim.MaxFeatures || len(ev.XI) > lim.MaxFeatures {
		t.Fatalf("%d dense, %d sparse features, limit %d", len(ev.X), len(ev.XI), lim.MaxFeatures)
	}
	if lim.Dim > 0 && ev.X != nil && len(ev.X) != lim.Dim {
		t.Fatalf("%d dense features, Dim %d", len(ev.X), lim.Dim)
	}
	for _, v := range ev.X {
		if !finite(v) {
			t.Fatalf("decoded feature %v", v)
		}
	}
	if len(ev.F) > lim.MaxFeatures {
		t.Fatalf("%d named features, limit %d", len(ev.F), lim.MaxFeatures)
	}
	names := map[string]bool{}
	for _, f := range ev.F {
		if names[f.Name] || len(f.Name) > DefaultMaxNameBytes || len(f.Str) > DefaultMaxNameBytes || !utf8.ValidString(f.Name) || !utf8.ValidString(f.Str) {
			t.Fatalf("named feature %+v (duplicate, too long or not UTF-8)", f)
		}
		names[f.Name] = true
		if f.Kind == FieldNumber && !finite(f.Num) || f.Kind == FieldBool && f.Num != 0 && f.Num != 1 || f.Kind > FieldMissing {
			t.Fatalf("named feature %+v", f)
		}
	}
	for k, j := range ev.XI {
		if k > 0 && j <= ev.XI[k-1] || lim.Dim > 0 && int64(j) >= int64(lim.Dim) || !finite(ev.XV[k]) {
			t.Fatalf("sparse features %v %v (Dim %d)", ev.XI, ev.XV, lim.Dim)
		}
	}
}

// FuzzDecodePrediction checks that DecodePrediction never panics, that a
// version 1 record never yields the fields of version 2 (nor, with "sv": 3,
// a version 3 record whose "v" is 1), and that a decoded
// prediction re-encodes, with the version its HasRef calls for, to bytes that
// decode to the same prediction.
func FuzzDecodePrediction(f *testing.F) {
	for _, tc := range goldenPredictions {
		f.Add(unhex(f, tc.hex))
	}
	for _, tc := range goldenPredictionsV2 {
		f.Add(unhex(f, tc.hex))
	}
	for _, tc := range goldenPredictionsV3 {
		f.Add(unhex(f, tc.hex))
	}
	for _, tc := range goldenPredictionsV4 {
		f.Add(unhex(f, tc.hex))
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 8; i++ {
		p := randomPrediction(rng)
		if b := AppendPrediction(nil, &p); len(b) < 4096 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodePrediction(b)
		if err != nil {
			if ReasonOf(err) == "" {
				t.Fatalf("error %v is not a *Error", err)
			}
			return
		}
		if p.Version < 1 || p.Version > 4 || p.Version == 1 && (p.HasRef || p.Ref != "" || p.RefOffset != 0) {
			t.Fatalf("version %d record with HasRef %v, Ref %q, RefOffset %d", p.Version, p.HasRef, p.Ref, p.RefOffset)
		}
		enc := AppendPrediction(nil, &p)
		if wantV := byte(1 + b2i(p.HasRef)); enc[3] != wantV {
			t.Fatalf("encoded with v %d, want %d", enc[3], wantV)
		}
		p2, err := DecodePrediction(enc)
		if err != nil {
			t.Fatalf("re-encoded %x does not decode: %v", enc, err)
		}
		if !bytes.Equal(enc, AppendPrediction(nil, &p2)) {
			t.Fatalf("canonical bytes are not a fixed point")
		}
	})
}

// FuzzDecodeEventJSON checks that DecodeEventJSON never panics, that every
// error has a known reason, that not_json agrees with encoding/json (which
// accepts lone surrogates, invalid UTF-8 and any nesting, and rejects NaN
// and Infinity), and
// that an accepted record re-encodes (JSON and msgpack) to events equal to it.
// Run with: go test -run xxx -fuzz FuzzDecodeEventJSON -fuzztime 60s ./codec/
func FuzzDecodeEventJSON(f *testing.F) {
	for _, tc := range goldenEventsNamed {
		f.Add([]byte(tc.json), 0)
	}
	for _, tc := range jsonReasonCases {
		f.Add([]byte(tc.in), tc.lim.Dim)
	}
	for _, tc := range equivalenceCases() {
		f.Add([]byte(toJSON(f, tc.rec)), tc.lim.Dim)
	}
	rng := rand.New(rand.NewPCG(17, 18))
	for i := 0; i < 16; i++ {
		ev := randomNamedEvent(rng, rng.IntN(12))
		if b, err := AppendEventJSON(nil, &ev); err == nil && len(b) < 4096 {
			f.Add(b, 0)
		}
	}
	known := map[Reason]bool{}
	for _, r := range Reasons() {
		known[r] = true
	}
	f.Fuzz(func(t *testing.T, b []byte, dim int) {
		dim %= 1 << 16
		lim := Limits{Dim: max(dim, 0), MaxFeatures: 1 << 12}
		d := NewDecoder(lim)
		var ev Event
		err := d.DecodeEventJSON(b, &ev)
		if err != nil {
			r := ReasonOf(err)
			if !known[r] || r == ReasonNotMsgpack || r == ReasonLooksLikeJSON {
				t.Fatalf("error %v has reason %q", err, r)
			}
			if r == ReasonNotJSON && json.Valid(b) {
				msg := err.Error()
				if !strings.Contains(msg, "surrogate") && !strings.Contains(msg, "nested deeper") && !strings.Contains(msg, "UTF-8") {
					t.Fatalf("encoding/json accepts %q but: %v", b, err)
				}
			}
			return
		}
		if !json.Valid(b) && !bytes.Contains(b, []byte("NaN")) && !bytes.Contains(b, []byte("Infinity")) {
			t.Fatalf("accepted %q, which encoding/json refuses", b)
		}
		checkEventValues(t, &ev, lim)
		j, err := AppendEventJSON(nil, &ev)
		if err != nil {
			t.Fatalf("decoded event %+v does not encode: %v", ev, err)
		}
		var ev2 Event
		if err := d.DecodeEventJSON(j, &ev2); err != nil || !eventsEqualF(&ev, &ev2) {
			t.Fatalf("JSON round trip %s: %v\n got %+v\nwant %+v", j, err, ev2, ev)
		}
		m, err := AppendEvent(nil, &ev)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.DecodeEvent(m, &ev2); err != nil || !eventsEqualF(&ev, &ev2) {
			t.Fatalf("msgpack of a JSON event: %v\n got %+v\nwant %+v", err, ev2, ev)
		}
	})
}
