package kinds

import (
	"slices"
	"testing"

	"okstream/codec"
	"okstream/features"
	"okstream/learner"
)

type kindRecorder struct{ calls [][]learner.FeatureKind }

func (k *kindRecorder) SetFeatureKinds(kinds []learner.FeatureKind) error {
	k.calls = append(k.calls, slices.Clone(kinds))
	return nil
}

// Declare passes the kinds when, and only when, the encoder allocated
// coordinates since the last call (or after Reset), converted one to one.
func TestDeclarer(t *testing.T) {
	e := features.New(features.Config{Dim: 8})
	var d Declarer
	var k kindRecorder
	events := [][]codec.Field{
		{{Name: "a", Kind: codec.FieldNumber, Num: 1}, {Name: "c", Kind: codec.FieldString, Str: "x"}},
		{{Name: "a", Kind: codec.FieldNumber, Num: 2}, {Name: "c", Kind: codec.FieldString, Str: "x"}},
		{{Name: "a", Kind: codec.FieldNumber, Num: 3}, {Name: "c", Kind: codec.FieldString, Str: "y"}},
	}
	for _, ev := range events {
		if _, err := e.Encode(ev, nil); err != nil {
			t.Fatal(err)
		}
		if err := d.Declare(e, &k, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(k.calls) != 2 { // the first event and the new value y; not the repeat
		t.Fatalf("%d declarations, want 2", len(k.calls))
	}
	for j, kind := range e.Kinds() {
		if k.calls[1][j] != learner.FeatureKind(kind) {
			t.Fatalf("coordinate %d: declared %v, the encoder's kind %v", j, k.calls[1][j], kind)
		}
	}
	d.Reset()
	if err := d.Declare(e, &k); err != nil || len(k.calls) != 3 {
		t.Fatalf("after Reset: %d declarations (%v)", len(k.calls), err)
	}
}
