package learner

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"okstream/learner/rng"
)

// checkedSpecs are a configuration of every Sharer that implements
// DeltaChecker (dimension 3).
var checkedSpecs = []string{
	"fogd:sigma=1,budget=8",
	"fogd:sigma=1,budget=8,mix=own",
	"linear:loss=square",
	"pkawv:order=2,sigma=0.7",
	"forks:sigma=1,budget=10,sm=4,k=3,rho=150,shared=true",
	"nogd:sigma=1,budget=6,k=3,shared=true",
}

// sharedDeltas returns a copy of spec after n labelled events and its
// delta, for each of a few n (Stage 1 and Stage 2 for FORKS and NOGD).
func sharedDeltas(t testing.TB, spec string) [][]byte {
	var out [][]byte
	for _, n := range []int{0, 3, 40, 400} {
		l, err := New(spec, 3)
		if err != nil {
			t.Fatal(err)
		}
		src := rng.New(uint64(n) + 1)
		for i := 0; i < n; i++ {
			x := []float64{src.Float64(), src.Float64() - 0.5, src.Float64() * 2}
			y := 1.0
			if x[0]+x[1] < 0.5 {
				y = -1
			}
			l.Learn(x, y)
		}
		d, err := l.(Sharer).ShareDelta()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// Every Sharer's own deltas pass its CheckDelta, and a copy of another
// spec, a truncated delta or a delta with one byte more is refused with
// ErrDeltaInvalid.
func TestCheckDeltaAcceptsOwnRefusesDamaged(t *testing.T) {
	for _, spec := range checkedSpecs {
		l, err := New(spec, 3)
		if err != nil {
			t.Fatal(err)
		}
		dc, ok := l.(DeltaChecker)
		if !ok {
			t.Fatalf("%s: no DeltaChecker", spec)
		}
		for i, d := range sharedDeltas(t, spec) {
			if err := dc.CheckDelta(d); err != nil {
				t.Fatalf("%s: own delta %d refused: %v", spec, i, err)
			}
			for _, bad := range [][]byte{d[:len(d)-1], append(append([]byte(nil), d...), 0), nil} {
				if err := dc.CheckDelta(bad); !errors.Is(err, ErrDeltaInvalid) {
					t.Fatalf("%s: damaged delta %d (%d bytes): %v, want ErrDeltaInvalid", spec, i, len(bad), err)
				}
			}
		}
	}
	other, _ := New("fogd:sigma=2,budget=8", 3)
	d, _ := other.(Sharer).ShareDelta()
	l, _ := New("fogd:sigma=1,budget=8", 3)
	if err := l.(DeltaChecker).CheckDelta(d); !errors.Is(err, ErrDeltaInvalid) {
		t.Fatalf("a delta of another spec: %v", err)
	}
}

// FOGD: a NaN scale, a scale whose largest weight change is above
// MaxWeightDelta, and the code −128 are refused; the ridge statistics: a
// non-finite value and one above MaxStatDelta.
func TestCheckDeltaValues(t *testing.T) {
	l, _ := New("fogd:sigma=1,budget=8", 3)
	d := sharedDeltas(t, "fogd:sigma=1,budget=8")[2]
	n := len(l.(*FOGD).w)
	at := len(d) - n - 8 // the scale
	for name, f := range map[string]func(b []byte){
		"nan scale":  func(b []byte) { binary.LittleEndian.PutUint64(b[at:], math.Float64bits(math.NaN())) },
		"huge scale": func(b []byte) { binary.LittleEndian.PutUint64(b[at:], math.Float64bits(1e6)) },
		"code -128":  func(b []byte) { b[len(b)-1] = 0x80 },
	} {
		b := append([]byte(nil), d...)
		f(b)
		if err := l.(DeltaChecker).CheckDelta(b); !errors.Is(err, ErrDeltaInvalid) {
			t.Errorf("fogd, %s: %v, want ErrDeltaInvalid", name, err)
		}
	}
	lin, _ := New("linear:loss=square", 3)
	d = sharedDeltas(t, "linear:loss=square")[2]
	for name, v := range map[string]float64{"nan": math.NaN(), "inf": math.Inf(-1), "huge": 2 * MaxStatDelta} {
		b := append([]byte(nil), d...)
		binary.LittleEndian.PutUint64(b[len(b)-8:], math.Float64bits(v))
		if err := lin.(DeltaChecker).CheckDelta(b); !errors.Is(err, ErrDeltaInvalid) {
			t.Errorf("linear, %s: %v, want ErrDeltaInvalid", name, err)
		}
	}
}

// FuzzCheckDelta feeds mutated deltas to every DeltaChecker: it never
// panics, its errors wrap ErrDeltaInvalid (or say the model cannot share),
// and a delta of a vector model (FOGD, linear, PKAWV-Taylor) it accepts
// merges without error into a fresh copy, leaving its state finite.
func FuzzCheckDelta(f *testing.F) {
	for i, spec := range checkedSpecs {
		for _, d := range sharedDeltas(f, spec) {
			f.Add(uint8(i), d)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		spec := checkedSpecs[int(which)%len(checkedSpecs)]
		l, err := New(spec, 3)
		if err != nil {
			t.Fatal(err)
		}
		err = l.(DeltaChecker).CheckDelta(data)
		if err != nil {
			if !errors.Is(err, ErrDeltaInvalid) {
				t.Fatalf("%s: error %v does not wrap ErrDeltaInvalid", spec, err)
			}
			return
		}
		switch l.(type) {
		case *FOGD, *Linear, *PKAWV:
		default:
			return
		}
		if err := l.(Sharer).ShareMerge([]SharedDelta{{Partition: 1, Data: data}}); err != nil {
			t.Fatalf("%s: an accepted delta does not merge: %v", spec, err)
		}
		if s := l.Predict([]float64{0.1, 0.2, 0.3}); math.IsNaN(s) || math.IsInf(s, 0) {
			t.Fatalf("%s: an accepted delta makes the score %v", spec, s)
		}
	})
}

// The tailer's check of one delta: FOGD B = 100 (400 codes) and a FORKS
// Stage-2 delta.
func BenchmarkCheckDelta(b *testing.B) {
	for _, spec := range []string{"fogd:sigma=1,budget=100", "forks:sigma=1,budget=10,sm=4,k=3,rho=150,shared=true"} {
		l, _ := New(spec, 3)
		ds := sharedDeltas(b, spec)
		d := ds[len(ds)-1]
		b.Run(spec[:4], func(b *testing.B) {
			b.SetBytes(int64(len(d)))
			for b.Loop() {
				if err := l.(DeltaChecker).CheckDelta(d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
