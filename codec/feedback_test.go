package codec

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestReasonPrecedenceV2 checks where the feedback rules sit in the
// documented order, and that "ref" before "v" changes nothing.
func TestReasonPrecedenceV2(t *testing.T) {
	cases := []struct {
		name  string
		in    []byte
		want  Reason
		field string
	}{
		{"features before label", mp(t, om{"v", 2, "ref", "a", "xi", []int{0}}), ReasonFeedbackWithFeatures, "xi"},
		{"field error before feedback rules", mp(t, om{"v", 2, "ref", "a", "x", []float64{1}, "y", []any{"s"}}), ReasonBadFieldType, "y"},
		{"field error before missing label", mp(t, om{"v", 2, "ref", "a", "ts", 1.5}), ReasonBadFieldType, "ts"},
		{"bad ref before later field error", mp(t, om{"v", 2, "ref", 5, "x", "s"}), ReasonBadFieldType, "ref"},
		{"bad ref before v, before later field error", mp(t, om{"ref", 5, "x", "s", "v", 2}), ReasonBadFieldType, "ref"},
		{"earlier field error before bad ref", mp(t, om{"x", "s", "ref", 5, "v", 2}), ReasonBadFieldType, "x"},
		{"unknown version before bad ref", mp(t, om{"ref", 5, "v", 4}), ReasonUnknownVersion, "v"},
		{"truncation before bad ref", truncated(mp(t, om{"ref", 5, "v", 2, "id", "abc"})), ReasonNotMsgpack, "id"},
		{"duplicate v before feedback rules", mp(t, om{"v", 2, "ref", "a", "v", 2}), ReasonDuplicateKey, "v"},
		{"feedback rules replace feature rules", mp(t, om{"v", 2, "ref", "a", "x", []float64{1}, "xi", []int{0}, "y", 1}), ReasonFeedbackWithFeatures, "x"},
		{"v1: no feedback rules", mp(t, om{"v", 1, "ref", "a", "x", []float64{1}, "xi", []int{0}}), ReasonDenseAndSparse, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeEvent(tc.in, Limits{})
			var e *Error
			if !errors.As(err, &e) || e.Reason != tc.want || e.Field != tc.field {
				t.Errorf("got %v, want reason %s field %q", err, tc.want, tc.field)
			}
		})
	}
}

