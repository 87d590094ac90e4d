package learner

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"okstream/dataset/drift"
)

// ledStream draws n examples of the LED stream with the drift at change
// (dataset/drift: 24 binary attributes, 10 classes, 10 % noise), the
// classes numbered in order of first appearance.
func ledStream(t testing.TB, n, change, swaps int, seed uint64) (xs [][]float64, cs []int) {
	t.Helper()
	g, err := drift.NewLED(drift.LEDConfig{Seed: seed, Noise: 0.1, Position: change, Swaps: swaps})
	if err != nil {
		t.Fatal(err)
	}
	idx := map[int]int{} // digits as class indices in order of first appearance (c ≤ K)
	for range n {
		x := make([]float64, drift.LEDDim)
		d := int(g.Next(x))
		if _, ok := idx[d]; !ok {
			idx[d] = len(idx)
		}
		cs = append(cs, idx[d])
		xs = append(xs, x)
	}
	return xs, cs
}

// argmaxClass is the class of largest probability (−1 for an empty p).
func argmaxClass(p []float64) int {
	best := -1
	for k, v := range p {
		if best < 0 || v > p[best] {
			best = k
		}
	}
	return best
}

// multiMistakes runs spec prequentially and returns the mistakes in
// [from, to), all mistakes, and the learner.
func multiMistakes(t testing.TB, spec string, xs [][]float64, cs []int, from, to int) (int, int, Multi) {
	t.Helper()
	m, err := NewMulti(spec, len(xs[0]))
	if err != nil {
		t.Fatal(err)
	}
	p := make([]float64, MaxClasses+1)
	win, all := 0, 0
	for i := range xs {
		q := m.LearnClass(xs[i], cs[i], p)
		if argmaxClass(q) != cs[i] {
			all++
			if i >= from && i < to {
				win++
			}
		}
	}
	return win, all, m
}

// a small multi-class auto whose bank is at its steady size from event
// 8·halving = 1,600 on.
const multiTrackSpec = "auto:halving=200,features=64,warmup=50"

// After an abrupt change (LED: 7 relevant/irrelevant swaps at 6,000),
// tracking multi-class auto restarts (after the change, not before) and
// makes fewer mistakes in the 1,500 events after the change than
// track=false.
func TestAutoMultiTrackRecovers(t *testing.T) {
	const n, change, win = 9000, 6000, 1500
	xs, cs := ledStream(t, n, change, 7, 1)
	on, _, mOn := multiMistakes(t, multiTrackSpec, xs, cs, change, change+win)
	off, _, mOff := multiMistakes(t, multiTrackSpec+",track=false", xs, cs, change, change+win)
	ch, al, ok := MultiChangeCount(mOn)
	t.Logf("mistakes in %d events after the change: track %d, track=false %d; changes %d, alarms %d", win, on, off, ch, al)
	if !ok || ch < 1 {
		t.Fatalf("no restart (changes %d, alarms %d, ok %v)", ch, al, ok)
	}
	if _, _, ok := MultiChangeCount(mOff); !ok {
		t.Error("MultiChangeCount does not see track=false auto")
	}
	if c, _ := mOff.(*selfTunedMulti).inner().m.(*AutoMulti).Changes(); c != 0 {
		t.Errorf("track=false restarted %d times", c)
	}
	if on >= off {
		t.Errorf("track %d mistakes after the change, not fewer than track=false's %d", on, off)
	}
	// No restart before the change: the same stream cut at the change.
	_, _, pre := multiMistakes(t, multiTrackSpec, xs[:change], cs[:change], 0, 0)
	if c, a, _ := MultiChangeCount(pre); c != 0 {
		t.Errorf("%d restarts (%d alarms) on the stationary stretch before the change", c, a)
	}
}

