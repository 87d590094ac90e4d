package codec

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// eventsEqualF is eventsEqual plus the label's kind and the named features:
// nil and empty F differ, numbers compare by their bits.
func eventsEqualF(a, b *Event) bool {
	if !eventsEqual(a, b) || a.YKind != b.YKind || a.YStr != b.YStr || (a.F == nil) != (b.F == nil) || len(a.F) != len(b.F) {
		return false
	}
	for i := range a.F {
		x, y := &a.F[i], &b.F[i]
		if x.Name != y.Name || x.Kind != y.Kind || math.Float64bits(x.Num) != math.Float64bits(y.Num) || x.Str != y.Str {
			return false
		}
	}
	return true
}

// namedReasonCases are reasonCases for schema version 3 and the JSON hint.
func namedReasonCases(t testing.TB) []reasonCase {
	long := strings.Repeat("n", DefaultMaxNameBytes+1)
	return []reasonCase{
		{"v2 f is an unknown key", Limits{}, mp(t, om{"v", 2, "f", om{"a", 1}}), ReasonMissingFeatures, ""},
		{"f before v 1", Limits{}, mp(t, om{"f", om{"a", 1}, "v", 1}), ReasonMissingFeatures, ""},
		{"f before v 4", Limits{}, mp(t, om{"f", om{"a", 1}, "v", 4}), ReasonUnknownVersion, "v"},
		{"f nil", Limits{}, mp(t, om{"v", 3, "f", nil}), ReasonMissingFeatures, ""},
		{"f an array", Limits{}, mp(t, om{"v", 3, "f", []any{1}}), ReasonBadFieldType, "f"},
		{"f value an array", Limits{}, mp(t, om{"v", 3, "f", om{"a", []any{1}}}), ReasonBadFieldType, "f"},
		{"f value a map", Limits{}, mp(t, om{"v", 3, "f", om{"a", om{}}}), ReasonBadFieldType, "f"},
		{"f value an extension", Limits{}, mp(t, om{"v", 3, "f", om{"a", raw{0xd4, 1, 1}}}), ReasonBadFieldType, "f"},
		{"f key an integer", Limits{}, mp(t, om{"v", 3, "f", om{1, 1.0}}), ReasonBadFieldType, "f"},
		{"f name twice", Limits{}, mp(t, om{"v", 3, "f", om{"a", 1, "b", 2, "a", 3}}), ReasonDuplicateKey, "f"},
		{"f name twice, str and bin", Limits{}, mp(t, om{"v", 3, "f", om{"a", 1, []byte("a"), 3}}), ReasonDuplicateKey, "f"},
		{"f twice", Limits{}, mp(t, om{"v", 3, "f", om{"a", 1}, "f", om{}}), ReasonDuplicateKey, "f"},
		{"f name too long", Limits{MaxNameBytes: 3}, mp(t, om{"v", 3, "f", om{"abcd", 1}}), ReasonNameTooLong, "f"},
		{"f name above the default limit", Limits{}, mp(t, om{"v", 3, "f", om{long, 1}}), ReasonNameTooLong, "f"},
		{"f string value too long", Limits{MaxNameBytes: 3}, mp(t, om{"v", 3, "f", om{"a", "abcd"}}), ReasonNameTooLong, "f"},
		{"f too many", Limits{MaxFeatures: 2}, mp(t, om{"v", 3, "f", om{"a", 1, "b", 2, "c", 3}}), ReasonTooManyFeatures, "f"},
		{"f +Inf", Limits{}, mp(t, om{"v", 3, "f", om{"a", inf}}), ReasonNonFinite, "f"},
		{"f -Inf float32", Limits{}, mp(t, om{"v", 3, "f", om{"a", f32(math.Inf(-1))}}), ReasonNonFinite, "f"},
		{"f above max abs", Limits{MaxAbsValue: 10}, mp(t, om{"v", 3, "f", om{"a", 11}}), ReasonValueOutOfRange, "f"},
		{"f name not UTF-8", Limits{}, mp(t, om{"v", 3, "f", om{[]byte{0xff}, 1}}), ReasonBadFieldType, "f"},
		{"f value not UTF-8", Limits{}, mp(t, om{"v", 3, "f", om{"a", []byte{'a', 0xc3}}}), ReasonBadFieldType, "f"},
		{"f and x", Limits{}, mp(t, om{"v", 3, "x", []float64{1}, "f", om{}}), ReasonDenseAndSparse, ""},
		{"f and xi xv", Limits{}, mp(t, om{"v", 3, "f", om{"a", 1}, "xi", []int{0}, "xv", []float64{1}}), ReasonDenseAndSparse, ""},
		{"feedback with f", Limits{}, mp(t, om{"v", 3, "ref", "a", "y", 1, "f", om{}}), ReasonFeedbackWithFeatures, "f"},
		{"f truncated", Limits{}, truncated(mp(t, om{"v", 3, "f", om{"a", "abc"}})), ReasonNotMsgpack, "f"},
		{"f never-used code", Limits{}, mp(t, om{"v", 3, "f", om{"a", raw{0xc1}}}), ReasonNotMsgpack, "f"},
		{"f huge map", Limits{}, mp(t, om{"v", 3, "f", raw{0xdf, 0x7f, 0xff, 0xff, 0xff}}), ReasonNotMsgpack, "f"},
		{"JSON object", Limits{}, []byte(`{"v": 1, "x": [1]}`), ReasonLooksLikeJSON, ""},
		{"JSON array", Limits{}, []byte(`[1]`), ReasonLooksLikeJSON, ""},
		{"JSON after whitespace", Limits{}, []byte(" \r\n\t{}"), ReasonLooksLikeJSON, ""},
		{"JSON after a byte order mark", Limits{}, []byte("\ufeff {}"), ReasonLooksLikeJSON, ""},
	}
}

