package learner

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"okstream/internal/memtest"

	"okstream/learner/state"
)

// fuzzDim is the input dimension of every fuzzed learner.
const fuzzDim = 3

// fuzzSpecs are small configurations of every registered learner (and of
// the variants whose state layout differs: forms, bases, decompositions,
// phases), cheap enough for a million fuzz executions.
// TestFuzzSpecsCoverRegistry checks the coverage.
var fuzzSpecs = []string{
	"fogd:sigma=1,budget=8",
	"nogd:sigma=1,budget=6,k=3",
	"dsg:sigma=1,batch=2,block=4,max_features=12,cache_mb=0",
	"dsg:sigma=1,batch=2,block=4,max_features=8,after_cap=revisit,features=cossin,predict_with=average,cache_mb=0",
	"rbp:sigma=1,budget=4",
	"bpas:sigma=1,budget=4",
	"bogd:sigma=1,budget=4",
	"projectron:sigma=1,budget=5",
	"forks:budget=4,k=2,sm=2,rho=3,horizon=40",
	"forks:budget=4,k=2,sm=2,rho=3,horizon=40,decomp=svd,max_stored=10,landmarks=replace",
	"forks:budget=4,k=2,sm=2,rho=3,horizon=40,shared=true", // Stage 1 of a shared copy (FuzzShareMerge covers the merges)
	"nogd:sigma=1,budget=6,k=3,shared=true",
	"skegd:budget=4,k=2,sm=2,rho=3,horizon=40,carry=transfer",
	"kawv:max_points=8",
	"pkawv:order=2",
	"pkawv:basis=nystrom,max_points=6,max_history=20",
	"pkawv:basis=nystrom,max_points=0,max_history=0",
	"pros-n-kons:sigma=1,bmax=6",
	"pros-n-kons:sigma=1",
	"con-kons:sigma=1,bmax=6",
	"aogd-ald:sigma=1,horizon=100,budget=6",
	"aogd-ald:sigma=1,horizon=100,budget=4,budget_policy=kogd,form=dual",
	"nons-ald:sigma=1,horizon=100,budget=6",
	"nons-ald:sigma=1,horizon=100,budget=6,form=svd",
	"auto:base=fogd,budget=4,octaves=1,etas=2,halving=8,warmup=5",
	"auto:base=nons-ald,budget=4,horizon=100,octaves=1,halving=8,warmup=5,ridge_features=3", // small kernel ridge members: the field sweep is quadratic in the state size
	"fogd:sigma=auto,scale=standard,budget=6,warmup=5",
	"nogd:sigma=2,scale=standard,budget=6,k=3,warmup=5",
	"linear",
	"linear:loss=square",
	"linear:loss=square,solver=rls,lambda=0.5",
	"linear:loss=square,solver=rls,features=4,sigma=2,seed=3",
	"auto:base=fogd,loss=square,budget=4,octaves=1,halving=8,warmup=5,ridge_features=3",
	"auto:base=nogd,budget=4,octaves=1,etas=1,halving=8,warmup=5,linear=false",
}

// fuzzSeedEvents are the stream lengths after which the seed states are
// taken: empty, early, and past the phase changes of the small specs
// (budgets full, FORKS/SkeGD in Stage 2 with update rounds done).
var fuzzSeedEvents = []int{0, 3, 40}

func newFuzzLearner(tb testing.TB, spec string) Learner {
	l, err := New(rawSpec(spec), fuzzDim) // specs without σ: the learner itself, not the self-tuning wrapper
	if err != nil {
		tb.Fatalf("%s: %v", spec, err)
	}
	return l
}

// feedStream feeds n events of the synthetic problem with the learner's
// task.
func feedStream(l Learner, n int, seed uint64) {
	xs, ys := stream(l.Info().Task, n, fuzzDim, seed)
	for i := range xs {
		l.Learn(xs[i], ys[i])
	}
}

func TestFuzzSpecsCoverRegistry(t *testing.T) {
	covered := map[string]bool{}
	for _, s := range fuzzSpecs {
		n, _, _ := ParseSpec(s)
		covered[n] = true
		newFuzzLearner(t, s)
	}
	for _, n := range Names() {
		if !covered[n] {
			t.Errorf("learner %s has no fuzz spec", n)
		}
	}
}

