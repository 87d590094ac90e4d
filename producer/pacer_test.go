package producer

import (
	"testing"
	"time"
)

// sendTimes runs a sender that asks the pacer before every call of n
// events and sleeps as told, on a fake clock; spent(k) is the time call k
// itself takes. It returns the clock time at which each call is sent.
func sendTimes(p *pacer, start time.Time, calls, n int, spent func(k int) time.Duration) []time.Time {
	now := start
	out := make([]time.Time, calls)
	for k := range calls {
		now = now.Add(p.reserve(now, n))
		out[k] = now
		now = now.Add(spent(k))
	}
	return out
}

func TestPacerSteadyRate(t *testing.T) {
	start := time.Unix(1000, 0)
	const rate, n = 1000.0, 10 // 10 events per call: one call per 10 ms
	p := newPacer(rate, n, start)
	times := sendTimes(p, start, 500, n, func(int) time.Duration { return 0 })
	// The first call uses the full bucket; call k leaves exactly at
	// k×10 ms: 1000 events/s, no bursts.
	for k, at := range times {
		if want := start.Add(time.Duration(k) * 10 * time.Millisecond); !at.Equal(want) {
			t.Fatalf("call %d sent at %v, want %v", k, at.Sub(start), want.Sub(start))
		}
	}
	// Over any window, no more than rate×window + burst events leave.
	for a := range times {
		for b := a; b < len(times); b += 37 {
			events := float64((b - a + 1) * n)
			if limit := rate*times[b].Sub(times[a]).Seconds() + n; events > limit+1e-9 {
				t.Fatalf("%v events in %v (calls %d..%d)", events, times[b].Sub(times[a]), a, b)
			}
		}
	}
}

func TestPacerFractionalRate(t *testing.T) {
	// 3 events/s with one event per call: 333.33.. ms apart, rounding up
	// to the nanosecond, never early.
	start := time.Unix(0, 0)
	p := newPacer(3, 1, start)
	times := sendTimes(p, start, 301, 1, func(int) time.Duration { return 0 })
	if got := times[300].Sub(start); got < 100*time.Second || got > 100*time.Second+time.Microsecond {
		t.Fatalf("300 intervals at 3/s took %v, want 100 s", got)
	}
}

func TestPacerSlowSenderGetsNoCatchUpBurst(t *testing.T) {
	start := time.Unix(0, 0)
	p := newPacer(100, 5, start) // 5 events per call, 20 calls per second
	// Each of the first 10 calls takes a whole second to send (a stalled
	// broker), then sending is instant again.
	times := sendTimes(p, start, 40, 5, func(k int) time.Duration {
		if k < 10 {
			return time.Second
		}
		return 0
	})
	// While slow, the pacer never waits.
	for k := 1; k <= 10; k++ {
		if d := times[k].Sub(times[k-1]); d != time.Second {
			t.Fatalf("call %d waited %v after a slow call, want none", k, d-time.Second)
		}
	}
	// Afterwards the saved-up time is capped at one call: at most one call
	// leaves without waiting, then the spacing is 50 ms again.
	for k := 12; k < 40; k++ {
		if d := times[k].Sub(times[k-1]); d != 50*time.Millisecond {
			t.Fatalf("call %d came %v after the previous one, want 50ms", k, d)
		}
	}
}

func TestPacerIdleDoesNotAccumulate(t *testing.T) {
	start := time.Unix(0, 0)
	p := newPacer(10, 2, start)
	if d := p.reserve(start, 2); d != 0 {
		t.Fatalf("full bucket: wait %v", d)
	}
	// An hour idle refills the bucket to 2 events, not 36000.
	later := start.Add(time.Hour)
	if d := p.reserve(later, 2); d != 0 {
		t.Fatalf("after idling: wait %v", d)
	}
	if d := p.reserve(later, 2); d != 200*time.Millisecond {
		t.Fatalf("second call after idling: wait %v, want 200ms", d)
	}
	// A clock that goes backwards does not mint tokens.
	if d := p.reserve(later.Add(-time.Minute), 1); d != 300*time.Millisecond {
		t.Fatalf("backwards clock: wait %v, want 300ms", d)
	}
}

func TestPacedChunk(t *testing.T) {
	for _, c := range []struct {
		rate  float64
		batch int
		want  int
	}{
		{0.5, 1000, 1}, {50, 1000, 1}, {1000, 1000, 10}, {25000, 1000, 250}, {1e7, 1000, 1000}, {1e7, 64, 64},
	} {
		if got := pacedChunk(c.rate, c.batch); got != c.want {
			t.Errorf("pacedChunk(%v, %d) = %d, want %d", c.rate, c.batch, got, c.want)
		}
	}
}