// TestV1IgnoresRef checks that in a version 1 record "ref" is an unknown key:
// any well-formed value, anywhere, any number of times, changes nothing.
func TestV1IgnoresRef(t *testing.T) {
	base := om{"v", 1, "id", "e", "x", []float64{1, 2}}
	want, err := DecodeEvent(mp(t, base), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	values := []any{"click-1", "", []byte{1, 2}, nil, 7, 1.5, []any{"a"}, om{"ref", "a"}, raw{0xd4, 1, 2}}
	for i, v := range values {
		for pos := 0; pos <= len(base); pos += 2 {
			m := append(om{}, base[:pos]...)
			m = append(m, "ref", v, "ref", "again")
			m = append(m, base[pos:]...)
			got, err := DecodeEvent(mp(t, m), Limits{Dim: 2})
			if err != nil {
				t.Fatalf("value %d at %d: %v", i, pos, err)
			}
			if !eventsEqual(&got, &want) || got.IsFeedback() {
				t.Fatalf("value %d at %d: got %+v want %+v", i, pos, got, want)
			}
		}
	}
	// Without features a version 1 record is not a feedback event but an
	// event with no features, whatever "ref" says.
	_, err = DecodeEvent(mp(t, om{"v", 1, "ref", "click-1", "y", 1}), Limits{})
	if ReasonOf(err) != ReasonMissingFeatures {
		t.Errorf("version 1 label-only event: got %v, want missing_features", err)
	}
}

// TestFeedbackDecode checks feedback events in detail: nil values, an empty
// ref, a bin ref, and that nothing leaks between events in a reused Event.
func TestFeedbackDecode(t *testing.T) {
	d := NewDecoder(Limits{Dim: 3})
	var ev Event
	cases := []struct {
		in   []byte
		want Event
	}{
		{mp(t, om{"v", 2, "ref", "a", "y", 1, "x", nil, "xi", nil, "xv", nil}), Event{Version: 2, Ref: "a", Y: 1, HasY: true}},
		{mp(t, om{"v", 2, "ref", []byte{0xff, 0}, "y", -1}), Event{Version: 2, Ref: "\xff\x00", Y: -1, HasY: true}},
		{mp(t, om{"y", 0.5, "ref", "a", "v", 2, "id", "f", "ts", 9}), Event{Version: 2, ID: "f", TS: 9, HasTS: true, Ref: "a", Y: 0.5, HasY: true}},
		{mp(t, om{"v", 2, "ref", "", "x", []float64{1, 2, 3}}), Event{Version: 2, X: []float64{1, 2, 3}}},
		{mp(t, om{"v", 2, "ref", nil, "xi", []int{2}, "xv", []float64{4}}), Event{Version: 2, XI: []uint32{2}, XV: []float64{4}}},
		{mp(t, om{"v", 2, "ref", "b", "y", 1}), Event{Version: 2, Ref: "b", Y: 1, HasY: true}},
		{mp(t, om{"v", 1, "ref", "b", "x", []float64{1, 2, 3}}), Event{Version: 1, X: []float64{1, 2, 3}}},
	}
	for i, tc := range cases {
		if err := d.DecodeEvent(tc.in, &ev); err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if !eventsEqual(&ev, &tc.want) {
			t.Fatalf("%d: got %+v\nwant %+v", i, ev, tc.want)
		}
		if ev.IsFeedback() != (tc.want.Ref != "") {
			t.Errorf("%d: IsFeedback() = %v", i, ev.IsFeedback())
		}
	}
}

// TestFeedbackReusesBuffers checks that a feedback event between two dense
// (or sparse) ones does not make the decoder drop the feature buffers.
func TestFeedbackReusesBuffers(t *testing.T) {
	d := NewDecoder(Limits{Dim: 4})
	denseB := mp(t, om{"v", 2, "x", []float64{1, 2, 3, 4}})
	sparseB := mp(t, om{"v", 2, "xi", []int{1, 3}, "xv", []float64{5, 6}})
	fbB := mp(t, om{"v", 2, "ref", "a", "y", 1})
	var ev Event
	if err := d.DecodeEvent(denseB, &ev); err != nil {
		t.Fatal(err)
	}
	x := &ev.X[0]
	if err := d.DecodeEvent(sparseB, &ev); err != nil {
		t.Fatal(err)
	}
	xi, xv := &ev.XI[0], &ev.XV[0]
	if err := d.DecodeEvent(fbB, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.X != nil || ev.XI != nil || ev.XV != nil {
		t.Fatalf("feedback event has features: %+v", ev)
	}
	if err := d.DecodeEvent(denseB, &ev); err != nil || &ev.X[0] != x {
		t.Errorf("dense buffer not reused across a feedback event (%v)", err)
	}
	if err := d.DecodeEvent(fbB, &ev); err != nil {
		t.Fatal(err)
	}
	if err := d.DecodeEvent(sparseB, &ev); err != nil || &ev.XI[0] != xi || &ev.XV[0] != xv {
		t.Errorf("sparse buffers not reused across a feedback event (%v)", err)
	}
}

func TestAppendEventValidationV2(t *testing.T) {
	cases := []struct {
		name  string
		ev    Event
		want  Reason
		field string
	}{
		{"v1 with ref", Event{Version: 1, Ref: "a", Y: 1, HasY: true}, ReasonBadFieldType, "ref"},
		{"v1 with ref and features", Event{Version: 1, Ref: "a", X: []float64{1}}, ReasonBadFieldType, "ref"},
		{"v0 with ref", Event{Ref: "a", Y: 1, HasY: true}, ReasonMissingVersion, "v"},
		{"v4 with ref", Event{Version: 4, Ref: "a", Y: 1, HasY: true}, ReasonUnknownVersion, "v"},
		{"feedback without label", Event{Version: 2, Ref: "a", Y: 1}, ReasonMissingLabel, "y"},
		{"feedback with x", Event{Version: 2, Ref: "a", X: []float64{1}, Y: 1, HasY: true}, ReasonFeedbackWithFeatures, "x"},
		{"feedback with empty x", Event{Version: 2, Ref: "a", X: []float64{}, Y: 1, HasY: true}, ReasonFeedbackWithFeatures, "x"},
		{"feedback with sparse", Event{Version: 2, Ref: "a", XI: []uint32{1}, XV: []float64{1}, Y: 1, HasY: true}, ReasonFeedbackWithFeatures, "xi"},
		{"feedback with xv", Event{Version: 2, Ref: "a", XV: []float64{1}, Y: 1, HasY: true}, ReasonFeedbackWithFeatures, "xv"},
		{"feedback with features, no label", Event{Version: 2, Ref: "a", X: []float64{1}}, ReasonFeedbackWithFeatures, "x"},
		{"feedback NaN label", Event{Version: 2, Ref: "a", Y: nan, HasY: true}, ReasonNonFinite, "y"},
		{"feedback Inf label", Event{Version: 2, Ref: "a", Y: -inf, HasY: true}, ReasonNonFinite, "y"},
		{"v2 no features", Event{Version: 2, Y: 1, HasY: true}, ReasonMissingFeatures, ""},
		{"v2 NaN x", Event{Version: 2, X: []float64{nan}}, ReasonNonFinite, "x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dst := []byte("keep")
			out, err := AppendEvent(dst, &tc.ev)
			var e *Error
			if !errors.As(err, &e) || e.Reason != tc.want || e.Field != tc.field {
				t.Fatalf("got %v, want reason %s field %q", err, tc.want, tc.field)
			}
			if string(out) != "keep" {
				t.Errorf("dst changed to %q", out)
			}
		})
	}
	_, err := AppendEvent(nil, &Event{Version: 1, Ref: "a", Y: 1, HasY: true})
	if err == nil || !strings.Contains(err.Error(), "set Version 2 for feedback events") {
		t.Errorf("v1 with Ref: message %q does not say what to do", err)
	}
	// A feedback event may have an id, a key and a ts; Version 1 and 2 are both written as set.
	for _, ev := range []Event{
		{Version: 2, ID: "f", Key: "k", TS: -5, HasTS: true, Ref: "a", Y: 0, HasY: true},
		{Version: 1, X: []float64{1}},
		{Version: 2, X: []float64{1}},
	} {
		b, err := AppendEvent(nil, &ev)
		if err != nil {
			t.Fatalf("%+v: %v", ev, err)
		}
		got, err := DecodeEvent(b, Limits{})
		if err != nil || !eventsEqual(&got, &ev) || b[3] != byte(ev.Version) {
			t.Errorf("%+v: got %+v, %v (%x)", ev, got, err, b)
		}
	}
}

func TestDenseFeedbackPanics(t *testing.T) {
	fb := Event{Version: 2, Ref: "click-1", Y: 1, HasY: true}
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "feedback event") || !strings.Contains(msg, "click-1") {
			t.Errorf("panic %q does not say it is a feedback event", msg)
		}
	}()
	fb.Dense(make([]float64, 4), 4)
	t.Error("no panic")
}

