package codec

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"testing"
)

// Golden bytes of schema version 2. Like those in golden_test.go they were
// produced once, independently of this package, with Python's msgpack 1.2.4:
//
//	msgpack.packb(obj, use_bin_type=True)   # obj the dict shown, keys in the order shown
//
// with feature values and y written as Python floats (packed as float64)
// except in goldV2PyFeedback, which is what a Python producer might send: a
// bytes ref, an int label and "v" last.
const (
	// {"v": 2, "id": "click-000042", "ts": 1700000000123, "key": "user-7", "x": [0.5, 1.0, 0.0, -2.25]}
	goldV2Impression = "85a17602a26964ac636c69636b2d303030303432a27473cf0000018bcfe5687ba36b6579a6757365722d37a17894cb3fe0000000000000cb3ff0000000000000cb0000000000000000cbc002000000000000"
	// {"v": 2, "id": "fb-000042", "ts": 1700000060000, "key": "user-7", "ref": "click-000042", "y": 1.0}
	goldV2Feedback = "86a17602a26964a966622d303030303432a27473cf0000018bcfe65260a36b6579a6757365722d37a3726566ac636c69636b2d303030303432a179cb3ff0000000000000"
	// {"v": 2, "ref": "click-000042", "y": -1.0}
	goldV2FeedbackMin = "83a17602a3726566ac636c69636b2d303030303432a179cbbff0000000000000"
	// {"v": 2, "id": "order-7", "xi": [0, 7, 300], "xv": [0.25, 1.0, -3.5], "y": 0.5}
	goldV2Sparse = "85a17602a26964a76f726465722d37a27869930007cd012ca2787693cb3fd0000000000000cb3ff0000000000000cbc00c000000000000a179cb3fe0000000000000"
	// {"ref": b"click-000042", "y": 1, "key": "user-7", "v": 2}
	goldV2PyFeedback = "84a3726566c40c636c69636b2d303030303432a17901a36b6579a6757365722d37a17602"
	// {"v": 1, "ref": "click-000042", "x": [1.0], "y": 1.0}   (ref is an unknown key in version 1)
	goldV1WithRef = "84a17601a3726566ac636c69636b2d303030303432a17891cb3ff0000000000000a179cb3ff0000000000000"

	// {"v": 2, "id": "click-000042", "key": "user-7", "t": "events", "p": 3, "o": 1043, "ts": 1700000060000, "y": 1.0,
	//  "r": "click-000042", "ro": 1000, "m": [{"n": "fogd", "s": 0.731, "d": 1, "u": 41}, {"n": "ridge", "s": -0.2, "u": 41}]}
	goldPredOutcome = "8ba17602a26964ac636c69636b2d303030303432a36b6579a6757365722d37a174a66576656e7473a17003a16fcd0413a27473cf0000018bcfe65260a179cb3ff0000000000000a172ac636c69636b2d303030303432a2726fcd03e8a16d9284a16ea4666f6764a173cb3fe7645a1cac0831a16401a1752983a16ea57269646765a173cbbfc999999999999aa17529"
	// {"v": 2, "t": "events", "p": 0, "o": 7, "ro": 5, "m": []}
	goldPredOutcomeMin = "86a17602a174a66576656e7473a17000a16f07a2726f05a16d90"
)

// goldenEventsV2 are canonical: AppendEvent writes exactly these bytes.
var goldenEventsV2 = []struct {
	name string
	hex  string
	ev   Event
}{
	{"impression", goldV2Impression, Event{Version: 2, ID: "click-000042", TS: 1700000000123, HasTS: true, Key: "user-7",
		X: []float64{0.5, 1, 0, -2.25}}},
	{"feedback", goldV2Feedback, Event{Version: 2, ID: "fb-000042", TS: 1700000060000, HasTS: true, Key: "user-7",
		Ref: "click-000042", Y: 1, HasY: true}},
	{"feedback_min", goldV2FeedbackMin, Event{Version: 2, Ref: "click-000042", Y: -1, HasY: true}},
	{"sparse", goldV2Sparse, Event{Version: 2, ID: "order-7", XI: []uint32{0, 7, 300}, XV: []float64{0.25, 1, -3.5}, Y: 0.5, HasY: true}},
}

func TestGoldenEventV2Encode(t *testing.T) {
	for _, tc := range goldenEventsV2 {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AppendEvent(nil, &tc.ev)
			if err != nil {
				t.Fatal(err)
			}
			if want := unhex(t, tc.hex); !bytes.Equal(got, want) {
				t.Errorf("AppendEvent\n got %x\nwant %x", got, want)
			}
		})
	}
}

