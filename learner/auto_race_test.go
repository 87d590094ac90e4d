package learner

import (
	"bytes"
	"math"
	"testing"

	"okstream/learner/rng"
)

// raceStream is a stationary d = 4 classification stream.
func raceStream(n int) ([][]float64, []float64) {
	src := rng.New(11)
	var xs [][]float64
	var ys []float64
	for range n {
		x := make([]float64, 4)
		for j := range x {
			x[j] = 2*src.Float64() - 1
		}
		y := 1.0
		if math.Sin(3*x[0])+x[1]*x[1] < 0.5 {
			y = -1
		}
		xs, ys = append(xs, x), append(ys, y)
	}
	return xs, ys
}

// TestAutoRace: the race (auto_race.go) drops members clearly behind
// before the first halving, the halvings keep their nominal sizes (22
// kernel members: 11 at the first, 6 at the second, never more than
// that), pruning ends at a halving point; a state taken mid-race restores
// and continues bit for bit; a state without the race's trailer (written
// before the race) restores; race=false races nothing.
func TestAutoRace(t *testing.T) {
	xs, ys := raceStream(3300)
	build := func(kv map[string]string) *Auto {
		l, err := newPlain("auto", kv, 4)
		if err != nil {
			t.Fatal(err)
		}
		return l.(*Auto)
	}
	a := build(map[string]string{"halving": "400"})
	off := build(map[string]string{"halving": "400", "race": "false"})
	if a.q == nil || off.q != nil {
		t.Fatal("race on by default for base=fogd, off with race=false")
	}
	kernels := func(a *Auto) int { c, _ := a.splitLinear(); return len(c) }
	var mid []byte
	droppedEarly, ended := false, false
	for i := range xs {
		a.Learn(xs[i], ys[i])
		off.Learn(xs[i], ys[i])
		n := a.updates
		if n < 400 && kernels(a) < 21 {
			droppedEarly = true
		}
		if n < 400 && kernels(off) != 21 {
			t.Fatalf("race=false dropped a member at %d", n)
		}
		if n >= 400 && n < 800 && kernels(a) > 11 {
			t.Fatalf("%d kernel members after the first halving", kernels(a))
		}
		if n >= 800 && n < 1600 && kernels(a) > 6 {
			t.Fatalf("%d kernel members after the second halving", kernels(a))
		}
		if a.next == 0 && !ended {
			ended = true
			if n%400 != 0 {
				t.Fatalf("pruning ended at %d, not at a halving point", n)
			}
		}
		if n == 350 {
			mid, _ = a.MarshalBinary()
		}
	}
	if !ended {
		t.Fatal("pruning did not end")
	}
	if !droppedEarly {
		t.Fatal("the race dropped nothing before the first halving: the test does not cover it")
	}
	// Restored mid-race, the same bits.
	r := build(map[string]string{"halving": "400"})
	if err := r.UnmarshalBinary(mid); err != nil {
		t.Fatal(err)
	}
	ref := build(map[string]string{"halving": "400"})
	for i := range 350 {
		ref.Learn(xs[i], ys[i])
	}
	for i := 350; i < 1300; i++ {
		if p, q := r.Learn(xs[i], ys[i]), ref.Learn(xs[i], ys[i]); math.Float64bits(p) != math.Float64bits(q) {
			t.Fatalf("restored mid-race, event %d: %v, want %v", i, p, q)
		}
	}
	s1, _ := r.MarshalBinary()
	s2, _ := ref.MarshalBinary()
	if !bytes.Equal(s1, s2) {
		t.Fatal("restored mid-race: states differ")
	}
	// A state of before the race (no trailer) restores, with V at its bound.
	old := build(map[string]string{"halving": "400"})
	for i := range 350 {
		old.Learn(xs[i], ys[i])
	}
	q := old.q
	old.q = nil
	st, _ := old.MarshalBinary()
	old.q = q
	if len(st) >= len(mid) {
		t.Fatalf("state without the trailer has %d bytes, with it %d", len(st), len(mid))
	}
	o := build(map[string]string{"halving": "400"})
	if err := o.UnmarshalBinary(st); err != nil {
		t.Fatalf("state of before the race: %v", err)
	}
	i, j := o.alive[0], o.alive[1]
	if want := 4 * (o.loss[i] + o.loss[j]); o.q[pairIndex(i, j)] != want {
		t.Fatalf("V from a state of before: %v, want the bound %v", o.q[pairIndex(i, j)], want)
	}
	for i := 350; i < 1300; i++ {
		o.Learn(xs[i], ys[i])
	}
	// A bad V is refused, and the learner is unchanged.
	bad := append([]byte(nil), mid...)
	copy(bad[len(bad)-8:], []byte{0, 0, 0, 0, 0, 0, 0xf0, 0xff}) // the last V: NaN
	before, _ := r.MarshalBinary()
	if err := r.UnmarshalBinary(bad); err == nil {
		t.Fatal("a NaN V was accepted")
	}
	if after, _ := r.MarshalBinary(); !bytes.Equal(before, after) {
		t.Fatal("a refused state changed the learner")
	}
}