// TestRoundTripV2 encodes and decodes random events of both versions,
// feedback events among them, through one Decoder and one reused Event.
func TestRoundTripV2(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	d := NewDecoder(Limits{})
	var ev Event
	feedback := 0
	for i := 0; i < 3000; i++ {
		var want Event
		if rng.IntN(4) == 0 {
			want = randomEvent(rng, 1+rng.IntN(40))
		} else {
			want = randomEventV2(rng, 1+rng.IntN(40))
		}
		if want.IsFeedback() {
			feedback++
		}
		b, err := AppendEvent(nil, &want)
		if err != nil {
			t.Fatalf("%+v: %v", want, err)
		}
		if again, _ := AppendEvent(nil, &want); !bytes.Equal(b, again) {
			t.Fatal("AppendEvent is not deterministic")
		}
		if err := d.DecodeEvent(b, &ev); err != nil {
			t.Fatalf("%x: %v", b, err)
		}
		if !eventsEqual(&ev, &want) {
			t.Fatalf("round trip\n got %+v\nwant %+v", ev, want)
		}
		if b2, err := AppendEvent(nil, &ev); err != nil || !bytes.Equal(b2, b) {
			t.Fatalf("decode→encode changed the bytes: %v", err)
		}
	}
	if feedback < 500 {
		t.Errorf("only %d feedback events", feedback)
	}
}

