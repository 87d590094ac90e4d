package producer

import (
	"context"
	"math"
	"time"
)

// clock is the time source of a replay; tests replace the wall clock with a
// fake one, so that pacing is checked without timing assertions.
type clock interface {
	Now() time.Time
	// Sleep waits d or until ctx is done (then it returns ctx.Err()).
	Sleep(ctx context.Context, d time.Duration) error
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// pacer is a token bucket: tokens (events) accrue at rate per second up to
// burst, and sending n events takes n tokens. reserve lets the balance go
// negative and returns the wait that brings it back to zero, so a caller
// that sleeps for the returned time sends at exactly rate on average, never
// more than burst events ahead of the ideal schedule, and — since the
// balance is capped at burst — does not make up for time it fell behind.
type pacer struct {
	rate   float64 // events per second, > 0
	burst  float64 // bucket capacity, ≥ 1
	tokens float64
	last   time.Time
}

// newPacer returns a pacer with a full bucket at now.
func newPacer(rate float64, burst int, now time.Time) *pacer {
	b := math.Max(1, float64(burst))
	return &pacer{rate: rate, burst: b, tokens: b, last: now}
}

// reserve takes n events' tokens at time now and returns how long to wait
// before sending them (0: send now). Times before the last call count as
// the last call's time.
func (p *pacer) reserve(now time.Time, n int) time.Duration {
	if el := now.Sub(p.last); el > 0 {
		p.tokens = math.Min(p.burst, p.tokens+el.Seconds()*p.rate)
		p.last = now
	}
	p.tokens -= float64(n)
	if p.tokens >= 0 {
		return 0
	}
	return time.Duration(math.Ceil(-p.tokens / p.rate * float64(time.Second)))
}

// pacedChunk is the number of events per call at rate: about 10 ms' worth,
// at least 1 and at most batch.
func pacedChunk(rate float64, batch int) int {
	c := int(math.Round(rate / 100))
	return max(1, min(c, batch))
}
