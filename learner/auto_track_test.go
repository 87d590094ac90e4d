package learner

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"okstream/learner/rng"
)

// flipStream is a binary stream in d dimensions whose concept flips at
// event change: y = sign(x₀ + 0.5·x₁) before, −sign(x₀ + 0.5·x₁) after (the
// largest abrupt change there is: every model of the old concept is wrong
// everywhere).
func flipStream(n, change, d int, seed uint64) (xs [][]float64, ys []float64) {
	src := rng.New(seed)
	for t := range n {
		x := make([]float64, d)
		for j := range x {
			x[j] = 2*src.Float64() - 1
		}
		y := 1.0
		if x[0]+0.5*x[1] < 0 {
			y = -1
		}
		if t >= change {
			y = -y
		}
		xs, ys = append(xs, x), append(ys, y)
	}
	return xs, ys
}

// trackSpec is a small auto whose bank reaches its steady size (keep = 2)
// by event 8·halving = 800.
const trackSpec = "auto:base=fogd,budget=40,halving=100,warmup=50"

// mistakesAfter runs spec over the stream and returns its mistakes in
// [from, to) and the learner.
func mistakesAfter(t *testing.T, spec string, xs [][]float64, ys []float64, from, to int) (int, Learner) {
	t.Helper()
	l, err := New(spec, len(xs[0]))
	if err != nil {
		t.Fatal(err)
	}
	m := 0
	for i := range xs {
		f := l.Learn(xs[i], ys[i])
		if i >= from && i < to && (f >= 0) != (ys[i] > 0) {
			m++
		}
	}
	return m, l
}

// After an abrupt change deep in the stream, tracking auto detects it
// (once, not before it), restarts its bank and makes fewer mistakes in the
// 1,500 events after the change than auto without tracking, whose
// survivors must unlearn 3,000 events of the old concept.
func TestAutoTrackRecoversAfterAbruptChange(t *testing.T) {
	const n, change, after = 6000, 3000, 1500
	var on, off int
	for seed := uint64(1); seed <= 3; seed++ {
		xs, ys := flipStream(n, change, 4, seed)
		m1, l1 := mistakesAfter(t, trackSpec, xs, ys, change, change+after)
		m0, l0 := mistakesAfter(t, trackSpec+",track=false", xs, ys, change, change+after)
		on, off = on+m1, off+m0
		c, a, ok := ChangeCount(l1)
		if !ok || c < 1 || c > 2 {
			t.Fatalf("seed %d: %d changes (%d alarms), want 1 or 2 (ok %v)", seed, c, a, ok)
		}
		// After the restart's pruning the bank is back to keep members
		// and one linear member.
		if cand, lin := l1.(*selfTuned).inner.(*Auto).splitLinear(); len(cand) != 2 || len(lin) != 1 {
			t.Fatalf("seed %d: bank of %d halved members and %d linear after the restart, want 2 and 1", seed, len(cand), len(lin))
		}
		if c0, _, _ := ChangeCount(l0); c0 != 0 {
			t.Fatalf("seed %d: track=false restarted %d times", seed, c0)
		}
		// No restart before the change: run the first part alone.
		_, lb := mistakesAfter(t, trackSpec, xs[:change], ys[:change], 0, 0)
		if c, a, _ := ChangeCount(lb); c != 0 || a != 0 {
			t.Fatalf("seed %d: %d restarts (%d alarms) on the stationary first part", seed, c, a)
		}
		t.Logf("seed %d: mistakes in the %d events after the change: track %d, track=false %d; %d changes, %d alarms", seed, after, m1, m0, c, a)
	}
	if float64(on) > 0.8*float64(off) {
		t.Fatalf("tracking made %d mistakes after the change, without tracking %d: want at most 80 %%", on, off)
	}
}

