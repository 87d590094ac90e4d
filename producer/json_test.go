package producer

import (
	"bytes"
	"math"
	"reflect"
	"testing"
	"time"

	"okstream/codec"
)

// With Config.JSON the plan's records are JSON objects that decode
// (DecodeEventJSON) to the very events the msgpack records decode to,
// bit for bit (-0.0, tiny and huge values included), with the same keys.
func TestPlanJSON(t *testing.T) {
	const n, dim = 40, 9
	ds := synth(n, dim)
	now := time.UnixMilli(1_700_000_000_123)
	dec := codec.NewDecoder(codec.Limits{Dim: dim})
	for _, sparse := range []bool{false, true} {
		mp := mustPlan(t, ds, Config{Sparse: sparse, Unlabelled: 0.3, Seed: 3})
		js := mustPlan(t, ds, Config{Sparse: sparse, Unlabelled: 0.3, Seed: 3, JSON: true})
		for i := range mp.Len() {
			a, err := mp.Message(i, now)
			if err != nil {
				t.Fatal(err)
			}
			b, err := js.Message(i, now)
			if err != nil {
				t.Fatal(err)
			}
			if !codec.IsJSONRecord(b.Value) || codec.IsJSONRecord(a.Value) {
				t.Fatalf("event %d: formats %q / %q", i, a.Value[:1], b.Value[:1])
			}
			want := decode(t, a.Value, dim)
			var got codec.Event
			if err := dec.DecodeEventJSON(b.Value, &got); err != nil {
				t.Fatalf("event %d: %s: %v", i, b.Value, err)
			}
			if !bytes.Equal(a.Key, b.Key) || !a.Time.Equal(b.Time) {
				t.Fatalf("event %d: key or time differ", i)
			}
			// Bit-identical features (-0.0 stays -0.0).
			for _, pair := range [][2][]float64{{want.X, got.X}, {want.XV, got.XV}} {
				if len(pair[0]) != len(pair[1]) {
					t.Fatalf("event %d: %d and %d values", i, len(pair[0]), len(pair[1]))
				}
				for k := range pair[0] {
					if math.Float64bits(pair[0][k]) != math.Float64bits(pair[1][k]) {
						t.Fatalf("event %d value %d: %v and %v", i, k, pair[0][k], pair[1][k])
					}
				}
			}
			want.X, want.XV, got.X, got.XV = nil, nil, nil, nil
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("event %d:\n%+v\n%+v", i, want, got)
			}
		}
	}
}
