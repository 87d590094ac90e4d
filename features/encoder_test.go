package features

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"testing"

	"okstream/codec"
	"okstream/learner/state"
)

// rng is a small deterministic generator for test streams.
type rng uint64

func (r *rng) next() uint64 {
	*r = *r*6364136223846793005 + 1442695040888963407
	x := uint64(*r)
	x ^= x >> 33
	return x * 0xff51afd7ed558ccd
}
func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

var (
	numNames = func() []string {
		s := make([]string, 20)
		for i := range s {
			s[i] = fmt.Sprintf("num%02d", i)
		}
		return s
	}()
	catNames = func() []string {
		s := make([]string, 10)
		for i := range s {
			s[i] = fmt.Sprintf("cat%02d", i)
		}
		return s
	}()
	catValues = func() [][]string { // cat i has 2 + 3i values
		v := make([][]string, 10)
		for i := range v {
			for k := 0; k < 2+3*i; k++ {
				v[i] = append(v[i], fmt.Sprintf("v%d", k))
			}
		}
		return v
	}()
)

// event returns a 30-field event (20 numeric, 10 string), with a missing
// value (nil, or the name left out) with probability pMiss per field.
func event(r *rng, pMiss float64, dst []codec.Field) []codec.Field {
	dst = dst[:0]
	for i, n := range numNames {
		u := r.float()
		switch {
		case u < pMiss/2:
			dst = append(dst, codec.Field{Name: n, Kind: codec.FieldMissing})
		case u < pMiss: // absent
		default:
			dst = append(dst, codec.Field{Name: n, Kind: codec.FieldNumber, Num: float64(i) + 10*r.float()})
		}
	}
	for i, n := range catNames {
		u := r.float()
		switch {
		case u < pMiss/2:
			dst = append(dst, codec.Field{Name: n, Kind: codec.FieldMissing})
		case u < pMiss:
		default:
			dst = append(dst, codec.Field{Name: n, Kind: codec.FieldString, Str: catValues[i][r.intn(len(catValues[i]))]})
		}
	}
	return dst
}