// track=false is auto as it was before tracking: its canonical spec has no
// track key (so states written before tracking existed still match), and
// it never restarts.
func TestAutoTrackOffCanonicalSpec(t *testing.T) {
	on, err := New("auto", 3)
	if err != nil {
		t.Fatal(err)
	}
	off, err := New("auto:track=false", 3)
	if err != nil {
		t.Fatal(err)
	}
	if s := off.Info().Spec; strings.Contains(s, "track") {
		t.Fatalf("track=false spec %q names track", s)
	}
	if s := on.Info().Spec; !strings.Contains(s, "track=true") {
		t.Fatalf("default spec %q does not name track=true", s)
	}
	if strings.Replace(on.Info().Spec, ",track=true", "", 1) != off.Info().Spec {
		t.Fatalf("specs differ beyond track: %q vs %q", on.Info().Spec, off.Info().Spec)
	}
}

// Fixed Share: after every round, each survivor's weight at the rate it
// was shared at is at least α_t/K of the total (Herbster & Warmuth 1998,
// §5), however far it trails; without track it decays to nothing.
func TestAutoFixedShareFloor(t *testing.T) {
	xs, ys := flipStream(3000, 1<<30, 4, 5)
	l, err := newPlain("auto", map[string]string{"base": "fogd", "budget": "20", "octaves": "1", "etas": "1", "halving": "1000000"}, 4)
	if err != nil {
		t.Fatal(err)
	}
	a := l.(*Auto)
	if a.tr == nil {
		t.Fatal("track is off by default")
	}
	w := make([]float64, len(a.members))
	minShare := 1.0
	for i := range xs {
		a.Learn(xs[i], ys[i])
		eta := adaHedgeRate(len(a.alive), a.delta, math.Inf(1))
		if math.IsInf(eta, 1) {
			continue
		}
		den := adaHedgeWeights(w, a.tr.tl, a.alive, eta)
		k := float64(len(a.alive))
		alpha := 1 / float64(a.tr.shareCount(a.updates-1)+1)
		for _, j := range a.alive {
			share := w[j] / den
			if share < alpha/k*(1-1e-9) {
				t.Fatalf("event %d: member %d's weight %.3g below α/K = %.3g", i, j, share, alpha/k)
			}
			minShare = math.Min(minShare, share*k/alpha)
		}
	}
	// The plain cumulative losses give the trailing member far less.
	eta := adaHedgeRate(len(a.alive), a.delta, math.Inf(1))
	den := adaHedgeWeights(w, a.loss, a.alive, eta)
	plainMin := math.Inf(1)
	for _, j := range a.alive {
		plainMin = math.Min(plainMin, w[j]/den)
	}
	alpha := 1 / float64(a.tr.shareCount(a.updates-1)+1)
	if plainMin >= alpha/float64(len(a.alive)) {
		t.Fatalf("the test does not exercise the share: AdaHedge's smallest weight %.3g ≥ α/K", plainMin)
	}
	t.Logf("smallest weight / (α/K) over the run: %.3g; AdaHedge's smallest weight at the end %.3g (α/K %.3g)", minShare, plainMin, alpha/float64(len(a.alive)))
}

// A tracking auto's state, taken during a restart (the fresh members still
// being pruned) and after it, restores into a fresh learner that continues
// bit for bit.
func TestAutoTrackMarshalAcrossRestart(t *testing.T) {
	xs, ys := flipStream(5000, 2000, 4, 9)
	l, err := New(trackSpec, 4)
	if err != nil {
		t.Fatal(err)
	}
	cuts := map[int]bool{}
	seenRestart := false
	for i := range xs {
		l.Learn(xs[i], ys[i])
		c, _, _ := ChangeCount(l)
		if c > 0 && !seenRestart {
			seenRestart = true
			cuts[i+1], cuts[i+150], cuts[i+2500] = true, true, true
		}
		if !cuts[i] {
			continue
		}
		b, err := l.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		r, _ := New(trackSpec, 4)
		if err := r.UnmarshalBinary(b); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		a, b2 := l.(*selfTuned).inner.(*Auto), r.(*selfTuned).inner.(*Auto)
		for j := i + 1; j < min(i+400, len(xs)); j++ {
			f1 := a.Predict(xs[j])
			f2 := b2.Learn(xs[j], ys[j])
			if f1 != f2 || math.IsNaN(f1) {
				t.Fatalf("cut at %d: event %d: restored %v, original %v", i, j, f2, f1)
			}
			a.Learn(xs[j], ys[j])
		}
		s1, _ := a.MarshalBinary()
		s2, _ := b2.MarshalBinary()
		if !bytes.Equal(s1, s2) {
			t.Fatalf("cut at %d: states differ after 400 events", i)
		}
		return
	}
	if !seenRestart {
		t.Fatal("no restart: the test does not exercise the tracking state")
	}
}

