package learner

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// Every index runs once per run, and run returns only after every call
// has returned (a worker's job that is still sleeping when the caller's
// share ends must be waited for: here the spin gives up and blocks).
func TestTeamRunsEveryIndexOnceAndWaits(t *testing.T) {
	for _, T := range []int{1, 2, 3, 5} {
		tm := newTeam(T)
		for r := range 50 {
			calls := make([]atomic.Int32, T)
			var finished atomic.Int32
			tm.run(func(i int) {
				if i > 0 && r%10 == 0 {
					time.Sleep(2 * teamSpin) // past the spin: the caller blocks
				}
				calls[i].Add(1)
				finished.Add(1)
			})
			if got := finished.Load(); got != int32(T) {
				t.Fatalf("T=%d run %d: run returned with %d of %d calls finished", T, r, got, T)
			}
			for i := range calls {
				if c := calls[i].Load(); c != 1 {
					t.Fatalf("T=%d run %d: index %d ran %d times, want 1", T, r, i, c)
				}
			}
			if r%7 == 0 {
				time.Sleep(2 * teamSpin) // the workers block between jobs, then wake
			}
		}
		tm.close()
		tm.close() // idempotent
	}
}

// waitGoroutines polls until at most n goroutines run (the workers exit
// asynchronously); it reports the last count.
func waitGoroutines(n int) int {
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		g := runtime.NumGoroutine()
		if g <= n || time.Now().After(deadline) {
			return g
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// settledGoroutines is the goroutine count once earlier tests' dropped
// learners have been collected (unchanged over three polls).
func settledGoroutines() int {
	last, same := -1, 0
	for i := 0; i < 500 && same < 3; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		if g := runtime.NumGoroutine(); g == last {
			same++
		} else {
			last, same = g, 0
		}
	}
	return last
}

func TestTeamCloseStopsWorkers(t *testing.T) {
	base := settledGoroutines()
	tm := newTeam(4)
	tm.run(func(int) {})
	if g := runtime.NumGoroutine(); g < base+3 {
		t.Fatalf("%d goroutines with a team of 4, want at least %d", g, base+3)
	}
	tm.close()
	if g := waitGoroutines(base); g > base {
		t.Fatalf("%d goroutines after close, want %d", g, base)
	}
}

// A dropped DSG learner stops its LearnBatch goroutines (runtime cleanup):
// a service that replaces models leaks none.
func TestDSGTeamStopsWithLearner(t *testing.T) {
	base := settledGoroutines()
	xs, ys := dsgFastStream(200, 5, 1)
	for range 3 {
		l, err := New("dsg:sigma=2,batch=16,block=64,max_features=2048,threads=3", 5)
		if err != nil {
			t.Fatal(err)
		}
		l.(*DSG).LearnBatch(xs, ys, make([]float64, len(xs)))
		if l.(*DSG).team == nil {
			t.Fatal("threads=3 LearnBatch ran without its team")
		}
	}
	if g := waitGoroutines(base); g > base {
		t.Fatalf("%d goroutines after the learners were dropped, want %d: their LearnBatch workers leaked", g, base)
	}
}

// With threads > 1 a fork allocates nothing: Learn and Predict stay
// allocation-free per event, before and after the cap (refine), as with
// one thread.
func TestDSGThreadsLearnAllocatesNothing(t *testing.T) {
	xs, ys := dsgFastStream(3000, 6, 2)
	l, err := New("dsg:sigma=2,batch=8,block=128,max_features=1536,threads=2", 6)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 { // past the cap of 1536 features: refine
		l.Learn(xs[i], ys[i])
	}
	i := 200
	if a := testing.AllocsPerRun(500, func() {
		l.Predict(xs[i])
		l.Learn(xs[i], ys[i])
		i++
	}); a != 0 {
		t.Fatalf("%v allocations per event with threads=2", a)
	}
}
