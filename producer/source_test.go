package producer

import (
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
	"testing"
	"time"

	"okstream/codec"
	"okstream/internal/kafkatest"
)

// TestEventPacer: with speedup F an event Δ ms after the first in event
// time is due Δ/F ms after the first was; events before the first, and
// events without a time, are due at once. Fake times only.
func TestEventPacer(t *testing.T) {
	start := time.Unix(1000, 0)
	p := &eventPacer{speedup: 3600}
	if d := p.due(1_600_000_000_000, true, start); !d.Equal(start) {
		t.Fatalf("first event due %v, want the start", d)
	}
	later := start.Add(5 * time.Second) // the sender's own clock moved on
	for _, c := range []struct {
		ms   int64
		want time.Duration
	}{
		{1_600_000_000_000 + 3_600_000, time.Second},       // an hour of event time: 1 s
		{1_600_000_000_000 + 86_400_000, 24 * time.Second}, // a day: 24 s
		{1_600_000_000_000 + 1, 278 * time.Nanosecond},     // 1 ms / 3600, rounded up
		{1_600_000_000_000 - 60_000, 0},                    // before the first: at once
		{1_600_000_000_000 + 7_200_000, 2 * time.Second},   // independent of when asked
	} {
		if got := p.due(c.ms, true, later).Sub(start); got != c.want {
			t.Errorf("event at +%d ms due after %v, want %v", c.ms-1_600_000_000_000, got, c.want)
		}
	}
	if got := p.due(0, false, later); !got.Equal(later) {
		t.Errorf("event without ts due %v, want now", got)
	}
	rt := &eventPacer{speedup: 1}
	rt.due(0, true, start)
	if got := rt.due(1500, true, start).Sub(start); got != 1500*time.Millisecond {
		t.Errorf("real time: %v", got)
	}
}

// sliceSource is a Source over events in memory.
type sliceSource struct {
	ev []codec.Event
	i  int
}

func (s *sliceSource) Next() (codec.Event, error) {
	if s.i >= len(s.ev) {
		return codec.Event{}, io.EOF
	}
	s.i++
	return s.ev[s.i-1], nil
}

// timedEvents returns n labelled events with keys "u<k%users>" at times
// base + gap(i).
func timedEvents(n, users int, base int64, gap func(i int) int64) []codec.Event {
	out := make([]codec.Event, n)
	ts := base
	for i := range out {
		ts += gap(i)
		out[i] = codec.Event{Version: 1, ID: "e" + strconv.Itoa(i), TS: ts, HasTS: true,
			Key: "u" + strconv.Itoa(i%users), X: []float64{float64(i), 1}, Y: float64(2*(i%2) - 1), HasY: true}
	}
	return out
}

