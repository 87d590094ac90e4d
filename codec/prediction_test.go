package codec

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestDecision(t *testing.T) {
	cases := []struct {
		score float64
		want  int8
	}{
		{0.3, 1}, {math.SmallestNonzeroFloat64, 1}, {math.Inf(1), 1},
		{-2, -1}, {-math.SmallestNonzeroFloat64, -1}, {math.Inf(-1), -1},
		{0, 0}, {math.Copysign(0, -1), 0}, {math.NaN(), 0},
	}
	for _, tc := range cases {
		if got := Decision(tc.score); got != tc.want {
			t.Errorf("Decision(%v) = %d, want %d", tc.score, got, tc.want)
		}
	}
}

func randomPrediction(rng *rand.Rand) Prediction {
	p := Prediction{Version: 1, Topic: "events", Partition: int32(rng.IntN(64)), Offset: rng.Int64N(1 << 40)}
	if rng.IntN(2) == 0 {
		p.ID = randomString(rng)
	}
	if rng.IntN(2) == 0 {
		p.Key = randomString(rng)
	}
	if rng.IntN(2) == 0 {
		p.TS, p.HasTS = rng.Int64(), true
	}
	if rng.IntN(2) == 0 {
		p.Y, p.HasY = randomFloat(rng), true
	}
	if rng.IntN(3) == 0 { // an outcome record
		p.Version, p.HasRef, p.RefOffset = 2, true, rng.Int64()>>rng.IntN(64)*int64(1-2*rng.IntN(2))
		if rng.IntN(4) > 0 {
			p.Ref = randomString(rng)
		}
	}
	v3 := rng.IntN(2) == 0 // version 3: probabilities and a class
	if v3 {
		p.Version = 3
		if rng.IntN(2) == 0 {
			p.Class = randomString(rng)
		}
	}
	for i := rng.IntN(5); i > 0; i-- {
		m := ModelScore{Name: randomString(rng), Score: randomFloat(rng), Updates: rng.Uint64() >> rng.IntN(64)}
		if rng.IntN(2) == 0 {
			m.Classify, m.Decision = true, Decision(m.Score)
		}
		if v3 && rng.IntN(2) == 0 {
			m.Prob, m.HasProb = rng.Float64(), true
		}
		p.Models = append(p.Models, m)
	}
	return p
}

func TestPredictionRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 2000; i++ {
		want := randomPrediction(rng)
		b := AppendPrediction(nil, &want)
		if !bytes.Equal(b, AppendPrediction(nil, &want)) {
			t.Fatal("not deterministic")
		}
		got, err := DecodePrediction(b)
		if err != nil {
			t.Fatalf("%x: %v", b, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip\n got %+v\nwant %+v", got, want)
		}
		if b2 := AppendPrediction([]byte{1, 2}, &got); !bytes.Equal(b2[2:], b) || b2[0] != 1 {
			t.Fatal("re-encoding changed the bytes")
		}
	}
	// Version is always written as PredictionVersion; Decision only with Classify.
	p := Prediction{Version: 0, Models: []ModelScore{{Name: "r", Score: 1, Decision: 1}}}
	got, err := DecodePrediction(AppendPrediction(nil, &p))
	if err != nil || got.Version != PredictionVersion || got.Models[0].Decision != 0 {
		t.Errorf("got %+v, %v", got, err)
	}
	// Non-finite scores survive.
	p = Prediction{Models: []ModelScore{{Score: math.NaN()}}}
	got, err = DecodePrediction(AppendPrediction(nil, &p))
	if err != nil || !math.IsNaN(got.Models[0].Score) {
		t.Errorf("NaN score: got %+v, %v", got, err)
	}
}

func TestPredictionAllocs(t *testing.T) {
	p := Prediction{Version: 1, ID: "events/0/1", Key: "u", Topic: "events", Offset: 1,
		Models: []ModelScore{{Name: "fogd", Score: 1, Classify: true, Decision: 1, Updates: 3}, {Name: "nogd", Score: -1, Updates: 3}}}
	buf := make([]byte, 0, 256)
	if a := testing.AllocsPerRun(100, func() { buf = AppendPrediction(buf[:0], &p) }); a != 0 {
		t.Errorf("%v allocations per AppendPrediction, want 0", a)
	}
	p.Version, p.Class = PredictionVersionProb, "spam"
	p.Models[0].Prob, p.Models[0].HasProb = 0.75, true
	if a := testing.AllocsPerRun(100, func() { buf = AppendPrediction(buf[:0], &p) }); a != 0 {
		t.Errorf("%v allocations per AppendPrediction (version 3), want 0", a)
	}
}

func TestDecodePredictionErrors(t *testing.T) {
	good := om{"v", 1, "t", "events", "p", 0, "o", 1}
	with := func(kv ...any) om { return append(append(om{}, good...), kv...) }
	cases := []struct {
		name  string
		in    []byte
		want  Reason
		field string
	}{
		{"empty", nil, ReasonNotMsgpack, ""},
		{"truncated", truncated(mp(t, good)), ReasonNotMsgpack, "o"},
		{"array", mp(t, []int{1}), ReasonNotMap, ""},
		{"no v", mp(t, om{"t", "events"}), ReasonMissingVersion, "v"},
		{"v 3", mp(t, om{"v", 3}), ReasonUnknownVersion, "v"},
		{"v string", mp(t, om{"v", "1"}), ReasonBadFieldType, "v"},
		{"p twice", mp(t, with("p", 1)), ReasonDuplicateKey, "p"},
		{"p out of range", mp(t, om{"v", 1, "p", int64(1) << 31}), ReasonBadFieldType, "p"},
		{"o float", mp(t, om{"v", 1, "o", 1.0}), ReasonBadFieldType, "o"},
		{"t int", mp(t, om{"v", 1, "t", 1}), ReasonBadFieldType, "t"},
		{"y string", mp(t, om{"v", 1, "y", "1"}), ReasonBadFieldType, "y"},
		{"m map", mp(t, with("m", om{})), ReasonBadFieldType, "m"},
		{"m element int", mp(t, with("m", []any{1})), ReasonBadFieldType, "m[0]"},
		{"d 2", mp(t, with("m", []any{om{"n", "a", "d", 2}})), ReasonBadFieldType, "m[0].d"},
		{"u negative", mp(t, with("m", []any{om{"n", "a"}, om{"u", -1}})), ReasonBadFieldType, "m[1].u"},
		{"s string", mp(t, with("m", []any{om{"s", "x"}})), ReasonBadFieldType, "m[0].s"},
		{"model duplicate", mp(t, with("m", []any{om{"s", 1.0, "s", 2.0}})), ReasonDuplicateKey, "m[0].s"},
		{"model int key", mp(t, with("m", []any{om{1, 1.0}})), ReasonBadFieldType, "m[0]"},
		{"trailing", cat(mp(t, good), []byte{0xc0}), ReasonTrailingBytes, ""},
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
	// Unknown keys and nil values are accepted.
	p, err := DecodePrediction(mp(t, with("extra", []any{1, om{"a", nil}}, "y", nil, "m", []any{om{"n", "a", "zz", 1, "d", nil}})))
	if err != nil || p.HasY || len(p.Models) != 1 || p.Models[0].Name != "a" || p.Models[0].Classify {
		t.Errorf("got %+v, %v", p, err)
	}
}
