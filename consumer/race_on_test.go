//go:build race

package consumer

// raceEnabled: the race detector is on. Its instrumentation allocates now
// and then (and sync.Pool drops items at random under it), so the tests that
// count allocations skip under it; they run in every plain go test.
const raceEnabled = true
