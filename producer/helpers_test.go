package producer

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"okstream/codec"
	"okstream/dataset"
	"okstream/learner/rng"
)

// synth returns a dataset of n rows × dim features with awkward values: an
// all-zero row, a row holding -0.0, tiny and huge magnitudes, many zeros
// (so the sparse form differs from the dense one), and labels ±1.
func synth(n, dim int) *dataset.Dataset {
	r := rng.New(42)
	ds := &dataset.Dataset{Name: "synth", Dim: dim, X: make([][]float64, n), Y: make([]float64, n)}
	for i := range n {
		row := make([]float64, dim)
		for j := range row {
			if r.Float64() < 0.4 {
				row[j] = r.Normal() * math.Pow(10, float64(r.IntN(7)-3))
			}
		}
		switch i {
		case 0:
			clear(row)
		case 1:
			row[0] = math.Copysign(0, -1)
		case 2:
			row[1], row[len(row)-1] = 1e-300, -1e300
		}
		ds.X[i] = row
		ds.Y[i] = r.Sign()
	}
	return ds
}

// parseID splits an event id "<prefix><pass>-<row>".
func parseID(t testing.TB, id, prefix string) (pass, row int) {
	t.Helper()
	s, ok := strings.CutPrefix(id, prefix)
	a, b, ok2 := strings.Cut(s, "-")
	p, err1 := strconv.Atoi(a)
	r, err2 := strconv.Atoi(b)
	if !ok || !ok2 || err1 != nil || err2 != nil {
		t.Fatalf("bad event id %q", id)
	}
	return p, r
}

// sameBits reports whether a and b hold the same float64s bit for bit.
func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

func decode(t testing.TB, b []byte, dim int) codec.Event {
	t.Helper()
	ev, err := codec.DecodeEvent(b, codec.Limits{Dim: dim})
	if err != nil {
		t.Fatalf("event does not decode: %v", err)
	}
	return ev
}

// fakeClock advances only when slept on; it records the sleeps.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

// newFakeClock starts at the current time (whole ms), so that records
// stamped with it are not already past a real broker's retention.
func newFakeClock() *fakeClock {
	return &fakeClock{now: time.UnixMilli(time.Now().UnixMilli())}
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	f.sleeps = append(f.sleeps, d)
	return nil
}
