package consumer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"okstream/codec"
	"okstream/label"
	"okstream/learner/rng"
)

// asV6 is a version 7 payload of n models, none multi-class and no
// multi-class candidate, as version 6 wrote it: without its version 7
// section (two 0 flags a model).
func asV6(t *testing.T, v7 []byte, n int) []byte {
	t.Helper()
	v := binary.LittleEndian.Uint32(v7[4:])
	if v < 7 || v > 9 {
		t.Fatalf("payload version %d, want 7 to 9", v)
	}
	if v == 9 { // version 9 adds the feature kind (0: none for these callers) at the end
		if v7[len(v7)-1] != featNone {
			t.Fatalf("version 9 feature kind %d: a partition with features", v7[len(v7)-1])
		}
		v7 = v7[:len(v7)-1]
	}
	// Version 8 differs from 7 only in pending entries; these callers have
	// none.
	tail := v7[len(v7)-2*n:]
	for _, b := range tail {
		if b != 0 {
			t.Fatalf("version 7 section %x: a multi-class model", tail)
		}
	}
	v6 := append([]byte(nil), v7[:len(v7)-2*n]...)
	binary.LittleEndian.PutUint32(v6[4:], 6)
	return v6
}

// multiNames are the classes of the three-class test stream.
var multiNames = []string{"red", "green", "blue"}

// multiEvent draws an event of the three-class test stream: x uniform in
// [−1, 1]^testDim, its class the argmax of three linear scores of (x0, x1)
// (directions 120° apart: linearly separable, classes about equally
// frequent), labelled by name.
func multiEvent(src *rng.Source, i int, id string) (codec.Event, int) {
	x := make([]float64, testDim)
	for j := range x {
		x[j] = 2*src.Float64() - 1
	}
	s := [3]float64{x[0], -0.5*x[0] + 0.866*x[1], -0.5*x[0] - 0.866*x[1]}
	c := 0
	for k := 1; k < 3; k++ {
		if s[k] > s[c] {
			c = k
		}
	}
	return codec.Event{Version: codec.EventVersion, ID: id, X: x, HasY: true, YKind: codec.LabelString, YStr: multiNames[c]}, c
}

// multiRun feeds events [from, to) of the seeded three-class stream (every
// 7th unlabelled) to ms and returns each event's prediction record as the
// worker encodes it, and the number of labelled events whose record's class
// was the event's.
func multiRun(t *testing.T, ms *modelSet, seed uint64, from, to int) (recs [][]byte, right, labelled int) {
	t.Helper()
	src := rng.New(seed)
	var out []codec.ModelScore
	for i := 0; i < to; i++ {
		ev, c := multiEvent(src, i, "")
		ev.HasY = i%7 != 3
		if i < from {
			continue
		}
		y := 0.0
		if ev.HasY {
			var err error
			if y, err = ms.mapLabel(&ev); err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
		}
		out = ms.score(ev.X, y, ev.HasY, out[:0], nil)
		p := codec.Prediction{Version: codec.PredictionVersionProb, Topic: "t", Offset: int64(i),
			Y: y, HasY: ev.HasY, Models: out, Class: ms.className(out)}
		if ev.HasY {
			labelled++
			if p.Class == multiNames[c] {
				right++
			}
		}
		recs = append(recs, codec.AppendPrediction(nil, &p))
	}
	return recs, right, labelled
}

