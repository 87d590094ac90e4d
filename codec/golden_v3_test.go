package codec

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// Golden bytes of prediction schema version 3, produced like the others
// (golden_test.go) with Python's msgpack (1.1.0):
//
//	msgpack.packb(obj, use_bin_type=True)   # obj the dict shown, keys in the order shown
//
// Each is the record of goldPredFull, goldPredOutcome and goldPredMin with
// "sv": 3, "c" and the models' "pp" added; without those keys Python packs
// exactly the older golden bytes.
const (
	// {"v": 1, "sv": 3, "id": "events/0/42", "key": "user-7", "t": "events", "p": 0, "o": 42, "ts": 1700000000123, "y": 1.0, "c": "spam",
	//  "m": [{"n": "fogd", "s": 0.731, "d": 1, "pp": 0.625, "u": 41}, {"n": "ridge", "s": -0.2, "u": 41},
	//        {"n": "forks", "s": 0.0, "d": 0, "pp": 0.5, "u": 0}, {"n": "nogd", "s": -3.0, "d": -1, "pp": 0.125, "u": 300}]}
	goldPredV3Full = "8ba17601a2737603a26964ab6576656e74732f302f3432a36b6579a6757365722d37a174a66576656e7473a17000a16f2aa27473cf0000018bcfe5687ba179cb3ff0000000000000a163a47370616da16d9485a16ea4666f6764a173cb3fe7645a1cac0831a16401a27070cb3fe4000000000000a1752983a16ea57269646765a173cbbfc999999999999aa1752985a16ea5666f726b73a173cb0000000000000000a16400a27070cb3fe0000000000000a1750085a16ea46e6f6764a173cbc008000000000000a164ffa27070cb3fc0000000000000a175cd012c"
	// {"v": 2, "sv": 3, "id": "click-000042", "key": "user-7", "t": "events", "p": 3, "o": 1043, "ts": 1700000060000, "y": 1.0,
	//  "r": "click-000042", "ro": 1000, "c": "true", "m": [{"n": "fogd", "s": 0.731, "d": 1, "pp": 0.75, "u": 41}, {"n": "ridge", "s": -0.2, "u": 41}]}
	goldPredV3Outcome = "8da17602a2737603a26964ac636c69636b2d303030303432a36b6579a6757365722d37a174a66576656e7473a17003a16fcd0413a27473cf0000018bcfe65260a179cb3ff0000000000000a172ac636c69636b2d303030303432a2726fcd03e8a163a474727565a16d9285a16ea4666f6764a173cb3fe7645a1cac0831a16401a27070cb3fe8000000000000a1752983a16ea57269646765a173cbbfc999999999999aa17529"
	// {"v": 1, "sv": 3, "t": "events", "p": 3, "o": 9000000000, "m": []}
	goldPredV3Min = "86a17601a2737603a174a66576656e7473a17003a16fcf0000000218711a00a16d90"
)

// goldenPredictionsV3 are the version 3 records with, in old, the golden
// record of the older version they extend.
var goldenPredictionsV3 = []struct {
	name, hex, old string
	p              Prediction
}{
	{"full", goldPredV3Full, goldPredFull, Prediction{Version: 3, ID: "events/0/42", Key: "user-7", Topic: "events", Partition: 0, Offset: 42,
		TS: 1700000000123, HasTS: true, Y: 1, HasY: true, Class: "spam", Models: []ModelScore{
			{Name: "fogd", Score: 0.731, Classify: true, Decision: 1, Updates: 41, Prob: 0.625, HasProb: true},
			{Name: "ridge", Score: -0.2, Updates: 41},
			{Name: "forks", Score: 0, Classify: true, Decision: 0, Updates: 0, Prob: 0.5, HasProb: true},
			{Name: "nogd", Score: -3, Classify: true, Decision: -1, Updates: 300, Prob: 0.125, HasProb: true},
		}}},
	{"outcome", goldPredV3Outcome, goldPredOutcome, Prediction{Version: 3, ID: "click-000042", Key: "user-7", Topic: "events", Partition: 3, Offset: 1043,
		TS: 1700000060000, HasTS: true, Y: 1, HasY: true, Ref: "click-000042", RefOffset: 1000, HasRef: true, Class: "true", Models: []ModelScore{
			{Name: "fogd", Score: 0.731, Classify: true, Decision: 1, Updates: 41, Prob: 0.75, HasProb: true},
			{Name: "ridge", Score: -0.2, Updates: 41},
		}}},
	{"min", goldPredV3Min, goldPredMin, Prediction{Version: 3, Topic: "events", Partition: 3, Offset: 9000000000}},
}

