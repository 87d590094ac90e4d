package codec

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// Golden bytes of prediction schema version 4 (multi-class models),
// produced with Python's msgpack (1.1.0) like the others (golden_test.go):
//
//	msgpack.packb(obj, use_bin_type=True)   # obj the dict shown, keys in the order shown
const (
	// {"v": 1, "sv": 3, "id": "events/0/7", "t": "events", "p": 0, "o": 7, "y": 2.0, "c": "bird",
	//  "m": [{"n": "auto", "s": 0.625, "c": "bird", "ci": 2, "pd": [["bird", 0.625], ["cat", 0.25], ["dog", 0.125]], "u": 7},
	//        {"n": "lin", "s": 0.5, "c": "cat", "ci": 0, "pd": [["cat", 0.5]], "u": 6}]}
	goldPredV4Full = "89a17601a2737603a26964aa6576656e74732f302f37a174a66576656e7473a17000a16f07a179cb4000000000000000a163a462697264a16d9286a16ea46175746fa173cb3fe4000000000000a163a462697264a2636902a270649392a462697264cb3fe400000000000092a3636174cb3fd000000000000092a3646f67cb3fc0000000000000a1750786a16ea36c696ea173cb3fe0000000000000a163a3636174a2636900a270649192a3636174cb3fe0000000000000a17506"
	// {"v": 2, "sv": 3, "t": "events", "p": 1, "o": 9, "y": 0.0, "r": "a", "ro": 3,
	//  "m": [{"n": "auto", "s": 0.0, "c": "", "ci": -1, "pd": [], "u": 0}]}
	goldPredV4Outcome = "89a17602a2737603a174a66576656e7473a17001a16f09a179cb0000000000000000a172a161a2726f03a16d9186a16ea46175746fa173cb0000000000000000a163a0a26369ffa2706490a17500"
)

var goldenPredictionsV4 = []struct {
	name, hex string
	p         Prediction
}{
	{"full", goldPredV4Full, Prediction{Version: 4, ID: "events/0/7", Topic: "events", Offset: 7, Y: 2, HasY: true, Class: "bird", Models: []ModelScore{
		{Name: "auto", Score: 0.625, Updates: 7, Multi: true, Class: "bird", ClassIndex: 2, Dist: []ClassProb{{"bird", 0.625}, {"cat", 0.25}, {"dog", 0.125}}},
		{Name: "lin", Score: 0.5, Updates: 6, Multi: true, Class: "cat", ClassIndex: 0, Dist: []ClassProb{{"cat", 0.5}}},
	}}},
	{"outcome", goldPredV4Outcome, Prediction{Version: 4, Topic: "events", Partition: 1, Offset: 9, HasY: true, Ref: "a", RefOffset: 3, HasRef: true, Models: []ModelScore{
		{Name: "auto", Multi: true, ClassIndex: -1},
	}}},
}

func TestGoldenPredictionV4(t *testing.T) {
	for _, tc := range goldenPredictionsV4 {
		t.Run(tc.name, func(t *testing.T) {
			want := unhex(t, tc.hex)
			p := tc.p
			p.Version = PredictionVersionProb // the runtime asks for version 3: a multi-class model makes it 4
			if got := AppendPrediction(nil, &p); !bytes.Equal(got, want) {
				t.Errorf("AppendPrediction\n got %x\nwant %x", got, want)
			}
			got, err := DecodePrediction(want)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.p) {
				t.Errorf("DecodePrediction\n got %+v\nwant %+v", got, tc.p)
			}
		})
	}
}

