package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// randomPredictionMulti is randomPrediction with, in a version 3 record,
// some multi-class models (version 4).
func randomPredictionMulti(rng *rand.Rand) Prediction {
	p := randomPrediction(rng)
	if p.Version < PredictionVersionProb || rng.IntN(2) == 0 {
		return p
	}
	for i := rng.IntN(3); i >= 0; i-- {
		m := ModelScore{Name: randomString(rng), Updates: rng.Uint64() >> rng.IntN(64), Multi: true, ClassIndex: rng.IntN(MaxDist+1) - 1}
		if rng.IntN(4) > 0 {
			m.Class = randomString(rng)
		}
		left := 1.0
		for k := rng.IntN(5); k > 0; k-- {
			pr := left * rng.Float64()
			left -= pr
			m.Dist = append(m.Dist, ClassProb{Class: randomString(rng), Prob: pr})
		}
		if len(m.Dist) > 0 {
			m.Score = m.Dist[0].Prob
		}
		p.Models = append(p.Models, m)
	}
	return p
}

// jsonVisible is p as a JSON record carries it: every string with each
// invalid UTF-8 byte replaced by U+FFFD.
func jsonVisible(p Prediction) Prediction {
	p.ID, p.Key, p.Topic, p.Ref, p.Class = perByteValid(p.ID), perByteValid(p.Key), perByteValid(p.Topic), perByteValid(p.Ref), perByteValid(p.Class)
	ms := make([]ModelScore, len(p.Models))
	for i, m := range p.Models {
		m.Name, m.Class = perByteValid(m.Name), perByteValid(m.Class)
		if m.Dist != nil {
			d := make([]ClassProb, len(m.Dist))
			for k, cp := range m.Dist {
				d[k] = ClassProb{Class: perByteValid(cp.Class), Prob: cp.Prob}
			}
			m.Dist = d
		}
		ms[i] = m
	}
	if p.Models == nil {
		ms = nil
	}
	p.Models = ms
	return p
}

// TestPredictionJSONRoundTrip: a JSON prediction decodes to the Prediction
// its msgpack twin decodes to (strings made valid UTF-8), re-encodes to a
// record that decodes to it again, and DecodePredictionAny tells the two formats apart.
func TestPredictionJSONRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 1))
	multi := 0
	for i := 0; i < 500; i++ {
		p := randomPredictionMulti(rng)
		mp, err := DecodePrediction(AppendPrediction(nil, &p))
		if err != nil {
			t.Fatal(err)
		}
		if mp.Version == PredictionVersionMulti {
			multi++
		}
		b := AppendPredictionJSON(nil, &p)
		if !json.Valid(b) {
			t.Fatalf("not valid JSON: %s", b)
		}
		got, err := DecodePredictionJSON(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if want := jsonVisible(mp); !reflect.DeepEqual(got, want) {
			t.Fatalf("JSON round trip\n got %+v\nwant %+v", got, want)
		}
		// Re-encoding gives the same Prediction (the bytes differ only
		// where an invalid byte's \ufffd escape became the rune itself).
		b2 := AppendPredictionJSON(nil, &got)
		if again, err := DecodePredictionJSON(b2); err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("re-encoding changed the record: %v\n%s\n%s", err, b, b2)
		}
		any1, err1 := DecodePredictionAny(b)
		any2, err2 := DecodePredictionAny(AppendPrediction(nil, &p))
		if err1 != nil || err2 != nil || !reflect.DeepEqual(any1, got) || !reflect.DeepEqual(any2, mp) {
			t.Fatalf("DecodePredictionAny: %v %v", err1, err2)
		}
	}
	if multi < 25 {
		t.Fatalf("only %d version 4 records: the test does not cover multi-class models", multi)
	}
	// A non-finite score is null in JSON and NaN when decoded.
	p := Prediction{Version: 1, Topic: "t", Models: []ModelScore{{Name: "a", Score: math.Inf(1)}}}
	got, err := DecodePredictionJSON(AppendPredictionJSON(nil, &p))
	if err != nil || !math.IsNaN(got.Models[0].Score) {
		t.Errorf("non-finite score: got %+v, %v", got, err)
	}
	// Whitespace around the object and between tokens is allowed.
	got, err = DecodePredictionJSON([]byte(" \n{ \"v\" : 1 , \"t\" : \"e\", \"m\" : [ { \"n\" : \"a\" , \"s\" : 1.5 , \"u\" : 18446744073709551615 } ] }\r\n"))
	if err != nil || got.Topic != "e" || len(got.Models) != 1 || got.Models[0].Score != 1.5 || got.Models[0].Updates != math.MaxUint64 {
		t.Errorf("whitespace: got %+v, %v", got, err)
	}
}

