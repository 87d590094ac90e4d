package consumer

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/codec"
	"okstream/eval"
	"okstream/internal/kafkatest"
	"okstream/learner/rng"
	"okstream/learner/state"
)

// feedbackStream makes impressions (v2, with ids, no labels) whose feedback
// (v2, ref, label) arrives later in event time, interleaved as a real feed
// would deliver them, plus a few feedback events for unknown impressions.
func feedbackStream(n int, seed uint64) []kafka.Message {
	src := rng.New(seed)
	type item struct {
		ts  int64
		seq int
		ev  codec.Event
	}
	var items []item
	for i := 0; i < n; i++ {
		c := circleEvent(src, i, "", "")
		x, y := c.X, c.Y
		key := fmt.Sprintf("user-%d", src.IntN(40))
		ts := int64(1_700_000_000_000 + 250*i)
		id := fmt.Sprintf("imp-%d", i)
		items = append(items, item{ts, 2 * i, codec.Event{Version: 2, ID: id, Key: key, TS: ts, HasTS: true, X: x}})
		delay := int64(200 + src.IntN(5000)) // 0.2–5.2 s of event time
		items = append(items, item{ts + delay, 2*i + 1, codec.Event{Version: 2, Key: key, Ref: id, TS: ts + delay, HasTS: true, Y: y, HasY: true}})
		if i%97 == 5 {
			items = append(items, item{ts + 1, 2*i + 1, codec.Event{Version: 2, Key: key, Ref: "never-seen", TS: ts + 1, HasTS: true, Y: 1, HasY: true}})
		}
	}
	sort.SliceStable(items, func(a, b int) bool {
		if items[a].ts != items[b].ts {
			return items[a].ts < items[b].ts
		}
		return items[a].seq < items[b].seq
	})
	msgs := make([]kafka.Message, len(items))
	for i, it := range items {
		b, err := codec.AppendEvent(nil, &it.ev)
		if err != nil {
			panic(err)
		}
		msgs[i] = kafka.Message{Key: []byte(it.ev.Key), Value: b}
	}
	return msgs
}

// Delayed feedback through the pipeline equals the offline path
// (eval.ReplayEvents) fed each partition's (impression, feedback)
// sequence — impression scores, the outcome records' scores and the final
// models — and stays exact when the pipeline is killed with feedback in
// flight.
func TestDelayedFeedbackExactWithPendingInFlight(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 2, nil)
	msgs := feedbackStream(1500, 9)
	e.Produce(t, input, msgs...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.FeedbackBuffer, cfg.FeedbackMaxAge, cfg.CheckpointEvery = 5000, time.Hour, 130
	ends := endOffsets(t, e, input)
	for _, at := range []int{700, 1900} { // kills with impressions pending
		r := start(t, cfg)
		waitFor(t, 90*time.Second, "progress", func() bool { return r.p.m.predictionsCount() >= float64(at/2) || caughtUp(ends, r) })
		r.kill(t)
	}
	r := start(t, cfg)
	waitFor(t, 90*time.Second, "the final run", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}

	// Offline reference per partition.
	byPart := map[int][]codec.Event{}
	var offs = map[int][]int64{}
	for _, rec := range e.ReadAll(t, input) {
		ev, err := codec.DecodeEvent(rec.Value, codec.Limits{Dim: testDim})
		if err != nil {
			t.Fatal(err)
		}
		byPart[rec.Partition] = append(byPart[rec.Partition], ev)
		offs[rec.Partition] = append(offs[rec.Partition], rec.Offset)
	}
	want := map[[2]int64][]float64{}
	wantStates := map[int][][]byte{}
	for p, evs := range byPart {
		for _, m := range cfg.Models {
			scores, l, err := eval.ReplayEvents(m.Spec, testDim, evs)
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range offs[p] {
				want[[2]int64{int64(p), o}] = append(want[[2]int64{int64(p), o}], scores[i])
			}
			st, _ := l.MarshalBinary()
			wantStates[p] = append(wantStates[p], st)
		}
	}
	got := predictionsByOffset(t, e, cfg.Output)
	outcomes := 0
	for k, raw := range got {
		pr, err := codec.DecodePrediction(raw)
		if err != nil {
			t.Fatal(err)
		}
		if pr.HasRef {
			outcomes++
			if !pr.HasY {
				t.Fatalf("outcome record %v without its label", k)
			}
		}
		for i, m := range pr.Models {
			if !sameScore(m.Score, want[k][i]) {
				t.Fatalf("partition %d offset %d model %s: published %v, offline %v", k[0], k[1], m.Name, m.Score, want[k][i])
			}
		}
	}
	if outcomes != 1500 {
		t.Fatalf("%d outcome records, want 1500 (one per resolved impression)", outcomes)
	}
	states, _ := checkpointStates(t, e, cfg, 2)
	for p := 0; p < 2; p++ {
		for i := range cfg.Models {
			if !bytes.Equal(states[p][i], wantStates[p][i]) {
				t.Fatalf("partition %d model %s: final state differs from the offline replay", p, cfg.Models[i].Name)
			}
		}
	}
	// The unknown-impression feedback events were dead-lettered, not lost
	// (dead letters are at least once too: count distinct sources).
	orphanSources := map[string]bool{}
	for _, d := range e.ReadAll(t, cfg.DeadLetter) {
		h := map[string]string{}
		for _, x := range d.Headers {
			h[x.Key] = string(x.Value)
		}
		if h[HeaderReason] == reasonOrphanFeedback {
			orphanSources[h[HeaderSource]] = true
		}
	}
	if orphans := len(orphanSources); orphans != 16 {
		t.Fatalf("%d orphan feedback dead letters, want 16", orphans)
	}
}

// The pending buffer evicts by size and by event-time age, oldest first,
// and survives encode/decode, remapping scores when models change.
func TestPendingBuffer(t *testing.T) {
	p := newPending(pendingLimits{max: 3, maxAge: 1000}, 2)
	mk := func(id string, ts int64) *impression {
		return &impression{id: id, ts: ts, hasTS: true, x: []float64{1, 2}, scores: []float64{0.5, -0.5}, probs: []float64{0.7, 0.2}, updates: []uint64{3, 4}}
	}
	take := func(p *pending, id string) *impression { im, _ := p.take(id, ""); return im }
	p.add(mk("a", 0))
	p.add(mk("b", 100))
	p.add(mk("c", 200))
	if r := p.add(mk("d", 300)); r.size != 1 || take(p, "a") != nil || p.len() != 3 {
		t.Fatalf("size eviction: %+v, len %d", r, p.len())
	}
	for i := 0; i < 3; i++ { // the watermark is a median: it takes several events to move it
		p.observe(1150)
	}
	if take(p, "b") != nil || p.len() != 2 {
		t.Fatalf("age eviction: %d left", p.len())
	}
	if im := take(p, "c"); im == nil || im.scores[1] != -0.5 {
		t.Fatal("take")
	}
	e := state.NewEncoder(0)
	p.encode(e)
	q := p.decode(state.NewDecoder(e.Bytes()), payloadVersion, []string{"m1", "m2"}, []string{"m2", "new"})
	im := take(q, "d")
	if im == nil || im.scores[0] != -0.5 || im.probs[0] != 0.2 || im.updates[0] != 4 || !math.IsNaN(im.scores[1]) || !math.IsNaN(im.probs[1]) {
		t.Fatalf("remapped entry %+v", im)
	}
}
