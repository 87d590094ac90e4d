package codec

import (
	"bytes"
	"testing"
)

// Golden records of schema version 3 (named features), made by Python's
// msgpack 1.2.4 and json with testdata/golden_named.py (its output is in
// testdata/golden_named.txt): packb(obj, use_bin_type=True) and json.dumps(obj)
// of the dicts that script lists. CI does not run Python.
const (
	// {"v": 3, "id": "evt-7", "key": "user-7", "f": {"amount": 12.5, "country": "FR", "device": "ios",
	//  "age": None, "is_new": True, "n_items": 3, "score": math.nan}, "y": 1}
	goldV3NamedPython     = "85a17603a26964a56576742d37a36b6579a6757365722d37a16687a6616d6f756e74cb4029000000000000a7636f756e747279a24652a6646576696365a3696f73a3616765c0a669735f6e6577c3a76e5f6974656d7303a573636f7265cb7ff8000000000000a17901"
	goldV3NamedPythonJSON = `{"v": 3, "id": "evt-7", "key": "user-7", "f": {"amount": 12.5, "country": "FR", "device": "ios", "age": null, "is_new": true, "n_items": 3, "score": NaN}, "y": 1}`
	// The same event as AppendEvent writes it: n_items as 3.0, score as None, y as 1.0.
	goldV3NamedCanonical     = "85a17603a26964a56576742d37a36b6579a6757365722d37a16687a6616d6f756e74cb4029000000000000a7636f756e747279a24652a6646576696365a3696f73a3616765c0a669735f6e6577c3a76e5f6974656d73cb4008000000000000a573636f7265c0a179cb3ff0000000000000"
	goldV3NamedCanonicalJSON = `{"v": 3, "id": "evt-7", "key": "user-7", "f": {"amount": 12.5, "country": "FR", "device": "ios", "age": null, "is_new": true, "n_items": 3.0, "score": null}, "y": 1.0}`
	// {"v": 3, "ts": 1700000000123, "f": {}, "y": "click"}
	goldV3Empty     = "84a17603a27473cf0000018bcfe5687ba16680a179a5636c69636b"
	goldV3EmptyJSON = `{"v": 3, "ts": 1700000000123, "f": {}, "y": "click"}`
	// {"v": 3, "key": "u-1", "ref": "imp-1", "y": True}
	goldV3Feedback     = "84a17603a36b6579a3752d31a3726566a5696d702d31a179c3"
	goldV3FeedbackJSON = `{"v": 3, "key": "u-1", "ref": "imp-1", "y": true}`
	// packb({"v": 3, "f": {b"bin_name": -5, "f32": 0.5, "big": 2**40, "café": "üß"}}, use_bin_type=True, use_single_float=True)
	goldV3BinF32     = "82a17603a16684c40862696e5f6e616d65fba3663332ca3f000000a3626967cf0000010000000000a5636166c3a9a4c3bcc39f"
	goldV3BinF32JSON = `{"v": 3, "f": {"bin_name": -5, "f32": 0.5, "big": 1099511627776, "caf\u00e9": "\u00fc\u00df"}}`
)

var goldenEventsNamed = []struct {
	name      string
	hex, json string
	canonical bool // AppendEvent writes exactly these bytes
	ev        Event
}{
	{"named_python", goldV3NamedPython, goldV3NamedPythonJSON, false, namedPythonEvent},
	{"named_canonical", goldV3NamedCanonical, goldV3NamedCanonicalJSON, true, namedPythonEvent},
	{"named_empty", goldV3Empty, goldV3EmptyJSON, true, Event{Version: 3, TS: 1700000000123, HasTS: true, F: []Field{},
		HasY: true, YKind: LabelString, YStr: "click"}},
	{"feedback_v3", goldV3Feedback, goldV3FeedbackJSON, true, Event{Version: 3, Key: "u-1", Ref: "imp-1", Y: 1, HasY: true, YKind: LabelBool}},
	{"named_bin_f32", goldV3BinF32, goldV3BinF32JSON, false, Event{Version: 3, F: []Field{
		{Name: "bin_name", Num: -5}, {Name: "f32", Num: 0.5}, {Name: "big", Num: 1 << 40},
		{Name: "caf\u00e9", Kind: FieldString, Str: "\u00fc\u00df"}}}},
}

// TestGoldenNamed decodes Python's bytes and Python's JSON of the same dict to
// the expected Event, and checks AppendEvent against the canonical bytes.
func TestGoldenNamed(t *testing.T) {
	d := NewDecoder(Limits{})
	for _, tc := range goldenEventsNamed {
		t.Run(tc.name, func(t *testing.T) {
			b := unhex(t, tc.hex)
			var ev, evj Event
			if err := d.DecodeEvent(b, &ev); err != nil {
				t.Fatal(err)
			}
			if !eventsEqualF(&ev, &tc.ev) {
				t.Errorf("DecodeEvent\n got %+v\nwant %+v", ev, tc.ev)
			}
			if err := d.DecodeEventJSON([]byte(tc.json), &evj); err != nil {
				t.Fatal(err)
			}
			if !eventsEqualF(&evj, &tc.ev) {
				t.Errorf("DecodeEventJSON\n got %+v\nwant %+v", evj, tc.ev)
			}
			if tc.canonical {
				got, err := AppendEvent(nil, &tc.ev)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, b) {
					t.Errorf("AppendEvent\n got %x\nwant %x", got, b)
				}
			}
		})
	}
}

// TestGoldenNamedOldDecoders: what a decoder of versions 1 and 2 does with a
// version 3 record. This codec before version 3 checked "v" against 1 and 2
// (knownVersion), so every version 3 record was unknown_version there; the
// features are never silently dropped. The same bytes with "v" patched to 2
// show what a version 2 decoder would do if a producer sent "f" under "v": 2:
// "f" is an unknown key, skipped, and the record has no features.
func TestGoldenNamedOldDecoders(t *testing.T) {
	b := unhex(t, goldV3NamedCanonical)
	if b[3] != 3 {
		t.Fatalf("byte 3 is %d, want the version", b[3])
	}
	b[3] = 2
	_, err := DecodeEvent(b, Limits{})
	if ReasonOf(err) != ReasonMissingFeatures {
		t.Errorf("v 2 with f: %v", err)
	}
	b[3] = 4
	if _, err := DecodeEvent(b, Limits{}); ReasonOf(err) != ReasonUnknownVersion {
		t.Errorf("v 4: %v", err)
	}
}
