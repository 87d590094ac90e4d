package codec

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

var nan, inf = math.NaN(), math.Inf(1)

type reasonCase struct {
	name  string
	lim   Limits
	in    []byte
	want  Reason
	field string // "" = must be empty
}

func reasonCases(t testing.TB) []reasonCase {
	dense := mp(t, om{"v", 1, "x", []float64{1, 2}})
	return append([]reasonCase{
		{"empty input", Limits{}, nil, ReasonNotMsgpack, ""},
		{"truncated", Limits{}, dense[:len(dense)-1], ReasonNotMsgpack, "x"},
		{"never-used code", Limits{}, []byte{0xc1}, ReasonNotMsgpack, ""},
		{"never-used code in x", Limits{}, mp(t, om{"v", 1, "x", raw{0x91, 0xc1}}), ReasonNotMsgpack, "x"},
		{"huge array length", Limits{}, mp(t, om{"v", 1, "x", raw{0xdd, 0x7f, 0xff, 0xff, 0xff}}), ReasonNotMsgpack, "x"},
		{"huge map length", Limits{}, []byte{0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, 'v', 0x01}, ReasonNotMsgpack, ""},
		{"huge string in unknown key", Limits{}, mp(t, om{"v", 1, "note", raw{0xdb, 0xff, 0xff, 0xff, 0xff, 'a'}}), ReasonNotMsgpack, "note"},

		{"array", Limits{}, mp(t, []any{1, 2}), ReasonNotMap, ""},
		{"nil", Limits{}, []byte{0xc0}, ReasonNotMap, ""},
		{"string", Limits{}, mp(t, "v"), ReasonNotMap, ""},

		{"no v", Limits{}, mp(t, om{"x", []float64{1}}), ReasonMissingVersion, "v"},
		{"v nil", Limits{}, mp(t, om{"v", nil, "x", []float64{1}}), ReasonMissingVersion, "v"},

		{"v 4", Limits{}, mp(t, om{"v", 4, "x", []float64{1}}), ReasonUnknownVersion, "v"},
		{"v 0", Limits{}, mp(t, om{"v", 0, "x", []float64{1}}), ReasonUnknownVersion, "v"},
		{"v -1", Limits{}, mp(t, om{"v", -1, "x", []float64{1}}), ReasonUnknownVersion, "v"},
		{"v uint64 max", Limits{}, mp(t, om{"v", uint64(math.MaxUint64), "x", []float64{1}}), ReasonUnknownVersion, "v"},

		{"x string", Limits{}, mp(t, om{"v", 1, "x", "1,2"}), ReasonBadFieldType, "x"},
		{"x element string", Limits{}, mp(t, om{"v", 1, "x", []any{1, "a"}}), ReasonBadFieldType, "x"},
		{"x element nil", Limits{}, mp(t, om{"v", 1, "x", []any{1, nil}}), ReasonBadFieldType, "x"},
		{"x element bool", Limits{}, mp(t, om{"v", 1, "x", []any{true}}), ReasonBadFieldType, "x"},
		{"xv map", Limits{}, mp(t, om{"v", 1, "xi", []int{0}, "xv", om{"a", 1}}), ReasonBadFieldType, "xv"},
		{"xi float", Limits{}, mp(t, om{"v", 1, "xi", []float64{1}, "xv", []float64{1}}), ReasonBadFieldType, "xi"},
		{"id array", Limits{}, mp(t, om{"v", 1, "id", []int{1}, "x", []float64{1}}), ReasonBadFieldType, "id"},
		{"id int", Limits{}, mp(t, om{"v", 1, "id", 7, "x", []float64{1}}), ReasonBadFieldType, "id"},
		{"key int", Limits{}, mp(t, om{"v", 1, "key", 7, "x", []float64{1}}), ReasonBadFieldType, "key"},
		{"ts float", Limits{}, mp(t, om{"v", 1, "ts", 1.5, "x", []float64{1}}), ReasonBadFieldType, "ts"},
		{"ts uint64 max", Limits{}, mp(t, om{"v", 1, "ts", uint64(math.MaxUint64), "x", []float64{1}}), ReasonBadFieldType, "ts"},
		{"y array", Limits{}, mp(t, om{"v", 1, "x", []float64{1}, "y", []any{1}}), ReasonBadFieldType, "y"},
		{"y map", Limits{}, mp(t, om{"v", 1, "x", []float64{1}, "y", om{"a", 1}}), ReasonBadFieldType, "y"},
		{"y string too long", Limits{MaxIDBytes: 3}, mp(t, om{"v", 1, "x", []float64{1}, "y", "four"}), ReasonIDTooLong, "y"},
		{"v float", Limits{}, mp(t, om{"v", 1.0, "x", []float64{1}}), ReasonBadFieldType, "v"},
		{"int map key", Limits{}, mp(t, om{"v", 1, 5, 6, "x", []float64{1}}), ReasonBadFieldType, ""},

		{"duplicate y", Limits{}, mp(t, om{"v", 1, "x", []float64{1}, "y", 1, "y", -1}), ReasonDuplicateKey, "y"},
		{"duplicate v", Limits{}, mp(t, om{"v", 1, "x", []float64{1}, "v", 1}), ReasonDuplicateKey, "v"},

		{"no features", Limits{}, mp(t, om{"v", 1, "y", 1}), ReasonMissingFeatures, ""},
		{"x nil", Limits{}, mp(t, om{"v", 1, "x", nil}), ReasonMissingFeatures, ""},
		{"xi without xv", Limits{}, mp(t, om{"v", 1, "xi", []int{1}}), ReasonMissingFeatures, "xv"},
		{"xv without xi", Limits{}, mp(t, om{"v", 1, "xv", []float64{1}}), ReasonMissingFeatures, "xi"},

		{"dense and sparse", Limits{}, mp(t, om{"v", 1, "x", []float64{1}, "xi", []int{0}, "xv", []float64{1}}), ReasonDenseAndSparse, ""},
		{"dense and xv", Limits{}, mp(t, om{"v", 1, "xv", []float64{1}, "x", []float64{1}}), ReasonDenseAndSparse, ""},

		{"x empty", Limits{}, mp(t, om{"v", 1, "x", []float64{}}), ReasonEmptyFeatures, "x"},
		{"x empty with dim", Limits{Dim: 3}, mp(t, om{"v", 1, "x", []float64{}}), ReasonEmptyFeatures, "x"},
		{"sparse empty", Limits{}, mp(t, om{"v", 1, "xi", []int{}, "xv", []float64{}}), ReasonEmptyFeatures, "xi"},

		{"x too many", Limits{MaxFeatures: 2}, mp(t, om{"v", 1, "x", []float64{1, 2, 3}}), ReasonTooManyFeatures, "x"},
		{"xi too many", Limits{MaxFeatures: 2}, mp(t, om{"v", 1, "xi", []int{1, 2, 3}, "xv", []float64{1, 2, 3}}), ReasonTooManyFeatures, "xi"},
		{"x too many default", Limits{}, mp(t, om{"v", 1, "x", make([]float64, DefaultMaxFeatures+1)}), ReasonTooManyFeatures, "x"},

		{"x NaN", Limits{}, mp(t, om{"v", 1, "x", []float64{1, nan}}), ReasonNonFinite, "x"},
		{"x float32 Inf", Limits{}, mp(t, om{"v", 1, "x", []any{f32(math.Inf(-1))}}), ReasonNonFinite, "x"},
		{"xv Inf", Limits{}, mp(t, om{"v", 1, "xi", []int{0}, "xv", []float64{inf}}), ReasonNonFinite, "xv"},
		{"y -Inf", Limits{}, mp(t, om{"v", 1, "x", []float64{1}, "y", -inf}), ReasonNonFinite, "y"},
		{"y NaN", Limits{}, mp(t, om{"v", 1, "x", []float64{1}, "y", nan}), ReasonNonFinite, "y"},

		{"sparse lengths", Limits{}, mp(t, om{"v", 1, "xi", []int{1, 2}, "xv", []float64{1}}), ReasonSparseLength, "xv"},
		{"sparse unsorted", Limits{}, mp(t, om{"v", 1, "xi", []int{2, 1}, "xv", []float64{1, 1}}), ReasonSparseUnsorted, "xi"},
		{"sparse duplicate", Limits{}, mp(t, om{"v", 1, "xi", []int{1, 1}, "xv", []float64{1, 1}}), ReasonSparseDuplicate, "xi"},
		{"sparse index = dim", Limits{Dim: 3}, mp(t, om{"v", 1, "xi", []int{0, 3}, "xv", []float64{1, 1}}), ReasonSparseOutOfRange, "xi"},
		{"sparse negative", Limits{}, mp(t, om{"v", 1, "xi", []int{-1}, "xv", []float64{1}}), ReasonSparseOutOfRange, "xi"},
		{"sparse 2^32", Limits{}, mp(t, om{"v", 1, "xi", []int64{1 << 32}, "xv", []float64{1}}), ReasonSparseOutOfRange, "xi"},
		{"sparse uint64 max", Limits{}, mp(t, om{"v", 1, "xi", []uint64{math.MaxUint64}, "xv", []float64{1}}), ReasonSparseOutOfRange, "xi"},

		{"dense short", Limits{Dim: 3}, mp(t, om{"v", 1, "x", []float64{1, 2}}), ReasonDimensionMismatch, "x"},
		{"dense long", Limits{Dim: 1}, mp(t, om{"v", 1, "x", []float64{1, 2}}), ReasonDimensionMismatch, "x"},

		{"oversized", Limits{MaxBytes: len(dense) - 1}, dense, ReasonOversized, ""},

		{"trailing", Limits{}, cat(dense, []byte{0x00}), ReasonTrailingBytes, ""},
		{"two maps", Limits{}, cat(dense, dense), ReasonTrailingBytes, ""},

		// Version 2: feedback events.
		{"feedback without y", Limits{}, mp(t, om{"v", 2, "ref", "a"}), ReasonMissingLabel, "y"},
		{"feedback y nil", Limits{}, mp(t, om{"v", 2, "ref", "a", "key", "k", "y", nil}), ReasonMissingLabel, "y"},
		{"feedback bin ref without y", Limits{}, mp(t, om{"v", 2, "ref", []byte{0xff}, "ts", 5}), ReasonMissingLabel, "y"},
		{"ref before v, no y", Limits{}, mp(t, om{"ref", "a", "v", 2}), ReasonMissingLabel, "y"},
		{"feedback with x", Limits{}, mp(t, om{"v", 2, "ref", "a", "x", []float64{1}, "y", 1}), ReasonFeedbackWithFeatures, "x"},
		{"feedback with empty x", Limits{}, mp(t, om{"v", 2, "ref", "a", "x", []float64{}, "y", 1}), ReasonFeedbackWithFeatures, "x"},
		{"feedback with x, dim", Limits{Dim: 1}, mp(t, om{"v", 2, "ref", "a", "x", []float64{1}, "y", 1}), ReasonFeedbackWithFeatures, "x"},
		{"feedback with sparse", Limits{}, mp(t, om{"v", 2, "xi", []int{0}, "xv", []float64{1}, "ref", "a", "y", 1}), ReasonFeedbackWithFeatures, "xi"},
		{"feedback with xv only", Limits{}, mp(t, om{"v", 2, "ref", "a", "xv", []float64{1}, "y", 1}), ReasonFeedbackWithFeatures, "xv"},
		{"feedback with features, no y", Limits{}, mp(t, om{"v", 2, "ref", "a", "x", []float64{1}}), ReasonFeedbackWithFeatures, "x"},
		{"ref before v, with x", Limits{}, mp(t, om{"ref", "a", "x", []float64{1}, "y", 1, "v", 2}), ReasonFeedbackWithFeatures, "x"},
		{"feedback y NaN", Limits{}, mp(t, om{"v", 2, "ref", "a", "y", nan}), ReasonNonFinite, "y"},
		{"feedback x NaN", Limits{}, mp(t, om{"v", 2, "ref", "a", "x", []float64{nan}, "y", 1}), ReasonNonFinite, "x"},
		{"feedback x wrong dim", Limits{Dim: 3}, mp(t, om{"v", 2, "ref", "a", "x", []float64{1}, "y", 1}), ReasonDimensionMismatch, "x"},
		{"ref int", Limits{}, mp(t, om{"v", 2, "ref", 7, "y", 1}), ReasonBadFieldType, "ref"},
		{"ref array before v", Limits{}, mp(t, om{"ref", []any{"a"}, "y", 1, "v", 2}), ReasonBadFieldType, "ref"},
		{"ref twice", Limits{}, mp(t, om{"v", 2, "ref", "a", "y", 1, "ref", "a"}), ReasonDuplicateKey, "ref"},
		{"ref twice, nil first", Limits{}, mp(t, om{"v", 2, "ref", nil, "x", []float64{1}, "ref", "a"}), ReasonDuplicateKey, "ref"},
		{"v2 empty ref, no features", Limits{}, mp(t, om{"v", 2, "ref", "", "y", 1}), ReasonMissingFeatures, ""},
		{"v2 no features", Limits{}, mp(t, om{"v", 2, "id", "a", "y", 1}), ReasonMissingFeatures, ""},
		{"v2 dense and sparse", Limits{}, mp(t, om{"v", 2, "x", []float64{1}, "xi", []int{0}, "xv", []float64{1}}), ReasonDenseAndSparse, ""},
		{"v2 ref truncated", Limits{}, truncated(mp(t, om{"v", 2, "ref", "abc"})), ReasonNotMsgpack, "ref"},
		{"ref before v, truncated", Limits{}, truncated(mp(t, om{"ref", "a", "y", 1, "v", 2, "note", "abc"})), ReasonNotMsgpack, "note"},
		{"ref before v, trailing", Limits{}, cat(mp(t, om{"ref", "a", "y", 1, "v", 2}), []byte{0}), ReasonTrailingBytes, ""},
		{"ref before missing v", Limits{}, mp(t, om{"ref", "a", "y", 1}), ReasonMissingVersion, "v"},
		{"ref before v nil", Limits{}, mp(t, om{"ref", "a", "v", nil, "y", 1}), ReasonMissingVersion, "v"},
		{"ref before v 4", Limits{}, mp(t, om{"ref", "a", "y", 1, "v", 4}), ReasonUnknownVersion, "v"},
		{"ref before v string", Limits{}, mp(t, om{"ref", "a", "y", 1, "v", "2"}), ReasonBadFieldType, "v"},
		{"ref before two v", Limits{}, mp(t, om{"ref", "a", "v", 2, "y", 1, "v", 2}), ReasonDuplicateKey, "v"},
		{"v1 ref is not feedback", Limits{}, mp(t, om{"v", 1, "ref", "a", "y", 1}), ReasonMissingFeatures, ""},
		{"v1 ref before v is not feedback", Limits{}, mp(t, om{"ref", "a", "y", 1, "v", 1}), ReasonMissingFeatures, ""},
		{"v1 malformed ref", Limits{}, mp(t, om{"v", 1, "x", []float64{1}, "ref", raw{0x91, 0xc1}}), ReasonNotMsgpack, "ref"},

		// Value and string limits.
		{"x above max abs", Limits{MaxAbsValue: 1e9}, mp(t, om{"v", 1, "x", []float64{1, -1e308}}), ReasonValueOutOfRange, "x"},
		{"xv above max abs", Limits{MaxAbsValue: 1e9}, mp(t, om{"v", 1, "xi", []int{0}, "xv", []float64{2e9}}), ReasonValueOutOfRange, "xv"},
		{"y above max abs", Limits{MaxAbsValue: 1e9}, mp(t, om{"v", 1, "x", []float64{1}, "y", 1e308}), ReasonValueOutOfRange, "y"},
		{"feedback y above max abs", Limits{MaxAbsValue: 1e9}, mp(t, om{"v", 2, "ref", "a", "y", -1e10}), ReasonValueOutOfRange, "y"},
		{"NaN before range", Limits{MaxAbsValue: 1e9}, mp(t, om{"v", 1, "x", []float64{nan}}), ReasonNonFinite, "x"},
		{"id too long", Limits{MaxIDBytes: 3}, mp(t, om{"v", 1, "id", "abcd", "x", []float64{1}}), ReasonIDTooLong, "id"},
		{"key too long", Limits{MaxIDBytes: 3}, mp(t, om{"v", 1, "key", []byte("abcd"), "x", []float64{1}}), ReasonIDTooLong, "key"},
		{"ref too long", Limits{MaxIDBytes: 3}, mp(t, om{"v", 2, "ref", "abcd", "y", 1}), ReasonIDTooLong, "ref"},
	}, namedReasonCases(t)...)
}