// A marshal/unmarshal round trip in the middle of a restart's schedule
// (and before one) continues bit for bit.
func TestAutoMultiTrackStateAcrossRestart(t *testing.T) {
	const n, change = 8000, 4000
	xs, cs := ledStream(t, n, change, 7, 2)
	ref, err := NewMulti(multiTrackSpec, drift.LEDDim)
	if err != nil {
		t.Fatal(err)
	}
	p, q := make([]float64, MaxClasses+1), make([]float64, MaxClasses+1)
	var cut Multi
	restoredAt := -1
	for i := range xs {
		a := ref.LearnClass(xs[i], cs[i], p)
		if cut != nil {
			b := cut.LearnClass(xs[i], cs[i], q)
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("event %d (restored at %d): %v vs %v", i, restoredAt, a, b)
			}
		}
		am := ref.(*selfTunedMulti).inner().m.(*AutoMulti)
		if am.tr.changes > 0 && am.next != 0 && cut == nil && am.updates > am.tr.origin+50 {
			s, err := ref.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			cut, err = NewMulti(multiTrackSpec, drift.LEDDim)
			if err != nil {
				t.Fatal(err)
			}
			if err := cut.UnmarshalBinary(s); err != nil {
				t.Fatal(err)
			}
			restoredAt = i
			t.Logf("restored at %d, %d updates after the restart; %s", i, am.updates-am.tr.origin, am)
		}
	}
	if cut == nil {
		t.Fatal("no restart to restore across")
	}
	a, _ := ref.MarshalBinary()
	b, _ := cut.MarshalBinary()
	if !bytes.Equal(a, b) {
		t.Error("states differ at the end")
	}
	if c, _, _ := MultiChangeCount(cut); c < 1 {
		t.Errorf("restored learner reports %d changes", c)
	}
	// Forged tracking states are refused and leave the learner unchanged.
	am := ref.(*selfTunedMulti).inner().m.(*AutoMulti)
	inner, err := am.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	fresh := func() *AutoMulti {
		m, err := newPlainMulti("auto", map[string]string{"halving": "200", "features": "64", "common": "true"}, drift.LEDDim)
		if err != nil {
			t.Fatal(err)
		}
		return m.(*AutoMulti)
	}
	if err := fresh().UnmarshalBinary(inner); err != nil {
		t.Fatalf("the genuine state: %v", err)
	}
	forge := func(name string, f func(a *AutoMulti)) {
		t.Helper()
		g := fresh()
		if err := g.UnmarshalBinary(inner); err != nil {
			t.Fatal(err)
		}
		f(g)
		bad, err := g.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		h := fresh()
		before, _ := h.MarshalBinary()
		if err := h.UnmarshalBinary(bad); err == nil {
			t.Errorf("%s: forged state accepted", name)
		}
		after, _ := h.MarshalBinary()
		if !bytes.Equal(before, after) {
			t.Errorf("%s: a refused state changed the learner", name)
		}
	}
	forge("slot out of range", func(a *AutoMulti) { a.slot[0] = len(a.specs) })
	forge("alarms < changes", func(a *AutoMulti) { a.tr.alarms = a.tr.changes - 1 })
	forge("origin after updates", func(a *AutoMulti) { a.tr.origin = a.updates + 1 })
	forge("bank too large", func(a *AutoMulti) {
		for len(a.slot) <= a.tr.maxBank {
			a.slot = append(a.slot, 0)
		}
	})
	forge("three linear members", func(a *AutoMulti) {
		lin := len(a.specs) - 1 // the linear member's configuration
		for _, i := range a.alive {
			a.slot[i] = lin
		}
	})
	for cut := 0; cut < len(inner); cut += 97 { // truncations never panic
		_ = fresh().UnmarshalBinary(inner[:cut])
	}
}

// track=false keeps the canonical spec and state of multi-class auto
// without tracking; track=true says so in the spec.
func TestAutoMultiTrackOffSpec(t *testing.T) {
	off, err := NewMulti("auto:track=false", 4)
	if err != nil {
		t.Fatal(err)
	}
	if s := off.Info().Spec; strings.Contains(s, "track") {
		t.Errorf("track=false spec %q mentions track", s)
	}
	def, err := NewMulti("auto", 4)
	if err != nil {
		t.Fatal(err)
	}
	if s := def.Info().Spec; !strings.Contains(s, "track=true") {
		t.Errorf("default spec %q lacks track=true", s)
	}
	if _, _, ok := MultiChangeCount(def); !ok {
		t.Error("MultiChangeCount does not see auto")
	}
	lin, _ := NewMulti("linear", 4)
	if _, _, ok := MultiChangeCount(lin); ok {
		t.Error("MultiChangeCount sees a change counter in linear")
	}
}