func mustMarshal(t testing.TB, e *Encoder) []byte {
	t.Helper()
	b, err := e.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Same fields ⇒ same vectors and state bytes; a state restored mid-stream
// continues bit-identically.
func TestDeterminismAndRestore(t *testing.T) {
	cfg := Config{Dim: 200, MaxValuesPerName: 8}
	a, b := New(cfg), New(cfg)
	var c *Encoder
	r1, r2 := rng(7), rng(7)
	var fa, fb []codec.Field
	var xa, xb, xc []float64
	for ev := 0; ev < 2000; ev++ {
		fa, fb = event(&r1, 0.1, fa), event(&r2, 0.1, fb)
		if ev == 700 {
			c = New(cfg)
			if err := c.UnmarshalBinary(mustMarshal(t, a)); err != nil {
				t.Fatal(err)
			}
		}
		var err error
		if xa, err = a.Encode(fa, xa); err != nil {
			t.Fatal(err)
		}
		xb, _ = b.Encode(fb, xb)
		if c != nil {
			xc, _ = c.Encode(fa, xc)
		}
		for j := range xa {
			if math.Float64bits(xa[j]) != math.Float64bits(xb[j]) || c != nil && math.Float64bits(xa[j]) != math.Float64bits(xc[j]) {
				t.Fatalf("event %d coordinate %d: %v %v %v", ev, j, xa[j], xb[j], xc)
			}
		}
	}
	sa, sb, sc := mustMarshal(t, a), mustMarshal(t, b), mustMarshal(t, c)
	if !bytes.Equal(sa, sb) || !bytes.Equal(sa, sc) {
		t.Fatal("state bytes differ between equal runs or after a mid-stream restore")
	}
	if a.Stats() != c.Stats() {
		t.Fatalf("stats %+v vs restored %+v", a.Stats(), c.Stats())
	}
}

// The vector of a known event, checked coordinate by coordinate against the
// documented rules (values written independently of the code's arithmetic).
func TestEncodeRules(t *testing.T) {
	e := New(Config{Dim: 10, MaxValuesPerName: 2})
	x, err := e.Encode([]codec.Field{
		{Name: "amount", Kind: codec.FieldNumber, Num: 12.5},
		{Name: "country", Kind: codec.FieldString, Str: "FR"},
		{Name: "is_new", Kind: codec.FieldBool, Num: 1},
		{Name: "age", Kind: codec.FieldMissing},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{12.5, 1, 1, 1, 0, 0, 0, 0, 0, 0}
	wantNames := []string{"amount", "country=FR", "is_new", "age=<missing>"}
	wantKinds := []Kind{KindNumeric, KindIndicator, KindNumeric, KindMissing}
	if fmt.Sprint(x) != fmt.Sprint(want) {
		t.Fatalf("first event %v, want %v", x, want)
	}
	names := e.Names()
	for j, n := range wantNames {
		if names[j] != n || e.Kind(j) != wantKinds[j] {
			t.Errorf("coordinate %d: %q %v, want %q %v", j, names[j], e.Kind(j), n, wantKinds[j])
		}
	}
	// Second event: amount 7.5 (mean of 12.5 and 7.5 is 10), country absent
	// (indicators 0), two new countries (cap 2: DE gets a coordinate, then
	// US goes to <other>), age numeric now.
	x, _ = e.Encode([]codec.Field{{Name: "amount", Kind: codec.FieldNumber, Num: 7.5}, {Name: "age", Kind: codec.FieldNumber, Num: 40}}, x)
	// amount 7.5, country none, is_new missing → mean 1 + is_new=<missing>, age 40 (new numeric coordinate);
	// allocation order: fields first (age's numeric coordinate: 4), then absent names (is_new's missing indicator: 5)
	want = []float64{7.5, 0, 1, 0, 40, 1, 0, 0, 0, 0}
	if fmt.Sprint(x) != fmt.Sprint(want) {
		t.Fatalf("second event %v, want %v (names %q)", x, want, e.Names())
	}
	x, _ = e.Encode([]codec.Field{{Name: "country", Kind: codec.FieldString, Str: "DE"}}, x)
	// DE → 6 (field pass); then absent names in dictionary order: amount →
	// mean 10 and amount=<missing> (7); is_new → mean 1 and its indicator
	// (5); age → mean 40 and its indicator (3, from the first event).
	want = []float64{10, 0, 1, 1, 40, 1, 1, 1, 0, 0}
	if fmt.Sprint(x) != fmt.Sprint(want) {
		t.Fatalf("third event %v, want %v (names %q)", x, want, e.Names())
	}
	x, _ = e.Encode([]codec.Field{{Name: "country", Kind: codec.FieldString, Str: "US"}, {Name: "amount", Kind: codec.FieldNumber, Num: 1}, {Name: "age", Kind: codec.FieldNumber, Num: 1}, {Name: "is_new", Kind: codec.FieldBool, Num: 0}}, x)
	want = []float64{1, 0, 0, 0, 1, 0, 0, 0, 1, 0} // US → country=<other> (8)
	if fmt.Sprint(x) != fmt.Sprint(want) {
		t.Fatalf("fourth event %v, want %v (names %q)", x, want, e.Names())
	}
	if n := e.Names()[8]; n != "country=<other>" {
		t.Errorf("coordinate 8 is %q", n)
	}
	// "new" takes the last coordinate; then the cap is reached: "new2" is
	// dropped and counted, IT is folded.
	e.Encode([]codec.Field{{Name: "new", Kind: codec.FieldNumber, Num: 5}}, x)
	x, _ = e.Encode([]codec.Field{{Name: "amount", Kind: codec.FieldNumber, Num: 1}, {Name: "new2", Kind: codec.FieldNumber, Num: 5}, {Name: "country", Kind: codec.FieldString, Str: "IT"}, {Name: "new", Kind: codec.FieldNumber, Num: 5}}, x)
	st := e.Stats()
	if st.Coords != 10 || st.Dropped != 1 || st.Folded != 2 || st.Events != 6 || st.Names != 5 {
		t.Errorf("stats %+v, want 10 coords, 1 dropped, 2 folded, 6 events, 5 names", st)
	}
	if x[8] != 1 || x[9] != 5 {
		t.Errorf("IT not folded into <other> or new not at 9: %v", x)
	}
	// amount's values so far: 12.5, 7.5, 1, 1 (missing in the third and fifth events).
	vals := []float64{12.5, 7.5, 1, 1}
	var sum, ss float64
	for _, v := range vals {
		sum += v
	}
	mean := sum / 4
	for _, v := range vals {
		ss += (v - mean) * (v - mean)
	}
	if n, m, sd, ok := e.NumStats(0); !ok || n != 4 || math.Abs(m-mean) > 1e-12 || math.Abs(sd-math.Sqrt(ss/4)) > 1e-12 {
		t.Errorf("NumStats(amount) = %d %v %v %v, want 4 %v %v", n, m, sd, ok, mean, math.Sqrt(ss/4))
	}
	if _, _, _, ok := e.NumStats(1); ok {
		t.Error("NumStats of an indicator reports ok")
	}
	// Groups: country's coordinates 1, 6, 8 share one; amount's 0 and 7.
	if g := e.Group(1); g != e.Group(6) || g != e.Group(8) || e.Group(0) != e.Group(7) || g == e.Group(0) || e.Group(10) != -1 {
		t.Errorf("groups %v %v %v / %v %v", e.Group(1), e.Group(6), e.Group(8), e.Group(0), e.Group(7))
	}
	k := e.Kinds()
	if k[7] != KindMissing || k[8] != KindIndicator || k[9] != KindNumeric || len(k) != 10 {
		t.Errorf("kinds %v", k)
	}
}

// MissingRefuse: a nil, a NaN or a known name left out is refused with a
// *MissingError, and the state (bytes) is unchanged.
func TestRefuse(t *testing.T) {
	e := New(Config{Dim: 8, Missing: MissingRefuse})
	x, err := e.Encode([]codec.Field{{Name: "a", Kind: codec.FieldNumber, Num: 1}, {Name: "b", Kind: codec.FieldString, Str: "u"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := mustMarshal(t, e)
	for _, tc := range []struct {
		f      []codec.Field
		name   string
		absent bool
	}{
		{[]codec.Field{{Name: "a", Kind: codec.FieldMissing}, {Name: "b", Kind: codec.FieldString, Str: "u"}}, "a", false},
		{[]codec.Field{{Name: "a", Kind: codec.FieldNumber, Num: math.NaN()}, {Name: "b", Kind: codec.FieldString, Str: "new"}}, "a", false},
		{[]codec.Field{{Name: "b", Kind: codec.FieldString, Str: "new"}, {Name: "c", Kind: codec.FieldNumber, Num: 2}}, "a", true},
		{[]codec.Field{{Name: "a", Kind: codec.FieldNumber, Num: 3}, {Name: "a", Kind: codec.FieldNumber, Num: 3}}, "b", true},
	} {
		_, err := e.Encode(tc.f, x)
		var me *MissingError
		if !errors.As(err, &me) || me.Name != tc.name || me.Absent != tc.absent || me.Reason() != MissingReason {
			t.Errorf("%v: error %v, want missing %q absent=%v", tc.f, err, tc.name, tc.absent)
		}
		if !bytes.Equal(before, mustMarshal(t, e)) {
			t.Fatalf("%v: a refused event changed the state", tc.f)
		}
	}
	// A new name is not missing: accepted, and then required.
	if _, err := e.Encode([]codec.Field{{Name: "a", Kind: codec.FieldNumber, Num: 1}, {Name: "b", Kind: codec.FieldString, Str: "u"}, {Name: "c", Kind: codec.FieldNumber}}, x); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Encode([]codec.Field{{Name: "a", Kind: codec.FieldNumber, Num: 1}, {Name: "b", Kind: codec.FieldString, Str: "u"}}, x); err == nil {
		t.Fatal("c left out was accepted")
	}
}

// MissingCategory: a categorical feature gets a name=<missing> indicator.
func TestMissingCategory(t *testing.T) {
	for _, on := range []bool{false, true} {
		e := New(Config{Dim: 8, MissingCategory: on})
		e.Encode([]codec.Field{{Name: "c", Kind: codec.FieldString, Str: "x"}}, nil)
		x, _ := e.Encode([]codec.Field{{Name: "c", Kind: codec.FieldMissing}}, nil)
		if got := e.Stats().Coords; on && (got != 2 || x[1] != 1 || e.Names()[1] != "c=<missing>") || !on && (got != 1 || x[0] != 0) {
			t.Errorf("MissingCategory=%v: coords %d, x %v, names %q", on, got, x, e.Names())
		}
	}
}

// Schema drift: a field added half way gets a coordinate then and is used;
// one removed is imputed (its mean) with its missing indicator on; nothing
// is refused under impute.
func TestDrift(t *testing.T) {
	e := New(Config{Dim: 16})
	var x []float64
	var err error
	for ev := 0; ev < 100; ev++ {
		f := []codec.Field{{Name: "keep", Kind: codec.FieldNumber, Num: float64(ev)}}
		if ev < 50 {
			f = append(f, codec.Field{Name: "gone", Kind: codec.FieldNumber, Num: 2 + float64(ev%2)*2}) // mean 3
		} else {
			f = append(f, codec.Field{Name: "late", Kind: codec.FieldString, Str: fmt.Sprint(ev % 3)})
		}
		if x, err = e.Encode(f, x); err != nil {
			t.Fatal(err)
		}
		if ev == 49 && e.Stats().Coords != 2 {
			t.Fatalf("coords before the change %d, want 2", e.Stats().Coords)
		}
	}
	names := e.Names()
	// keep, gone, late=2 (event 50), gone=<missing>, late=0, late=1
	want := []string{"keep", "gone", "late=2", "gone=<missing>", "late=0", "late=1"}
	for j, n := range want {
		if names[j] != n {
			t.Fatalf("names %q, want prefix %q", names, want)
		}
	}
	if x[0] != 99 || x[1] != 3 || x[3] != 1 || x[2]+x[4]+x[5] != 1 {
		t.Errorf("last vector %v", x)
	}
}

// Hostile state bytes: every truncation, every single-byte flip and huge
// counts give an error or a valid state — never a panic — and a failed
// UnmarshalBinary leaves the encoder unchanged.
func TestHostileState(t *testing.T) {
	cfg := Config{Dim: 64, MaxValuesPerName: 4}
	e := New(cfg)
	r := rng(3)
	var f []codec.Field
	var x []float64
	for ev := 0; ev < 50; ev++ {
		f = event(&r, 0.2, f)
		x, _ = e.Encode(f[:12], x)
	}
	good := mustMarshal(t, e)
	probe := New(cfg)
	probe.Encode(f[:3], nil)
	probeState := mustMarshal(t, probe)
	check := func(what string, b []byte) {
		t.Helper()
		err := probe.UnmarshalBinary(b)
		if err != nil {
			if !errors.Is(err, state.ErrCorrupt) && !errors.Is(err, ErrMismatch) {
				t.Fatalf("%s: error %v wraps neither ErrCorrupt nor ErrMismatch", what, err)
			}
			if !bytes.Equal(probeState, mustMarshal(t, probe)) {
				t.Fatalf("%s: a failed UnmarshalBinary changed the encoder", what)
			}
			return
		}
		// Accepted: it must re-marshal to the same bytes and encode without panicking.
		if !bytes.Equal(b, mustMarshal(t, probe)) {
			t.Fatalf("%s: accepted state does not round-trip", what)
		}
		probe.Encode(f, nil)
		probe = New(cfg)
		probe.Encode(f[:3], nil)
	}
	for n := 0; n < len(good); n++ {
		check(fmt.Sprintf("truncated to %d", n), good[:n])
	}
	for i := range good {
		for _, m := range []byte{0x01, 0x80, 0xff} {
			b := bytes.Clone(good)
			b[i] ^= m
			check(fmt.Sprintf("byte %d ^ %#x", i, m), b)
		}
	}
	// Huge counts: the name count (offset 4+1+8*6) and a string length.
	for _, off := range []int{5 + 8*2 + 2 + 8*4, 5 + 8*2 + 2 + 8*5} {
		b := bytes.Clone(good)
		for k := 0; k < 8; k++ {
			b[off+k] = 0x7f
		}
		check(fmt.Sprintf("huge at %d", off), b)
	}
	if err := New(Config{Dim: 65, MaxValuesPerName: 4}).UnmarshalBinary(good); !errors.Is(err, ErrMismatch) {
		t.Errorf("another Dim: %v, want ErrMismatch", err)
	}
	if err := New(cfg).UnmarshalBinary(good); err != nil {
		t.Errorf("good state refused: %v", err)
	}
}

// Steady state (no new names or values) does not allocate.
func TestEncodeNoAlloc(t *testing.T) {
	e := New(Config{Dim: 256})
	r := rng(1)
	var f []codec.Field
	x := make([]float64, 256)
	for ev := 0; ev < 2000; ev++ { // see every value
		f = event(&r, 0.1, f)
		x, _ = e.Encode(f, x)
	}
	f = event(&r, 0.1, f)
	if a := testing.AllocsPerRun(100, func() { x, _ = e.Encode(f, x) }); a != 0 {
		t.Errorf("Encode allocates %v times per event in steady state", a)
	}
}

func TestConfig(t *testing.T) {
	for _, c := range []Config{{Dim: 0}, {Dim: MaxDim + 1}, {Dim: 4, MaxValuesPerName: 5}, {Dim: 4, MaxValuesPerName: -1}, {Dim: 4, Missing: 9}} {
		if c.Validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if m, err := ParseMissing("refuse"); err != nil || m != MissingRefuse {
		t.Error("ParseMissing(refuse)")
	}
	if _, err := ParseMissing("zero"); err == nil {
		t.Error("ParseMissing(zero) accepted")
	}
}

// BenchmarkEncode30: a 30-field event (20 numeric, 10 string), steady state.
func BenchmarkEncode30(b *testing.B) {
	e := New(Config{Dim: 256})
	r := rng(1)
	evs := make([][]codec.Field, 256)
	for i := range evs {
		evs[i] = event(&r, 0.05, nil)
	}
	x := make([]float64, 256)
	for _, f := range evs {
		x, _ = e.Encode(f, x)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		x, _ = e.Encode(evs[i&255], x)
		i++
	}
}

// BenchmarkDecodeEncode30: the runtime's front end for a 30-field event —
// codec decoding plus Encode for a named event (10 string values), against
// decoding the dense event of the same 30 values (which needs no encoder).
func BenchmarkDecodeEncode30(b *testing.B) {
	r := rng(2)
	named := codec.Event{Version: codec.NamedEventVersion, ID: "events/0/123456", Key: "user-42", Y: 1, HasY: true}
	named.F = event(&r, 0, nil)
	dense := codec.Event{Version: 1, ID: "events/0/123456", Key: "user-42", Y: 1, HasY: true, X: make([]float64, 30)}
	for i := range dense.X {
		dense.X[i] = r.float()
	}
	run := func(b *testing.B, ev codec.Event, encode bool) {
		buf, err := codec.AppendEvent(nil, &ev)
		if err != nil {
			b.Fatal(err)
		}
		d := codec.NewDecoder(codec.Limits{Dim: 30})
		e := New(Config{Dim: 256})
		var out codec.Event
		x := make([]float64, 256)
		b.ReportAllocs()
		for b.Loop() {
			if err := d.DecodeEvent(buf, &out); err != nil {
				b.Fatal(err)
			}
			if encode {
				x, _ = e.Encode(out.F, x)
			}
		}
	}
	b.Run("dense/decode", func(b *testing.B) { run(b, dense, false) })
	b.Run("named/decode", func(b *testing.B) { run(b, named, false) })
	b.Run("named/decode+encode", func(b *testing.B) { run(b, named, true) })
}
