package codec

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// Labels other than numbers: a bool or a string in "y" (package label maps
// them to what a model learns from). The golden bytes are msgpack's by hand
// (the spec's fixmap, fixstr, float64, true/false codes):
//
//	{"v": 1, "x": [1.0], "y": Y}
func TestLabelKinds(t *testing.T) {
	const head = "83a17601a17891cb3ff0000000000000a179"
	cases := []struct {
		name, y string // y: the hex of the "y" value
		want    Event
	}{
		{"true", "c3", Event{Y: 1, HasY: true, YKind: LabelBool}},
		{"false", "c2", Event{Y: 0, HasY: true, YKind: LabelBool}},
		{"string", "a3796573", Event{HasY: true, YKind: LabelString, YStr: "yes"}},
		{"empty string", "a0", Event{HasY: true, YKind: LabelString, YStr: ""}},
		{"bin", "c402ff00", Event{HasY: true, YKind: LabelString, YStr: "\xff\x00"}},
		{"float", "cb3ff0000000000000", Event{Y: 1, HasY: true}},
		{"int 0", "00", Event{Y: 0, HasY: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := hex.DecodeString(head + c.y)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := DecodeEvent(b, Limits{})
			if err != nil {
				t.Fatalf("DecodeEvent: %v", err)
			}
			want := c.want
			want.Version, want.X = 1, []float64{1}
			if ev.Y != want.Y || ev.HasY != want.HasY || ev.YKind != want.YKind || ev.YStr != want.YStr {
				t.Fatalf("decoded y = (%v, %v, %v, %q), want (%v, %v, %v, %q)", ev.Y, ev.HasY, ev.YKind, ev.YStr, want.Y, want.HasY, want.YKind, want.YStr)
			}
			out, err := AppendEvent(nil, &want)
			if err != nil {
				t.Fatalf("AppendEvent: %v", err)
			}
			canon := b
			if c.name == "int 0" { // numbers are written as float64
				canon, _ = hex.DecodeString(head + "cb0000000000000000")
			}
			if !bytes.Equal(out, canon) {
				t.Fatalf("AppendEvent = %x, want %x", out, canon)
			}
		})
	}
}

// A decoder reused across label kinds leaves no kind or string behind.
func TestLabelKindReuse(t *testing.T) {
	d := NewDecoder(Limits{})
	var ev Event
	for _, c := range []struct {
		y    any
		kind LabelKind
	}{{"a", LabelString}, {true, LabelBool}, {1.5, LabelNumber}, {nil, LabelNumber}} {
		if err := d.DecodeEvent(mp(t, om{"v", 1, "x", []float64{1}, "y", c.y}), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.YKind != c.kind || (c.kind != LabelString && ev.YStr != "") || ev.HasY != (c.y != nil) {
			t.Fatalf("y %v: kind %v, str %q, hasY %v", c.y, ev.YKind, ev.YStr, ev.HasY)
		}
	}
}

func TestAppendEventBadLabelKind(t *testing.T) {
	for _, ev := range []Event{
		{Version: 1, X: []float64{1}, HasY: true, YKind: 7},
		{Version: 1, X: []float64{1}, HasY: true, YKind: LabelBool, Y: 0.5},
		{Version: 2, Ref: "a", HasY: true, YKind: LabelBool, Y: -1},
	} {
		if _, err := AppendEvent(nil, &ev); ReasonOf(err) != ReasonBadFieldType {
			t.Errorf("AppendEvent(%+v) = %v, want bad_field_type", ev, err)
		}
	}
}

// A binary stream's string labels are not allocated for every event, and
// the strings decoded stay right when the classes alternate.
func TestStringLabelsReused(t *testing.T) {
	d := NewDecoder(Limits{})
	recs := [][]byte{
		mp(t, om{"v", 1, "x", []float64{1}, "y", "yes"}),
		mp(t, om{"v", 1, "x", []float64{1}, "y", "no"}),
		mp(t, om{"v", 1, "x", []float64{1}, "y", "no"}),
		mp(t, om{"v", 1, "x", []float64{1}, "y", 2.5}),
	}
	want := []string{"yes", "no", "no", ""}
	var ev Event
	for k := 0; k < 3; k++ {
		for i, b := range recs {
			if err := d.DecodeEvent(b, &ev); err != nil || ev.YStr != want[i] {
				t.Fatalf("record %d: %q, %v", i, ev.YStr, err)
			}
		}
	}
	num := testing.AllocsPerRun(100, func() { _ = d.DecodeEvent(recs[3], &ev) })
	str := testing.AllocsPerRun(100, func() { _ = d.DecodeEvent(recs[0], &ev); _ = d.DecodeEvent(recs[1], &ev) })
	if str > 2*num {
		t.Fatalf("%v allocations for two string-labelled events, %v for a numbered one", str, num)
	}
	if d.DecodeEvent(mp(t, om{"v", 1, "x", []float64{1}, "y", "maybe"}), &ev); ev.YStr != "maybe" {
		t.Fatalf("a third string decoded as %q", ev.YStr)
	}
}
