package drift

import (
	"bytes"
	"errors"
	"testing"

	"okstream/learner/rng"
	"okstream/learner/state"
)

// stateMakers: configurations whose state the tests round-trip (a small
// cap and clock exercise the cap and frequent scans).
var stateMakers = []detMaker{
	{"adwin", func(t testing.TB) Detector { return newADWIN(t, ADWINConfig{}) }},
	{"adwin-small", func(t testing.TB) Detector {
		return newADWIN(t, ADWINConfig{M: 2, Clock: 1, MaxWidth: 500, Bound: BoundHoeffding})
	}},
	{"pagehinkley", func(t testing.TB) Detector { return newPH(t, PageHinkleyConfig{Lambda: 20, Dir: DirBoth}) }},
}

// driftStream: Bernoulli with the mean switching every 2500 values.
func driftStream(seed uint64, n int) []float64 {
	src := rng.New(seed)
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = bernoulli(src, 0.2+0.5*float64((i/2500)%2))
	}
	return xs
}

func mustMarshal(t testing.TB, d Detector) []byte {
	t.Helper()
	b, err := d.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A detector restored mid-stream continues bit-identically: same alarms,
// same state bytes at the end; and the same sequence twice gives the same
// bytes.
func TestRestoreContinues(t *testing.T) {
	xs := driftStream(21, 12_000)
	for _, mk := range stateMakers {
		ref := mk.mk(t)
		refAt := alarms(ref, xs)
		if len(refAt) < 2 {
			t.Errorf("%s: only %d alarms on a stream with 4 changes", mk.name, len(refAt))
		}
		refBytes := mustMarshal(t, ref)
		again := mk.mk(t)
		alarms(again, xs)
		if !bytes.Equal(mustMarshal(t, again), refBytes) {
			t.Errorf("%s: the same stream gave different state bytes", mk.name)
		}
		for _, cut := range []int{0, 1, 37, 2600, 5011, 11_999} {
			a := mk.mk(t)
			at := alarms(a, xs[:cut])
			b := mk.mk(t)
			if err := b.UnmarshalBinary(mustMarshal(t, a)); err != nil {
				t.Fatalf("%s cut %d: %v", mk.name, cut, err)
			}
			for _, i := range alarms(b, xs[cut:]) {
				at = append(at, cut+i)
			}
			if !equalInts(at, refAt) {
				t.Errorf("%s cut %d: alarms %v, uninterrupted %v", mk.name, cut, at, refAt)
			}
			if !bytes.Equal(mustMarshal(t, b), refBytes) {
				t.Errorf("%s cut %d: final state differs", mk.name, cut)
			}
			if b.Width() != ref.Width() || b.Mean() != ref.Mean() || b.Variance() != ref.Variance() || b.Detections() != ref.Detections() {
				t.Errorf("%s cut %d: statistics differ", mk.name, cut)
			}
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Hostile bytes: every truncation and extension fails; random corruptions
// either fail (leaving the detector unchanged) or give a detector that
// works; another configuration's state is a *state.MismatchError.
func TestHostileState(t *testing.T) {
	xs := driftStream(22, 4000)
	for _, mk := range stateMakers {
		src := mk.mk(t)
		alarms(src, xs)
		good := mustMarshal(t, src)
		victim := mk.mk(t)
		alarms(victim, xs[:1234])
		before := mustMarshal(t, victim)
		check := func(what string, b []byte) {
			err := victim.UnmarshalBinary(b)
			if err != nil {
				if !bytes.Equal(mustMarshal(t, victim), before) {
					t.Fatalf("%s %s: failed restore changed the detector", mk.name, what)
				}
				var mm *state.MismatchError
				if !errors.Is(err, state.ErrCorrupt) && !errors.As(err, &mm) {
					t.Fatalf("%s %s: error %v wraps neither ErrCorrupt nor MismatchError", mk.name, what, err)
				}
				return
			}
			// Accepted: it must work and round-trip.
			for _, x := range xs[:300] {
				victim.Add(x)
			}
			again := mk.mk(t)
			if err := again.UnmarshalBinary(mustMarshal(t, victim)); err != nil {
				t.Fatalf("%s %s: accepted state does not round-trip: %v", mk.name, what, err)
			}
			if err := victim.UnmarshalBinary(before); err != nil {
				t.Fatal(err)
			}
		}
		for n := range len(good) {
			if victim.UnmarshalBinary(good[:n]) == nil {
				t.Fatalf("%s: truncation to %d of %d bytes accepted", mk.name, n, len(good))
			}
			check("truncated", good[:n])
		}
		if victim.UnmarshalBinary(append(append([]byte(nil), good...), 0)) == nil {
			t.Errorf("%s: trailing byte accepted", mk.name)
		}
		r := rng.New(99)
		for range 20_000 {
			b := append([]byte(nil), good...)
			for range 1 + r.IntN(3) {
				i := r.IntN(len(b))
				switch r.IntN(3) {
				case 0:
					b[i] ^= byte(1 << r.IntN(8))
				case 1:
					b[i] = byte(r.Uint64())
				default:
					b[i] = 0xff
				}
			}
			check("corrupted", b)
		}
	}
	// Another configuration.
	a := newADWIN(t, ADWINConfig{})
	b := newADWIN(t, ADWINConfig{Delta: 0.01})
	var mm *state.MismatchError
	if err := b.UnmarshalBinary(mustMarshal(t, a)); !errors.As(err, &mm) {
		t.Errorf("ADWIN of another δ: %v", err)
	}
	p := newPH(t, PageHinkleyConfig{})
	if err := p.UnmarshalBinary(mustMarshal(t, a)); !errors.As(err, &mm) {
		t.Errorf("Page-Hinkley from an ADWIN state: %v", err)
	}
}

// Hand-made states that are well-formed but impossible are refused.
func TestADWINImpossibleStates(t *testing.T) {
	a := newADWIN(t, ADWINConfig{})
	enc := func(width int, total, variance float64, rows [][][2]float64) []byte {
		e := state.NewEncoder(256)
		e.Header("adwin", a.Spec(), 0)
		e.I64(5)
		e.I64(0)
		e.Int(width)
		e.F64(total)
		e.F64(variance)
		e.Int(len(rows))
		for _, r := range rows {
			e.Int(len(r))
			for _, bk := range r {
				e.F64(bk[0])
				e.F64(bk[1])
			}
		}
		return e.Bytes()
	}
	ok := enc(3, 2, 0.5, [][][2]float64{{{1, 0}}, {{1, 0.5}}})
	if err := a.UnmarshalBinary(ok); err != nil {
		t.Fatalf("a valid state refused: %v", err)
	}
	for name, b := range map[string][]byte{
		"width mismatch": enc(4, 2, 0.5, [][][2]float64{{{1, 0}}, {{1, 0.5}}}),
		"empty row":      enc(2, 2, 0.5, [][][2]float64{{}, {{1, 0.5}}}),
		"negative var":   enc(3, 2, -1, [][][2]float64{{{1, 0}}, {{1, 0.5}}}),
		"negative bvar":  enc(3, 2, 0.5, [][][2]float64{{{1, 0}}, {{1, -0.5}}}),
		"huge bucket":    enc(3, 2, 0.5, [][][2]float64{{{1e200, 0}}, {{1, 0.5}}}),
		"too many":       enc(6, 6, 0, [][][2]float64{{{1, 0}, {1, 0}, {1, 0}, {1, 0}, {1, 0}, {1, 0}}}),
		"too many rows":  enc(0, 0, 0, make([][][2]float64, 40)),
	} {
		if err := a.UnmarshalBinary(b); !errors.Is(err, state.ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// No Add allocates, in steady state or at a change (ADWIN's rows are sized
// when it is built).
func TestAddDoesNotAllocate(t *testing.T) {
	xs := driftStream(23, 20_000)
	for _, mk := range stateMakers {
		d := mk.mk(t)
		i := 0
		allocs := testing.AllocsPerRun(len(xs)-1, func() {
			d.Add(xs[i])
			i++
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per Add", mk.name, allocs)
		}
		if d.Detections() == 0 {
			t.Errorf("%s: no change detected, the allocation check missed the cut path", mk.name)
		}
	}
}

func BenchmarkADWINAdd(b *testing.B) {
	xs := driftStream(24, 1<<16)
	a := newADWIN(b, ADWINConfig{})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		a.Add(xs[i&(1<<16-1)])
	}
}

func BenchmarkADWINAddStationary(b *testing.B) {
	xs := abrupt(25, 1<<16, 1<<16, 0.2, 0.2, false)
	a := newADWIN(b, ADWINConfig{})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		a.Add(xs[i&(1<<16-1)])
	}
}

func BenchmarkPageHinkleyAdd(b *testing.B) {
	xs := driftStream(24, 1<<16)
	p := newPH(b, PageHinkleyConfig{})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.Add(xs[i&(1<<16-1)])
	}
}
