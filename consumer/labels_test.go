package consumer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/codec"
	"okstream/eval"
	"okstream/internal/kafkatest"
	"okstream/label"
	"okstream/learner"
	"okstream/learner/rng"
)

// flexModel is a cheap model whose task follows the labels (auto without
// loss=, like okstream run's default model).
var flexModel = Model{Name: "auto", Spec: "auto:base=fogd,budget=10,etas=1,linear=false"}

// labelEncodings are the binary label encodings: each maps the class (+1
// or −1) of circleEvent to a label of the event.
var labelEncodings = []struct {
	name     string
	positive string // Config.Positive
	set      func(ev *codec.Event, y float64)
}{
	{"pm1", "", func(ev *codec.Event, y float64) { ev.Y = y }},
	{"01", "", func(ev *codec.Event, y float64) { ev.Y = max(y, 0) }},
	{"bool", "", func(ev *codec.Event, y float64) { ev.YKind, ev.Y = codec.LabelBool, max(y, 0) }},
	{"strings", "click", func(ev *codec.Event, y float64) {
		ev.YKind, ev.Y, ev.YStr = codec.LabelString, 0, "skip"
		if y > 0 {
			ev.YStr = "click"
		}
	}},
}

// encodedEvents is genEvents with the labels written by set (every 7th
// event unlabelled).
func encodedEvents(n int, seed uint64, set func(ev *codec.Event, y float64)) []kafka.Message {
	src := rng.New(seed)
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		ev := circleEvent(src, i, "", fmt.Sprintf("e%d", i))
		ev.Key = fmt.Sprintf("user-%d", src.IntN(50))
		ev.HasY = i%7 != 3
		if ev.HasY {
			set(&ev, ev.Y)
		} else {
			ev.Y = 0
		}
		b, err := codec.AppendEvent(nil, &ev)
		if err != nil {
			panic(err)
		}
		msgs[i] = kafka.Message{Key: []byte(ev.Key), Value: b}
	}
	return msgs
}

// eventIndex is the index i of an event of encodedEvents (id "e<i>").
func eventIndex(ev *codec.Event) int {
	i, err := strconv.Atoi(strings.TrimPrefix(ev.ID, "e"))
	if err != nil {
		panic(err)
	}
	return i
}

// deadLetters returns the dead-letter records' reasons and details.
func deadLetters(t *testing.T, e *kafkatest.Env, topic string) []string {
	t.Helper()
	var out []string
	for _, d := range e.ReadAll(t, topic) {
		h := map[string]string{}
		for _, x := range d.Headers {
			h[x.Key] = string(x.Value)
		}
		out = append(out, h[HeaderReason]+": "+h[HeaderDetail])
	}
	return out
}

// replayPartitions is the offline reference (eval.ReplayLabels) of every
// model on each partition of input: scores by (partition, offset) and final
// states by partition, in model order.
func replayPartitions(t *testing.T, e *kafkatest.Env, input string, models []Model, task label.Task, positive string, warmup int) (map[[2]int64][]float64, map[int][][]byte) {
	t.Helper()
	byPart := map[int][]codec.Event{}
	offs := map[int][]int64{}
	for _, rec := range e.ReadAll(t, input) {
		ev, err := codec.DecodeEvent(rec.Value, codec.Limits{Dim: testDim})
		if err != nil {
			t.Fatal(err)
		}
		byPart[rec.Partition] = append(byPart[rec.Partition], ev)
		offs[rec.Partition] = append(offs[rec.Partition], rec.Offset)
	}
	scores := map[[2]int64][]float64{}
	states := map[int][][]byte{}
	for p, evs := range byPart {
		for _, m := range models {
			s, l, err := eval.ReplayLabels(m.Spec, testDim, evs, task, positive, warmup)
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range offs[p] {
				k := [2]int64{int64(p), o}
				scores[k] = append(scores[k], s[i])
			}
			st, _ := l.MarshalBinary()
			states[p] = append(states[p], st)
		}
	}
	return scores, states
}