// Forged tracking states are refused and leave the learner unchanged.
func TestAutoTrackForgedState(t *testing.T) {
	xs, ys := flipStream(2600, 1500, 4, 3)
	l, err := newPlain("auto", map[string]string{"base": "fogd", "budget": "20", "halving": "100"}, 4)
	if err != nil {
		t.Fatal(err)
	}
	a := l.(*Auto)
	for i := range xs {
		a.Learn(xs[i], ys[i])
	}
	if a.tr.changes == 0 {
		t.Fatal("no restart: the test does not exercise the tracking state")
	}
	good, _ := a.MarshalBinary()
	fresh := func() *Auto {
		f, _ := newPlain("auto", map[string]string{"base": "fogd", "budget": "20", "halving": "100"}, 4)
		return f.(*Auto)
	}
	if err := fresh().UnmarshalBinary(good); err != nil {
		t.Fatalf("valid state refused: %v", err)
	}
	// Locate the slot list: after the header, updates, next, lo, hi,
	// ranged and Δ.
	e := a.encoder(0)
	off := len(e.Bytes()) + 8 + 8 + 8 + 1 + 8
	n := int(binary.LittleEndian.Uint32(good[off:]))
	if n != len(a.slot) {
		t.Fatalf("slot list length %d at offset %d, want %d", n, off, len(a.slot))
	}
	tlOff := off + 4 + 8*n // the tracking losses' length prefix
	for _, c := range []struct {
		what string
		edit func(b []byte)
	}{
		{"slot out of range", func(b []byte) { binary.LittleEndian.PutUint64(b[off+4:], 999) }},
		{"negative slot", func(b []byte) { binary.LittleEndian.PutUint64(b[off+4:], math.MaxUint64) }},
		{"bank too large", func(b []byte) { binary.LittleEndian.PutUint32(b[off:], 1000) }},
		{"empty bank", func(b []byte) { binary.LittleEndian.PutUint32(b[off:], 0) }},
		{"NaN tracking loss", func(b []byte) { binary.LittleEndian.PutUint64(b[tlOff+4:], math.Float64bits(math.NaN())) }},
		{"origin after updates", func(b []byte) { binary.LittleEndian.PutUint64(b[tlOff+4+8*n:], 1<<40) }},
		{"negative changes", func(b []byte) { binary.LittleEndian.PutUint64(b[tlOff+4+8*n+8:], math.MaxUint64) }},
		{"alarms below changes", func(b []byte) { binary.LittleEndian.PutUint64(b[tlOff+4+8*n+16:], 0) }},
		{"truncated", func(b []byte) {}},
	} {
		b := bytes.Clone(good)
		c.edit(b)
		if c.what == "truncated" {
			b = b[:tlOff+20]
		}
		v := fresh()
		before, _ := v.MarshalBinary()
		if err := v.UnmarshalBinary(b); err == nil {
			t.Fatalf("%s: accepted", c.what)
		}
		if after, _ := v.MarshalBinary(); !bytes.Equal(before, after) {
			t.Fatalf("%s: refused state changed the learner", c.what)
		}
	}
}

