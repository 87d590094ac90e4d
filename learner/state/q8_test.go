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