// TestDecodePredictionJSONErrors: each record, stated once, is refused by
// DecodePredictionJSON (as JSON) and DecodePrediction (as msgpack) with the
// same reason and field; framing errors have their own reasons.
func TestDecodePredictionJSONErrors(t *testing.T) {
	good := om{"v", 1, "t", "events", "p", 0, "o", 1}
	with := func(kv ...any) om { return append(append(om{}, good...), kv...) }
	same := []struct {
		name  string
		in    any
		want  Reason
		field string
	}{
		{"array", []any{1}, ReasonNotMap, ""},
		{"no v", om{"t", "events"}, ReasonMissingVersion, "v"},
		{"v null", om{"v", nil, "t", "events"}, ReasonMissingVersion, "v"},
		{"v 3", om{"v", 3}, ReasonUnknownVersion, "v"},
		{"sv 4", om{"v", 1, "sv", 4}, ReasonUnknownVersion, "sv"},
		{"v string", om{"v", "1"}, ReasonBadFieldType, "v"},
		{"v float", om{"v", 1.5}, ReasonBadFieldType, "v"},
		{"p twice", with("p", 1), ReasonDuplicateKey, "p"},
		{"p out of range", om{"v", 1, "p", int64(1) << 31}, ReasonBadFieldType, "p"},
		{"o float", om{"v", 1, "o", 1.5}, ReasonBadFieldType, "o"},
		{"t int", om{"v", 1, "t", 1}, ReasonBadFieldType, "t"},
		{"y string", om{"v", 1, "y", "1"}, ReasonBadFieldType, "y"},
		{"m map", with("m", om{}), ReasonBadFieldType, "m"},
		{"m element int", with("m", []any{1}), ReasonBadFieldType, "m[0]"},
		{"d 2", with("m", []any{om{"n", "a", "d", 2}}), ReasonBadFieldType, "m[0].d"},
		{"u negative", with("m", []any{om{"n", "a"}, om{"u", -1}}), ReasonBadFieldType, "m[1].u"},
		{"s string", with("m", []any{om{"s", "x"}}), ReasonBadFieldType, "m[0].s"},
		{"pp 2", with("m", []any{om{"s", 1.0, "pp", 2.0}}), ReasonBadFieldType, "m[0].pp"},
		{"ci out of range", with("m", []any{om{"ci", MaxDist}}), ReasonBadFieldType, "m[0].ci"},
		{"pd not pairs", with("m", []any{om{"pd", []any{[]any{"a"}}}}), ReasonBadFieldType, "m[0].pd[0]"},
		{"pd prob 2", with("m", []any{om{"pd", []any{[]any{"a", 2.0}}}}), ReasonBadFieldType, "m[0].pd[0][1]"},
		{"pd sum", with("m", []any{om{"pd", []any{[]any{"a", 0.75}, []any{"b", 0.75}}}}), ReasonBadFieldType, "m[0].pd[1][1]"},
		{"pd class int", with("m", []any{om{"pd", []any{[]any{1, 0.5}}}}), ReasonBadFieldType, "m[0].pd[0][0]"},
		{"model duplicate", with("m", []any{om{"s", 1.0, "s", 2.0}}), ReasonDuplicateKey, "m[0].s"},
		{"ro before v in v2", om{"ro", "x", "v", 2}, ReasonBadFieldType, "ro"},
	}
	for _, tc := range same {
		t.Run(tc.name, func(t *testing.T) {
			for _, in := range []struct {
				format string
				dec    func([]byte) (Prediction, error)
				b      []byte
			}{{"msgpack", DecodePrediction, mp(t, tc.in)}, {"json", DecodePredictionJSON, []byte(toJSON(t, tc.in))}} {
				p, err := in.dec(in.b)
				var e *Error
				if !errors.As(err, &e) || e.Reason != tc.want || e.Field != tc.field {
					t.Fatalf("%s %q: got %v, want reason %s field %q", in.format, in.b, err, tc.want, tc.field)
				}
				if !reflect.DeepEqual(p, Prediction{}) {
					t.Errorf("%s: prediction after error: %+v", in.format, p)
				}
			}
		})
	}
	framing := []struct {
		name, in string
		want     Reason
	}{
		{"empty", "", ReasonNotJSON},
		{"spaces", "  ", ReasonNotJSON},
		{"truncated", `{"v":1,"t":"e"`, ReasonNotJSON},
		{"truncated string", `{"v":1,"t":"e`, ReasonNotJSON},
		{"trailing comma", `{"v":1,}`, ReasonNotJSON},
		{"single quotes", `{'v':1}`, ReasonNotJSON},
		{"bad literal", `{"v":1,"y":nul}`, ReasonNotJSON},
		{"invalid utf-8", "{\"v\":1,\"t\":\"\xff\"}", ReasonNotJSON},
		{"lone surrogate", `{"v":1,"t":"\ud800"}`, ReasonNotJSON},
		{"deep unknown", `{"v":1,"x":` + string(bytes.Repeat([]byte("["), MaxJSONDepth)) + string(bytes.Repeat([]byte("]"), MaxJSONDepth)) + `}`, ReasonNotJSON},
		{"deep in a model", `{"v":1,"m":[{"x":` + string(bytes.Repeat([]byte("["), MaxJSONDepth-2)) + string(bytes.Repeat([]byte("]"), MaxJSONDepth-2)) + `}]}`, ReasonNotJSON},
		{"trailing", `{"v":1} {}`, ReasonTrailingBytes},
		{"msgpack", string(AppendPrediction(nil, &Prediction{Version: 1, Topic: "e"})), ReasonLooksLikeMsgpack},
		{"top string", `"v"`, ReasonNotMap},
		{"pd too long", `{"v":1,"m":[{"pd":[` + string(bytes.Repeat([]byte(`["a",0],`), MaxDist)) + `["a",0]]}]}`, ReasonBadFieldType},
		{"pd three", `{"v":1,"m":[{"pd":[["a",0.5,1]]}]}`, ReasonBadFieldType},
		{"u beyond uint64", `{"v":1,"m":[{"u":18446744073709551616}]}`, ReasonBadFieldType},
	}
	for _, tc := range framing {
		t.Run(tc.name, func(t *testing.T) {
			p, err := DecodePredictionJSON([]byte(tc.in))
			if ReasonOf(err) != tc.want {
				t.Fatalf("%q: got %v, want %s", tc.in, err, tc.want)
			}
			if !reflect.DeepEqual(p, Prediction{}) {
				t.Errorf("prediction after error: %+v", p)
			}
		})
	}
	// Depth MaxJSONDepth exactly is accepted.
	ok := `{"v":1,"x":` + string(bytes.Repeat([]byte("["), MaxJSONDepth-1)) + string(bytes.Repeat([]byte("]"), MaxJSONDepth-1)) + `}`
	if _, err := DecodePredictionJSON([]byte(ok)); err != nil {
		t.Errorf("depth %d: %v", MaxJSONDepth, err)
	}
	// Unknown keys and null values are accepted (null is absent, but a
	// null score is NaN); "r"/"ro" are unknown keys in a version 1 record.
	p, err := DecodePredictionJSON([]byte(toJSON(t, with("extra", []any{1, om{"a", nil}}, "y", nil, "ro", "x", "m", []any{om{"n", "a", "zz", 1, "d", nil, "s", nil}}))))
	if err != nil || p.HasY || p.HasRef || len(p.Models) != 1 || p.Models[0].Name != "a" || p.Models[0].Classify || !math.IsNaN(p.Models[0].Score) {
		t.Errorf("got %+v, %v", p, err)
	}
}