// TestReasons decodes a minimal offending input for every Reason.
func TestReasons(t *testing.T) {
	covered := map[Reason]bool{}
	for _, tc := range reasonCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			ev := Event{Version: 9, ID: "stale", X: []float64{1, 2, 3}}
			err := NewDecoder(tc.lim).DecodeEvent(tc.in, &ev)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got error %v (%T), want *Error with reason %s", err, err, tc.want)
			}
			if e.Reason != tc.want {
				t.Fatalf("got %v, want reason %s", err, tc.want)
			}
			if e.Field != tc.field {
				t.Errorf("got field %q, want %q (%v)", e.Field, tc.field, err)
			}
			if e.Detail == "" {
				t.Errorf("no detail: %v", err)
			}
			if !eventsEqual(&ev, &Event{}) {
				t.Errorf("event after error is %+v, want the zero Event", ev)
			}
			covered[tc.want] = true
		})
	}
	for _, r := range Reasons() {
		if r == ReasonNotJSON || r == ReasonLooksLikeMsgpack {
			continue // JSON only: TestReasonsJSON
		}
		if !covered[r] {
			t.Errorf("no test case for reason %s", r)
		}
	}
}

// TestReasonPrecedence checks the documented order when a record has several problems.
func TestReasonPrecedence(t *testing.T) {
	badX := []any{"v", 1, "x", "str"}
	cases := []struct {
		name string
		in   []byte
		want Reason
	}{
		{"unknown version before field error", mp(t, om{"v", 4, "x", "str"}), ReasonUnknownVersion},
		{"unknown version after field error", mp(t, om{"x", "str", "v", 4}), ReasonUnknownVersion},
		{"missing version beats field error", mp(t, om{"x", "str"}), ReasonMissingVersion},
		{"bad v type beats field error", mp(t, om{"x", "str", "v", "1"}), ReasonBadFieldType},
		{"truncation beats field error", mp(t, om(badX))[:len(mp(t, om(badX)))-1], ReasonNotMsgpack},
		{"truncation after field error", truncated(mp(t, om{"v", 1, "x", "str", "y", 1.5})), ReasonNotMsgpack},
		{"trailing beats field error", cat(mp(t, om{"v", 1, "x", []float64{nan}}), []byte{1}), ReasonTrailingBytes},
		{"trailing beats unknown version", cat(mp(t, om{"v", 4, "x", []float64{1}}), []byte{1}), ReasonTrailingBytes},
		{"field error beats record rule", mp(t, om{"v", 1, "x", []float64{nan}, "xi", []int{1}}), ReasonNonFinite},
		{"first field error in byte order", mp(t, om{"v", 1, "y", []any{"s"}, "x", []float64{nan}}), ReasonBadFieldType},
		{"duplicate v beats field error", mp(t, om{"v", 1, "x", "s", "v", 1}), ReasonDuplicateKey},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeEvent(tc.in, Limits{})
			if got := ReasonOf(err); got != tc.want {
				t.Errorf("got %v, want reason %s", err, tc.want)
			}
		})
	}
}

