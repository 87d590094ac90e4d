// Package memtest measures allocation in tests that bound what hostile input
// may make the code allocate (checkpoints, learner states, dataset files,
// events). It reads the runtime's own statistics, so it counts every
// allocation of the process: callers must not run such tests in parallel
// with others, and should state bounds with generous constants.
package memtest

import "runtime"

// TotalAlloc is the bytes allocated by the process so far
// (runtime.MemStats.TotalAlloc). It does not collect garbage first, so it
// is cheap enough to call around every execution of a fuzz target.
func TotalAlloc() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// Allocated is the bytes allocated while f runs. It collects garbage
// first so that a finalizer or sweep left over from earlier work is not
// counted.
func Allocated(f func()) uint64 {
	runtime.GC()
	before := TotalAlloc()
	f()
	return TotalAlloc() - before
}