// runToEnd runs a pipeline over everything in its input and shuts it down.
func runToEnd(t *testing.T, e *kafkatest.Env, cfg Config) {
	t.Helper()
	r := start(t, cfg)
	ends := endOffsets(t, e, cfg.Input)
	waitFor(t, 90*time.Second, "the pipeline to process every event", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
}

// The same binary stream with labels ±1, 0/1, true/false and two strings
// gives bit-identical predictions and models through the pipeline (the
// default kind of model, whose task the first label decides) and the
// offline path (eval.ReplayLabels), and across the four encodings; nothing
// is dead-lettered and every prediction record carries the label as -1/+1.
func TestLabelEncodingsRunEqualsEval(t *testing.T) {
	e := kafkatest.New(t)
	models := []Model{flexModel}
	const n = 700
	var ref map[[2]int64][]float64
	var refStates map[int][][]byte
	for _, enc := range labelEncodings {
		t.Run(enc.name, func(t *testing.T) {
			input := e.Name("events-" + enc.name)
			e.CreateTopic(t, input, 2, nil)
			e.Produce(t, input, encodedEvents(n, 3, enc.set)...)
			cfg := testConfig(e, input, e.Name("g-"+enc.name), e.Name("preds-"+enc.name))
			cfg.Models, cfg.Positive = models, enc.positive
			runToEnd(t, e, cfg)

			if dl := deadLetters(t, e, cfg.DeadLetter); len(dl) > 0 {
				t.Fatalf("%d dead letters, want none; first: %s", len(dl), dl[0])
			}
			want, wantStates := replayPartitions(t, e, input, models, label.Undecided, enc.positive, 0)
			got := predictionsByOffset(t, e, cfg.Output)
			if len(got) != n {
				t.Fatalf("%d predictions, want %d", len(got), n)
			}
			scores := map[[2]int64][]float64{}
			for k, raw := range got {
				pr, err := codec.DecodePrediction(raw)
				if err != nil {
					t.Fatal(err)
				}
				if pr.HasY && pr.Y != 1 && pr.Y != -1 {
					t.Fatalf("prediction %v carries label %v, want -1 or +1", k, pr.Y)
				}
				for i, m := range pr.Models {
					if !sameScore(m.Score, want[k][i]) {
						t.Fatalf("partition %d offset %d model %s: published %v, offline %v", k[0], k[1], m.Name, m.Score, want[k][i])
					}
					scores[k] = append(scores[k], m.Score)
				}
			}
			states, _ := checkpointStates(t, e, cfg, 2)
			for p := 0; p < 2; p++ {
				if !bytes.Equal(states[p][0], wantStates[p][0]) {
					t.Fatalf("partition %d: checkpointed model differs from the offline one", p)
				}
			}
			if ref == nil {
				ref, refStates = scores, states
				return
			}
			for k, s := range ref {
				if !sameScore(scores[k][0], s[0]) {
					t.Fatalf("partition %d offset %d: score %v, with labels ±1 %v", k[0], k[1], scores[k][0], s[0])
				}
			}
			for p := 0; p < 2; p++ {
				if !bytes.Equal(states[p][0], refStates[p][0]) {
					t.Fatalf("partition %d: model differs from the one learnt with labels ±1", p)
				}
			}
		})
	}
}

// 0/1 labels on classification models: before, every 0 was dead-lettered
// (invalid_label) and the models learnt only the positive class. Now both
// classes are learnt and nothing is dead-lettered.
func TestZeroOneLabelsNotHalfDeadLettered(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	const n = 400
	e.Produce(t, input, encodedEvents(n, 5, labelEncodings[1].set)...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	runToEnd(t, e, cfg)
	if dl := deadLetters(t, e, cfg.DeadLetter); len(dl) > 0 {
		t.Fatalf("%d of %d events dead-lettered; first: %s", len(dl), n, dl[0])
	}
	// The offline reference learns the same stream with labels ±1.
	var xs [][]float64
	var ys []float64
	var lab []bool
	for _, m := range encodedEvents(n, 5, labelEncodings[0].set) {
		ev, err := codec.DecodeEvent(m.Value, codec.Limits{Dim: testDim})
		if err != nil {
			t.Fatal(err)
		}
		xs, ys, lab = append(xs, ev.X), append(ys, ev.Y), append(lab, ev.HasY)
	}
	stats := checkpointStats(t, e, cfg, 1)
	for _, m := range cfg.Models {
		scores, _, err := eval.Replay(m.Spec, testDim, xs, ys, lab)
		if err != nil {
			t.Fatal(err)
		}
		var want Stats
		for i, f := range scores {
			if lab[i] {
				want.Labeled++
				if learner.Mistake(f, ys[i]) {
					want.Mistakes++
				}
			}
		}
		if s := stats[m.Name]; s.Labeled != want.Labeled || s.Mistakes != want.Mistakes {
			t.Fatalf("model %s: %d labels learnt, %d mistakes; with labels ±1: %d, %d", m.Name, s.Labeled, s.Mistakes, want.Labeled, want.Mistakes)
		}
	}
}

// A model whose task follows the labels (the default model's kind) learns
// regression on a real-valued stream — auto with loss=square, recorded in
// the checkpoint — equal to the offline path, with nothing dead-lettered;
// also on integer targets whose first ones are all 0 or 1 (the warm-up's
// regression candidate has learnt them as they are).
func TestFlexibleModelLearnsRegression(t *testing.T) {
	e := kafkatest.New(t)
	for _, c := range []struct {
		name string
		set  func(ev *codec.Event, y float64)
	}{
		{"real", func(ev *codec.Event, _ float64) { ev.Y = 3*ev.X[0] - ev.X[1]*ev.X[1] + 0.25 }},
		{"counts", func(ev *codec.Event, _ float64) {
			ev.Y = float64(int(2 * (ev.X[0] + 1))) // 0..3
			if eventIndex(ev) < 120 {              // about 50 labels 0/1 per partition first
				ev.Y = min(ev.Y, 1)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) { flexibleRegression(t, e, c.name, c.set) })
	}
}

func flexibleRegression(t *testing.T, e *kafkatest.Env, name string, set func(ev *codec.Event, y float64)) {
	input := e.Name("events-" + name)
	e.CreateTopic(t, input, 2, nil)
	const n = 500
	e.Produce(t, input, encodedEvents(n, 7, set)...)
	cfg := testConfig(e, input, e.Name("g-"+name), e.Name("preds-"+name))
	cfg.Models = []Model{flexModel}
	runToEnd(t, e, cfg)
	if dl := deadLetters(t, e, cfg.DeadLetter); len(dl) > 0 {
		t.Fatalf("%d dead letters; first: %s", len(dl), dl[0])
	}
	want, wantStates := replayPartitions(t, e, input, cfg.Models, label.Undecided, "", 0)
	// Until the warm-up decides, the scores published are the binary
	// candidate's (a classification decision with them); after it, the
	// regression model's.
	last := map[int64]int64{}
	preds := predictionsByOffset(t, e, cfg.Output)
	for k := range preds {
		last[k[0]] = max(last[k[0]], k[1])
	}
	warm := 0
	for k, raw := range preds {
		pr, _ := codec.DecodePrediction(raw)
		m := pr.Models[0]
		if !sameScore(m.Score, want[k][0]) {
			t.Fatalf("partition %d offset %d: published %v, offline %v", k[0], k[1], m.Score, want[k][0])
		}
		if m.Classify {
			warm++
			if k[1] == last[k[0]] {
				t.Fatalf("partition %d: the last prediction is still a classifier's", k[0])
			}
		}
	}
	t.Logf("%d of %d predictions made in the warm-up", warm, len(preds))
	states, _ := checkpointStates(t, e, cfg, 2)
	for p := 0; p < 2; p++ {
		if !bytes.Equal(states[p][0], wantStates[p][0]) {
			t.Fatalf("partition %d: checkpointed model differs from the offline one", p)
		}
	}
	stats := checkpointStats(t, e, cfg, 2)
	if s := stats["auto"]; s.Labeled == 0 || s.Mistakes != 0 {
		t.Fatalf("stats %+v: want labelled events and no classification mistakes", s)
	}
}

// A partition's label state — the decided task, the class dictionary —
// is checkpointed: a model set restored at any point continues exactly as
// the uninterrupted one, for a regression decision (which rebuilt the
// model) and for string classes (whose signs the first string decides).
func TestLabelStateSurvivesRestore(t *testing.T) {
	src := rng.New(11)
	mk := func(i int, kind string) codec.Event {
		ev := circleEvent(src, i, "", "")
		ev.HasY = i%5 != 0
		switch {
		case !ev.HasY:
			ev.Y = 0
		case kind == "real":
			ev.Y = ev.X[0] + 0.5
		case kind == "counts": // 0/1 at first, then counts up to 3: regression from the first 2
			ev.Y = float64(int(2 * (ev.X[0] + 1)))
			if i < 40 {
				ev.Y = min(ev.Y, 1)
			}
		case kind == "01":
			ev.Y = max(ev.Y, 0)
		case ev.Y > 0:
			ev.YKind, ev.Y, ev.YStr = codec.LabelString, 0, "yes"
		default:
			ev.YKind, ev.Y, ev.YStr = codec.LabelString, 0, "no"
		}
		return ev
	}
	for _, kind := range []string{"real", "strings", "counts", "01"} {
		evs := make([]codec.Event, 300)
		for i := range evs {
			evs[i] = mk(i, kind)
		}
		feed := func(ms *modelSet, evs []codec.Event) []float64 {
			var out []float64
			for i := range evs {
				ev := evs[i]
				if ev.HasY {
					y, err := ms.mapLabel(&ev)
					if err != nil {
						t.Fatalf("%s: event %d: %v", kind, i, err)
					}
					ev.Y = y
				}
				for _, s := range ms.score(ev.Dense(nil, testDim), ev.Y, ev.HasY, nil, nil) {
					out = append(out, s.Score)
				}
			}
			return out
		}
		whole, _ := newModelSet([]Model{flexModel}, testDim, pendingLimits{})
		wantScores := feed(whole, evs)
		wantBytes, err := whole.marshal()
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range []int{0, 1, 2, 3, 30, 60, 200} {
			a, _ := newModelSet([]Model{flexModel}, testDim, pendingLimits{})
			got := feed(a, evs[:at])
			payload, err := a.marshal()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := newModelSet([]Model{flexModel}, testDim, pendingLimits{})
			if _, err := b.restore(payload, false); err != nil {
				t.Fatalf("%s: restore at %d: %v", kind, at, err)
			}
			got = append(got, feed(b, evs[at:])...)
			for i := range wantScores {
				if !sameScore(got[i], wantScores[i]) {
					t.Fatalf("%s: restored at %d: score %d is %v, uninterrupted %v", kind, at, i, got[i], wantScores[i])
				}
			}
			final, _ := b.marshal()
			if !bytes.Equal(final, wantBytes) {
				t.Fatalf("%s: restored at %d: final payload differs", kind, at)
			}
		}
		regression := kind == "real" || kind == "counts"
		want := "loss=square"
		if !regression {
			want = "auto:base=fogd"
		}
		if pl, _ := DescribePayload(wantBytes); !strings.Contains(pl.Models[0].Spec, want) || strings.Contains(pl.Models[0].Spec, "loss=square") != regression ||
			pl.Labels == nil || regression != (pl.Labels.Task == label.Regression) || pl.Models[0].Alt != nil {
			t.Fatalf("%s: checkpointed spec %q, labels %+v", kind, pl.Models[0].Spec, pl.Labels)
		}
	}
}

// A checkpoint of an older build (payload version 4, no label state) of the
// default model, which ran as a binary classifier, restores as binary: a
// real-valued label then does not fit (it does not turn the model into a
// fresh regression model), and the model state is kept.
func TestVersion4PayloadRestoresBinary(t *testing.T) {
	ms, _ := newModelSet([]Model{flexModel}, testDim, pendingLimits{})
	src := rng.New(2)
	for i := 0; i < 150; i++ { // the warm-up decides binary at the 100th
		ev := circleEvent(src, i, "", "")
		if _, err := ms.mapLabel(&ev); err != nil {
			t.Fatal(err)
		}
		ms.score(ev.X, ev.Y, true, nil, nil)
	}
	v7, err := ms.marshal()
	if err != nil {
		t.Fatal(err)
	}
	v6 := asV6(t, v7, 1)
	// Version 5 is version 6 without the calibrations (16 bytes a model).
	v5 := v6[:len(v6)-16]
	// Version 4 is version 5 without the label section (a flag byte, task,
	// kind, negative, the warm-up count, a class count of 0) and the
	// regression candidates' (a 0 byte per model once decided).
	if ms.labels.Task != label.Binary {
		t.Fatalf("task %v after 150 labels ±1", ms.labels.Task)
	}
	v4 := append([]byte(nil), v5[:len(v5)-13]...)
	binary.LittleEndian.PutUint32(v4[4:], 4)
	if v5[len(v5)-13] != 1 || v5[len(v5)-1] != 0 {
		t.Fatalf("unexpected label section %x", v5[len(v5)-13:])
	}
	r, _ := newModelSet([]Model{flexModel}, testDim, pendingLimits{})
	if _, err := r.restore(v4, false); err != nil {
		t.Fatal(err)
	}
	if r.labels.Task != label.Binary {
		t.Fatalf("restored task %v, want binary", r.labels.Task)
	}
	a, _ := ms.models[0].l.MarshalBinary()
	b, _ := r.models[0].l.MarshalBinary()
	if !bytes.Equal(a, b) {
		t.Fatal("restored model differs")
	}
	ev := codec.Event{X: make([]float64, testDim), Y: 0.5, HasY: true}
	if _, err := r.mapLabel(&ev); err == nil {
		t.Fatal("a real label fitted a restored binary stream")
	}
}

// Exact recovery of the label state through the pipeline: streams whose
// task the labels decide (at once for real targets; after a warm-up with
// both candidates checkpointed for 0/1 and for counts that start as 0/1)
// and a string-labelled one without --positive (the first string seen is
// −1), killed at several points (in the warm-up too), give the
// uninterrupted run's models and predictions.
func TestLabelStateExactRecoveryAfterKills(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(ev *codec.Event, y float64)
	}{
		{"regression", func(ev *codec.Event, _ float64) { ev.Y = 2*ev.X[0] - ev.X[1] + 0.5 }},
		{"strings", func(ev *codec.Event, y float64) {
			ev.YKind, ev.Y, ev.YStr = codec.LabelString, 0, "no"
			if y > 0 {
				ev.YStr = "yes"
			}
		}},
		{"01", func(ev *codec.Event, y float64) { ev.Y = max(y, 0) }},
		{"counts", func(ev *codec.Event, _ float64) {
			ev.Y = float64(int(2 * (ev.X[0] + 1)))
			if eventIndex(ev) < 1000 {
				ev.Y = min(ev.Y, 1)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			recoveryAfterKills(t, func(e *kafkatest.Env, input string) { e.Produce(t, input, encodedEvents(3000, 13, c.set)...) },
				func(e *kafkatest.Env, input, group, output string) Config {
					cfg := testConfig(e, input, group, output)
					// A warm-up longer than the first kills, whose restores
					// then resume both candidates.
					cfg.Models, cfg.BatchSize, cfg.TaskWarmup = []Model{flexModel}, 10, 1000
					return cfg
				}, 40, []int{60, 150, 1100, 2300}) // checkpoints and kills in the warm-up too
		})
	}
}