func truncated(b []byte) []byte { return b[:len(b)-1] }

func TestErrorMessage(t *testing.T) {
	_, err := DecodeEvent(mp(t, om{"v", 1, "x", []float64{1, 2, 3, nan}}), Limits{})
	if got, want := err.Error(), `codec: field "x": element 3 is NaN (non_finite)`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	_, err = DecodeEvent(mp(t, []int{1}), Limits{})
	if got, want := err.Error(), `codec: top-level value is a array, want a map (not_a_map)`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := (&Error{Reason: ReasonOversized}).Error(), "codec: oversized (oversized)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("partition 3: %w", err)
	if !errors.Is(wrapped, &Error{Reason: ReasonNotMap}) || errors.Is(wrapped, &Error{Reason: ReasonNotMsgpack}) {
		t.Error("errors.Is does not match by reason")
	}
	if ReasonOf(wrapped) != ReasonNotMap || ReasonOf(nil) != "" || ReasonOf(errors.New("x")) != "" {
		t.Error("ReasonOf")
	}
}

func TestReasonsList(t *testing.T) {
	seen := map[Reason]bool{}
	for _, r := range Reasons() {
		if seen[r] {
			t.Errorf("duplicate reason %s", r)
		}
		seen[r] = true
		for _, c := range string(r) {
			if (c < 'a' || c > 'z') && c != '_' {
				t.Errorf("reason %q is not snake_case", r)
			}
		}
	}
	if len(seen) != 26 {
		t.Errorf("%d reasons, want 26", len(seen))
	}
	rs := Reasons()
	rs[0] = "changed"
	if Reasons()[0] == "changed" {
		t.Error("Reasons returns shared storage")
	}
}