// The Event each golden record of version 3 decodes to.
var namedPythonEvent = Event{Version: 3, ID: "evt-7", Key: "user-7", Y: 1, HasY: true, F: []Field{
	{Name: "amount", Num: 12.5}, {Name: "country", Kind: FieldString, Str: "FR"},
	{Name: "device", Kind: FieldString, Str: "ios"}, {Name: "age", Kind: FieldMissing},
	{Name: "is_new", Kind: FieldBool, Num: 1}, {Name: "n_items", Num: 3}, {Name: "score", Kind: FieldMissing},
}}

func TestNamedAccessors(t *testing.T) {
	ev := namedPythonEvent
	if !ev.Named() {
		t.Error("Named() false for an event with F")
	}
	if (&Event{Version: 3, F: []Field{}}).Named() != true || (&Event{Version: 1, X: []float64{1}}).Named() {
		t.Error("Named() wrong for an empty F or a dense event")
	}
	if x := ev.Dense(make([]float64, 3), 3); x != nil {
		t.Errorf("Dense on a named event: %v, want nil", x)
	}
}

func TestFieldKindString(t *testing.T) {
	for k, want := range map[FieldKind]string{FieldNumber: "number", FieldBool: "bool", FieldString: "string", FieldMissing: "missing", 9: "FieldKind(9)"} {
		if k.String() != want {
			t.Errorf("%d: %q, want %q", k, k.String(), want)
		}
	}
}

// TestNamedMissingFeaturesHint: "f" in a version 1 or 2 record is an
// unknown key, as it was before version 3; the error says what to do.
func TestNamedMissingFeaturesHint(t *testing.T) {
	for _, v := range []int{1, 2} {
		_, err := DecodeEvent(mp(t, om{"v", v, "f", om{"a", 1}}), Limits{})
		if ReasonOf(err) != ReasonMissingFeatures || !strings.Contains(err.Error(), `needs "v": 3`) {
			t.Errorf("v %d: %v", v, err)
		}
		// With x too, "f" is ignored like any unknown key.
		ev, err := DecodeEvent(mp(t, om{"v", v, "x", []float64{1}, "f", om{"a", 1}}), Limits{})
		if err != nil || ev.F != nil || len(ev.X) != 1 {
			t.Errorf("v %d with x: %+v %v", v, ev, err)
		}
	}
	_, err := DecodeEvent(mp(t, om{"v", 2, "y", 1}), Limits{})
	if strings.Contains(err.Error(), `"f"`) {
		t.Errorf("hint without f: %v", err)
	}
}

