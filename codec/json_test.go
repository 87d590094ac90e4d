package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
)

// toJSON writes v (om, []any, slices, scalars) as JSON text, with spaces
// like Python's json.dumps, so that a test can state a record once and
// decode it both ways. NaN and ±Inf are written as Python writes them.
func toJSON(t testing.TB, v any) string {
	t.Helper()
	switch v := v.(type) {
	case om:
		var parts []string
		for i := 0; i < len(v); i += 2 {
			parts = append(parts, toJSON(t, v[i])+": "+toJSON(t, v[i+1]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		var parts []string
		for _, x := range v {
			parts = append(parts, toJSON(t, x))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []float64:
		return toJSON(t, anys(v))
	case []int:
		return toJSON(t, anys(v))
	case []byte:
		return toJSON(t, string(v))
	case f32:
		return toJSON(t, float64(v))
	case float64:
		switch {
		case math.IsNaN(v):
			return "NaN"
		case math.IsInf(v, 1):
			return "Infinity"
		case math.IsInf(v, -1):
			return "-Infinity"
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	case nil:
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func anys[T any](s []T) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// equivalenceCases are records stated once, decoded from msgpack and from
// JSON: both must give the same Event, or errors with the same reason and
// field.
func equivalenceCases() []struct {
	lim Limits
	rec om
} {
	type c = struct {
		lim Limits
		rec om
	}
	long := strings.Repeat("n", 300)
	return []c{
		{Limits{}, om{"v", 1, "x", []float64{1, 2.5, math.Copysign(0, -1)}}},
		{Limits{}, om{"v", 1, "id", "a", "ts", 17, "key", "k", "xi", []int{0, 5}, "xv", []float64{1, 2}, "y", -1}},
		{Limits{}, om{"v", 2, "ref", "a", "y", true}},
		{Limits{}, om{"v", 3, "f", om{"a", 1, "b", "x", "c", nil, "d", false, "e", nan}, "y", "yes"}},
		{Limits{}, om{"f", om{"a", 1}, "v", 3}},
		{Limits{}, om{"v", 3, "f", om{}}},
		{Limits{}, om{"v", 3, "note", om{"deep", []any{om{}, []any{}}}, "f", om{"a", 1}}},
		{Limits{}, om{"v", 1, "y", nil, "x", []float64{1}, "id", nil}},
		{Limits{}, om{"v", 1}},
		{Limits{}, om{"v", 4, "x", []float64{1}}},
		{Limits{}, om{"v", 1.5, "x", []float64{1}}},
		{Limits{}, om{"v", "1", "x", []float64{1}}},
		{Limits{}, om{"x", []float64{1}}},
		{Limits{}, om{"v", nil, "x", []float64{1}}},
		{Limits{}, om{"v", 1, "v", 1, "x", []float64{1}}},
		{Limits{}, om{"x", "str", "v", 4}},
		{Limits{}, om{"v", 1, "ts", 1.5, "x", []float64{1}}},
		{Limits{}, om{"v", 1, "id", 5, "x", []float64{1}}},
		{Limits{}, om{"v", 1, "x", []any{1, "a"}}},
		{Limits{}, om{"v", 1, "x", []float64{1}, "xi", []int{0}, "xv", []float64{1}}},
		{Limits{}, om{"v", 1, "xi", []int{0}}},
		{Limits{}, om{"v", 1, "xv", []float64{1}}},
		{Limits{}, om{"v", 1, "x", []float64{}}},
		{Limits{}, om{"v", 1, "xi", []int{}, "xv", []float64{}}},
		{Limits{MaxFeatures: 2}, om{"v", 1, "x", []float64{1, 2, 3}}},
		{Limits{MaxFeatures: 2, Dim: 2}, om{"v", 1, "x", []float64{1, nan, 3}}},
		{Limits{Dim: 2}, om{"v", 1, "x", []float64{1, nan, 3}}},
		{Limits{}, om{"v", 1, "x", []float64{1, inf}}},
		{Limits{}, om{"v", 1, "x", []float64{1}, "y", nan}},
		{Limits{}, om{"v", 1, "xi", []int{0, 1}, "xv", []float64{1}}},
		{Limits{}, om{"v", 1, "xi", []int{2, 1}, "xv", []float64{1, 1}}},
		{Limits{}, om{"v", 1, "xi", []int{1, 1}, "xv", []float64{1, 1}}},
		{Limits{}, om{"v", 1, "xi", []any{-1}, "xv", []float64{1}}},
		{Limits{}, om{"v", 1, "xi", []any{1.5}, "xv", []float64{1}}},
		{Limits{Dim: 3}, om{"v", 1, "xi", []int{3}, "xv", []float64{1}}},
		{Limits{}, om{"v", 2, "ref", "a"}},
		{Limits{}, om{"v", 2, "ref", "a", "y", 1, "x", []float64{1}}},
		{Limits{MaxAbsValue: 10}, om{"v", 1, "x", []float64{11}}},
		{Limits{MaxIDBytes: 2}, om{"v", 1, "id", "abc", "x", []float64{1}}},
		{Limits{MaxIDBytes: 2}, om{"v", 1, "x", []float64{1}, "y", "abc"}},
		{Limits{}, om{"v", 2, "f", om{"a", 1}}},
		{Limits{}, om{"v", 3, "f", []any{1}}},
		{Limits{}, om{"v", 3, "f", om{"a", []any{}}}},
		{Limits{}, om{"v", 3, "f", om{"a", 1, "a", 2}}},
		{Limits{}, om{"v", 3, "f", om{long, 1}}},
		{Limits{MaxNameBytes: 2}, om{"v", 3, "f", om{"a", "abc"}}},
		{Limits{MaxFeatures: 1}, om{"v", 3, "f", om{"a", inf, "b", 1}}},
		{Limits{}, om{"v", 3, "f", om{"a", inf}}},
		{Limits{MaxAbsValue: 1}, om{"v", 3, "f", om{"a", -2}}},
		{Limits{}, om{"v", 3, "f", om{"a", 1}, "x", []float64{1}}},
		{Limits{}, om{"v", 3, "ref", "r", "y", 1, "f", om{}}},
		{Limits{}, om{"v", 3, "f", om{"a", om{}}, "v", 9}},
	}
}

func TestJSONMsgpackEquivalence(t *testing.T) {
	for _, tc := range equivalenceCases() {
		js := toJSON(t, tc.rec)
		t.Run(js, func(t *testing.T) {
			d := NewDecoder(tc.lim)
			var a, b Event
			em := d.DecodeEvent(mp(t, tc.rec), &a)
			ej := d.DecodeEventJSON([]byte(js), &b)
			var xm, xj *Error
			if (em == nil) != (ej == nil) {
				t.Fatalf("msgpack: %v; JSON: %v", em, ej)
			}
			if em == nil {
				if !eventsEqualF(&a, &b) {
					t.Fatalf("msgpack %+v\n   JSON %+v", a, b)
				}
				return
			}
			errors.As(em, &xm)
			errors.As(ej, &xj)
			if xm.Reason != xj.Reason || xm.Field != xj.Field {
				t.Fatalf("msgpack: %v\n   JSON: %v", em, ej)
			}
		})
	}
}

// jsonReasonCases cover every reason DecodeEventJSON reports.
var jsonReasonCases = []struct {
	name  string
	lim   Limits
	in    string
	want  Reason
	field string
}{
	{"empty", Limits{}, "", ReasonNotJSON, ""},
	{"only space", Limits{}, " \n", ReasonNotJSON, ""},
	{"garbage", Limits{}, "garbage", ReasonNotJSON, ""},
	{"BOM", Limits{}, "\ufeff{}", ReasonNotJSON, ""},
	{"truncated", Limits{}, `{"v": 1, "x": [1`, ReasonNotJSON, "x"},
	{"truncated key", Limits{}, `{"v": 1, "x`, ReasonNotJSON, ""},
	{"trailing comma", Limits{}, `{"v": 1, "x": [1],}`, ReasonNotJSON, ""},
	{"trailing comma in array", Limits{}, `{"v": 1, "x": [1,]}`, ReasonNotJSON, "x"},
	{"single quotes", Limits{}, `{'v': 1}`, ReasonNotJSON, ""},
	{"comment", Limits{}, `{"v": 1 /* c */, "x": [1]}`, ReasonNotJSON, ""},
	{"leading zero", Limits{}, `{"v": 1, "x": [01]}`, ReasonNotJSON, "x"},
	{"bare dot", Limits{}, `{"v": 1, "x": [1.]}`, ReasonNotJSON, "x"},
	{"plus", Limits{}, `{"v": 1, "x": [+1]}`, ReasonNotJSON, "x"},
	{"bad exponent", Limits{}, `{"v": 1, "x": [1e]}`, ReasonNotJSON, "x"},
	{"hex", Limits{}, `{"v": 1, "x": [0x10]}`, ReasonNotJSON, "x"},
	{"nan lower case", Limits{}, `{"v": 1, "x": [nan]}`, ReasonNotJSON, "x"},
	{"tru", Limits{}, `{"v": 1, "x": [1], "y": tru}`, ReasonNotJSON, "y"},
	{"invalid UTF-8", Limits{}, "{\"v\": 1, \"id\": \"\xff\", \"x\": [1]}", ReasonNotJSON, "id"},
	{"invalid UTF-8 in unknown key", Limits{}, "{\"v\": 1, \"note\": \"a\xc3\", \"x\": [1]}", ReasonNotJSON, "note"},
	{"control character", Limits{}, "{\"v\": 1, \"id\": \"a\nb\", \"x\": [1]}", ReasonNotJSON, "id"},
	{"lone surrogate", Limits{}, `{"v": 1, "id": "\ud800", "x": [1]}`, ReasonNotJSON, "id"},
	{"reversed surrogates", Limits{}, `{"v": 1, "id": "\udc00\ud800", "x": [1]}`, ReasonNotJSON, "id"},
	{"bad escape", Limits{}, `{"v": 1, "id": "\x41", "x": [1]}`, ReasonNotJSON, "id"},
	{"too deep", Limits{}, `{"v": 1, "x": [1], "note": ` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`, ReasonNotJSON, "note"},
	{"missing colon", Limits{}, `{"v" 1}`, ReasonNotJSON, ""},
	{"number key", Limits{}, `{1: 1}`, ReasonNotJSON, ""},
	{"f trailing comma", Limits{}, `{"v": 3, "f": {"a": 1,}}`, ReasonNotJSON, "f"},
	{"f value bad", Limits{}, `{"v": 3, "f": {"a": x}}`, ReasonNotJSON, "f"},
	{"msgpack map", Limits{}, "\x82\xa1v\x01\xa1x\x91\x01", ReasonLooksLikeMsgpack, ""},
	{"msgpack map16", Limits{}, "\xde\x00\x01", ReasonLooksLikeMsgpack, ""},
	{"array", Limits{}, `[1]`, ReasonNotMap, ""},
	{"string", Limits{}, ` "v"`, ReasonNotMap, ""},
	{"number", Limits{}, `1`, ReasonNotMap, ""},
	{"trailing", Limits{}, `{"v": 1, "x": [1]} x`, ReasonTrailingBytes, ""},
	{"two objects", Limits{}, `{"v": 1, "x": [1]}{}`, ReasonTrailingBytes, ""},
	{"trailing beats field", Limits{}, `{"v": 1, "x": "a"} 1`, ReasonTrailingBytes, ""},
	{"oversized", Limits{MaxBytes: 5}, `{"v": 1, "x": [1]}`, ReasonOversized, ""},
	{"missing version", Limits{}, `{"x": [1]}`, ReasonMissingVersion, "v"},
	{"unknown version", Limits{}, `{"v": 4, "x": [1]}`, ReasonUnknownVersion, "v"},
	{"huge version", Limits{}, `{"v": 99999999999999999999, "x": [1]}`, ReasonUnknownVersion, "v"},
	{"float version", Limits{}, `{"v": 1.0, "x": [1]}`, ReasonBadFieldType, "v"},
	{"ts out of range", Limits{}, `{"v": 1, "ts": -9223372036854775809, "x": [1]}`, ReasonBadFieldType, "ts"},
	{"duplicate", Limits{}, `{"v": 1, "x": [1], "x": [1]}`, ReasonDuplicateKey, "x"},
	{"duplicate via escape", Limits{}, `{"v": 1, "x": [1], "\u0078": [1]}`, ReasonDuplicateKey, "x"},
	{"missing features", Limits{}, `{"v": 1}`, ReasonMissingFeatures, ""},
	{"dense and sparse", Limits{}, `{"v": 1, "x": [1], "xi": [0], "xv": [1]}`, ReasonDenseAndSparse, ""},
	{"empty", Limits{}, `{"v": 1, "x": []}`, ReasonEmptyFeatures, "x"},
	{"too many", Limits{MaxFeatures: 1}, `{"v": 1, "x": [1, 2]}`, ReasonTooManyFeatures, "x"},
	{"too many xi", Limits{MaxFeatures: 1}, `{"v": 1, "xi": [1, 2], "xv": [1, 2]}`, ReasonTooManyFeatures, "xi"},
	{"non-finite", Limits{}, `{"v": 1, "x": [-Infinity]}`, ReasonNonFinite, "x"},
	{"overflow", Limits{}, `{"v": 1, "x": [1e400]}`, ReasonNonFinite, "x"},
	{"sparse length", Limits{}, `{"v": 1, "xi": [0], "xv": []}`, ReasonSparseLength, "xv"},
	{"unsorted", Limits{}, `{"v": 1, "xi": [1, 0], "xv": [1, 1]}`, ReasonSparseUnsorted, "xi"},
	{"sparse duplicate", Limits{}, `{"v": 1, "xi": [1, 1], "xv": [1, 1]}`, ReasonSparseDuplicate, "xi"},
	{"sparse out of range", Limits{}, `{"v": 1, "xi": [4294967296], "xv": [1]}`, ReasonSparseOutOfRange, "xi"},
	{"sparse huge", Limits{}, `{"v": 1, "xi": [99999999999999999999], "xv": [1]}`, ReasonSparseOutOfRange, "xi"},
	{"dimension", Limits{Dim: 2}, `{"v": 1, "x": [1]}`, ReasonDimensionMismatch, "x"},
	{"missing label", Limits{}, `{"v": 2, "ref": "a"}`, ReasonMissingLabel, "y"},
	{"feedback with features", Limits{}, `{"v": 2, "ref": "a", "y": 1, "xi": [], "xv": []}`, ReasonFeedbackWithFeatures, "xi"},
	{"value out of range", Limits{MaxAbsValue: 1}, `{"v": 1, "x": [1], "y": 2}`, ReasonValueOutOfRange, "y"},
	{"id too long", Limits{MaxIDBytes: 1}, `{"v": 1, "key": "ab", "x": [1]}`, ReasonIDTooLong, "key"},
	{"name too long", Limits{MaxNameBytes: 1}, `{"v": 3, "f": {"ab": 1}}`, ReasonNameTooLong, "f"},
	{"name too long after unescaping", Limits{MaxNameBytes: 2}, `{"v": 3, "f": {"\u00e9\u00e9": 1}}`, ReasonNameTooLong, "f"},
	{"bad type", Limits{}, `{"v": 1, "x": {"a": 1}}`, ReasonBadFieldType, "x"},
	{"y array", Limits{}, `{"v": 1, "x": [1], "y": [1]}`, ReasonBadFieldType, "y"},
	{"key number", Limits{}, `{"v": 1, "key": 5, "x": [1]}`, ReasonBadFieldType, "key"},
}

func TestReasonsJSON(t *testing.T) {
	covered := map[Reason]bool{}
	for _, tc := range jsonReasonCases {
		t.Run(tc.name, func(t *testing.T) {
			ev := Event{Version: 9, ID: "stale", X: []float64{1, 2, 3}, F: []Field{{Name: "stale"}}}
			err := NewDecoder(tc.lim).DecodeEventJSON([]byte(tc.in), &ev)
			var e *Error
			if !errors.As(err, &e) || e.Reason != tc.want || e.Field != tc.field {
				t.Fatalf("got %v (field %q), want %s on %q", err, fieldOf(e), tc.want, tc.field)
			}
			if e.Detail == "" {
				t.Errorf("no detail: %v", err)
			}
			if !eventsEqualF(&ev, &Event{}) {
				t.Errorf("event after error is %+v, want the zero Event", ev)
			}
			covered[tc.want] = true
		})
	}
	for _, r := range Reasons() {
		if !covered[r] && r != ReasonNotMsgpack && r != ReasonLooksLikeJSON {
			t.Errorf("no JSON test case for reason %s", r)
		}
	}
}

func fieldOf(e *Error) string {
	if e == nil {
		return ""
	}
	return e.Field
}

func TestLooksLikeMsgpackHint(t *testing.T) {
	b := unhex(t, goldDenseMin)
	err := NewDecoder(Limits{}).DecodeEventJSON(b, new(Event))
	if ReasonOf(err) != ReasonLooksLikeMsgpack || !strings.Contains(err.Error(), "--input-format msgpack") {
		t.Errorf("got %v", err)
	}
}

// TestJSONAccepts: what strict JSON allows, and Python's non-finite tokens.
func TestJSONAccepts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Event
	}{
		{" \t\r\n{ \"v\" : 1 , \"x\" : [ 1 , 2 ] } \n", Event{Version: 1, X: []float64{1, 2}}},
		{`{"\u0076": 1, "\u0078": [1E2, -0, 0.5e-1, 1e+1]}`, Event{Version: 1, X: []float64{100, math.Copysign(0, -1), 0.05, 10}}},
		{`{"v": 1, "id": "a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00", "x": [1]}`, Event{Version: 1, ID: "a\"b\\c/d\b\f\n\r\t\u00e9\U0001F600", X: []float64{1}}},
		{`{"v": 1, "note": {"a": [1, {"b": null}, true, false, "s", -1.5e-3]}, "x": [1], "y": false}`, Event{Version: 1, X: []float64{1}, HasY: true, YKind: LabelBool}},
		{`{"v": 3, "f": {"a": NaN, "b": -0.0, "c\u00e9": "\u00e9"}, "ts": -5}`, Event{Version: 3, TS: -5, HasTS: true, F: []Field{
			{Name: "a", Kind: FieldMissing}, {Name: "b", Num: math.Copysign(0, -1)}, {Name: "c\u00e9", Kind: FieldString, Str: "\u00e9"}}}},
		{`{"v": 1, "xi": [0, 4294967295], "xv": [1, 2], "y": 1}`, Event{Version: 1, XI: []uint32{0, math.MaxUint32}, XV: []float64{1, 2}, Y: 1, HasY: true}},
		{`{"v": 1, "x": [1], "ts": 9223372036854775807}`, Event{Version: 1, X: []float64{1}, TS: math.MaxInt64, HasTS: true}},
		{`{"v": 1, "x": [1], "ts": -9223372036854775808}`, Event{Version: 1, X: []float64{1}, TS: math.MinInt64, HasTS: true}},
		{`{"v": 1, "x": [1], "note": ` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}`, Event{Version: 1, X: []float64{1}}},
	} {
		var ev Event
		if err := NewDecoder(Limits{}).DecodeEventJSON([]byte(tc.in), &ev); err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if !eventsEqualF(&ev, &tc.want) {
			t.Errorf("%s\n got %+v\nwant %+v", tc.in, ev, tc.want)
		}
	}
}

// TestJSONNumbers checks the number parser against strconv.ParseFloat on
// many spellings of random floats (the fast path must round as strconv does).
func TestJSONNumbers(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	j := &jsonReader{}
	check := func(s string) {
		t.Helper()
		j.reset([]byte(s))
		v, _, _, _, e := j.number("x")
		want, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			t.Fatalf("%s: bad test input", s)
		}
		if e != nil || math.Float64bits(v) != math.Float64bits(want) || j.p != len(s) {
			t.Fatalf("%s: got %v (%v, at %d), want %v", s, v, e, j.p, want)
		}
	}
	for _, s := range []string{"0", "-0", "1", "9007199254740993", "123456789012345678901234567890", "0.1", "0.30000000000000004",
		"1e22", "1e23", "1e-22", "1e-324", "2.2250738585072011e-308", "4.9e-324", "1.7976931348623157e308", "1e308", "1e309",
		"0.000000000000000000000000000000000001", "100000000000000000000000", "-1.5E+10", "9999999999999999", "99999999999999999"} {
		check(s)
	}
	for i := 0; i < 20000; i++ {
		v := randomFloat(rng)
		if rng.IntN(4) == 0 {
			v = float64(rng.Int64N(1<<62)) / math.Pow(10, float64(rng.IntN(30)))
		}
		format := []byte{'e', 'f', 'g', 'E'}[rng.IntN(4)]
		s := strconv.FormatFloat(v, format, rng.IntN(20)-1, 64)
		if math.Abs(v) > 1e50 && format == 'f' {
			continue
		}
		check(s)
	}
	// Integers: iv and iok.
	for _, tc := range []struct {
		s   string
		iv  int64
		iok bool
	}{{"0", 0, true}, {"-1", -1, true}, {"9223372036854775807", math.MaxInt64, true}, {"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false}, {"12345678901234567890123", 0, false}} {
		j.reset([]byte(tc.s))
		_, isInt, iv, iok, e := j.number("x")
		if e != nil || !isInt || iok != tc.iok || tc.iok && iv != tc.iv {
			t.Errorf("%s: isInt %v iv %d iok %v (%v)", tc.s, isInt, iv, iok, e)
		}
	}
}

// TestAppendEventJSONValid: AppendEventJSON writes JSON that encoding/json
// accepts and reads as the same values.
func TestAppendEventJSONValid(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 500; i++ {
		ev := randomNamedEvent(rng, rng.IntN(10))
		b, err := AppendEventJSON(nil, &ev)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if ev.ID != "" && m["id"] != ev.ID || ev.Key != "" && m["key"] != ev.Key {
			t.Fatalf("%s: id or key differs", b)
		}
		if ev.F != nil {
			f := m["f"].(map[string]any)
			for _, x := range ev.F {
				got, ok := f[x.Name]
				var want any
				switch x.Kind {
				case FieldNumber:
					want = x.Num
				case FieldBool:
					want = x.Num == 1
				case FieldString:
					want = x.Str
				}
				if !ok || !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: feature %q is %v, want %v", b, x.Name, got, want)
				}
			}
		}
	}
	// Strings JSON cannot carry.
	for _, ev := range []Event{{Version: 1, ID: "\xff", X: []float64{1}}, {Version: 1, X: []float64{1}, HasY: true, YKind: LabelString, YStr: "a\xc3"}} {
		if _, err := AppendEventJSON(nil, &ev); ReasonOf(err) != ReasonBadFieldType {
			t.Errorf("%+v: %v", ev, err)
		}
	}
}

// TestAppendPredictionJSON: the JSON record has the msgpack record's keys, in
// its order, with the same values (read back by encoding/json and by the
// msgpack library, two independent readers).
func TestAppendPredictionJSON(t *testing.T) {
	var ps []Prediction
	for _, tc := range goldenPredictions {
		ps = append(ps, tc.p)
	}
	for _, tc := range goldenPredictionsV2 {
		ps = append(ps, tc.p)
	}
	for _, tc := range goldenPredictionsV3 {
		ps = append(ps, tc.p)
	}
	for _, tc := range goldenPredictionsV4 {
		ps = append(ps, tc.p)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < 200; i++ {
		ps = append(ps, randomPrediction(rng))
	}
	for _, p := range ps {
		j := AppendPredictionJSON(nil, &p)
		if !bytes.Equal(j, AppendPredictionJSON(nil, &p)) {
			t.Fatal("not deterministic")
		}
		var fromJSON, fromMsgpack any
		dec := json.NewDecoder(bytes.NewReader(j))
		dec.UseNumber()
		if err := dec.Decode(&fromJSON); err != nil {
			t.Fatalf("%s: %v", j, err)
		}
		if err := msgpack.Unmarshal(AppendPrediction(nil, &p), &fromMsgpack); err != nil {
			t.Fatal(err)
		}
		if a, b := normalize(fromJSON), normalize(fromMsgpack); !reflect.DeepEqual(a, b) {
			t.Fatalf("JSON %s\n  is %v\nmsgpack %v", j, a, b)
		}
		if a, b := jsonKeys(t, j), msgpackKeys(t, AppendPrediction(nil, &p)); !reflect.DeepEqual(a, b) {
			t.Fatalf("key order: JSON %v, msgpack %v", a, b)
		}
	}
	// Non-finite numbers and invalid UTF-8.
	p := Prediction{Topic: "t\xff", Models: []ModelScore{{Name: "m", Score: math.NaN()}, {Name: "n", Score: math.Inf(-1)}}}
	want := `{"v":1,"t":"t\ufffd","p":0,"o":0,"m":[{"n":"m","s":null,"u":0},{"n":"n","s":null,"u":0}]}`
	if got := string(AppendPredictionJSON(nil, &p)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// normalize turns decoded values into comparable ones: numbers as float64
// (NaN and ±Inf as nil, as JSON writes them), strings with invalid UTF-8
// replaced, maps with string keys.
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			out[k] = normalize(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalize(x)
		}
		return out
	case json.Number:
		f, _ := strconv.ParseFloat(string(v), 64)
		return f
	case string:
		return perByteValid(v)
	case []byte:
		return perByteValid(string(v))
	case nil, bool:
		return v
	}
	f := reflect.ValueOf(v)
	var x float64
	switch {
	case f.CanInt():
		x = float64(f.Int())
	case f.CanUint():
		x = float64(f.Uint())
	case f.CanFloat():
		x = f.Float()
	default:
		panic(fmt.Sprintf("normalize %T", v))
	}
	if !finite(x) {
		return nil
	}
	return x
}

// perByteValid replaces each invalid byte of s with U+FFFD (as
// encoding/json does; strings.ToValidUTF8 replaces runs).
func perByteValid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\ufffd")
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// jsonKeys lists the keys of every object in j, in document order.
func jsonKeys(t *testing.T, j []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(j))
	var keys []string
	var inObj []bool
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{':
				inObj = append(inObj, true)
				expectKey = true
				continue
			case '[':
				inObj = append(inObj, false)
			default:
				inObj = inObj[:len(inObj)-1]
			}
		case string:
			if expectKey {
				keys = append(keys, tok)
				expectKey = false
				continue
			}
		}
		expectKey = len(inObj) > 0 && inObj[len(inObj)-1]
	}
	return keys
}

// msgpackKeys lists the keys of every map in b, in encoding order.
func msgpackKeys(t *testing.T, b []byte) []string {
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	var keys []string
	var walk func()
	walk = func() {
		c, err := dec.PeekCode()
		if err != nil {
			t.Fatal(err)
		}
		switch kindOf(c) {
		case kMap:
			n, _ := dec.DecodeMapLen()
			for i := 0; i < n; i++ {
				k, _ := dec.DecodeString()
				keys = append(keys, k)
				walk()
			}
		case kArray:
			n, _ := dec.DecodeArrayLen()
			for i := 0; i < n; i++ {
				walk()
			}
		default:
			_ = dec.Skip()
		}
	}
	walk()
	return keys
}

// TestJSONGoldenBytes pins the JSON encoders' bytes, written by hand from the
// golden records' values.
func TestJSONGoldenBytes(t *testing.T) {
	want := `{"v":1,"id":"events/0/42","key":"user-7","t":"events","p":0,"o":42,"ts":1700000000123,"y":1,"m":[` +
		`{"n":"fogd","s":0.731,"d":1,"u":41},{"n":"ridge","s":-0.2,"u":41},{"n":"forks","s":0,"d":0,"u":0},{"n":"nogd","s":-3,"d":-1,"u":300}]}`
	if got := string(AppendPredictionJSON(nil, &goldenPredictions[0].p)); got != want {
		t.Errorf("prediction\n got %s\nwant %s", got, want)
	}
	want = `{"v":3,"id":"evt-7","key":"user-7","f":{"amount":12.5,"country":"FR","device":"ios","age":null,"is_new":true,"n_items":3,"score":null},"y":1}`
	got, err := AppendEventJSON(nil, &namedPythonEvent)
	if err != nil || string(got) != want {
		t.Errorf("event %v\n got %s\nwant %s", err, got, want)
	}
	ev := Event{Version: 1, ID: "q\"\\\n\x01\u00e9", XI: []uint32{0, 7}, XV: []float64{1e-7, 1e21}, HasY: true, YKind: LabelBool}
	want = `{"v":1,"id":"q\"\\\n\u0001é","xi":[0,7],"xv":[1e-07,1e+21],"y":false}`
	if got, err := AppendEventJSON(nil, &ev); err != nil || string(got) != want {
		t.Errorf("event %v\n got %s\nwant %s", err, got, want)
	}
}
