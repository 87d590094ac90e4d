package codec

import (
	"bytes"
	"encoding/hex"
	"math"
	"reflect"
	"testing"
)

// The golden bytes below are the wire format: a change here breaks producers
// and consumers in other languages. They were produced once, independently of
// this package, with Python's msgpack 1.2.4:
//
//	msgpack.packb(obj, use_bin_type=True)   # obj a dict in the key order shown
//
// with every feature value and y written as a Python float (so packed as
// float64), except for pyInts (Python ints and bytes, as a Python producer
// might send) and pyFloat32 (packb(..., use_single_float=True)). CI does not
// run Python.
const (
	// {"v": 1, "x": [0.5, -1.25, 3.0]}
	goldDenseMin = "82a17601a17893cb3fe0000000000000cbbff4000000000000cb4008000000000000"
	// {"v": 1, "id": "evt-42", "ts": 1700000000123, "key": "user-7", "x": [1.0, 0.0, -2.5, 1e-300], "y": -1.0}
	goldDenseFull = "86a17601a26964a66576742d3432a27473cf0000018bcfe5687ba36b6579a6757365722d37a17894cb3ff0000000000000cb0000000000000000cbc004000000000000cb01a56e1fc2f8f359a179cbbff0000000000000"
	// {"v": 1, "id": "order-2024-06-01T12:00:00Z-000042-abc", "xi": [0, 7, 300, 70000], "xv": [0.25, 1.0, -3.5, 2.0], "y": 0.75}
	goldSparse = "85a17601a26964d9256f726465722d323032342d30362d30315431323a30303a30305a2d3030303034322d616263a27869940007cd012cce00011170a2787694cb3fd0000000000000cb3ff0000000000000cbc00c000000000000cb4000000000000000a179cb3fe8000000000000"
	// {"v": 1, "ts": 5, "key": b"\x01\x02k", "x": [1, 2, 3, -1, 200, -200, 70000], "y": 1}   (Python ints, key as bytes)
	goldPyInts = "85a17601a2747305a36b6579c40301026ba17897010203ffccc8d1ff38ce00011170a17901"
	// {"v": 1, "ts": 5, "key": "\x01\x02k", "x": [1.0, 2.0, 3.0, -1.0, 200.0, -200.0, 70000.0], "y": 1.0}
	goldPyIntsCanonical = "85a17601a2747305a36b6579a301026ba17897cb3ff0000000000000cb4000000000000000cb4008000000000000cbbff0000000000000cb4069000000000000cbc069000000000000cb40f1170000000000a179cb3ff0000000000000"
	// packb({"v": 1, "xi": [1, 2], "xv": [0.5, 1.5], "y": -1}, use_bin_type=True, use_single_float=True)
	goldPyFloat32 = "84a17601a27869920102a2787692ca3f000000ca3fc00000a179ff"

	// {"v": 1, "id": "events/0/42", "key": "user-7", "t": "events", "p": 0, "o": 42, "ts": 1700000000123, "y": 1.0,
	//  "m": [{"n": "fogd", "s": 0.731, "d": 1, "u": 41}, {"n": "ridge", "s": -0.2, "u": 41},
	//        {"n": "forks", "s": 0.0, "d": 0, "u": 0}, {"n": "nogd", "s": -3.0, "d": -1, "u": 300}]}
	goldPredFull = "89a17601a26964ab6576656e74732f302f3432a36b6579a6757365722d37a174a66576656e7473a17000a16f2aa27473cf0000018bcfe5687ba179cb3ff0000000000000a16d9484a16ea4666f6764a173cb3fe7645a1cac0831a16401a1752983a16ea57269646765a173cbbfc999999999999aa1752984a16ea5666f726b73a173cb0000000000000000a16400a1750084a16ea46e6f6764a173cbc008000000000000a164ffa175cd012c"
	// {"v": 1, "t": "events", "p": 3, "o": 9000000000, "m": []}
	goldPredMin = "85a17601a174a66576656e7473a17003a16fcf0000000218711a00a16d90"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var goldenEvents = []struct {
	name string
	hex  string
	ev   Event
}{
	{"dense_min", goldDenseMin, Event{Version: 1, X: []float64{0.5, -1.25, 3}}},
	{"dense_full", goldDenseFull, Event{Version: 1, ID: "evt-42", TS: 1700000000123, HasTS: true, Key: "user-7",
		X: []float64{1, 0, -2.5, 1e-300}, Y: -1, HasY: true}},
	{"sparse", goldSparse, Event{Version: 1, ID: "order-2024-06-01T12:00:00Z-000042-abc",
		XI: []uint32{0, 7, 300, 70000}, XV: []float64{0.25, 1, -3.5, 2}, Y: 0.75, HasY: true}},
	{"python_ints_canonical", goldPyIntsCanonical, Event{Version: 1, TS: 5, HasTS: true, Key: "\x01\x02k",
		X: []float64{1, 2, 3, -1, 200, -200, 70000}, Y: 1, HasY: true}},
}

// TestGoldenEventEncode checks that AppendEvent writes exactly the bytes
// Python's msgpack writes for the same map.
func TestGoldenEventEncode(t *testing.T) {
	for _, tc := range goldenEvents {
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

// TestGoldenEventDecode checks decode of the golden bytes, and that decoding
// then encoding canonical bytes gives them back.
func TestGoldenEventDecode(t *testing.T) {
	for _, tc := range goldenEvents {
		t.Run(tc.name, func(t *testing.T) {
			b := unhex(t, tc.hex)
			ev, err := DecodeEvent(b, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ev, tc.ev) {
				t.Errorf("DecodeEvent\n got %+v\nwant %+v", ev, tc.ev)
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

// TestPythonStyleInput decodes what a Python producer typically sends: int
// features, an int label, a bytes key, float32 values.
func TestPythonStyleInput(t *testing.T) {
	ev, err := DecodeEvent(unhex(t, goldPyInts), Limits{Dim: 7})
	if err != nil {
		t.Fatal(err)
	}
	want := Event{Version: 1, TS: 5, HasTS: true, Key: "\x01\x02k",
		X: []float64{1, 2, 3, -1, 200, -200, 70000}, Y: 1, HasY: true}
	if !reflect.DeepEqual(ev, want) {
		t.Fatalf("got %+v\nwant %+v", ev, want)
	}
	// Re-encoding gives the canonical form: floats as float64, key as str.
	b, err := AppendEvent(nil, &ev)
	if err != nil {
		t.Fatal(err)
	}
	if want := unhex(t, goldPyIntsCanonical); !bytes.Equal(b, want) {
		t.Errorf("re-encoded\n got %x\nwant %x", b, want)
	}

	ev, err = DecodeEvent(unhex(t, goldPyFloat32), Limits{Dim: 3})
	if err != nil {
		t.Fatal(err)
	}
	want = Event{Version: 1, XI: []uint32{1, 2}, XV: []float64{0.5, 1.5}, Y: -1, HasY: true}
	if !reflect.DeepEqual(ev, want) {
		t.Fatalf("float32: got %+v\nwant %+v", ev, want)
	}
}

var goldenPredictions = []struct {
	name string
	hex  string
	p    Prediction
}{
	{"full", goldPredFull, Prediction{Version: 1, ID: "events/0/42", Key: "user-7", Topic: "events", Partition: 0, Offset: 42,
		TS: 1700000000123, HasTS: true, Y: 1, HasY: true, Models: []ModelScore{
			{Name: "fogd", Score: 0.731, Classify: true, Decision: 1, Updates: 41},
			{Name: "ridge", Score: -0.2, Updates: 41},
			{Name: "forks", Score: 0, Classify: true, Decision: 0, Updates: 0},
			{Name: "nogd", Score: -3, Classify: true, Decision: -1, Updates: 300},
		}}},
	{"min", goldPredMin, Prediction{Version: 1, Topic: "events", Partition: 3, Offset: 9000000000}},
}

func TestGoldenPrediction(t *testing.T) {
	for _, tc := range goldenPredictions {
		t.Run(tc.name, func(t *testing.T) {
			want := unhex(t, tc.hex)
			got := AppendPrediction(nil, &tc.p)
			if !bytes.Equal(got, want) {
				t.Errorf("AppendPrediction\n got %x\nwant %x", got, want)
			}
			p, err := DecodePrediction(want)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p, tc.p) {
				t.Errorf("DecodePrediction\n got %+v\nwant %+v", p, tc.p)
			}
		})
	}
}

// TestGoldenGoOnly pins encodings the cases above do not cover: non-UTF-8
// strings (written as bin), negative and extreme integers, -0 and +Inf.
func TestGoldenGoOnly(t *testing.T) {
	ev := Event{Version: 1, ID: "\xff", TS: -1, HasTS: true, Key: "k\x80", XI: []uint32{math.MaxUint32}, XV: []float64{math.Copysign(0, -1)}}
	got, err := AppendEvent(nil, &ev)
	if err != nil {
		t.Fatal(err)
	}
	// map(6) v=1 id=bin[ff] ts=-1 key=bin[6b80] xi=[uint32 max] xv=[-0.0]; also what
	// packb({"v": 1, "id": b"\xff", "ts": -1, "key": b"k\x80", "xi": [2**32-1], "xv": [-0.0]}, use_bin_type=True) gives.
	want := "86a17601a26964c401ffa27473ffa36b6579c4026b80a2786991ceffffffffa2787691cb8000000000000000"
	if hex.EncodeToString(got) != want {
		t.Errorf("got  %x\nwant %s", got, want)
	}
	back, err := DecodeEvent(got, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, ev) || !math.Signbit(back.XV[0]) {
		t.Errorf("round trip: got %+v want %+v", back, ev)
	}

	p := Prediction{Topic: "t", Partition: -1, Offset: -200, Models: []ModelScore{{Name: "m", Score: math.Inf(1), Updates: math.MaxUint64}}}
	// map(5) v=1 t="t" p=-1 o=int16(-200) m=[{n:"m", s:+Inf, u:uint64 max}]; Python's packb gives the same.
	wantP := "85a17601a174a174a170ffa16fd1ff38a16d9183a16ea16da173cb7ff0000000000000a175cfffffffffffffffff"
	if got := hex.EncodeToString(AppendPrediction(nil, &p)); got != wantP {
		t.Errorf("prediction\n got %s\nwant %s", got, wantP)
	}
}