func TestLooksLikeJSONHint(t *testing.T) {
	_, err := DecodeEvent([]byte(`{"v": 3, "f": {"a": 1}}`), Limits{})
	if ReasonOf(err) != ReasonLooksLikeJSON || !strings.Contains(err.Error(), "--input-format json") {
		t.Errorf("got %v", err)
	}
	// Oversized comes first, as for any record.
	_, err = DecodeEvent([]byte(`{"v": 3, "f": {"a": 1}}`), Limits{MaxBytes: 4})
	if ReasonOf(err) != ReasonOversized {
		t.Errorf("got %v", err)
	}
	// A top-level scalar that is not '{' or '[' keeps its old reason.
	if _, err := DecodeEvent([]byte("garbage"), Limits{}); ReasonOf(err) != ReasonNotMap {
		t.Errorf("got %v", err)
	}
}

func TestAppendEventNamedValidation(t *testing.T) {
	f := func(fs ...Field) Event { return Event{Version: 3, F: fs} }
	for _, tc := range []struct {
		name  string
		ev    Event
		want  Reason
		field string
	}{
		{"version 2", Event{Version: 2, F: []Field{}}, ReasonBadFieldType, "f"},
		{"version 1", Event{Version: 1, F: []Field{{Name: "a", Num: 1}}}, ReasonBadFieldType, "f"},
		{"and x", Event{Version: 3, X: []float64{1}, F: []Field{}}, ReasonDenseAndSparse, ""},
		{"feedback", Event{Version: 3, Ref: "r", HasY: true, F: []Field{}}, ReasonFeedbackWithFeatures, "f"},
		{"duplicate", f(Field{Name: "a"}, Field{Name: "b"}, Field{Name: "a"}), ReasonDuplicateKey, "f"},
		{"NaN number", f(Field{Name: "a", Num: nan}), ReasonNonFinite, "f"},
		{"Inf number", f(Field{Name: "a", Num: -inf}), ReasonNonFinite, "f"},
		{"bool 2", f(Field{Name: "a", Kind: FieldBool, Num: 2}), ReasonBadFieldType, "f"},
		{"bad kind", f(Field{Name: "a", Kind: 7}), ReasonBadFieldType, "f"},
		{"long name", f(Field{Name: strings.Repeat("a", 257)}), ReasonNameTooLong, "f"},
		{"long value", f(Field{Name: "a", Kind: FieldString, Str: strings.Repeat("a", 257)}), ReasonNameTooLong, "f"},
		{"name not UTF-8", f(Field{Name: "\xff"}), ReasonBadFieldType, "f"},
		{"value not UTF-8", f(Field{Name: "a", Kind: FieldString, Str: "\xff"}), ReasonBadFieldType, "f"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, enc := range []func([]byte, *Event) ([]byte, error){AppendEvent, AppendEventJSON} {
				out, err := enc([]byte("keep"), &tc.ev)
				var e *Error
				if !errors.As(err, &e) || e.Reason != tc.want || e.Field != tc.field {
					t.Errorf("got %v, want %s on %q", err, tc.want, tc.field)
				}
				if string(out) != "keep" {
					t.Errorf("dst changed to %q", out)
				}
			}
		})
	}
	// Many fields: the duplicate check uses a map.
	fs := make([]Field, 70)
	for i := range fs {
		fs[i] = Field{Name: fmt.Sprint("f", i)}
	}
	fs[69].Name = "f3"
	ev := f(fs...)
	if _, err := AppendEvent(nil, &ev); ReasonOf(err) != ReasonDuplicateKey {
		t.Errorf("70 fields with a duplicate: %v", err)
	}
}

