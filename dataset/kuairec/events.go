package kuairec

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// DefaultThreshold is the label threshold of the FORKS experiments (App.
// D.2): an event is positive when watch_ratio > 0.75.
const DefaultThreshold = 0.75

// Label returns +1 if watchRatio > threshold, else −1.
func Label(watchRatio, threshold float64) float64 {
	if watchRatio > threshold {
		return 1
	}
	return -1
}

// Event is one timed interaction in replay order, in 48 bytes (the small
// matrix's 4.5 M events take 216 MB).
type Event struct {
	User, Video int32
	Day         int32 // Beijing day of TS, YYYYMMDD
	Dup         int32 // how many earlier events of the replay order have the same (user, video): 0 except in the big matrix
	PlayMS      int64 // play_duration
	DurationMS  int64 // video_duration
	TS          int64 // event time, ms since the Unix epoch (round(timestamp·1000))
	WatchRatio  float64
}

// ID returns the event's id: "<user>-<video>", with "#<dup>" appended for a
// repeated pair (big matrix), so ids are unique within one matrix.
func (e *Event) ID() string {
	b := make([]byte, 0, 24)
	b = strconv.AppendInt(b, int64(e.User), 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(e.Video), 10)
	if e.Dup > 0 {
		b = append(b, '#')
		b = strconv.AppendInt(b, int64(e.Dup), 10)
	}
	return string(b)
}

// Key returns the event's key, the user_id.
func (e *Event) Key() string { return strconv.Itoa(int(e.User)) }

// Label returns the event's label at threshold.
func (e *Event) Label(threshold float64) float64 { return Label(e.WatchRatio, threshold) }

// Compare orders events for replay: by timestamp, then user_id, then
// video_id (docs/algorithms/kuairec-features.md), then Dup.
func Compare(a, b *Event) int {
	if c := cmp.Compare(a.TS, b.TS); c != 0 {
		return c
	}
	if c := cmp.Compare(a.User, b.User); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Video, b.Video); c != 0 {
		return c
	}
	return cmp.Compare(a.Dup, b.Dup)
}

// OrderOptions configure LoadEvents.
type OrderOptions struct {
	// Dedup drops events that repeat an earlier one on the event fields
	// (user, video, play_duration, video_duration, timestamp, watch_ratio),
	// as NJB does for the big matrix; the small matrix has none.
	Dedup bool
}

// OrderStats describe a matrix file and the events taken from it.
type OrderStats struct {
	Rows       int   // data rows in the file
	Untimed    int   // rows without a timestamp, excluded (the small matrix's stage-2 exposures)
	Duplicates int   // rows dropped by Dedup
	Events     int   // events returned
	Positive   int   // events with watch_ratio > DefaultThreshold
	First      int64 // first event time (ms); 0 without events
	Last       int64 // last event time (ms)
}

// String summarizes the stats in one line.
func (s OrderStats) String() string {
	out := fmt.Sprintf("%d rows: %d timed events in replay order, %d untimed rows excluded", s.Rows, s.Events, s.Untimed)
	if s.Duplicates > 0 {
		out += fmt.Sprintf(", %d duplicates dropped", s.Duplicates)
	}
	if s.Events > 0 {
		out += fmt.Sprintf("; P(watch_ratio > %g) = %.3f; %s .. %s (UTC+8)", DefaultThreshold,
			float64(s.Positive)/float64(s.Events), FormatTime(s.First)[:16], FormatTime(s.Last)[:16])
	}
	return out
}

// LoadEvents reads a matrix file (streaming) and returns its timed rows as
// events in the global replay order: sorted by (timestamp,
// user_id, video_id); rows with an empty timestamp are excluded (FORKS's
// 4,494,578 events are the small matrix's timed rows). The files are
// stored user-major, so this sort is what makes the stream a stream. Events
// with equal keys (the big matrix's exact duplicates) keep their file order.
func LoadEvents(path string, opts OrderOptions) ([]Event, OrderStats, error) {
	m, err := OpenMatrix(path)
	if err != nil {
		return nil, OrderStats{}, err
	}
	defer m.Close()
	return readEvents(m, opts)
}

