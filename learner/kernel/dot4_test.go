package kernel

import (
	"math"
	"testing"

	"okstream/learner/rng"
)

// dot4Ref is Dot4's definition, one product at a time.
func dot4Ref(a, b []float64) float64 {
	var s [4]float64
	n := len(a) &^ 3
	for i := range n {
		s[i%4] += float64(a[i] * b[i])
	}
	for i := n; i < len(a); i++ {
		s[0] += float64(a[i] * b[i])
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}

// TestDot4Bits: Dot4 and Dot4x4 have the bits of the definition for every
// length up to 41 and a long one, on values spread over many exponents
// (every addition rounds), and b longer than a.
func TestDot4Bits(t *testing.T) { checkDot4(t) }

func checkDot4(t *testing.T) {
	src := rng.New(4)
	val := func() float64 { return math.Ldexp(src.Normal(), int(src.IntN(60))-30) }
	for _, n := range append([]int{1027}, func() []int {
		var ns []int
		for n := range 42 {
			ns = append(ns, n)
		}
		return ns
	}()...) {
		a := make([]float64, n)
		var bs [4][]float64
		for i := range a {
			a[i] = val()
		}
		for k := range bs {
			bs[k] = make([]float64, n+k)
			for i := range bs[k] {
				bs[k][i] = val()
			}
		}
		var out [4]float64
		Dot4x4(&out, a, bs[0], bs[1], bs[2], bs[3])
		for k, b := range bs {
			want := dot4Ref(a, b)
			if got := Dot4(a, b); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("n=%d: Dot4 %v, want %v", n, got, want)
			}
			if math.Float64bits(out[k]) != math.Float64bits(want) {
				t.Fatalf("n=%d: Dot4x4[%d] %v, want %v", n, k, out[k], want)
			}
		}
	}
}