// randomNamedEvent returns a valid version 3 event: named a half of the
// time, otherwise a version 2 event; every string is valid UTF-8 (JSON
// carries nothing else).
func randomNamedEvent(rng *rand.Rand, n int) Event {
	var ev Event
	if rng.IntN(2) == 0 {
		ev = randomEventV2(rng, 1+n)
		ev.Version = 3
	} else {
		ev = randomEvent(rng, 1)
		ev.Version, ev.X, ev.XI, ev.XV = 3, nil, nil, nil
		ev.F = make([]Field, 0, n)
		for i := 0; i < n; i++ {
			f := Field{Name: randomName(rng, i)}
			switch rng.IntN(4) {
			case 0:
				f.Num = randomFloat(rng)
			case 1:
				f.Kind, f.Num = FieldBool, float64(rng.IntN(2))
			case 2:
				f.Kind, f.Str = FieldString, randomName(rng, rng.IntN(5))
			default:
				f.Kind = FieldMissing
			}
			ev.F = append(ev.F, f)
		}
	}
	switch rng.IntN(4) {
	case 0:
		ev.YKind, ev.Y, ev.YStr, ev.HasY = LabelString, 0, randomName(rng, 1), true
	case 1:
		ev.YKind, ev.Y, ev.HasY = LabelBool, float64(rng.IntN(2)), true
	}
	ev.ID = strings.ToValidUTF8(ev.ID, "?")
	ev.Key = strings.ToValidUTF8(ev.Key, "\u00e9")
	ev.Ref = strings.ToValidUTF8(ev.Ref, "\U0001F600")
	return ev
}

// randomName returns a distinct name for each i, with quotes, escapes,
// control characters and non-ASCII some of the time.
func randomName(rng *rand.Rand, i int) string {
	pre := []string{"", "a", "amount", "caf\u00e9", "q\"b\\s/", "\n\t\x01", "\U0001F600", "\u2028", "name with spaces"}[rng.IntN(9)]
	return fmt.Sprintf("%s%d", pre, i)
}

// TestNamedRoundTrip: random events encode and decode back equal, in msgpack
// and JSON, and both encodings decode to the same Event.
func TestNamedRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 1))
	d := NewDecoder(Limits{})
	var a, b Event
	for i := 0; i < 2000; i++ {
		ev := randomNamedEvent(rng, rng.IntN(40))
		m, err := AppendEvent(nil, &ev)
		if err != nil {
			t.Fatal(err)
		}
		j, err := AppendEventJSON(nil, &ev)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.DecodeEvent(m, &a); err != nil {
			t.Fatalf("msgpack %x: %v", m, err)
		}
		if err := d.DecodeEventJSON(j, &b); err != nil {
			t.Fatalf("JSON %s: %v", j, err)
		}
		if !eventsEqualF(&a, &ev) {
			t.Fatalf("msgpack round trip\n got %+v\nwant %+v", a, ev)
		}
		if !eventsEqualF(&b, &ev) {
			t.Fatalf("JSON round trip of %s\n got %+v\nwant %+v", j, b, ev)
		}
		// Canonical bytes are a fixed point.
		m2, _ := AppendEvent(nil, &a)
		j2, _ := AppendEventJSON(nil, &b)
		if !bytes.Equal(m, m2) || !bytes.Equal(j, j2) {
			t.Fatalf("not a fixed point")
		}
	}
}

// TestNamedStringsStayValid: F's strings are ordinary strings; decoding
// other events (and overflowing the intern table) does not change them.
func TestNamedStringsStayValid(t *testing.T) {
	d := NewDecoder(Limits{})
	var ev Event
	var keep []Field
	for i := 0; i < 3*internCap/100; i++ {
		src := Event{Version: 3, F: make([]Field, 100)}
		for k := range src.F {
			src.F[k] = Field{Name: fmt.Sprintf("n%d-%d", i, k), Kind: FieldString, Str: fmt.Sprintf("v%d-%d", i, k)}
		}
		b, _ := AppendEvent(nil, &src)
		if err := d.DecodeEvent(b, &ev); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			keep = append(keep, ev.F[7])
		}
		if len(d.internStrs) > internCap+2*100 {
			t.Fatalf("intern table has %d strings, bound %d", len(d.internStrs), internCap+200)
		}
	}
	for n, f := range keep {
		if want := fmt.Sprintf("n%d-7", 50*n); f.Name != want || f.Str != fmt.Sprintf("v%d-7", 50*n) {
			t.Fatalf("kept field %d is %+v, want name %s", n, f, want)
		}
	}
}