func TestGoldenPredictionV3(t *testing.T) {
	for _, tc := range goldenPredictionsV3 {
		t.Run(tc.name, func(t *testing.T) {
			want := unhex(t, tc.hex)
			if got := AppendPrediction(nil, &tc.p); !bytes.Equal(got, want) {
				t.Errorf("AppendPrediction\n got %x\nwant %x", got, want)
			}
			got, err := DecodePrediction(want)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.p) {
				t.Errorf("DecodePrediction\n got %+v\nwant %+v", got, tc.p)
			}
			// Below version 3 the version 3 fields are not written: the
			// older golden bytes come out.
			p := tc.p
			p.Version = 1
			if got := AppendPrediction(nil, &p); !bytes.Equal(got, unhex(t, tc.old)) {
				t.Errorf("as version 1/2\n got %x\nwant %s", got, tc.old)
			}
		})
	}
}

// TestPredictionV3ForOldReaders checks what a reader of versions 1 and 2
// sees in a version 3 record: "v" is 1 or 2, and with the keys such a reader
// does not know ("sv", "c", the models' "pp") left out — which every reader
// of those versions ignores (this codec's before version 3 included: see
// TestDecodePredictionErrors' unknown keys) — the record is the older
// version's golden record, value for value.
func TestPredictionV3ForOldReaders(t *testing.T) {
	for _, tc := range goldenPredictionsV3 {
		var v3, old map[string]any
		if err := msgpack.Unmarshal(unhex(t, tc.hex), &v3); err != nil {
			t.Fatal(err)
		}
		if err := msgpack.Unmarshal(unhex(t, tc.old), &old); err != nil {
			t.Fatal(err)
		}
		if v := v3["v"]; v != int8(1) && v != int8(2) {
			t.Errorf("%s: v = %#v, want 1 or 2", tc.name, v)
		}
		delete(v3, "sv")
		delete(v3, "c")
		for _, m := range v3["m"].([]any) {
			delete(m.(map[string]any), "pp")
		}
		if !reflect.DeepEqual(v3, old) {
			t.Errorf("%s: a version 3 record less its new keys\n%v\nwant %v", tc.name, v3, old)
		}
	}
	// The new decoder reads the older records as they were.
	for _, tc := range goldenPredictionsV3 {
		p, err := DecodePrediction(unhex(t, tc.old))
		if err != nil || p.Version == 3 || p.Class != "" {
			t.Errorf("%s: %+v, %v", tc.name, p, err)
		}
		for _, m := range p.Models {
			if m.HasProb {
				t.Errorf("%s: a probability in an older record: %+v", tc.name, m)
			}
		}
	}
}

func TestDecodePredictionV3Errors(t *testing.T) {
	good := om{"v", 1, "sv", 3, "t", "events", "p", 0, "o", 1}
	with := func(kv ...any) om { return append(append(om{}, good...), kv...) }
	cases := []struct {
		name  string
		in    []byte
		want  Reason
		field string
	}{
		{"sv 4", mp(t, om{"v", 1, "sv", 4}), ReasonUnknownVersion, "sv"},
		{"sv string", mp(t, om{"v", 1, "sv", "3"}), ReasonBadFieldType, "sv"},
		{"sv twice", mp(t, with("sv", 3)), ReasonDuplicateKey, "sv"},
		{"sv without v", mp(t, om{"sv", 3, "t", "events"}), ReasonMissingVersion, "v"},
		{"c int", mp(t, with("c", 1)), ReasonBadFieldType, "c"},
		{"pp above 1", mp(t, with("m", []any{om{"n", "a", "pp", 1.5}})), ReasonBadFieldType, "m[0].pp"},
		{"pp negative", mp(t, with("m", []any{om{"n", "a", "pp", -0.25}})), ReasonBadFieldType, "m[0].pp"},
		{"pp string", mp(t, with("m", []any{om{"pp", "0.5"}})), ReasonBadFieldType, "m[0].pp"},
		{"pp twice", mp(t, with("m", []any{om{"pp", 0.5, "pp", 0.5}})), ReasonDuplicateKey, "m[0].pp"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := DecodePrediction(tc.in)
			var e *Error
			if !errors.As(err, &e) || e.Reason != tc.want || e.Field != tc.field {
				t.Fatalf("got %v, want reason %s field %q", err, tc.want, tc.field)
			}
			if !reflect.DeepEqual(p, Prediction{}) {
				t.Errorf("prediction after error: %+v", p)
			}
		})
	}
	// pp of 0 and 1 (integers too) are probabilities; nil is absent.
	p, err := DecodePrediction(mp(t, with("m", []any{om{"pp", 0}, om{"pp", 1.0}, om{"pp", nil}})))
	if err != nil || p.Version != 3 || !p.Models[0].HasProb || p.Models[0].Prob != 0 || p.Models[1].Prob != 1 || p.Models[2].HasProb {
		t.Errorf("got %+v, %v", p, err)
	}
}