// modelStates is every model's learner state, in order.
func modelStates(t *testing.T, ms *modelSet) [][]byte {
	t.Helper()
	var out [][]byte
	for _, m := range ms.models {
		b, err := m.state()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func newFlexSet(t *testing.T) *modelSet {
	t.Helper()
	ms, err := newModelSet([]Model{flexModel}, testDim, pendingLimits{})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// A stream of three string classes with no task and the default (Flexible)
// model learns multi-class: the third string decides it, the model kept is
// the multi-class candidate that learnt every label from the first (its
// state is bit-identical to a model run with the task given from the
// start), nothing is refused, and its prequential accuracy is far above
// the class prior's.
func TestMultiClassInferred(t *testing.T) {
	const n = 3000
	ms := newFlexSet(t)
	recs, right, labelled := multiRun(t, ms, 5, 0, n)
	if ms.labels.Task != label.MultiClass || len(ms.labels.Classes) != 3 {
		t.Fatalf("labels %v", ms.labels)
	}
	m := ms.models[0]
	if m.mc == nil || m.alt != nil || m.malt != nil || m.flex != "" {
		t.Fatalf("model after the decision: multi %v, candidates %v %v, flex %q", m.mc != nil, m.alt, m.malt, m.flex)
	}
	given, err := newModelSetTask([]Model{flexModel}, testDim, pendingLimits{}, label.MultiClass, "")
	if err != nil {
		t.Fatal(err)
	}
	multiRun(t, given, 5, 0, n)
	if !bytes.Equal(modelStates(t, ms)[0], modelStates(t, given)[0]) {
		t.Fatal("the inferred multi-class model differs from one run with --task multiclass: the candidate missed labels")
	}
	if m.stats.Labeled != uint64(labelled) || given.models[0].stats != m.stats {
		t.Fatalf("stats %+v (labelled %d), given %+v", m.stats, labelled, given.models[0].stats)
	}
	// The class prior on the same labels: the majority rate.
	counts := [3]int{}
	src := rng.New(5)
	for i := 0; i < n; i++ {
		_, c := multiEvent(src, i, "")
		if i%7 != 3 {
			counts[c]++
		}
	}
	major := float64(max(counts[0], counts[1], counts[2])) / float64(labelled)
	acc := float64(right) / float64(labelled)
	modelAcc := 1 - float64(m.stats.Mistakes)/float64(m.stats.Labeled)
	// Log loss (the tallies were never drained: whole stream), the class
	// prior's on the same labels beside it (its baseline tally counts the
	// labels of the multi-class partition, and the 2 before the decision as
	// the binary prior counts them).
	ll := m.tally.logLoss / float64(m.tally.labeled)
	bt := ms.base.tally
	t.Logf("prequential accuracy: records %.4f, model %.4f; class prior (majority rate) %.4f; log loss %.4f, class prior's %.4f; Brier %.4f",
		acc, modelAcc, major, ll, bt.logLoss/float64(bt.labeled), m.stats.MSE())
	if ll >= bt.logLoss/float64(bt.labeled) {
		t.Fatalf("log loss %.4f, not below the class prior's", ll)
	}
	if acc < major+0.4 || modelAcc < major+0.4 {
		t.Fatalf("accuracy %.4f (model %.4f), majority %.4f", acc, modelAcc, major)
	}
	// The last record is version 4 with the class and the distribution.
	p, err := codec.DecodePrediction(recs[len(recs)-1])
	if err != nil {
		t.Fatal(err)
	}
	s := p.Models[0]
	if p.Version != codec.PredictionVersionMulti || !s.Multi || len(s.Dist) != 3 || s.Class != p.Class || s.Dist[0].Class != s.Class || s.Dist[0].Prob != s.Score ||
		ms.labels.ClassNameOf(s.ClassIndex) != s.Class {
		t.Fatalf("record %+v", p)
	}
	sum := 0.0
	for i, d := range s.Dist {
		sum += d.Prob
		if i > 0 && d.Prob > s.Dist[i-1].Prob {
			t.Fatalf("distribution not sorted: %+v", s.Dist)
		}
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Fatalf("distribution sums to %v", sum)
	}
	// The baseline counted the class prior (its mistakes near 1 − majority).
	if b := ms.base.classes; b.sum != uint64(labelled) {
		t.Fatalf("class prior saw %d labels, want %d", b.sum, labelled)
	}
}

// Exact recovery of a multi-class partition: a run checkpointed and
// restored at any point — during the string warm-up (both candidates
// checkpointed), right after the multi-class decision, and later —
// publishes the records and ends in the states of an uninterrupted run;
// and the same input gives the same bytes twice.
func TestMultiClassExactRecovery(t *testing.T) {
	const n = 1200
	ref, _, _ := multiRun(t, newFlexSet(t), 7, 0, n)
	a := newFlexSet(t)
	again, _, _ := multiRun(t, a, 7, 0, n)
	if !equalRecords(again, ref) {
		t.Fatal("a second run published other records")
	}
	b := newFlexSet(t)
	var got [][]byte
	cuts := []int{0, 1, 2, 5, 301, 650, n}
	for k := 0; k+1 < len(cuts); k++ {
		recs, _, _ := multiRun(t, b, 7, cuts[k], cuts[k+1])
		got = append(got, recs...)
		payload, err := b.marshal()
		if err != nil {
			t.Fatal(err)
		}
		if k == 1 { // one label and one class in: both candidates are checkpointed
			pl, err := DescribePayload(payload)
			if err != nil || pl.Labels.Task != label.Undecided || pl.Models[0].MultiAlt == nil || pl.Models[0].Alt != nil {
				t.Fatalf("payload in the warm-up: %+v, %v", pl, err)
			}
		}
		b = newFlexSet(t)
		if _, err := b.restore(payload, false); err != nil {
			t.Fatalf("restore at %d: %v", cuts[k+1], err)
		}
	}
	if !equalRecords(got, ref) {
		for i := range got {
			if !bytes.Equal(got[i], ref[i]) {
				t.Fatalf("record %d after restores differs from the uninterrupted run's", i)
			}
		}
		t.Fatal("records after restores differ")
	}
	sa, sb := modelStates(t, a), modelStates(t, b)
	if !bytes.Equal(sa[0], sb[0]) || a.models[0].stats != b.models[0].stats {
		t.Fatal("final state after restores differs")
	}
	pa, _ := a.marshal()
	pb, _ := b.marshal()
	if !bytes.Equal(pa, pb) {
		t.Fatal("final payload after restores differs")
	}
}

// The class dictionary's cap: a new class beyond it is refused with a
// label error naming --max-classes (dead-lettered as invalid_label by the
// worker), and the partition and models are unchanged.
func TestMultiClassCap(t *testing.T) {
	ms, err := newModelSetTask([]Model{{Name: "lin", Spec: "linear"}}, testDim, pendingLimits{}, label.MultiClass, "")
	if err != nil {
		t.Fatal(err)
	}
	ms.setClassOptions(2, 1)
	src := rng.New(3)
	for i := 0; i < 50; i++ {
		ev, c := multiEvent(src, i, "")
		if c == 2 {
			continue
		}
		y, err := ms.mapLabel(&ev)
		if err != nil {
			t.Fatal(err)
		}
		out := ms.score(ev.X, y, true, nil, nil)
		if len(out[0].Dist) > 1 {
			t.Fatalf("top-k 1: %d entries", len(out[0].Dist))
		}
	}
	before, _ := ms.marshal()
	ev := codec.Event{X: make([]float64, testDim), HasY: true, YKind: codec.LabelString, YStr: "blue"}
	_, err = ms.mapLabel(&ev)
	var le *label.Error
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "--max-classes") {
		t.Fatalf("a third class over a cap of 2: %v", err)
	}
	if after, _ := ms.marshal(); !bytes.Equal(before, after) {
		t.Fatal("a refused label changed the partition")
	}
}

// Top k: the record lists the k most probable classes, most probable
// first; 0 lists them all.
func TestMultiClassTopK(t *testing.T) {
	for _, k := range []int{0, 1, 2, 3, 5} {
		ms, err := newModelSetTask([]Model{{Name: "lin", Spec: "linear"}}, testDim, pendingLimits{}, label.MultiClass, "")
		if err != nil {
			t.Fatal(err)
		}
		ms.setClassOptions(0, map[bool]int{true: -1, false: k}[k == 0]) // Config's TopK: negative lists all
		recs, _, _ := multiRun(t, ms, 2, 0, 200)
		p, err := codec.DecodePrediction(recs[len(recs)-1])
		if err != nil {
			t.Fatal(err)
		}
		want := min(k, 3)
		if k == 0 {
			want = 3
		}
		d := p.Models[0].Dist
		if len(d) != want {
			t.Fatalf("top-k %d: %d entries", k, len(d))
		}
		for i := 1; i < len(d); i++ {
			if d[i].Prob > d[i-1].Prob {
				t.Fatalf("top-k %d: not sorted %+v", k, d)
			}
		}
	}
}

// A multi-class model reset by the non-finite guard (or added after the
// dictionary grew) learns the classes in the order it meets them: its
// class map keeps the published distribution over the dictionary's
// classes, and the model keeps learning.
func TestMultiClassResetClassMap(t *testing.T) {
	ms, err := newModelSetTask([]Model{{Name: "lin", Spec: "linear"}}, testDim, pendingLimits{}, label.MultiClass, "")
	if err != nil {
		t.Fatal(err)
	}
	multiRun(t, ms, 4, 0, 300)
	m := ms.models[0]
	ms.reset(m, resetNonFinite)
	if m.mc.Classes() != 0 || len(m.cls) != 0 || m.stats.Resets != 1 {
		t.Fatalf("after the reset: %d classes, map %v", m.mc.Classes(), m.cls)
	}
	// Feed blue first: the model's class 0 is the dictionary's class 2.
	src := rng.New(9)
	var out []codec.ModelScore
	fed := 0
	for i := 0; fed < 400; i++ {
		ev, c := multiEvent(src, i, "")
		if fed == 0 && c != 2 {
			continue
		}
		y, err := ms.mapLabel(&ev)
		if err != nil {
			t.Fatal(err)
		}
		out = ms.score(ev.X, y, true, out[:0], nil)
		fed++
		if fed == 1 && (m.cls[0] != 2 || m.inv[2] != 0) {
			t.Fatalf("class map %v / %v", m.cls, m.inv)
		}
	}
	if len(m.cls) != 3 {
		t.Fatalf("class map %v", m.cls)
	}
	// A checkpoint keeps the map: the restored model scores as the original.
	payload, err := ms.marshal()
	if err != nil {
		t.Fatal(err)
	}
	r, _ := newModelSetTask([]Model{{Name: "lin", Spec: "linear"}}, testDim, pendingLimits{}, label.MultiClass, "")
	if _, err := r.restore(payload, false); err != nil {
		t.Fatal(err)
	}
	x := []float64{0.9, 0, 0, 0, 0} // red
	a := ms.score(x, 0, false, nil, nil)
	b := r.score(x, 0, false, nil, nil)
	if a[0].Class != "red" || b[0].Class != "red" || a[0].Score != b[0].Score {
		t.Fatalf("after the reset and a restore: %+v / %+v", a[0], b[0])
	}
}

// Multi-class partitions refuse delayed feedback at start; with feedback
// on, strings decide binary at once (no multi-class candidate).
func TestMultiClassFeedbackRefused(t *testing.T) {
	lim := pendingLimits{max: 10}
	if _, err := newModelSetTask([]Model{flexModel}, testDim, lim, label.MultiClass, ""); !errors.Is(err, errMultiFeedback) {
		t.Fatalf("multi-class with feedback: %v", err)
	}
	ms, err := newModelSetTask([]Model{flexModel}, testDim, lim, label.Undecided, "")
	if err != nil {
		t.Fatal(err)
	}
	if ms.models[0].malt != nil {
		t.Fatal("a multi-class candidate with delayed feedback")
	}
	ev := codec.Event{X: make([]float64, testDim), HasY: true, YKind: codec.LabelString, YStr: "a"}
	if _, err := ms.mapLabel(&ev); err != nil || ms.labels.Task != label.Binary {
		t.Fatalf("strings with feedback: %v, %v", ms.labels.Task, err)
	}
}

// Scoring a multi-class event and encoding its record allocate nothing
// once the classes are known.
func TestMultiClassPublishAllocs(t *testing.T) {
	ms, err := newModelSetTask([]Model{{Name: "lin", Spec: "linear"}}, testDim, pendingLimits{}, label.MultiClass, "")
	if err != nil {
		t.Fatal(err)
	}
	multiRun(t, ms, 6, 0, 300)
	src := rng.New(1)
	ev, _ := multiEvent(src, 0, "")
	y, _ := ms.mapLabel(&ev)
	out := make([]codec.ModelScore, 0, 1)
	buf := make([]byte, 0, 512)
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector (it allocates); the plain go test counts them")
	}
	a := testing.AllocsPerRun(100, func() {
		y, _ = ms.mapLabel(&ev)
		out = ms.score(ev.X, y, true, out[:0], nil)
		p := codec.Prediction{Version: codec.PredictionVersionProb, Topic: "t", Y: y, HasY: true, Models: out, Class: ms.className(out)}
		buf = codec.AppendPrediction(buf[:0], &p)
	})
	if a != 0 {
		t.Fatalf("%v allocations per event", a)
	}
}

// A forged version 7 section (a class map with a repeated class, or one
// that does not match the learner's class count) is an error, not a panic.
func TestMultiClassForgedPayload(t *testing.T) {
	ms, _ := newModelSetTask([]Model{{Name: "lin", Spec: "linear"}}, testDim, pendingLimits{}, label.MultiClass, "")
	multiRun(t, ms, 6, 0, 50)
	good, _ := ms.marshal()
	// The model's class map is the payload's tail before the candidate flag:
	// U32 3, then 3 int64s, then a 0 byte.
	tail := len(good) - 1 - 3*8
	for name, edit := range map[string]func(b []byte){
		"repeated": func(b []byte) { binary.LittleEndian.PutUint64(b[tail+8:], 0) },
		"negative": func(b []byte) { binary.LittleEndian.PutUint64(b[tail:], ^uint64(0)) },
		"short":    func(b []byte) { binary.LittleEndian.PutUint32(b[tail-4:], 2) },
	} {
		b := append([]byte(nil), good...)
		edit(b)
		r, _ := newModelSetTask([]Model{{Name: "lin", Spec: "linear"}}, testDim, pendingLimits{}, label.MultiClass, "")
		if _, err := r.restore(b, false); err == nil {
			t.Fatalf("%s: restored", name)
		}
	}
}

// The non-finite guard covers multi-class models: an input that makes the
// distribution non-finite (features of 1e308 overflow the logits) resets
// the model (twice: the fresh model cannot score it either, so the event
// leaves no trace), the reset is counted, and the model learns on from the
// next events with a class map rebuilt in the order it meets the classes.
func TestMultiClassNonFiniteGuard(t *testing.T) {
	// scale=none: raw features, so ±1e308 reach the logits (standardised inputs are clipped at ±10).
	ms, err := newModelSetTask([]Model{{Name: "lin", Spec: "linear:scale=none"}}, testDim, pendingLimits{}, label.MultiClass, "")
	if err != nil {
		t.Fatal(err)
	}
	resets := 0
	ms.onReset = func(*model, string) { resets++ }
	multiRun(t, ms, 4, 0, 200)
	m := ms.models[0]
	huge := codec.Event{X: []float64{1e308, -1e308, 1e308, 1e308, -1e308}, HasY: true, YKind: codec.LabelString, YStr: "green"}
	y, err := ms.mapLabel(&huge)
	if err != nil {
		t.Fatal(err)
	}
	out := ms.score(huge.X, y, true, nil, nil)
	// The fresh model knows no class: it learns that green exists (one
	// class: no gradient, a finite state) unless its state is poisoned,
	// when it is reset once more.
	if resets < 1 || m.stats.Resets != uint64(resets) || !m.finiteOn(make([]float64, testDim)) || out[0].ClassIndex != -1 || m.mc.Classes() != len(m.cls) {
		t.Fatalf("after a poisonous event: %d resets (stats %d), %d classes, map %v; published %+v", resets, m.stats.Resets, m.mc.Classes(), m.cls, out[0])
	}
	before := m.stats.Mistakes
	multiRun(t, ms, 5, 0, 600)
	if len(m.cls) != 3 || m.stats.Resets != uint64(resets) {
		t.Fatalf("after the guard: map %v, resets %d", m.cls, m.stats.Resets)
	}
	if rate := float64(m.stats.Mistakes-before) / (600 * 6 / 7); rate > 0.25 {
		t.Fatalf("mistake rate %.3f after the reset", rate)
	}
	// The backstop before a checkpoint: a poisoned state is reset, never
	// checkpointed.
	// An input on which the trained model's logits overflow to +Inf: the
	// sign pattern of 1e308s that one class's weights add up on.
	var poison []float64
	for mask := 0; mask < 1<<testDim && poison == nil; mask++ {
		x := make([]float64, testDim)
		for j := range x {
			x[j] = 1e308
			if mask>>j&1 == 1 {
				x[j] = -1e308
			}
		}
		if !m.finiteOn(x) {
			poison = x
		}
	}
	if poison == nil {
		t.Fatal("no input of ±1e308 makes the trained model non-finite: the backstop is not exercised")
	}
	n := m.stats.Resets
	ms.noteLearnt(poison, true)
	ms.checkBeforeCheckpoint()
	if m.stats.Resets != n+1 {
		t.Fatalf("the check before a checkpoint did not reset the model (%d resets)", m.stats.Resets)
	}
}
