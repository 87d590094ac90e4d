package drift

import (
	"math"
	"slices"
	"testing"
)

// TestLEDConcept checks the noise-free stream against the segment table
// before the drift and the permuted table after it, and the irrelevant
// attributes' and classes' frequencies.
func TestLEDConcept(t *testing.T) {
	g, n, err := Parse("drift:led,noise=0,n=20000,p=10000,k=7,seed=3")
	if err != nil {
		t.Fatal(err)
	}
	led := g.(*LED)
	perm := led.Permutation()
	if slices.Equal(perm[:], identityPerm()) {
		t.Fatal("7 swaps left the identity")
	}
	lost := 0 // segment positions that now show noise
	for j := range 7 {
		if perm[j] >= 7 {
			lost++
		}
	}
	if lost == 0 {
		t.Fatalf("π = %v moves no segment away", perm)
	}
	x := make([]float64, LEDDim)
	var counts [LEDClasses]int
	ones := 0
	for i := range n {
		y := g.Next(x)
		c := int(y)
		if float64(c) != y || c < 0 || c >= LEDClasses {
			t.Fatalf("label %v", y)
		}
		counts[c]++
		for j := range LEDDim {
			src := j
			if i >= 10000 {
				src = perm[j]
			}
			if src < 7 && x[j] != LEDSegments[c][src] {
				t.Fatalf("event %d class %d: x[%d] = %v, want segment %d = %v", i, c, j, x[j], src, LEDSegments[c][src])
			}
			if src >= 7 {
				ones += int(x[j])
			}
		}
	}
	for c, k := range counts {
		if math.Abs(float64(k)-float64(n)/10) > 5*math.Sqrt(float64(n)*0.09) {
			t.Errorf("class %d: %d of %d", c, k, n)
		}
	}
	if f := float64(ones) / float64(17*n); math.Abs(f-0.5) > 0.01 {
		t.Errorf("irrelevant attributes: %.4f ones", f)
	}
	if got := g.Changes(); !slices.Equal(got, []int{10000}) {
		t.Errorf("Changes %v", got)
	}
}

func identityPerm() []int {
	p := make([]int, LEDDim)
	for i := range p {
		p[i] = i
	}
	return p
}

// TestLEDNoise checks the segment inversion rate.
func TestLEDNoise(t *testing.T) {
	g, err := NewLED(LEDConfig{Seed: 5, Noise: 0.1, Position: 1 << 30, Swaps: 1})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, LEDDim)
	flips, n := 0, 20000
	for range n {
		c := int(g.Next(x))
		for j := range 7 {
			if x[j] != LEDSegments[c][j] {
				flips++
			}
		}
	}
	if f := float64(flips) / float64(7*n); math.Abs(f-0.1) > 0.006 {
		t.Errorf("inversion rate %.4f, want 0.1", f)
	}
}

// TestLEDSpecAndState checks Parse(Spec()) and that a restored stream
// continues with the same examples; bad configurations and forged states
// are refused.
func TestLEDSpecAndState(t *testing.T) {
	g, _, err := Parse("drift:led,n=1000,seed=9")
	if err != nil {
		t.Fatal(err)
	}
	if g.Spec() != "led,k=7,noise=0.1,p=500,seed=9" {
		t.Errorf("spec %q", g.Spec())
	}
	h, _, err := Parse(g.Spec())
	if err != nil || h.Spec() != g.Spec() {
		t.Fatalf("Parse(Spec()): %v %v", h, err)
	}
	x, z := make([]float64, LEDDim), make([]float64, LEDDim)
	for range 400 {
		g.Next(x)
	}
	b, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	for i := range 300 { // across the drift at 500
		if y, w := g.Next(x), h.Next(z); y != w || !slices.Equal(x, z) {
			t.Fatalf("event %d differs after restore", 400+i)
		}
	}
	other, _, _ := Parse("drift:led,n=1000,seed=10")
	if err := other.UnmarshalBinary(b); err == nil {
		t.Error("a state of another seed was accepted")
	}
	for _, bad := range [][]byte{nil, b[:len(b)-1], append(slices.Clone(b), 0)} {
		if err := h.UnmarshalBinary(bad); err == nil {
			t.Errorf("forged state of %d bytes accepted", len(bad))
		}
	}
	for _, spec := range []string{"led,noise=2", "led,k=25", "led,p=-1", "led,q=1"} {
		if _, _, err := Parse(spec); err == nil {
			t.Errorf("%s accepted", spec)
		}
	}
}
