package learner

import (
	"fmt"
	"math"
	"testing"

	"okstream/learner/rng"
)

// dsgFastStream is a sparse stream with indicator, signed and real
// coordinates (the shortcuts of the block projection all taken).
func dsgFastStream(n, d int, seed uint64) ([][]float64, []float64) {
	src := rng.New(seed)
	xs := make([][]float64, n)
	ys := make([]float64, n)
	for i := range xs {
		x := make([]float64, d)
		var s float64
		for j := range x {
			switch u := src.Float64(); {
			case u < 0.2:
				x[j] = 1
			case u < 0.3:
				x[j] = -1
			case u < 0.45:
				x[j] = src.Normal()
			}
			s += x[j] * float64(j%3-1)
		}
		xs[i] = x
		ys[i] = math.Copysign(1, s+0.3*src.Normal())
	}
	return xs, ys
}

// TestDSGThreadsAndBatchesBitIdentical: any thread count, and LearnBatch
// with any grouping of the events, give the scores and the final state of
// one-thread Learn bit for bit — before and after the cap, for both
// after_cap policies, cos and cossin features, the averaged model, a
// partial frequency cache and none; Predict too. More features than one
// chunk (dsgChunk) so that the threads split the work.
func TestDSGThreadsAndBatchesBitIdentical(t *testing.T) {
	const d, n = 9, 700
	xs, ys := dsgFastStream(n, d, 7)
	for _, spec := range []string{
		"dsg:sigma=2,batch=8,block=96,max_features=1500",
		"dsg:sigma=2,batch=5,block=100,max_features=1300,after_cap=revisit,predict_with=average",
		"dsg:sigma=2,batch=8,block=64,max_features=1100,features=cossin,loss=square,cache_mb=0.03",
		"dsg:kernel=laplacian,sigma=2,batch=7,block=128,max_features=1200,loss=logistic,cache_mb=0",
	} {
		ref := dsgOf(t, spec, d)
		want := make([]float64, n)
		wantP := make([]float64, n)
		for i := range xs {
			wantP[i] = ref.Predict(xs[i])
			want[i] = ref.Learn(xs[i], ys[i])
		}
		wantState, _ := ref.MarshalBinary()
		for _, threads := range []int{1, 2, 3} {
			for _, grouping := range []string{"learn", "batch1", "batch13", "batch64", "random"} {
				name := fmt.Sprintf("%s,threads=%d %s", spec, threads, grouping)
				l := dsgOf(t, fmt.Sprintf("%s,threads=%d", spec, threads), d)
				got := make([]float64, n)
				src := rng.New(uint64(threads))
				for i := 0; i < n; {
					k := 1
					switch grouping {
					case "batch13":
						k = 13
					case "batch64":
						k = 64
					case "random":
						k = 1 + src.IntN(40)
					}
					k = min(k, n-i)
					if grouping == "learn" {
						if p := l.Predict(xs[i]); math.Float64bits(p) != math.Float64bits(wantP[i]) {
							t.Fatalf("%s: Predict %d: %v, want %v", name, i, p, wantP[i])
						}
						got[i] = l.Learn(xs[i], ys[i])
					} else {
						l.LearnBatch(xs[i:i+k], ys[i:i+k], got[i:i+k])
					}
					i += k
				}
				for i := range got {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("%s: event %d scores %v, want %v", name, i, got[i], want[i])
					}
				}
				state, _ := l.MarshalBinary()
				if string(state) != string(wantState) {
					t.Fatalf("%s: final state differs", name)
				}
			}
		}
	}
}

// TestDSGLearnBatchRestore: a state marshalled between LearnBatch calls
// (mid mini-batch) restores into a learner with another thread count and
// continues bit for bit.
func TestDSGLearnBatchRestore(t *testing.T) {
	const d, n = 6, 400
	xs, ys := dsgFastStream(n, d, 3)
	spec := "dsg:sigma=1.5,batch=16,block=80,max_features=900"
	a := dsgOf(t, spec, d)
	sa := make([]float64, n)
	a.LearnBatch(xs[:150], ys[:150], sa[:150])
	st, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b := dsgOf(t, spec+",threads=2", d)
	if err := b.UnmarshalBinary(st); err != nil {
		t.Fatal(err)
	}
	sb := make([]float64, n)
	a.LearnBatch(xs[150:], ys[150:], sa[150:])
	b.LearnBatch(xs[150:], ys[150:], sb[150:])
	for i := 150; i < n; i++ {
		if math.Float64bits(sa[i]) != math.Float64bits(sb[i]) {
			t.Fatalf("event %d: restored %v, original %v", i, sb[i], sa[i])
		}
	}
}

// TestDSGLearnBatchNoAlloc: LearnBatch allocates nothing in steady state
// (one thread; the goroutines of threads > 1 are the runtime's).
func TestDSGLearnBatchNoAlloc(t *testing.T) {
	const d = 7
	xs, ys := dsgFastStream(256, d, 5)
	l := dsgOf(t, "dsg:sigma=2,batch=16,block=64,max_features=640,after_cap=revisit", d)
	scores := make([]float64, len(xs))
	l.LearnBatch(xs, ys, scores)
	l.LearnBatch(xs, ys, scores)
	if a := testing.AllocsPerRun(5, func() { l.LearnBatch(xs, ys, scores) }); a != 0 {
		t.Fatalf("%v allocations per LearnBatch", a)
	}
}