// TestDecodePredictionJSONTruncations: every prefix of a valid record is
// refused with a *Error (never a panic, never a partial Prediction).
func TestDecodePredictionJSONTruncations(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 2))
	for i := 0; i < 50; i++ {
		p := randomPredictionMulti(rng)
		b := AppendPredictionJSON(nil, &p)
		if len(b) > 4096 {
			continue
		}
		for n := 0; n < len(b); n++ {
			got, err := DecodePredictionJSON(b[:n])
			if ReasonOf(err) == "" || !reflect.DeepEqual(got, Prediction{}) {
				t.Fatalf("prefix %q: got %+v, %v", b[:n], got, err)
			}
		}
	}
}

// FuzzDecodePredictionJSON checks that DecodePredictionJSON never panics,
// that every error is a *Error, and that an accepted record re-encodes
// (JSON) to bytes that decode to it again and are a fixed point.
// Run with: go test -run xxx -fuzz FuzzDecodePredictionJSON -fuzztime 60s ./codec/
func FuzzDecodePredictionJSON(f *testing.F) {
	rng := rand.New(rand.NewPCG(39, 3))
	for i := 0; i < 8; i++ {
		p := randomPredictionMulti(rng)
		if b := AppendPredictionJSON(nil, &p); len(b) < 4096 {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"v":2,"ro":1,"r":"a","m":[{"n":"a","s":null,"pd":[["a",0.5]]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodePredictionJSON(b)
		if err != nil {
			if ReasonOf(err) == "" {
				t.Fatalf("error %v is not a *Error", err)
			}
			return
		}
		enc := AppendPredictionJSON(nil, &p)
		p2, err := DecodePredictionJSON(enc)
		if err != nil {
			t.Fatalf("re-encoded %s does not decode: %v", enc, err)
		}
		if !bytes.Equal(enc, AppendPredictionJSON(nil, &p2)) {
			t.Fatalf("canonical bytes are not a fixed point")
		}
	})
}

// BenchmarkDecodePrediction2Models: reading a prediction record back (what
// the effectively-once scan of the output's tail does per record), msgpack
// against JSON.
func BenchmarkDecodePrediction2Models(b *testing.B) {
	p := Prediction{Version: 3, ID: "events/0/123456", Key: "user-42", Topic: "events", Partition: 3, Offset: 123456,
		TS: 1700000000123, HasTS: true, Y: 1, HasY: true, Class: "spam", Models: []ModelScore{
			{Name: "forks", Score: 0.42, Classify: true, Decision: 1, Updates: 123000, Prob: 0.71, HasProb: true},
			{Name: "fogd", Score: -0.1, Classify: true, Decision: -1, Updates: 123000, Prob: 0.46, HasProb: true},
		}}
	for _, c := range []struct {
		name string
		enc  []byte
		dec  func([]byte) (Prediction, error)
	}{{"msgpack", AppendPrediction(nil, &p), DecodePrediction}, {"json", AppendPredictionJSON(nil, &p), DecodePredictionJSON}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.enc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.dec(c.enc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