func benchNamedEvent(n int) Event {
	rng := rand.New(rand.NewPCG(uint64(n), 3))
	ev := Event{Version: 3, ID: "events/0/123456", TS: 1700000000123, HasTS: true, Key: "user-42", Y: 1, HasY: true,
		F: make([]Field, n)}
	for i := range ev.F {
		ev.F[i] = Field{Name: fmt.Sprintf("feature_%02d", i), Num: rng.NormFloat64()}
	}
	return ev
}

// TestNamedDecodeAllocs: in steady state, decoding a named event allocates
// nothing but what DecodeEvent allocates for any event (id and key),
// categorical values included, in msgpack and in JSON.
func TestNamedDecodeAllocs(t *testing.T) {
	ev := benchNamedEvent(30)
	ev.ID, ev.Key = "", ""
	ev.F[3] = Field{Name: ev.F[3].Name, Kind: FieldString, Str: "FR"}
	ev.F[4] = Field{Name: ev.F[4].Name, Kind: FieldMissing}
	ev.F[5] = Field{Name: ev.F[5].Name, Kind: FieldBool, Num: 1}
	ev2 := ev
	ev2.F = append([]Field(nil), ev.F...)
	ev2.F[3].Str = "DE" // a categorical value that changes between events
	ev2.F[0], ev2.F[1] = ev2.F[1], ev2.F[0]
	var recs, jrecs [][]byte
	for _, e := range []*Event{&ev, &ev2} {
		b, _ := AppendEvent(nil, e)
		j, _ := AppendEventJSON(nil, e)
		recs, jrecs = append(recs, b), append(jrecs, j)
	}
	d := NewDecoder(Limits{Dim: 30})
	var out Event
	i := 0
	if a := testing.AllocsPerRun(200, func() {
		if err := d.DecodeEvent(recs[i%2], &out); err != nil {
			t.Fatal(err)
		}
		i++
	}); a != 0 {
		t.Errorf("msgpack: %v allocations per event", a)
	}
	if a := testing.AllocsPerRun(200, func() {
		if err := d.DecodeEventJSON(jrecs[i%2], &out); err != nil {
			t.Fatal(err)
		}
		i++
	}); a != 0 {
		t.Errorf("JSON: %v allocations per event", a)
	}
	// Switching between named and dense events keeps both buffers.
	dense := benchDenseEvent(30)
	dense.ID, dense.Key = "", ""
	db, _ := AppendEvent(nil, &dense)
	dj, _ := AppendEventJSON(nil, &dense)
	if a := testing.AllocsPerRun(200, func() {
		_ = d.DecodeEvent(recs[0], &out)
		_ = d.DecodeEvent(db, &out)
		_ = d.DecodeEventJSON(jrecs[1], &out)
		_ = d.DecodeEventJSON(dj, &out)
	}); a != 0 {
		t.Errorf("alternating: %v allocations", a)
	}
}

func TestAppendJSONAllocs(t *testing.T) {
	ev := benchNamedEvent(30)
	p := Prediction{Version: 3, ID: "events/0/1", Topic: "events", Models: []ModelScore{{Name: "m", Score: 0.5, Classify: true, Decision: 1, Prob: 0.6, HasProb: true}}}
	buf := make([]byte, 0, 4096)
	if a := testing.AllocsPerRun(100, func() {
		buf, _ = AppendEventJSON(buf[:0], &ev)
		buf = AppendPredictionJSON(buf[:0], &p)
	}); a != 0 {
		t.Errorf("%v allocations", a)
	}
}

