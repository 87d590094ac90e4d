package learner

import "testing"

// TestFeatureONSIsFORKSStage2 checks that FeatureONS, fed FORKS' own feature
// vectors from the INIT round on, returns bit-identical scores to FORKS up to
// its first update round (where FORKS resets and FeatureONS does not).
func TestFeatureONSIsFORKSStage2(t *testing.T) {
	xs, ys := stream(Classification, 1500, 3, 7)
	l, err := New("forks:budget=20,sigma=1,rho=1000,seed=3", 3)
	if err != nil {
		t.Fatal(err)
	}
	f := l.(*FORKS)
	var fo *FeatureONS
	compared := 0
	for i, x := range xs {
		if !f.sk.ready {
			l.Learn(x, ys[i])
			if f.sk.ready { // INIT ran on this round: FORKS took the first ONS step on x
				fo = NewFeatureONS(f.sk.k, 0.01, 1, 0.5, Hinge)
				phi := append([]float64(nil), f.sk.features(x)...)
				fo.Learn(phi, ys[i])
			}
			continue
		}
		if f.sk.nextIsUpdate() {
			break
		}
		phi := append([]float64(nil), f.sk.features(x)...)
		want := l.Learn(x, ys[i])
		if got := fo.Learn(phi, ys[i]); got != want {
			t.Fatalf("round %d: FeatureONS score %v, FORKS %v", i, got, want)
		}
		compared++
	}
	if fo == nil || compared < 500 {
		t.Fatalf("compared %d Stage-2 rounds (INIT reached: %v); the stream is too short for the test", compared, fo != nil)
	}
}
