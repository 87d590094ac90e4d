package consumer

import (
	"fmt"
	"math"
	"testing"

	"okstream/codec"
	"okstream/features"
	"okstream/features/kinds"
	"okstream/learner"
	"okstream/learner/rng"
)

// The runtime declares the named features' kinds to its models as eval
// does (features/kinds.Declarer): a model fed through the partition's
// encoder scores bit for bit as a learner given the same vectors with the
// kinds declared at the same events, and not as one that was never told
// (indicators would be standardised), also after a reset rebuilt the model.
func TestNamedFeatureKindsDeclared(t *testing.T) {
	const dim = 24
	ms, err := newModelSet([]Model{{Name: "m", Spec: "fogd:budget=20"}}, dim, pendingLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ms.setFeatures(features.Config{Dim: dim}); err != nil {
		t.Fatal(err)
	}
	told, _ := learner.New("fogd:budget=20", dim)
	blind, _ := learner.New("fogd:budget=20", dim)
	enc := features.New(ms.fcfg)
	var d kinds.Declarer
	src := rng.New(3)
	var out []codec.ModelScore
	differ := 0
	for i := 0; i < 700; i++ {
		u := src.IntN(12)
		a := src.Float64()*2 - 1
		fields := []codec.Field{
			{Name: "a", Kind: codec.FieldNumber, Num: a},
			{Name: "user", Kind: codec.FieldString, Str: fmt.Sprintf("u%d", u)},
		}
		if i >= 400 { // a numeric field that appears after the warm-up
			fields = append(fields, codec.Field{Name: "late", Kind: codec.FieldNumber, Num: src.Float64()})
		}
		y := -1.0
		if a+0.3*float64(u%3)-0.3 > 0 {
			y = 1
		}
		x, err := ms.encode(fields, nil)
		if err != nil {
			t.Fatal(err)
		}
		if i == 500 {
			ms.reset(ms.models[0], resetNonFinite) // a rebuilt model takes the kinds too
			told, _ = learner.New("fogd:budget=20", dim)
			_ = kinds.Give(d.Current(), told)
		}
		out = ms.score(x, y, true, out[:0], nil)
		x2, _ := enc.Encode(fields, nil)
		if err := d.Declare(enc, told); err != nil {
			t.Fatal(err)
		}
		want := told.Learn(x2, y)
		if math.Float64bits(out[0].Score) != math.Float64bits(want) {
			t.Fatalf("event %d: runtime score %v, learner told the kinds %v", i, out[0].Score, want)
		}
		if i < 500 && blind.Learn(x2, y) != want {
			differ++
		}
	}
	if differ < 100 {
		t.Fatalf("a learner never told the kinds scored differently at only %d of 500 events: the declarations change nothing", differ)
	}
}