// fuzzAllocBound is the allocation an UnmarshalBinary of len(data) bytes
// may make in the fuzz target: the documented O(n) + O(configured budget)
// with generous constants (a dense n×n factor decoded from its n(n+1)/2
// stored entries, with room to grow, is ~8× its encoding) — what matters is
// that a declared size can never push it to gigabytes.
func fuzzAllocBound(n int) uint64 { return 32*uint64(n) + 4<<20 }

var totalAlloc = memtest.TotalAlloc

// FuzzUnmarshal feeds mutated learner states to UnmarshalBinary through the
// registry: for every spec of fuzzSpecs, a fresh learner must refuse a bad
// state with an error wrapping state.ErrCorrupt (or a *MismatchError) and
// stay unchanged, never panic, and never allocate beyond fuzzAllocBound; a
// state it accepts must re-marshal to the same bytes and then predict,
// learn and round-trip again without panicking.
func FuzzUnmarshal(f *testing.F) {
	for i, spec := range fuzzSpecs {
		for _, n := range fuzzSeedEvents {
			l := newFuzzLearner(f, spec)
			feedStream(l, n, uint64(7+i))
			b, err := l.MarshalBinary()
			if err != nil {
				f.Fatalf("%s: %v", spec, err)
			}
			f.Add(uint8(i), b)
			if s, ok := l.(Sharer); ok { // a state with a sync snapshot
				if _, err := s.ShareDelta(); err != nil {
					continue // this configuration cannot share
				}
				if err := s.ShareMerge(nil); err != nil {
					f.Fatal(err)
				}
				feedStream(l, n, uint64(8+i))
				b, _ := l.MarshalBinary()
				f.Add(uint8(i), b)
			}
		}
	}
	xs, ys := stream(Classification, 4, fuzzDim, 99)
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		spec := fuzzSpecs[int(which)%len(fuzzSpecs)]
		l := newFuzzLearner(t, spec)
		before, err := l.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		a0 := totalAlloc()
		err = l.UnmarshalBinary(data)
		if got := totalAlloc() - a0; got > fuzzAllocBound(len(data)) {
			t.Fatalf("%s: UnmarshalBinary of %d bytes allocated %d bytes (bound %d); err = %v", spec, len(data), got, fuzzAllocBound(len(data)), err)
		}
		if err != nil {
			var me *state.MismatchError
			if !errors.Is(err, state.ErrCorrupt) && !errors.As(err, &me) {
				t.Fatalf("%s: error %v wraps neither ErrCorrupt nor MismatchError", spec, err)
			}
			after, err := l.MarshalBinary()
			if err != nil || !bytes.Equal(before, after) {
				t.Fatalf("%s: a refused state changed the learner (err %v)", spec, err)
			}
			return
		}
		again, err := l.MarshalBinary()
		if err != nil {
			t.Fatalf("%s: accepted state does not marshal: %v", spec, err)
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("%s: accepted state re-marshals to different bytes", spec)
		}
		task := l.Info().Task
		for i, x := range xs {
			l.Predict(x)
			y := ys[i]
			if task == Regression {
				y = 0.5
			}
			l.Learn(x, y)
		}
		b, err := l.MarshalBinary()
		if err != nil {
			t.Fatalf("%s: marshal after learning: %v", spec, err)
		}
		if err := newFuzzLearner(t, spec).UnmarshalBinary(b); err != nil {
			t.Fatalf("%s: state after learning does not restore: %v", spec, err)
		}
		_ = l.Info()
	})
}

// MarshalChecked reports no non-finite value for a sound model, and counts
// those of a model poisoned by a non-finite input.
func TestMarshalCheckedCountsNonFinite(t *testing.T) {
	for i, spec := range fuzzSpecs {
		l := newFuzzLearner(t, spec)
		feedStream(l, 40, uint64(7+i))
		b, n, err := MarshalChecked(l)
		want, _ := l.MarshalBinary()
		if err != nil || n != 0 || !bytes.Equal(b, want) {
			t.Errorf("%s: MarshalChecked = %d non-finite, err %v, same bytes %v", spec, n, err, bytes.Equal(b, want))
		}
	}
	l := newFuzzLearner(t, "rbp:sigma=1,budget=4") // stores the input on a mistake
	l.Learn([]float64{math.Inf(1), 0, math.NaN()}, 1)
	if _, n, err := MarshalChecked(l); err != nil || n != 2 {
		t.Fatalf("rbp after a non-finite input: %d non-finite values (want 2), err %v", n, err)
	}
}