// A sensor recalibration: at event change every raw feature becomes
// 4x + 3 while the concept (in the calibrated units) stays. The wrapper's
// frozen standardisation now maps the inputs far from where the members
// learnt; tracking auto detects the loss increase, and its fresh members
// see the inputs re-standardised to the reference statistics (mean within
// 0.2 and spread within 15 % of the first halving inputs': the transform
// is fitted on 300 inputs, whose mean has a standard error of 0.06
// reference deviations and their spread 4 %), so it recovers
// far faster than auto without tracking.
func TestAutoTrackRestandardisesFreshMembers(t *testing.T) {
	const n, change, after = 12000, 6000, 3000
	xs, ys := recalibratedStream(4, n, change)
	const spec = "auto:halving=300"
	on, l := mistakesAfter(t, spec, xs, ys, change, change+after)
	off, _ := mistakesAfter(t, spec+",track=false", xs, ys, change, change+after)
	a := l.(*selfTuned).inner.(*Auto)
	if a.tr.changes < 1 || len(a.tr.tx) == 0 || a.tr.shifts < 1 {
		t.Fatalf("no restart (%d changes, %d transforms) or no shift of the inputs detected (%d)", a.tr.changes, len(a.tr.tx), a.tr.shifts)
	}
	// The newest transform applied to the recalibrated inputs (in auto's
	// input space) gives the reference statistics back.
	w := l.(*selfTuned)
	tx := a.tr.tx[len(a.tr.tx)-1]
	d := len(tx.mul)
	mean, sq := make([]float64, d), make([]float64, d)
	for _, x := range xs[n-2000:] {
		z := w.input(x)
		for j := range d {
			u := z[j]*tx.mul[j] + tx.add[j]
			mean[j] += u / 2000
			sq[j] += u * u / 2000
		}
	}
	for j := range d {
		sd := math.Sqrt(sq[j] - mean[j]*mean[j])
		if math.Abs(mean[j]-a.tr.rm[j]) > 0.2*a.tr.rs[j] || math.Abs(sd/a.tr.rs[j]-1) > 0.15 {
			t.Fatalf("coordinate %d: re-standardised mean %.4g sd %.4g, reference %.4g, %.4g", j, mean[j], sd, a.tr.rm[j], a.tr.rs[j])
		}
	}
	if float64(on) > 0.6*float64(off) {
		t.Fatalf("mistakes in the %d events after the recalibration: tracking %d, without %d (want at most 60 %%)", after, on, off)
	}
	t.Logf("mistakes in the %d events after the recalibration: tracking %d, without %d", after, on, off)
}

// A fresh copy of a FOGD member (sharing its random features) is the
// learner a new build gives: the same state bytes, and the same scores on
// a stream learnt after the original has moved on.
func TestAutoFreshCopy(t *testing.T) {
	kv := map[string]string{"budget": "20", "sigma": "0.5", "eta": "0.02"}
	orig, err := newPlain("fogd", kv, 4)
	if err != nil {
		t.Fatal(err)
	}
	xs, ys := flipStream(300, 1<<30, 4, 8)
	for i := range 100 {
		orig.Learn(xs[i], ys[i])
	}
	cp := orig.(freshCopier).freshCopy()
	built, _ := newPlain("fogd", kv, 4)
	b1, _ := cp.MarshalBinary()
	b2, _ := built.MarshalBinary()
	if !bytes.Equal(b1, b2) {
		t.Fatal("fresh copy's state differs from a new build's")
	}
	for i := 100; i < 300; i++ {
		orig.Learn(xs[i], ys[i]) // the original keeps learning in between
		if f1, f2 := cp.Learn(xs[i], ys[i]), built.Learn(xs[i], ys[i]); f1 != f2 {
			t.Fatalf("event %d: copy %v, build %v", i, f1, f2)
		}
	}
	b1, _ = cp.MarshalBinary()
	b2, _ = built.MarshalBinary()
	if !bytes.Equal(b1, b2) {
		t.Fatal("states differ after learning")
	}
}

// recalibratedStream is n events of a nonlinear d = 4 problem whose inputs
// are recalibrated, x → 4x + 3, from event change on (the labels follow
// the original x).
func recalibratedStream(seed uint64, n, change int) ([][]float64, []float64) {
	src := rng.New(seed)
	var xs [][]float64
	var ys []float64
	for i := range n {
		x := make([]float64, 4)
		for j := range x {
			x[j] = 2*src.Float64() - 1
		}
		y := 1.0
		if math.Sin(3*x[0])+x[1]*x[1] < 0.5 {
			y = -1
		}
		if i >= change {
			for j := range x {
				x[j] = 4*x[j] + 3
			}
		}
		xs, ys = append(xs, x), append(ys, y)
	}
	return xs, ys
}
