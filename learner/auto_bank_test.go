package learner

import (
	"bytes"
	"math"
	"reflect"
	"testing"
)

// TestAutoBankBitIdentical: auto's FOGD members on the shared projection
// (auto_bank.go) give the bits of each member's own Learn and Predict:
// an auto with the bank and one without (bank = nil: every member maps x
// itself) make the same predictions and write the same states, through
// pruning, a shift of the inputs, restarts and re-standardised fresh
// members (track=true), and without tracking.
func TestAutoBankBitIdentical(t *testing.T) {
	const n, change = 5000, 2500
	xs, ys := recalibratedStream(7, n, change)
	for _, spec := range []map[string]string{
		{"halving": "300"},
		{"halving": "300", "track": "false"},
		{"halving": "300", "loss": "square"},
		{"halving": "300", "per_octave": "2", "kernel": "laplacian"},
	} {
		build := func() *Auto {
			l, err := newPlain("auto", spec, 4)
			if err != nil {
				t.Fatal(err)
			}
			return l.(*Auto)
		}
		on, off := build(), build()
		off.bank = nil
		if on.bank == nil {
			t.Fatalf("%v: no bank", spec)
		}
		banked := 0
		for _, m := range on.bank.mult {
			if m != 0 {
				banked++
			}
		}
		want := 21 // 7 σ (per_octave=2: the 7 powers of two of 13) × 3 η
		if spec["loss"] == "square" {
			want = 7 // no η axis
		}
		if banked != want {
			t.Fatalf("%v: %d configurations on the bank, want %d", spec, banked, want)
		}
		for i := range xs {
			if i%7 == 0 {
				if p, q := on.Predict(xs[i]), off.Predict(xs[i]); math.Float64bits(p) != math.Float64bits(q) {
					t.Fatalf("%v: event %d: Predict %v with the bank, %v without", spec, i, p, q)
				}
			}
			if p, q := on.Learn(xs[i], ys[i]), off.Learn(xs[i], ys[i]); math.Float64bits(p) != math.Float64bits(q) {
				t.Fatalf("%v: event %d: Learn %v with the bank, %v without", spec, i, p, q)
			}
		}
		s1, _ := on.MarshalBinary()
		s2, _ := off.MarshalBinary()
		if !bytes.Equal(s1, s2) {
			t.Fatalf("%v: states differ", spec)
		}
		if on.tr != nil && spec["loss"] == "" && spec["per_octave"] == "" && (on.tr.changes < 1 || len(on.tr.tx) == 0) {
			t.Fatalf("%v: no restart with fresh members (%d changes): the test does not cover them", spec, on.tr.changes)
		}
		// Restored, the bank continues bit for bit too.
		r := build()
		if err := r.UnmarshalBinary(s1); err != nil {
			t.Fatal(err)
		}
		for i := range 200 {
			if p, q := r.Learn(xs[i], ys[i]), off.Learn(xs[i], ys[i]); math.Float64bits(p) != math.Float64bits(q) {
				t.Fatalf("%v: restored, event %d: %v, want %v", spec, i, p, q)
			}
		}
	}
}

// TestAutoSiblings: auto's FOGD members made without a draw each
// (autoSiblings) are deeply equal to the members newPlain builds from
// their specs (frequencies, step, spec, every field), for the grids of
// classification, regression, another kernel, per_octave=2 (σ not a power
// of two: built by newPlain) and explicit member keys; and the factory is
// in use (a σ's η members share one map).
func TestAutoSiblings(t *testing.T) {
	for _, spec := range []map[string]string{
		{},
		{"loss": "square"},
		{"kernel": "laplacian", "budget": "20"},
		{"per_octave": "2", "seed": "9"},
		{"features": "64", "normalize": "true", "track": "false"},
	} {
		l, err := newPlain("auto", spec, 5)
		if err != nil {
			t.Fatal(err)
		}
		a := l.(*Auto)
		shared := 0
		for i, m := range a.members {
			s := a.slot[i]
			built, err := newPlain(a.names[s], a.specs[s], 5)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m, built) {
				t.Fatalf("%v: member %v differs from its build", spec, a.specs[s])
			}
			f, ok := m.(*FOGD)
			if !ok {
				continue
			}
			for _, o := range a.members[:i] {
				if g, ok := o.(*FOGD); ok && g.rff == f.rff {
					shared++
					break
				}
			}
		}
		if shared == 0 && spec["loss"] != "square" { // (the square loss has no η axis)
			t.Fatalf("%v: no two members share a map: the sibling factory is not in use", spec)
		}
	}
}