// TestUnknownKeysIgnored checks that keys this version does not know, with
// values of every msgpack type, do not change the decoded event.
func TestUnknownKeysIgnored(t *testing.T) {
	base := om{"v", 1, "id", "e", "x", []float64{1, 2}, "y", 1.0}
	want, err := DecodeEvent(mp(t, base), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	extras := []any{
		nil, true, 7, -7, uint64(math.MaxUint64), 1.5, f32(2), "s", strings.Repeat("long", 100), []byte{1, 2},
		[]any{1, []any{2, om{"a", []any{}}}}, om{"x", "not the features", "v", 99},
		raw{0xd4, 0x01, 0x00},                  // fixext1
		raw{0xc7, 0x03, 0x05, 1, 2, 3},         // ext8
		raw{0xc5, 0x00, 0x02, 9, 9},            // bin16
		raw{0xdc, 0x00, 0x02, 0xc0, 0xc0},      // array16
		raw{0xde, 0x00, 0x01, 0xa1, 'k', 0xc3}, // map16
		raw{0xdb, 0x00, 0x00, 0x00, 0x01, 'z'}, // str32
		raw{0xd9, 0x00},                        // empty str8
		raw{0xcf, 1, 2, 3, 4, 5, 6, 7, 8},      // uint64
		raw{0xd3, 1, 2, 3, 4, 5, 6, 7, 8},      // int64
	}
	for i, extra := range extras {
		for pos := 0; pos <= len(base); pos += 2 {
			m := append(om{}, base[:pos]...)
			m = append(m, "extra_field", extra)
			m = append(m, base[pos:]...)
			got, err := DecodeEvent(mp(t, m), Limits{})
			if err != nil {
				t.Fatalf("extra %d at %d: %v", i, pos, err)
			}
			if !eventsEqual(&got, &want) {
				t.Fatalf("extra %d at %d: got %+v want %+v", i, pos, got, want)
			}
		}
	}
	// A binary key is accepted as a key.
	got, err := DecodeEvent(mp(t, om{[]byte("v"), 1, []byte("x"), []float64{1, 2}, "id", "e", "y", 1}), Limits{})
	if err != nil || got.ID != "e" || len(got.X) != 2 {
		t.Errorf("bin keys: %+v %v", got, err)
	}
}

func TestNilMeansAbsent(t *testing.T) {
	got, err := DecodeEvent(mp(t, om{"v", 1, "id", nil, "ts", nil, "key", nil, "x", []float64{1}, "xi", nil, "xv", nil, "y", nil}), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := Event{Version: 1, X: []float64{1}}
	if !eventsEqual(&got, &want) {
		t.Errorf("got %+v", got)
	}
}

func TestLimits(t *testing.T) {
	in := mp(t, om{"v", 1, "xi", []int{0, 9}, "xv", []float64{1, 2}})
	if _, err := DecodeEvent(in, Limits{Dim: 10, MaxFeatures: 2, MaxBytes: len(in)}); err != nil {
		t.Errorf("at the limits: %v", err)
	}
	if _, err := DecodeEvent(in, Limits{Dim: 9}); ReasonOf(err) != ReasonSparseOutOfRange {
		t.Errorf("dim 9: %v", err)
	}
	if _, err := DecodeEvent(in, Limits{Dim: -1, MaxFeatures: -1, MaxBytes: -1}); err != nil {
		t.Errorf("negative limits count as 0: %v", err)
	}
	// With MaxFeatures 0 a Dim above the default raises the limit.
	big := make([]float64, DefaultMaxFeatures+1)
	if _, err := DecodeEvent(mp(t, om{"v", 1, "x", big}), Limits{Dim: len(big)}); err != nil {
		t.Errorf("Dim above DefaultMaxFeatures: %v", err)
	}
	// Sparse index up to 2^32-1 with no Dim.
	ev, err := DecodeEvent(mp(t, om{"v", 1, "xi", []int64{math.MaxUint32}, "xv", []float64{1}}), Limits{})
	if err != nil || ev.XI[0] != math.MaxUint32 {
		t.Errorf("index 2^32-1: %v %v", ev.XI, err)
	}
}

// TestNumberForms checks every msgpack number form as a feature value and as a label.
func TestNumberForms(t *testing.T) {
	forms := []struct {
		raw  raw
		want float64
	}{
		{raw{0x05}, 5}, {raw{0xe0}, -32}, {raw{0xcc, 0xff}, 255}, {raw{0xcd, 0xff, 0xff}, 65535},
		{raw{0xce, 0xff, 0xff, 0xff, 0xff}, math.MaxUint32}, {raw{0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, math.MaxUint64},
		{raw{0xd0, 0x80}, -128}, {raw{0xd1, 0x80, 0x00}, -32768}, {raw{0xd2, 0x80, 0, 0, 0}, math.MinInt32},
		{raw{0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0}, math.MinInt64}, {raw{0xca, 0x3f, 0xc0, 0, 0}, 1.5},
		{raw{0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0}, 1.5},
	}
	for _, f := range forms {
		ev, err := DecodeEvent(mp(t, om{"v", 1, "x", []any{f.raw}, "xi", nil, "y", f.raw}), Limits{})
		if err != nil {
			t.Fatalf("%x: %v", f.raw, err)
		}
		if ev.X[0] != f.want || ev.Y != f.want {
			t.Errorf("%x: got x %v y %v, want %v", f.raw, ev.X[0], ev.Y, f.want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := NewDecoder(Limits{})
	var ev Event
	var buf []byte
	for i := 0; i < 2000; i++ {
		want := randomEvent(rng, 1+rng.IntN(40))
		b, err := AppendEvent(nil, &want)
		if err != nil {
			t.Fatalf("%+v: %v", want, err)
		}
		again, _ := AppendEvent(nil, &want)
		if !bytes.Equal(b, again) {
			t.Fatal("AppendEvent is not deterministic")
		}
		// Appending keeps dst's prefix.
		buf, err = AppendEvent(append(buf[:0], "prefix"...), &want)
		if err != nil || string(buf[:6]) != "prefix" || !bytes.Equal(buf[6:], b) {
			t.Fatal("AppendEvent onto a non-empty dst")
		}
		if err := d.DecodeEvent(b, &ev); err != nil {
			t.Fatalf("%x: %v", b, err)
		}
		if !eventsEqual(&ev, &want) {
			t.Fatalf("round trip\n got %+v\nwant %+v", ev, want)
		}
		b2, err := AppendEvent(nil, &ev)
		if err != nil || !bytes.Equal(b2, b) {
			t.Fatalf("decode→encode changed the bytes: %v", err)
		}
	}
}

func TestAppendEventValidation(t *testing.T) {
	cases := []struct {
		name  string
		ev    Event
		want  Reason
		field string
	}{
		{"version 0", Event{X: []float64{1}}, ReasonMissingVersion, "v"},
		{"version 4", Event{Version: 4, X: []float64{1}}, ReasonUnknownVersion, "v"},
		{"no features", Event{Version: 1}, ReasonMissingFeatures, ""},
		{"both", Event{Version: 1, X: []float64{1}, XI: []uint32{0}, XV: []float64{1}}, ReasonDenseAndSparse, ""},
		{"empty x", Event{Version: 1, X: []float64{}}, ReasonEmptyFeatures, "x"},
		{"empty sparse", Event{Version: 1, XI: []uint32{}, XV: []float64{}}, ReasonEmptyFeatures, "xi"},
		{"xi only", Event{Version: 1, XI: []uint32{1}}, ReasonMissingFeatures, "xv"},
		{"lengths", Event{Version: 1, XI: []uint32{1}, XV: []float64{1, 2}}, ReasonSparseLength, "xv"},
		{"unsorted", Event{Version: 1, XI: []uint32{2, 1}, XV: []float64{1, 2}}, ReasonSparseUnsorted, "xi"},
		{"duplicate", Event{Version: 1, XI: []uint32{2, 2}, XV: []float64{1, 2}}, ReasonSparseDuplicate, "xi"},
		{"NaN x", Event{Version: 1, X: []float64{nan}}, ReasonNonFinite, "x"},
		{"Inf xv", Event{Version: 1, XI: []uint32{2}, XV: []float64{-inf}}, ReasonNonFinite, "xv"},
		{"NaN y", Event{Version: 1, X: []float64{1}, Y: nan, HasY: true}, ReasonNonFinite, "y"},
		{"too many", Event{Version: 1, X: make([]float64, DefaultMaxFeatures+1)}, ReasonTooManyFeatures, "x"},
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
	// Fields that are not encoded do not matter.
	ev := Event{Version: 1, X: []float64{1}, TS: 5, Y: nan}
	if _, err := AppendEvent(nil, &ev); err != nil {
		t.Errorf("NaN Y without HasY: %v", err)
	}
}

func TestDense(t *testing.T) {
	dense := Event{X: []float64{1, 2, 3}}
	dst := make([]float64, 2, 8)
	got := dense.Dense(dst, 3)
	if !floatsEqual(got, []float64{1, 2, 3}) || &got[0] != &dst[0] {
		t.Errorf("dense: got %v (reused storage: %v)", got, &got[0] == &dst[0])
	}
	sparse := Event{XI: []uint32{0, 4}, XV: []float64{5, 6}}
	dst = []float64{9, 9, 9, 9, 9, 9}
	got = sparse.Dense(dst, 5)
	if !floatsEqual(got, []float64{5, 0, 0, 0, 6}) || &got[0] != &dst[0] {
		t.Errorf("sparse: got %v", got)
	}
	if got := sparse.Dense(nil, 6); !floatsEqual(got, []float64{5, 0, 0, 0, 6, 0}) {
		t.Errorf("sparse into nil: got %v", got)
	}
	mustPanic(t, "dense dim mismatch", func() { dense.Dense(nil, 4) })
	mustPanic(t, "sparse index out of range", func() { sparse.Dense(nil, 4) })
}

func mustPanic(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", name)
		}
	}()
	f()
}

// TestDecoderReuse checks that a reused Event's storage is reused, that
// nothing leaks between events, and that separate Events do not alias.
func TestDecoderReuse(t *testing.T) {
	d := NewDecoder(Limits{Dim: 4})
	denseB := mp(t, om{"v", 1, "id", "a", "ts", 9, "key", "k", "x", []float64{1, 2, 3, 4}, "y", 1})
	sparseB := mp(t, om{"v", 1, "xi", []int{1, 3}, "xv", []float64{5, 6}})
	var ev1, ev2 Event
	if err := d.DecodeEvent(denseB, &ev1); err != nil {
		t.Fatal(err)
	}
	x1 := &ev1.X[0]
	if err := d.DecodeEvent(sparseB, &ev1); err != nil {
		t.Fatal(err)
	}
	want := Event{Version: 1, XI: []uint32{1, 3}, XV: []float64{5, 6}}
	if !eventsEqual(&ev1, &want) {
		t.Fatalf("fields leaked from the previous event: %+v", ev1)
	}
	// ev1's old X buffer is now the decoder's; a dense event into ev1 again gets it back.
	if err := d.DecodeEvent(denseB, &ev1); err != nil {
		t.Fatal(err)
	}
	if &ev1.X[0] != x1 {
		t.Error("dense buffer not reused across a sparse event")
	}
	if err := d.DecodeEvent(denseB, &ev2); err != nil {
		t.Fatal(err)
	}
	ev2.X[0] = 100
	if ev1.X[0] != 1 {
		t.Error("two Events share storage")
	}
	// An error leaves the zero Event.
	if err := d.DecodeEvent([]byte{0x90}, &ev1); err == nil || !eventsEqual(&ev1, &Event{}) {
		t.Errorf("after error: %+v %v", ev1, err)
	}
}

func TestDecodeAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	d := NewDecoder(Limits{Dim: 300})
	rng := rand.New(rand.NewPCG(3, 4))
	dense := randomEvent(rng, 300)
	for dense.X == nil {
		dense = randomEvent(rng, 300)
	}
	dense.ID, dense.Key = "", ""
	db, _ := AppendEvent(nil, &dense)
	// Unknown keys of every kind are skipped without allocating.
	sb := mp(t, om{"v", 1, "note", "hello", "meta", om{"a", []any{1, 2.5, "s", []byte{1}}}, "ts", 1,
		"xi", []int{1, 50, 299}, "xv", []float64{1, 2, 3}, "y", 1, "ext", raw{0xd4, 1, 2}})
	var ev Event
	for _, b := range [][]byte{db, sb} {
		if err := d.DecodeEvent(b, &ev); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(100, func() {
		if err := d.DecodeEvent(db, &ev); err != nil {
			t.Fatal(err)
		}
		if err := d.DecodeEvent(sb, &ev); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per dense+sparse decode into a reused Event, want 0", allocs)
	}
	enc := make([]byte, 0, 4096)
	allocs = testing.AllocsPerRun(100, func() {
		enc, _ = AppendEvent(enc[:0], &dense)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per AppendEvent with room in dst, want 0", allocs)
	}
}

// TestHostileLengths checks that declared lengths far beyond the record do not
// make the decoder allocate or recurse in proportion to them.
func TestHostileLengths(t *testing.T) {
	cases := map[string][]byte{
		"array32 x":          mp(t, om{"v", 1, "x", raw{0xdd, 0xff, 0xff, 0xff, 0xff, 0x01}}),
		"array32 xi":         mp(t, om{"v", 1, "xi", raw{0xdd, 0xff, 0xff, 0xff, 0xff, 0x01}}),
		"str32 id":           mp(t, om{"v", 1, "id", raw{0xdb, 0xff, 0xff, 0xff, 0xff, 'a'}}),
		"bin32 key":          mp(t, om{"v", 1, "key", raw{0xc6, 0xff, 0xff, 0xff, 0xff, 'a'}}),
		"ext32 unknown":      mp(t, om{"v", 1, "zz", raw{0xc9, 0xff, 0xff, 0xff, 0xff, 0x01, 'a'}}),
		"map32 unknown":      mp(t, om{"v", 1, "zz", raw{0xdf, 0xff, 0xff, 0xff, 0xff, 0xc0}}),
		"map32 top":          {0xdf, 0xff, 0xff, 0xff, 0xff},
		"str32 key":          {0x81, 0xdb, 0xff, 0xff, 0xff, 0xff},
		"deeply nested":      cat(mp(t, om{"v", 1, "zz", raw{}}), bytes.Repeat([]byte{0x91}, 1<<20)),
		"deeply nested maps": cat(mp(t, om{"v", 1, "zz", raw{}}), bytes.Repeat([]byte{0x81, 0xc0}, 1<<19)),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := DecodeEvent(b, Limits{})
			runtime.ReadMemStats(&after)
			if ReasonOf(err) != ReasonNotMsgpack {
				t.Errorf("got %v, want not_msgpack", err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
				t.Errorf("allocated %d bytes", n)
			}
		})
	}
}

// TestValueLimitsBoundary: the limits are inclusive, off when zero (or
// negative, or NaN for MaxAbsValue), and a refused event leaves the decoder
// reusable.
func TestValueLimitsBoundary(t *testing.T) {
	at := mp(t, om{"v", 1, "id", "abc", "x", []float64{-1e9, 1e9}, "y", 1e9})
	if _, err := DecodeEvent(at, Limits{MaxAbsValue: 1e9, MaxIDBytes: 3}); err != nil {
		t.Fatalf("values at the limits refused: %v", err)
	}
	huge := mp(t, om{"v", 1, "id", "abcd", "x", []float64{1e308, -1e308}, "y", 1e308})
	for _, lim := range []Limits{{}, {MaxAbsValue: -1, MaxIDBytes: -1}, {MaxAbsValue: nan}} {
		if _, err := DecodeEvent(huge, lim); err != nil {
			t.Fatalf("limits %+v are off, yet: %v", lim, err)
		}
	}
	d := NewDecoder(Limits{MaxAbsValue: 1e9})
	var ev Event
	if err := d.DecodeEvent(huge, &ev); ReasonOf(err) != ReasonValueOutOfRange {
		t.Fatalf("got %v", err)
	}
	if err := d.DecodeEvent(at, &ev); err != nil || ev.X[1] != 1e9 {
		t.Fatalf("decoder not reusable after a refusal: %v %+v", err, ev)
	}
}