type dedupKey struct {
	user, video   int32
	play, dur, ts int64
	wr            uint64
}

func readEvents(m *MatrixReader, opts OrderOptions) ([]Event, OrderStats, error) {
	var st OrderStats
	var out []Event
	var seen map[dedupKey]struct{}
	if opts.Dedup {
		seen = map[dedupKey]struct{}{}
	}
	var it Interaction
	for {
		err := m.Next(&it)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, st, err
		}
		st.Rows++
		if !it.Timed {
			st.Untimed++
			continue
		}
		if it.UserID > math.MaxInt32 || it.VideoID > math.MaxInt32 || it.UserID < 0 || it.VideoID < 0 {
			return nil, st, fmt.Errorf("kuairec: %s:%d: user_id %d / video_id %d out of range", m.r.path, m.Line(), it.UserID, it.VideoID)
		}
		e := Event{User: int32(it.UserID), Video: int32(it.VideoID), PlayMS: it.PlayDuration,
			DurationMS: it.VideoDuration, TS: it.TimestampMS(), WatchRatio: it.WatchRatio}
		e.Day = int32(DayOf(e.TS))
		if seen != nil {
			k := dedupKey{e.User, e.Video, e.PlayMS, e.DurationMS, e.TS, math.Float64bits(e.WatchRatio)}
			if _, dup := seen[k]; dup {
				st.Duplicates++
				continue
			}
			seen[k] = struct{}{}
		}
		out = append(out, e)
	}
	SortEvents(out)
	st.Events = len(out)
	for i := range out {
		if out[i].WatchRatio > DefaultThreshold {
			st.Positive++
		}
	}
	if len(out) > 0 {
		st.First, st.Last = out[0].TS, out[len(out)-1].TS
	}
	return out, st, nil
}

// SortEvents sorts events into replay order (Compare; equal events keep
// their order) and numbers repeated (user, video) pairs in Dup.
func SortEvents(ev []Event) {
	// Ties keep the input order: sort by the position as the last key
	// (held in Dup until the pairs are numbered).
	for i := range ev {
		ev[i].Dup = int32(i)
	}
	slices.SortFunc(ev, func(a, b Event) int { return Compare(&a, &b) })
	numberPairs(ev)
}

// numberPairs sets Dup to the number of earlier events with the same
// (user, video).
func numberPairs(ev []Event) {
	n := len(ev)
	fits := n < 1<<26
	for i := range ev {
		fits = fits && ev[i].User >= 0 && ev[i].User < 1<<20 && ev[i].Video >= 0 && ev[i].Video < 1<<18
	}
	if fits {
		// One packed key per event, user | video | position: a plain
		// integer sort groups the pairs in replay order.
		keys := make([]uint64, n)
		for i := range ev {
			keys[i] = uint64(ev[i].User)<<44 | uint64(ev[i].Video)<<26 | uint64(i)
		}
		slices.Sort(keys)
		const pos = 1<<26 - 1
		for k := range keys {
			i := int(keys[k] & pos)
			ev[i].Dup = 0
			if k > 0 && keys[k]>>26 == keys[k-1]>>26 {
				ev[i].Dup = ev[keys[k-1]&pos].Dup + 1
			}
		}
		return
	}
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		ea, eb := &ev[a], &ev[b]
		if c := cmp.Compare(ea.User, eb.User); c != 0 {
			return c
		}
		if c := cmp.Compare(ea.Video, eb.Video); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for k := range idx {
		q := &ev[idx[k]]
		q.Dup = 0
		if k > 0 {
			if p := &ev[idx[k-1]]; p.User == q.User && p.Video == q.Video {
				q.Dup = p.Dup + 1
			}
		}
	}
}