func TestDecodeAllocsV2(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	d := NewDecoder(Limits{Dim: 20})
	dense := benchDenseEvent(20)
	dense.Version, dense.ID, dense.Key = 2, "", ""
	db, _ := AppendEvent(nil, &dense)
	fb := Event{Version: 2, TS: 1, HasTS: true, Ref: "click-000042", Y: 1, HasY: true}
	fbB, _ := AppendEvent(nil, &fb)
	// A version 1 record's ref is skipped, not read.
	v1B := mp(t, om{"v", 1, "ref", "click-000042", "x", make([]float64, 20)})
	var ev Event
	for _, b := range [][]byte{db, fbB, v1B} {
		if err := d.DecodeEvent(b, &ev); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		b    []byte
		want float64
	}{{"v2 dense", db, 0}, {"feedback", fbB, 1}, {"v1 with ref", v1B, 0}} {
		allocs := testing.AllocsPerRun(100, func() {
			if err := d.DecodeEvent(c.b, &ev); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != c.want {
			t.Errorf("%s: %v allocations per decode, want %v", c.name, allocs, c.want)
		}
	}
}

func TestPredictionV2RoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	outcomes := 0
	for i := 0; i < 2000; i++ {
		want := randomPrediction(rng)
		if want.HasRef {
			outcomes++
		}
		b := AppendPrediction(nil, &want)
		if wantV := byte(1 + b2i(want.HasRef)); b[1] != 0xa1 || b[2] != 'v' || b[3] != wantV {
			t.Fatalf("v is %x, want %d", b[3], wantV)
		}
		got, err := DecodePrediction(b)
		if err != nil {
			t.Fatalf("%x: %v", b, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip\n got %+v\nwant %+v", got, want)
		}
	}
	if outcomes < 400 {
		t.Errorf("only %d outcome records", outcomes)
	}
	// A version 2 record without "ro" is read as it is (AppendPrediction never writes one).
	p, err := DecodePrediction(mp(t, om{"v", 2, "t", "e", "r", "a"}))
	if want := (Prediction{Version: 2, Topic: "e", Ref: "a"}); err != nil || !reflect.DeepEqual(p, want) {
		t.Errorf("v2 without ro: got %+v, %v", p, err)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestDecodePredictionErrorsV2(t *testing.T) {
	cases := []struct {
		name  string
		in    []byte
		want  Reason
		field string
	}{
		{"r int", mp(t, om{"v", 2, "r", 1, "ro", 1}), ReasonBadFieldType, "r"},
		{"ro float", mp(t, om{"v", 2, "r", "a", "ro", 1.0}), ReasonBadFieldType, "ro"},
		{"ro string", mp(t, om{"v", 2, "ro", "1"}), ReasonBadFieldType, "ro"},
		{"ro uint64 max", mp(t, om{"v", 2, "ro", uint64(math.MaxUint64)}), ReasonBadFieldType, "ro"},
		{"ro twice", mp(t, om{"v", 2, "ro", 1, "ro", 1}), ReasonDuplicateKey, "ro"},
		{"r twice", mp(t, om{"v", 2, "r", nil, "r", "a"}), ReasonDuplicateKey, "r"},
		{"r int before v", mp(t, om{"r", 1, "v", 2}), ReasonBadFieldType, "r"},
		{"ro before v, first problem in byte order", mp(t, om{"ro", "x", "t", 1, "v", 2}), ReasonBadFieldType, "ro"},
		{"ro before v 3", mp(t, om{"ro", "x", "v", 3}), ReasonUnknownVersion, "v"},
		{"ro before missing v", mp(t, om{"ro", 1, "t", "e"}), ReasonMissingVersion, "v"},
		{"ro truncated", truncated(mp(t, om{"v", 2, "ro", 1000})), ReasonNotMsgpack, "ro"},
		{"v1 r malformed", mp(t, om{"v", 1, "r", raw{0x91, 0xc1}}), ReasonNotMsgpack, "r"},
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
}

// TestHostileRefKeys checks that many "r" keys before "v" do not make
// DecodePrediction look for the version once per key.
func TestHostileRefKeys(t *testing.T) {
	var m om
	for i := 0; i < 50000; i++ {
		m = append(m, "r", nil)
	}
	b := mp(t, m)
	start := time.Now()
	_, err := DecodePrediction(b)
	if ReasonOf(err) != ReasonMissingVersion {
		t.Errorf("got %v", err)
	}
	if d := time.Since(start); d > 2*time.Second { // about 1 ms; 50000 scans of the record take minutes
		t.Errorf("took %v", d)
	}
}