// TestNamedDuplicatesWithCache: the decoder skips the duplicate check while a
// record's names repeat the previous record's, position by position; every
// way a duplicate can hide behind that is still found.
func TestNamedDuplicatesWithCache(t *testing.T) {
	rec := func(names ...string) []byte {
		ev := Event{Version: 3, F: []Field{}}
		var o om
		for _, n := range names {
			o = append(o, n, 1)
		}
		_ = ev
		return mp(t, om{"v", 3, "f", o})
	}
	for _, seq := range [][][]string{
		{{"a", "b"}, {"a", "a"}},
		{{"a", "b"}, {"a", "b", "a"}},
		{{"a", "b"}, {"b"}, {"b", "b"}},
		{{"a", "b", "c"}, {"a", "c", "c"}},
		{{"a", "b"}, {"x", "a", "b", "x"}},
		{{"a", "b"}, {"a", "b", "a"}, {"a", "b", "a"}},
		{{"a", ""}, {"", ""}},
	} {
		d := NewDecoder(Limits{})
		var ev Event
		for k, names := range seq {
			err := d.DecodeEvent(rec(names...), &ev)
			last := k == len(seq)-1
			if last && ReasonOf(err) != ReasonDuplicateKey || !last && k > 0 && err == nil && hasDup(names) {
				t.Errorf("%v: record %d: %v", seq, k, err)
			}
			if !last && !hasDup(names) && err != nil {
				t.Errorf("%v: record %d: %v", seq, k, err)
			}
		}
		// A valid record after the error decodes.
		if err := d.DecodeEvent(rec("a", "b"), &ev); err != nil || len(ev.F) != 2 {
			t.Errorf("%v then [a b]: %v", seq, err)
		}
	}
}

func hasDup(names []string) bool {
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return true
		}
		seen[n] = true
	}
	return false
}

// TestNamedDuplicatesRandom: random sequences of records over a few names,
// some with duplicates, through one Decoder in msgpack and JSON alternately:
// a record is refused exactly when it repeats a name (the oracle is a map),
// whatever the records before it.
func TestNamedDuplicatesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 2))
	d := NewDecoder(Limits{})
	var ev Event
	names := []string{"a", "b", "", "d", "e"}
	for i := 0; i < 5000; i++ {
		n := rng.IntN(7)
		rec := make([]string, n)
		for k := range rec {
			rec[k] = names[rng.IntN(len(names))]
		}
		if rng.IntN(3) > 0 && i > 0 { // often a permutation-free repeat of a distinct prefix
			rec = rec[:0]
			for k := 0; k < n && k < len(names); k++ {
				rec = append(rec, names[k])
			}
			if n > 0 && rng.IntN(4) == 0 {
				rec[rng.IntN(len(rec))] = names[rng.IntN(len(names))]
			}
		}
		var o om
		for _, name := range rec {
			o = append(o, name, 1)
		}
		var err error
		if i%2 == 0 {
			err = d.DecodeEvent(mp(t, om{"v", 3, "f", o}), &ev)
		} else {
			err = d.DecodeEventJSON([]byte(toJSON(t, om{"v", 3, "f", o})), &ev)
		}
		if dup := hasDup(rec); dup != (err != nil) || dup && ReasonOf(err) != ReasonDuplicateKey {
			t.Fatalf("record %d %v: %v", i, rec, err)
		}
		if err == nil {
			for k, f := range ev.F {
				if f.Name != rec[k] {
					t.Fatalf("record %d %v: field %d is %q", i, rec, k, f.Name)
				}
			}
		}
	}
}

// TestNamedEmptyName: "" is a name like any other.
func TestNamedEmptyName(t *testing.T) {
	for _, rec := range []om{{"amount", 1, "", 2}, {"", 1}, {"", "x", "a", ""}} {
		ev, err := DecodeEvent(mp(t, om{"v", 3, "f", rec}), Limits{})
		if err != nil || len(ev.F) != len(rec)/2 {
			t.Errorf("%v: %+v %v", rec, ev.F, err)
		}
	}
}
