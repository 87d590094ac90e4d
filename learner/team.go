package learner

import (
	"runtime"
	"sync"
	"time"
)

// team runs a job on T goroutines: the caller's and T−1 persistent
// workers, which wait for the next job by spinning for up to teamSpin
// (yielding the processor between checks) before they block.
//
// Why: a learner that forks per mini-batch group (DSG's LearnBatch with
// threads > 1, issue 42) pays a wake-up per fork and per join when it
// starts goroutines and joins them with a sync.WaitGroup: the idle
// processor and then the parked caller are woken through the OS, which
// on a virtual machine costs tens of µs each, several times per group.
// Spinning workers pick up the next job and the caller sees their
// completion without a wake-up, as long as jobs follow each other within
// teamSpin; past that everything blocks, so an idle learner costs no CPU.
//
// A job must not depend on which goroutine runs which index beyond its
// argument t (0 is the caller's): results are the job's, whatever the
// timing. run is not safe for concurrent use (one learner, one caller).
// The workers hold no reference to the job once it returns; they exit
// when close is called (the owning learner registers close as its
// runtime cleanup, so a dropped learner leaks no goroutine).
type team struct {
	T     int
	start []chan func(int) // one per worker, capacity 1
	done  chan struct{}    // a token per finished worker job, capacity T−1
	once  sync.Once
}

// teamSpin is how long a waiting goroutine spins before it blocks: longer
// than the gaps between one mini-batch group's jobs (the caller's serial
// work between them is a few µs), short against a group (about 1 ms).
const teamSpin = 100 * time.Microsecond

// newTeam starts T−1 workers (none for T ≤ 1).
func newTeam(T int) *team {
	tm := &team{T: T, done: make(chan struct{}, max(T-1, 0))}
	for w := 1; w < T; w++ {
		ch := make(chan func(int), 1)
		tm.start = append(tm.start, ch)
		go tm.work(w, ch)
	}
	return tm
}

func (tm *team) work(w int, ch chan func(int)) {
	for {
		spinUntil(func() bool { return len(ch) > 0 })
		job, ok := <-ch
		if !ok {
			return
		}
		job(w) // job is dead from here: the worker keeps no reference to it
		tm.done <- struct{}{}
	}
}

// run calls job(t) for t = 0..T−1, t = 0 on the caller's goroutine, and
// returns when every call has returned.
func (tm *team) run(job func(t int)) {
	for _, ch := range tm.start {
		ch <- job
	}
	job(0)
	n := len(tm.start)
	spinUntil(func() bool { return len(tm.done) == n })
	for range n {
		<-tm.done
	}
}

// close stops the workers (idempotent; run must not be called after it).
func (tm *team) close() {
	tm.once.Do(func() {
		for _, ch := range tm.start {
			close(ch)
		}
	})
}

// spinUntil polls cond, yielding the processor between polls, for up to
// teamSpin; it reports whether cond became true.
func spinUntil(cond func() bool) bool {
	var start time.Time
	for i := 0; ; i++ {
		if cond() {
			return true
		}
		if i&31 == 31 {
			if i == 31 {
				start = time.Now()
			} else if time.Since(start) > teamSpin {
				return false
			}
		}
		runtime.Gosched()
	}
}
