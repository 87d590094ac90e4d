package state

import (
	"math"
	"testing"
)

// Quantize8: codes within half a step of the input, the largest magnitude
// exactly ±127, zero and non-finite inputs as documented, and Q8Codes / Q8sRawN
// round-trip.
func TestQuantize8(t *testing.T) {
	x := []float64{0.5, -2, 1e-9, 0, 1.999, -0.0157, 2}
	out := make([]byte, len(x))
	s := Quantize8(x, out)
	if s != 2.0/127 {
		t.Fatalf("scale %v, want 2/127", s)
	}
	for i, v := range x {
		if d := math.Abs(Dequant8(out[i], s) - v); d > s/2 {
			t.Errorf("x[%d] = %v decodes to %v (off by %v > half a step %v)", i, v, Dequant8(out[i], s), d, s/2)
		}
	}
	if int8(out[1]) != -127 || int8(out[6]) != 127 {
		t.Errorf("extremes coded %d, %d; want -127, 127", int8(out[1]), int8(out[6]))
	}
	if s := Quantize8([]float64{0, 0}, out); s != 0 || out[0] != 0 || out[1] != 0 {
		t.Errorf("zeros: scale %v codes %v", s, out[:2])
	}
	for _, bad := range []float64{math.NaN(), math.Inf(-1)} {
		if s := Quantize8([]float64{1, bad, 3}, out); !math.IsNaN(s) || out[0]|out[1]|out[2] != 0 {
			t.Errorf("%v: scale %v codes %v, want NaN and zeros", bad, s, out[:3])
		}
	}
	e := NewEncoder(0)
	codes0 := make([]byte, len(x))
	e.Q8Codes(Quantize8(x, codes0), codes0)
	e.Q8Codes(Quantize8([]float64{math.NaN()}, out), out[:1])
	if e.NonFinite() != 1 {
		t.Errorf("non-finite count %d, want 1", e.NonFinite())
	}
	d := NewDecoder(e.Bytes())
	s2, codes := d.Q8sRawN(len(x))
	Quantize8(x, out) // out was reused above
	if s2 != s || string(codes) != string(out) {
		t.Errorf("round trip: scale %v codes %v, want %v %v", s2, codes, s, out)
	}
	if _, c := d.Q8sRawN(2); c != nil || d.Err() == nil {
		t.Error("a slice of the wrong length was accepted")
	}
}

// refQuantize8 is Quantize8's definition written plainly (math.Round and
// float clamps), for inputs whose 127/max|x| is finite.
func refQuantize8(x []float64, out []byte) float64 {
	var amax float64
	for _, v := range x {
		if a := math.Abs(v); a > amax || a != a {
			amax = a
			if a != a || math.IsInf(a, 0) {
				clear(out[:len(x)])
				return math.NaN()
			}
		}
	}
	if amax == 0 {
		clear(out[:len(x)])
		return 0
	}
	inv := 127 / amax
	for i, v := range x {
		out[i] = byte(int8(min(127, max(-127, math.Round(v*inv)))))
	}
	return amax / 127
}

// Quantize8's branchless rounding gives exactly the codes of math.Round
// (ties away from zero) on random vectors of every magnitude, on exact
// halves, and on the doubles next to them; a vector too small for 127/max
// to be finite gets the codes of the same vector scaled up by a power of
// two.
func TestQuantize8MatchesRound(t *testing.T) {
	rng := uint64(1)
	next := func() float64 { // deterministic uniform in [0, 1)
		rng = rng*6364136223846793005 + 1442695040888963407
		return float64(rng>>11) / (1 << 53)
	}
	check := func(name string, x []float64) {
		t.Helper()
		got, want := make([]byte, len(x)), make([]byte, len(x))
		sg, sw := Quantize8(x, got), refQuantize8(x, want)
		if math.Float64bits(sg) != math.Float64bits(sw) && !(sg != sg && sw != sw) || string(got) != string(want) {
			t.Fatalf("%s: scale %v codes %v, want %v %v (x = %v)", name, sg, got, sw, want, x)
		}
	}
	for trial := range 2000 {
		x := make([]float64, 1+trial%37)
		e := math.Ldexp(1, int(next()*600)-300)
		for i := range x {
			x[i] = (next() - 0.5) * e
		}
		check("random", x)
	}
	// Exact halves k + 1/2 (amax 127 makes inv 1) and their neighbours.
	for k := -127.0; k < 127; k++ {
		h := k + 0.5
		check("half", []float64{127, h, math.Nextafter(h, 0), math.Nextafter(h, math.Inf(1)), math.Nextafter(h, math.Inf(-1)), -h})
	}
	check("below one half", []float64{127, 0.5 - 0x1p-54, -(0.5 - 0x1p-54), 0x1p-1074, math.Copysign(0, -1)})
	tiny := []float64{0x1p-1070, -0x1p-1074, 3 * 0x1p-1072, 0}
	scaled := make([]float64, len(tiny))
	for i, v := range tiny {
		scaled[i] = v * 0x1p600
	}
	got, want := make([]byte, len(tiny)), make([]byte, len(tiny))
	s := Quantize8(tiny, got)
	refQuantize8(scaled, want)
	if s != 0x1p-1070/127 || string(got) != string(want) {
		t.Errorf("tiny: scale %v codes %v, want %v %v", s, got, 0x1p-1070/127, want)
	}
}

func BenchmarkQuantize8(b *testing.B) {
	x := make([]float64, 800)
	for i := range x {
		x[i] = math.Sin(float64(i)) * 1e-3
	}
	out := make([]byte, len(x))
	b.SetBytes(int64(8 * len(x)))
	for b.Loop() {
		Quantize8(x, out)
	}
}