// TestReplaySourcePacing replays events through the embedded broker on a
// fake clock with speedup 1000: the replay sleeps exactly until each
// event's due time (total sleep = event-time span / 1000), every record
// arrives with its event time as record time and its key, in source order
// per partition.
func TestReplaySourcePacing(t *testing.T) {
	e := kafkatest.New(t)
	topic := e.Name("src-pacing")
	e.CreateTopic(t, topic, 3, map[string]string{"retention.ms": "-1"})
	base := time.Now().UnixMilli() - 3_600_000
	gaps := []int64{0, 5000, 0, 0, 20000, 1000, 0, 60000}
	evs := timedEvents(40, 7, base, func(i int) int64 { return gaps[i%len(gaps)] })
	clk := newFakeClock()
	start := clk.Now()
	var acked []int64
	st, err := ReplaySource(context.Background(), &sliceSource{ev: evs}, StreamConfig{
		Brokers: e.Brokers, Topic: topic, Speedup: 1000, BatchSize: 4, clock: clk,
		Headers: nil, OnAck: func(i int64, _ int, _ int64) { acked = append(acked, i) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Events != 40 || st.Sent != 40 || st.Labelled != 40 {
		t.Fatalf("stats %+v", st)
	}
	span := evs[len(evs)-1].TS - evs[0].TS
	var slept time.Duration
	for _, d := range clk.sleeps {
		slept += d
	}
	if want := time.Duration(span) * time.Millisecond / 1000; slept != want || clk.Now().Sub(start) != want {
		t.Fatalf("slept %v (clock moved %v), want the event-time span / 1000 = %v", slept, clk.Now().Sub(start), want)
	}
	// Every sleep ends at a due time: the due times are the distinct
	// event times after the first.
	var dues []time.Duration
	for _, ev := range evs {
		d := time.Duration(ev.TS-evs[0].TS) * time.Millisecond / 1000
		if d > 0 && (len(dues) == 0 || dues[len(dues)-1] != d) {
			dues = append(dues, d)
		}
	}
	var at time.Duration
	var ends []time.Duration
	for _, d := range clk.sleeps {
		at += d
		ends = append(ends, at)
	}
	if !slices.Equal(ends, dues) {
		t.Fatalf("sleeps end at %v, want the due times %v", ends, dues)
	}
	checkRecords(t, e, topic, evs)
	if len(acked) != 40 {
		t.Fatalf("%d acknowledgements", len(acked))
	}
}

// checkRecords reads topic back and checks records against the source
// events: value = the canonical encoding, key = the event key, record time
// = the event time, and source order within each partition.
func checkRecords(t *testing.T, e *kafkatest.Env, topic string, evs []codec.Event) {
	t.Helper()
	recs := e.ReadAll(t, topic)
	if len(recs) != len(evs) {
		t.Fatalf("%d records, want %d", len(recs), len(evs))
	}
	index := map[string]int{}
	for i, ev := range evs {
		index[ev.ID] = i
	}
	last := map[int]int{}
	for _, r := range recs {
		ev, err := codec.DecodeEvent(r.Value, codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		i, ok := index[ev.ID]
		if !ok {
			t.Fatalf("unknown id %q", ev.ID)
		}
		want, _ := codec.AppendEvent(nil, &evs[i])
		if string(r.Value) != string(want) {
			t.Fatalf("event %d: value differs from its canonical encoding", i)
		}
		if string(r.Key) != evs[i].Key || r.Time.UnixMilli() != evs[i].TS {
			t.Fatalf("event %d: key %q time %d, want %q %d", i, r.Key, r.Time.UnixMilli(), evs[i].Key, evs[i].TS)
		}
		if r.Partition != Partition(evs[i].Key, 3) {
			t.Fatalf("key %q on partition %d", evs[i].Key, r.Partition)
		}
		if l, ok := last[r.Partition]; ok && i <= l {
			t.Fatalf("partition %d: event %d after %d", r.Partition, i, l)
		}
		last[r.Partition] = i
	}
}

// TestReplaySourceFast: Speedup 0 never sleeps; Limit stops early; a source
// error stops the replay after what was read, and is returned.
func TestReplaySourceFast(t *testing.T) {
	e := kafkatest.New(t)
	// Hourly events ending now: a real broker refuses record times more than
	// log.message.timestamp.after.max.ms (1 h since Kafka 4.0) in the future.
	base := time.Now().UnixMilli() - 26*3_600_000
	evs := timedEvents(25, 4, base, func(int) int64 { return 3_600_000 })
	topic := e.Name("src-fast")
	e.CreateTopic(t, topic, 3, map[string]string{"retention.ms": "-1"})
	clk := newFakeClock()
	st, err := ReplaySource(context.Background(), &sliceSource{ev: evs}, StreamConfig{Brokers: e.Brokers, Topic: topic, BatchSize: 7, clock: clk})
	if err != nil || st.Events != 25 || len(clk.sleeps) != 0 {
		t.Fatalf("stats %+v, err %v, sleeps %v", st, err, clk.sleeps)
	}
	checkRecords(t, e, topic, evs)

	topic2 := e.Name("src-limit")
	e.CreateTopic(t, topic2, 1, map[string]string{"retention.ms": "-1"})
	st, err = ReplaySource(context.Background(), &sliceSource{ev: evs}, StreamConfig{Brokers: e.Brokers, Topic: topic2, Limit: 10, BatchSize: 4})
	if err != nil || st.Events != 10 {
		t.Fatalf("limit: %+v %v", st, err)
	}

	bad := append(slices.Clone(evs[:5]), codec.Event{Version: 1, ID: "nokey", X: []float64{1}})
	topic3 := e.Name("src-bad")
	e.CreateTopic(t, topic3, 1, nil)
	st, err = ReplaySource(context.Background(), &sliceSource{ev: bad}, StreamConfig{Brokers: e.Brokers, Topic: topic3})
	if err == nil || st.Events != 5 {
		t.Fatalf("source error: %+v %v", st, err)
	}
	if _, err := ReplaySource(context.Background(), &sliceSource{}, StreamConfig{Brokers: e.Brokers, Topic: topic3, Speedup: -1}); err == nil {
		t.Fatal("negative speedup accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReplaySource(ctx, &sliceSource{ev: evs}, StreamConfig{Brokers: e.Brokers, Topic: topic3}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