// What a reader of version 3 (and so of versions 1 and 2) sees in a version
// 4 record: with the model entries' "c" and "pd" left out — the keys it
// does not know, which such readers ignore (this codec before version 4
// did: decodeModels skipped unknown keys) — the record is the version 3
// record AppendPrediction writes for the same content without multi-class
// models, and it decodes as that version 3 record.
func TestPredictionV4ForOldReaders(t *testing.T) {
	for _, tc := range goldenPredictionsV4 {
		var v4 map[string]any
		if err := msgpack.Unmarshal(unhex(t, tc.hex), &v4); err != nil {
			t.Fatal(err)
		}
		if v4["sv"] != int8(3) {
			t.Errorf("%s: sv = %#v, want 3", tc.name, v4["sv"])
		}
		for _, m := range v4["m"].([]any) {
			delete(m.(map[string]any), "c")
			delete(m.(map[string]any), "ci")
			delete(m.(map[string]any), "pd")
		}
		p := tc.p
		p.Version = 3
		p.Models = append([]ModelScore(nil), p.Models...)
		for i := range p.Models {
			p.Models[i].Multi, p.Models[i].Class, p.Models[i].ClassIndex, p.Models[i].Dist = false, "", 0, nil
		}
		v3b := AppendPrediction(nil, &p)
		var v3 map[string]any
		if err := msgpack.Unmarshal(v3b, &v3); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(v4, v3) {
			t.Errorf("%s: a version 4 record less its new keys\n%v\nwant %v", tc.name, v4, v3)
		}
		back, err := DecodePrediction(v3b)
		if err != nil || back.Version != 3 || !reflect.DeepEqual(back, p) {
			t.Errorf("%s: %+v, %v", tc.name, back, err)
		}
	}
	// Below version 3 the multi-class fields are not written.
	p := goldenPredictionsV4[0].p
	p.Version = 1
	b := AppendPrediction(nil, &p)
	if bytes.Contains(b, []byte("pd")) || bytes.Contains(b, []byte("bird")) {
		t.Errorf("version 1 record with multi-class fields: %x", b)
	}
}

func TestDecodePredictionV4Errors(t *testing.T) {
	good := om{"v", 1, "sv", 3, "t", "events", "p", 0, "o", 1}
	with := func(kv ...any) om { return append(append(om{}, good...), kv...) }
	long := make([]any, MaxDist+1)
	for i := range long {
		long[i] = []any{"a", 0.0}
	}
	cases := []struct {
		name  string
		in    []byte
		field string
	}{
		{"pd not an array", mp(t, with("m", []any{om{"n", "a", "pd", 1}})), "m[0].pd"},
		{"pd entry not a pair", mp(t, with("m", []any{om{"pd", []any{"a"}}})), "m[0].pd[0]"},
		{"pd entry of three", mp(t, with("m", []any{om{"pd", []any{[]any{"a", 0.5, 1}}}})), "m[0].pd[0]"},
		{"pd class int", mp(t, with("m", []any{om{"pd", []any{[]any{1, 0.5}}}})), "m[0].pd[0][0]"},
		{"pd prob string", mp(t, with("m", []any{om{"pd", []any{[]any{"a", "x"}}}})), "m[0].pd[0][1]"},
		{"pd prob above 1", mp(t, with("m", []any{om{"pd", []any{[]any{"a", 1.5}}}})), "m[0].pd[0][1]"},
		{"pd prob negative", mp(t, with("m", []any{om{"pd", []any{[]any{"a", -0.1}}}})), "m[0].pd[0][1]"},
		{"pd sum above 1", mp(t, with("m", []any{om{"pd", []any{[]any{"a", 0.75}, []any{"b", 0.5}}}})), "m[0].pd[1][1]"},
		{"pd too long", mp(t, with("m", []any{om{"pd", long}})), "m[0].pd"},
		{"model c int", mp(t, with("m", []any{om{"c", 3}})), "m[0].c"},
		{"pd twice", mp(t, with("m", []any{om{"pd", []any{}, "pd", []any{}}})), "m[0].pd"},
		{"ci below -1", mp(t, with("m", []any{om{"ci", -2}})), "m[0].ci"},
		{"ci too large", mp(t, with("m", []any{om{"ci", MaxDist}})), "m[0].ci"},
		{"ci float", mp(t, with("m", []any{om{"ci", 1.5}})), "m[0].ci"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := DecodePrediction(tc.in)
			var e *Error
			if !errors.As(err, &e) || e.Field != tc.field {
				t.Fatalf("got %v, want an error on field %q", err, tc.field)
			}
			if !reflect.DeepEqual(p, Prediction{}) {
				t.Errorf("prediction after error: %+v", p)
			}
		})
	}
	// A NaN probability is refused too (msgpack float64 NaN).
	nan, err := msgpack.Marshal(map[string]any{"v": 1, "sv": 3, "m": []any{map[string]any{"pd": []any{[]any{"a", nanF()}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodePrediction(nan); err == nil || !strings.Contains(err.Error(), "[0, 1]") {
		t.Errorf("NaN probability: %v", err)
	}
}

func nanF() float64 { z := 0.0; return z / z }