func TestGoldenEventV2Decode(t *testing.T) {
	for _, tc := range goldenEventsV2 {
		t.Run(tc.name, func(t *testing.T) {
			b := unhex(t, tc.hex)
			ev, err := DecodeEvent(b, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ev, tc.ev) {
				t.Errorf("DecodeEvent\n got %+v\nwant %+v", ev, tc.ev)
			}
			if ev.IsFeedback() != (tc.ev.Ref != "") {
				t.Errorf("IsFeedback() = %v", ev.IsFeedback())
			}
			again, err := AppendEvent(nil, &ev)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, b) {
				t.Errorf("decode→encode\n got %x\nwant %x", again, b)
			}
		})
	}
}

// TestGoldenV2PythonStyle decodes what a Python producer of feedback might
// send, with "ref" before "v", and a version 1 record with a "ref" key.
func TestGoldenV2PythonStyle(t *testing.T) {
	ev, err := DecodeEvent(unhex(t, goldV2PyFeedback), Limits{Dim: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := Event{Version: 2, Key: "user-7", Ref: "click-000042", Y: 1, HasY: true}
	if !reflect.DeepEqual(ev, want) || !ev.IsFeedback() {
		t.Fatalf("got %+v\nwant %+v", ev, want)
	}
	b, err := AppendEvent(nil, &ev)
	if err != nil {
		t.Fatal(err)
	}
	// Canonical: v first, ref as str, y as float64.
	if got, want := hex.EncodeToString(b), "84a17602a36b6579a6757365722d37a3726566ac636c69636b2d303030303432a179cb3ff0000000000000"; got != want {
		t.Errorf("re-encoded\n got %s\nwant %s", got, want)
	}

	ev, err = DecodeEvent(unhex(t, goldV1WithRef), Limits{Dim: 1})
	if err != nil {
		t.Fatal(err)
	}
	want = Event{Version: 1, X: []float64{1}, Y: 1, HasY: true}
	if !reflect.DeepEqual(ev, want) || ev.IsFeedback() {
		t.Fatalf("version 1 with ref: got %+v\nwant %+v", ev, want)
	}
}

// TestGoldenEventV2MatchesV1 checks that an event without Ref is written the
// same in both versions except for the "v" byte, which is the third.
func TestGoldenEventV2MatchesV1(t *testing.T) {
	for _, tc := range goldenEvents {
		ev := tc.ev
		ev.Version = 2
		b, err := AppendEvent(nil, &ev)
		if err != nil {
			t.Fatal(err)
		}
		want := unhex(t, tc.hex)
		want[3] = 0x02
		if !bytes.Equal(b, want) {
			t.Errorf("%s: version 2\n got %x\nwant %x", tc.name, b, want)
		}
	}
}

var goldenPredictionsV2 = []struct {
	name string
	hex  string
	p    Prediction
}{
	{"outcome", goldPredOutcome, Prediction{Version: 2, ID: "click-000042", Key: "user-7", Topic: "events", Partition: 3, Offset: 1043,
		TS: 1700000060000, HasTS: true, Y: 1, HasY: true, Ref: "click-000042", RefOffset: 1000, HasRef: true, Models: []ModelScore{
			{Name: "fogd", Score: 0.731, Classify: true, Decision: 1, Updates: 41},
			{Name: "ridge", Score: -0.2, Updates: 41},
		}}},
	{"outcome_min", goldPredOutcomeMin, Prediction{Version: 2, Topic: "events", Partition: 0, Offset: 7, RefOffset: 5, HasRef: true}},
}

func TestGoldenPredictionV2(t *testing.T) {
	for _, tc := range goldenPredictionsV2 {
		t.Run(tc.name, func(t *testing.T) {
			want := unhex(t, tc.hex)
			p := tc.p
			p.Version = 0 // not read
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

// TestGoldenPredictionV1Unchanged checks that the new fields change nothing
// in a record without HasRef: the version 1 golden bytes come out, whatever
// Ref and RefOffset hold.
func TestGoldenPredictionV1Unchanged(t *testing.T) {
	for _, tc := range goldenPredictions {
		p := tc.p
		p.Version = 2
		p.Ref, p.RefOffset = "click-000042", 99
		if got := AppendPrediction(nil, &p); !bytes.Equal(got, unhex(t, tc.hex)) {
			t.Errorf("%s: got %x\nwant %s", tc.name, got, tc.hex)
		}
	}
	// A version 1 record's "r" and "ro" are unknown keys.
	for _, m := range []om{
		{"v", 1, "t", "events", "p", 0, "o", 7, "r", "click-1", "ro", 5, "m", []any{}},
		{"r", 5, "ro", "x", "v", 1, "t", "events", "p", 0, "o", 7, "r", nil},
	} {
		p, err := DecodePrediction(mp(t, m))
		want := Prediction{Version: 1, Topic: "events", Offset: 7}
		if err != nil || !reflect.DeepEqual(p, want) {
			t.Errorf("%v: got %+v, %v", m, p, err)
		}
	}
}
