package learner

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Shared NOGD configurations: the switch to phase 2 after one or two sync
// points of the 3-copy runs.
var nogdShareSpecs = []string{
	"nogd:sigma=1.2,budget=40,k=20,shared=true",
	"nogd:sigma=1,budget=20,k=20,loss=square,shared=true",
}

func TestNOGDShareRestoreMidPeriod(t *testing.T) {
	for _, spec := range nogdShareSpecs {
		testShareRestoreMidPeriod(t, spec, func(t *testing.T, l Learner) {
			if !l.(*NOGD).primal() {
				t.Fatal("the run does not reach phase 2")
			}
		})
	}
}

// Every copy has the same map after the switch; 3 shared copies learn the
// contract stream (fewer than 40 % mistakes; the trivial predictor: 50 %).
func TestNOGDShareSameBasisAndLearns(t *testing.T) {
	spec := nogdShareSpecs[0]
	xs, ys := stream(Classification, 3600, 5, 41)
	scores, ls := shareRun{spec: spec, P: 3, S: 40, L: 1}.run(t, xs, ys)
	a := ls[0].(*NOGD)
	for _, l := range ls[1:] {
		b := l.(*NOGD)
		if !a.primal() || !slices.Equal(a.m, b.m) || a.sh.basis != b.sh.basis || !slices.Equal(a.sv.Data(), b.sv.Data()) {
			t.Fatal("the copies' maps differ")
		}
	}
	if rate := mistakeRate(scores, ys); rate > 0.4 {
		t.Fatalf("3 shared copies make %.1f %% mistakes", 100*rate)
	}
}

// The mixed phase-2 merge (ShareMix's sums over every delta, less the own
// ones: w − Σ_own Δw + (1/k) Σ Δw) is the parameter mixing of the direct
// form (w + (1/k − 1) Δw_own + (1/k) Σ_others Δw, mergeLate) up to
// rounding: compared after every phase-2 merge of a 3-copy run, within
// 1e-12 relative.
func TestNOGDShareMixMatchesDirectSum(t *testing.T) {
	for _, spec := range nogdShareSpecs {
		t.Run(spec, func(t *testing.T) {
			xs, ys := stream(taskOf(t, spec), 2400, 5, 17)
			checked := 0
			r := shareRun{spec: spec, P: 3, S: 20, L: 1}
			r.merge = func(p int, l Learner, ds []SharedDelta) func() {
				n := l.(*NOGD)
				if !n.primal() || len(ds) == 0 {
					return nil
				}
				st, _ := n.MarshalBinary()
				ref, _ := New(spec, 5)
				if err := ref.UnmarshalBinary(st); err != nil {
					t.Fatal(err)
				}
				rn := ref.(*NOGD)
				nds, err := rn.decodeDeltas(ds, false)
				if err != nil {
					t.Fatal(err)
				}
				if nogdMix(nds, nil) == nil {
					return nil // late Stage-1 entries: both take mergeLate
				}
				if err := rn.mergeLate(nds); err != nil {
					t.Fatal(err)
				}
				return func() {
					checked++
					requireMixClose(t, p, "w", n.w, rn.w, 1e-12)
				}
			}
			r.run(t, xs, ys)
			if checked < 10 {
				t.Fatalf("only %d phase-2 merges compared", checked)
			}
			t.Logf("%d phase-2 merges compared", checked)
		})
	}
}

// The Nyström map made once per process (sharedBuildMap) changes nothing:
// scores and final states are the same byte for byte with the basis cache
// and without it, and with it the copies after the first take their map
// from the cache.
func TestNOGDBasisCacheExact(t *testing.T) {
	for _, spec := range nogdShareSpecs {
		t.Run(spec, func(t *testing.T) {
			testBasisCacheExact(t, spec, func(t *testing.T, ls []Learner) {
				if !ls[0].(*NOGD).primal() {
					t.Fatal("the run does not reach phase 2")
				}
			}, func(t *testing.T) {
				if len(forksCache.nogdProj.keys) == 0 {
					t.Fatal("no projection was cached: the run does not exercise them")
				}
			})
		})
	}
}

// Hostile deltas are refused with state.ErrCorrupt and leave the model
// unchanged, in both phases; Learn in phase 2 does not allocate.
func TestNOGDShareRejectsBadDeltas(t *testing.T) {
	spec := nogdShareSpecs[0]
	xs, ys := stream(Classification, 2400, 5, 42)
	for _, phase2 := range []bool{false, true} {
		ls := []Learner{mustNew(t, spec, 5), mustNew(t, spec, 5)}
		if phase2 {
			_, ls = shareRun{spec: spec, P: 2, S: 50, L: 1}.run(t, xs[:2000], ys[:2000])
		}
		a, b := ls[0].(*NOGD), ls[1].(*NOGD)
		if a.primal() != phase2 {
			t.Fatalf("phase 2 %v expected", phase2)
		}
		for i := 2000; i < 2060; i += 2 {
			a.Learn(xs[i], ys[i])
			b.Learn(xs[i+1], ys[i+1])
		}
		good, _ := b.ShareDelta()
		own, _ := a.ShareDelta()
		before, _ := a.MarshalBinary()
		refuse := refuser(t, a, fmt.Sprintf("phase 2 %v", phase2), good)
		other, _ := New(strings.Replace(spec, "sigma=1.2", "sigma=1.3", 1), 5)
		od, _ := other.(Sharer).ShareDelta()
		refuse("another spec", SharedDelta{Partition: 1, Data: od})
		refuse("a state, not a delta", SharedDelta{Partition: 1, Data: before})
		bad := slices.Clone(good)
		copy(bad[len(bad)-8:], []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f})
		refuse("NaN", SharedDelta{Partition: 1, Data: bad})
		if !phase2 {
			refuse("foreign Own delta", SharedDelta{Partition: 0, Own: true, Data: good})
		}
		if err := a.ShareMerge([]SharedDelta{{Partition: 0, Own: true, Data: own}, {Partition: 1, Data: good}}); err != nil {
			t.Fatalf("phase 2 %v: the good deltas are refused: %v", phase2, err)
		}
		if phase2 {
			i := 2060
			if n := testing.AllocsPerRun(200, func() { a.Learn(xs[i], ys[i]); i++ }); n != 0 {
				t.Fatalf("%v allocations per Learn of a shared copy in phase 2", n)
			}
		}
	}
	l, _ := New("nogd:sigma=1", 5)
	if _, err := l.(Sharer).ShareDelta(); err == nil {
		t.Fatal("ShareDelta without shared=true")
	}
}