// A fresh member built at a restart knows the K classes auto has seen.
func TestAutoMultiTrackFreshClasses(t *testing.T) {
	xs, cs := ledStream(t, 3000, 1<<30, 0, 4)
	_, _, m := multiMistakes(t, multiTrackSpec, xs, cs, 0, 0)
	a := m.(*selfTunedMulti).inner().m.(*AutoMulti)
	if a.next != 0 {
		t.Fatalf("bank not steady at 3,000: next %d", a.next)
	}
	a.restart()
	for _, i := range a.alive {
		if k := a.members[i].Classes(); k != a.k {
			t.Errorf("member %d (configuration %d) has %d classes, auto %d", i, a.slot[i], k, a.k)
		}
	}
	p := make([]float64, MaxClasses+1)
	x := make([]float64, 2*drift.LEDDim)
	q := a.PredictProba(x, p)
	var s float64
	for _, v := range q {
		s += v
	}
	if len(q) != a.k || s < 0.999999 || s > 1.000001 {
		t.Errorf("distribution after restart %v (sum %v)", q, s)
	}
}

// TestAutoMultiTrackMeasure prints the table of docs/algorithms/multiclass.md
// (OKSTREAM_MEASURE=1; slow).
func TestAutoMultiTrackMeasure(t *testing.T) {
	if os.Getenv("OKSTREAM_MEASURE") == "" {
		t.Skip("OKSTREAM_MEASURE=1 to run")
	}
	const n, change, win = 50000, 25000, 2000
	for _, seed := range []uint64{1, 2, 3, 101, 102} {
		swaps := 7
		if seed > 100 {
			swaps = 0 // stationary: no drift
		}
		xs, cs := ledStream(t, n, change, swaps, seed)
		// class prior: the running majority class
		var counts [LEDClassesForTest]int
		pw, pa := 0, 0
		for i, c := range cs {
			best := 0
			for k := range counts {
				if counts[k] > counts[best] {
					best = k
				}
			}
			if best != c {
				pa++
				if i >= change && i < change+win {
					pw++
				}
			}
			counts[c]++
		}
		t.Logf("seed %d prior: all %.2f %%, after %.2f %%", seed, 100*float64(pa)/n, 100*float64(pw)/win)
		for _, spec := range []string{"auto", "auto:track=false", "linear"} {
			w, a, m := multiMistakes(t, spec, xs, cs, change, change+win)
			ch, al, _ := MultiChangeCount(m)
			t.Logf("seed %d %-18s all %.2f %%, after %.2f %%, changes %d alarms %d", seed, spec, 100*float64(a)/n, 100*float64(w)/win, ch, al)
		}
		// The first restart's event.
		m, _ := NewMulti("auto", drift.LEDDim)
		p := make([]float64, MaxClasses+1)
		for i := range xs {
			m.LearnClass(xs[i], cs[i], p)
			if c, _, _ := MultiChangeCount(m); c > 0 {
				t.Logf("seed %d: first restart after event %d (change at %d)", seed, i, change)
				break
			}
		}
	}
}

// LEDClassesForTest is the LED stream's number of classes.
const LEDClassesForTest = drift.LEDClasses

// Tracking allocates nothing per event once the bank is steady.
func TestAutoMultiTrackNoAlloc(t *testing.T) {
	xs, cs := ledStream(t, 2500, 1<<30, 0, 6)
	_, _, m := multiMistakes(t, multiTrackSpec, xs, cs, 0, 0)
	a := m.(*selfTunedMulti).inner().m.(*AutoMulti)
	if a.tr == nil || a.next != 0 {
		t.Fatalf("not a steady tracking bank (next %d)", a.next)
	}
	x := make([]float64, 2*drift.LEDDim)
	copy(x, xs[0])
	p := make([]float64, MaxClasses+1)
	i := 0
	if n := testing.AllocsPerRun(200, func() {
		a.LearnClass(x, cs[i%len(cs)], p)
		i++
	}); n != 0 {
		t.Errorf("%v allocations per event", n)
	}
}
