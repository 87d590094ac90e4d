// Package progress draws a progress line for long jobs on a terminal
// (stderr), e.g.
//
//	eval german  [=========>          ]  47%  940/2000 runs  3.1k ev/s  ETA 12s
//
// When the output is not a terminal it prints a plain line at most every
// few seconds instead of redrawing, so logs stay readable. A nil *Bar is
// valid and does nothing, so callers can disable progress by passing nil.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Bar is a progress indicator. Its methods are safe for concurrent use.
type Bar struct {
	mu       sync.Mutex
	w        io.Writer
	label    string
	unit     string
	total    int64
	done     int64
	start    time.Time
	last     time.Time
	tty      bool
	every    time.Duration
	finished bool
	suffix   string
}

// New returns a bar writing to w for a job of total units (unit names them,
// e.g. "events"). total ≤ 0 means unknown: the bar shows counts and rates
// only.
func New(w io.Writer, label string, total int64, unit string) *Bar {
	if w == nil {
		return nil
	}
	b := &Bar{w: w, label: label, unit: unit, total: total, start: time.Now(), tty: isTerminal(w)}
	b.every = 200 * time.Millisecond
	if !b.tty {
		b.every = 5 * time.Second
	}
	return b
}

// Add records n more units done and redraws if enough time has passed.
func (b *Bar) Add(n int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done += n
	now := time.Now()
	if now.Sub(b.last) >= b.every {
		b.last = now
		b.draw(now)
	}
}

// Set records the absolute number of units done (instead of Add) and
// redraws if enough time has passed.
func (b *Bar) Set(done int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.done = 0
	b.mu.Unlock()
	b.Add(done)
}

// SetSuffix sets text shown after the counts (e.g. live metrics).
func (b *Bar) SetSuffix(s string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.suffix = s
	b.mu.Unlock()
}

// Note prints a line of its own above the bar (or as a plain line when not
// on a terminal).
func (b *Bar) Note(s string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tty {
		fmt.Fprintf(b.w, "\r\033[K%s\n", s)
		b.draw(time.Now())
	} else {
		fmt.Fprintln(b.w, s)
	}
}

// SetLabel changes the label (e.g. the current dataset).
func (b *Bar) SetLabel(s string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.label = s
	b.mu.Unlock()
}

// Finish draws the final state and ends the line.
func (b *Bar) Finish() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.finished {
		return
	}
	b.finished = true
	b.draw(time.Now())
	if b.tty {
		fmt.Fprintln(b.w)
	}
}

func (b *Bar) draw(now time.Time) {
	el := now.Sub(b.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(b.done) / el
	}
	var line string
	if b.total > 0 {
		frac := float64(b.done) / float64(b.total)
		if frac > 1 {
			frac = 1
		}
		const width = 24
		n := int(frac * width)
		bar := strings.Repeat("=", n)
		if n < width {
			bar += ">" + strings.Repeat(" ", width-n-1)
		}
		eta := "?"
		if rate > 0 {
			eta = (time.Duration(float64(b.total-b.done)/rate) * time.Second).Round(time.Second).String()
		}
		line = fmt.Sprintf("%s [%s] %3.0f%%  %s/%s %s  %s %s/s  ETA %s",
			b.label, bar, 100*frac, human(float64(b.done)), human(float64(b.total)), b.unit, human(rate), b.unit, eta)
	} else {
		line = fmt.Sprintf("%s  %s %s  %s %s/s  %s", b.label, human(float64(b.done)), b.unit, human(rate), b.unit,
			time.Duration(el*float64(time.Second)).Round(time.Second))
	}
	if b.suffix != "" {
		line += "  " + b.suffix
	}
	if b.tty {
		fmt.Fprintf(b.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(b.w, line)
	}
}

func human(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.1fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
