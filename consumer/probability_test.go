package consumer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"okstream/codec"
	"okstream/eval"
	"okstream/learner/rng"
)

// probModels are a kernel model (probability from the online Platt
// calibration), a logistic linear one (its own link, σ(score)) and a
// regression model (no probability).
var probModels = []Model{
	{Name: "fogd", Spec: "fogd:sigma=0.7,budget=10"},
	{Name: "lin", Spec: "linear"},
	{Name: "ridge", Spec: "fogd:sigma=0.7,budget=10,loss=square"},
}

// probRun feeds events [from, to) of the seeded circle stream (every 7th
// unlabelled) to ms, and returns each event's prediction record (version
// 3) as the worker encodes it.
func probRun(t *testing.T, ms *modelSet, seed uint64, from, to int) [][]byte {
	t.Helper()
	src := rng.New(seed)
	var recs [][]byte
	var out []codec.ModelScore
	for i := 0; i < to; i++ {
		ev := circleEvent(src, i, "", "")
		ev.HasY = i%7 != 3
		if i < from {
			continue
		}
		y := ev.Y
		if ev.HasY {
			var err error
			if y, err = ms.mapLabel(&ev); err != nil {
				t.Fatal(err)
			}
		}
		out = ms.score(ev.X, y, ev.HasY, out[:0], nil)
		p := codec.Prediction{Version: codec.PredictionVersionProb, Topic: "t", Offset: int64(i),
			Y: ev.Y, HasY: ev.HasY, Models: out, Class: ms.className(out)}
		recs = append(recs, codec.AppendPrediction(nil, &p))
	}
	return recs
}

func newProbSet(t *testing.T) *modelSet {
	t.Helper()
	ms, err := newModelSet(probModels, testDim, pendingLimits{})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// The published probability is computed before the event's label reaches
// the calibration (progressive): it is the probability the calibration as
// it stood before the event gives the score (σ(score) for the logistic
// model, whose calibration never moves); it lies in [0, 1]; only the
// classification models have one; and the record's class is the first
// classification model's decision as the stream writes its labels.
func TestPublishedProbabilityIsProgressive(t *testing.T) {
	ms := newProbSet(t)
	src := rng.New(3)
	var out []codec.ModelScore
	moved := 0
	for i := 0; i < 400; i++ {
		ev := circleEvent(src, i, "", "")
		ev.HasY = i%5 != 0
		y := ev.Y
		if ev.HasY {
			y, _ = ms.mapLabel(&ev)
		}
		before := ms.models[0].calib
		resets := ms.models[0].stats.Resets
		out = ms.score(ev.X, y, ev.HasY, out[:0], nil)
		f, lin := out[0], out[1]
		if !f.HasProb || !lin.HasProb || out[2].HasProb {
			t.Fatalf("event %d: probabilities %+v", i, out)
		}
		if resets == ms.models[0].stats.Resets {
			if want := before.Prob(f.Score); f.Prob != want {
				t.Fatalf("event %d: published %v, the calibration before the label gives %v (after: %v)", i, f.Prob, want, ms.models[0].calib.Prob(f.Score))
			}
		}
		if ms.models[0].calib != before {
			moved++
			if !ev.HasY {
				t.Fatalf("event %d: an unlabelled event moved the calibration", i)
			}
		}
		if want := 1 / (1 + math.Exp(-lin.Score)); math.Abs(lin.Prob-want) > 1e-15 || ms.models[1].calib != eval.NewPlatt() {
			t.Fatalf("event %d: linear published %v, want its own σ(score) %v; calibration %+v", i, lin.Prob, want, ms.models[1].calib)
		}
		for _, s := range out[:2] {
			if !(s.Prob >= 0 && s.Prob <= 1) {
				t.Fatalf("event %d: probability %v", i, s.Prob)
			}
		}
		want := map[int8]string{1: "1", -1: "-1", 0: ""}[f.Decision]
		if got := ms.className(out); got != want && !(got == "" && ms.labels.ClassName(-1) == "") {
			t.Fatalf("event %d: class %q for decision %d, want %q", i, got, f.Decision, want)
		}
	}
	if moved < 300 {
		t.Fatalf("the calibration moved at %d of 320 labelled events", moved)
	}
}

// Determinism and exact recovery: the same stream gives the same records
// byte for byte, and a run checkpointed and restored (marshal, a fresh
// model set, restore) at two points publishes the uninterrupted run's
// records and ends with its calibrations. A payload of version 5 (no
// calibrations) restores with fresh ones, which then publish other
// probabilities.
func TestProbabilityExactRecovery(t *testing.T) {
	const n = 900
	a := newProbSet(t)
	ref := probRun(t, a, 4, 0, n)
	if again := probRun(t, newProbSet(t), 4, 0, n); !equalRecords(again, ref) {
		t.Fatal("a second run published other records")
	}
	b := newProbSet(t)
	var got [][]byte
	cuts := []int{0, 301, 650, n}
	var v6 []byte
	for k := 0; k+1 < len(cuts); k++ {
		got = append(got, probRun(t, b, 4, cuts[k], cuts[k+1])...)
		payload, err := b.marshal()
		if err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			v6 = asV6(t, payload, len(probModels))
		}
		b = newProbSet(t)
		if _, err := b.restore(payload, false); err != nil {
			t.Fatal(err)
		}
	}
	if !equalRecords(got, ref) {
		t.Fatal("records after restores differ from the uninterrupted run's")
	}
	for i, m := range a.models {
		if b.models[i].calib != m.calib {
			t.Fatalf("model %s: calibration %+v after restores, %+v uninterrupted", m.name, b.models[i].calib, m.calib)
		}
	}
	if a.models[0].calib == eval.NewPlatt() {
		t.Fatal("the kernel model's calibration never moved")
	}

	// Version 5: the payload less its calibrations.
	v5 := append([]byte(nil), v6[:len(v6)-16*len(probModels)]...)
	binary.LittleEndian.PutUint32(v5[4:], 5)
	c := newProbSet(t)
	if _, err := c.restore(v5, false); err != nil {
		t.Fatal(err)
	}
	for _, m := range c.models {
		if m.calib != eval.NewPlatt() {
			t.Fatalf("model %s restored from version 5 with calibration %+v", m.name, m.calib)
		}
	}
	if pl, err := DescribePayload(v6); err != nil || pl.Models[0].Calib == eval.NewPlatt() {
		t.Fatalf("version 6 payload: %+v, %v", pl.Models[0].Calib, err)
	}
	if equalRecords(probRun(t, c, 4, 301, 650), ref[301:650]) {
		t.Fatal("a fresh calibration published the restored one's probabilities")
	}
}

func equalRecords(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// A reset model (the non-finite guard) starts its calibration afresh.
func TestResetRestartsCalibration(t *testing.T) {
	ms := newProbSet(t)
	probRun(t, ms, 5, 0, 200)
	m := ms.models[0]
	if m.calib == eval.NewPlatt() {
		t.Fatal("the calibration never moved")
	}
	ms.reset(m, resetNonFinite)
	if m.calib != eval.NewPlatt() {
		t.Fatalf("calibration after a reset: %+v", m.calib)
	}
}

// Calibration sanity: on a learnable stream the published probabilities'
// mean log loss is below the running class prior's (Laplace's rule, the
// baseline's) on the same labelled events: for the calibrated kernel model
// on the circle stream, and for the logistic model's own link on a
// linearly separable one (the circle is not, for it).
func TestPublishedProbabilitiesBeatThePrior(t *testing.T) {
	ms := newProbSet(t)
	recs := probRun(t, ms, 6, 0, 3000)
	var prior eval.Prior
	var loss, priorLoss float64
	n := 0
	for _, b := range recs {
		p, err := codec.DecodePrediction(b)
		if err != nil {
			t.Fatal(err)
		}
		if !p.HasY {
			continue
		}
		loss += eval.LogLoss(p.Models[0].Prob, p.Y) // fogd; labels ±1
		priorLoss += eval.LogLoss(prior.Prob(), p.Y)
		prior.Add(p.Y)
		n++
	}
	t.Logf("fogd (Platt): mean log loss %.4f, the prior's %.4f", loss/float64(n), priorLoss/float64(n))
	if loss >= 0.9*priorLoss {
		t.Errorf("fogd: mean log loss %.4f, not below the prior's %.4f", loss/float64(n), priorLoss/float64(n))
	}

	lin, err := newModelSet(probModels[1:2], testDim, pendingLimits{})
	if err != nil {
		t.Fatal(err)
	}
	src := rng.New(7)
	prior, loss, priorLoss = eval.Prior{}, 0, 0
	var out []codec.ModelScore
	for i := 0; i < 3000; i++ {
		ev := circleEvent(src, i, "", "")
		ev.Y = -1
		if ev.X[0]-0.5*ev.X[1]+0.3*(src.Float64()-0.5) > 0.2 {
			ev.Y = 1
		}
		y, err := lin.mapLabel(&ev)
		if err != nil {
			t.Fatal(err)
		}
		out = lin.score(ev.X, y, true, out[:0], nil)
		loss += eval.LogLoss(out[0].Prob, y)
		priorLoss += eval.LogLoss(prior.Prob(), y)
		prior.Add(y)
	}
	t.Logf("linear (own link): mean log loss %.4f, the prior's %.4f", loss/3000, priorLoss/3000)
	if loss >= 0.9*priorLoss {
		t.Errorf("linear: mean log loss %.4f, not below the prior's %.4f", loss/3000, priorLoss/3000)
	}
}

// The record's class is the decision of the first classification model,
// wherever it is among the models.
func TestClassNameFirstClassifier(t *testing.T) {
	ms := newProbSet(t)
	for _, y := range []float64{0, 1} { // a 0/1 stream
		ev := codec.Event{Y: y, HasY: true}
		if _, err := ms.mapLabel(&ev); err != nil {
			t.Fatal(err)
		}
	}
	scores := []codec.ModelScore{{Score: 2}, {Score: -1, Classify: true, Decision: -1}, {Score: 3, Classify: true, Decision: 1}}
	if got := ms.className(scores); got != "0" {
		t.Errorf("class %q, want the second model's \"0\"", got)
	}
	scores[1].Decision = 0
	if got := ms.className(scores); got != "" {
		t.Errorf("class %q for a decision of 0", got)
	}
	if got := ms.className(scores[:1]); got != "" {
		t.Errorf("class %q without a classifier", got)
	}
}

// Scoring an event, naming its class and encoding its record (version 3)
// allocate nothing, with string labels too.
func TestPublishAllocs(t *testing.T) {
	ms := newProbSet(t)
	src := rng.New(8)
	out := make([]codec.ModelScore, 0, len(probModels))
	buf := make([]byte, 0, 512)
	var ev codec.Event
	for i := 0; i < 300; i++ {
		ev = circleEvent(src, i, "", "")
		ev.YKind, ev.YStr = codec.LabelString, map[bool]string{true: "spam", false: "ham"}[ev.Y > 0]
		y, err := ms.mapLabel(&ev)
		if err != nil {
			t.Fatal(err)
		}
		out = ms.score(ev.X, y, true, out[:0], nil)
	}
	y, _ := ms.mapLabel(&ev)
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector (it allocates); the plain go test counts them")
	}
	a := testing.AllocsPerRun(100, func() {
		out = ms.score(ev.X, y, true, out[:0], nil)
		p := codec.Prediction{Version: codec.PredictionVersionProb, Topic: "t", Y: y, HasY: true, Models: out, Class: ms.className(out)}
		buf = codec.AppendPrediction(buf[:0], &p)
	})
	if a != 0 {
		t.Fatalf("%v allocations per event", a)
	}
	if p, _ := codec.DecodePrediction(buf); p.Class != "spam" && p.Class != "ham" {
		t.Fatalf("class %q", p.Class)
	}
}

// An outcome record reports the probability published at impression time,
// also when labels in between moved the calibration and when the pending
// impression went through a checkpoint (payload version 8); the
// calibration still learns from the delayed label.
func TestOutcomeReportsImpressionProbability(t *testing.T) {
	lim := pendingLimits{max: 1000, maxAge: 1 << 40}
	ms, err := newModelSet(probModels, testDim, lim)
	if err != nil {
		t.Fatal(err)
	}
	src := rng.New(5)
	var out []codec.ModelScore
	type shown struct {
		im   *impression
		prob []float64
		y    float64
	}
	var imps []shown
	for i := 0; i < 600; i++ {
		ev := circleEvent(src, i, "", "")
		y, err := ms.mapLabel(&ev)
		if err != nil {
			t.Fatal(err)
		}
		if i%10 != 9 { // a labelled event: the calibration learns
			out = ms.score(ev.X, y, true, out[:0], nil)
			continue
		}
		out = ms.score(ev.X, 0, false, out[:0], nil) // an impression, its label comes later
		im := newImpression(fmt.Sprintf("imp-%d", i), "", int64(i), 0, false, ev.X, len(out))
		im.record(out)
		ms.pend.add(im)
		imps = append(imps, shown{im: im, prob: []float64{out[0].Prob, out[1].Prob}, y: y})
	}
	payload, err := ms.marshal()
	if err != nil {
		t.Fatal(err)
	}
	restored, err := newModelSet(probModels, testDim, lim)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := restored.restore(payload, false); err != nil {
		t.Fatal(err)
	}
	differ := 0
	for _, s := range imps {
		im, _ := restored.pend.take(s.im.id, "")
		if im == nil {
			t.Fatalf("%s lost in the checkpoint", s.im.id)
		}
		before := restored.models[0].calib
		now := before.Prob(im.scores[0])
		out = restored.learnDelayed(im, s.y, out[:0], nil)
		if out[0].Prob != s.prob[0] || out[1].Prob != s.prob[1] || out[2].HasProb {
			t.Fatalf("%s: outcome probabilities %v %v, published %v", s.im.id, out[0].Prob, out[1].Prob, s.prob)
		}
		if now != s.prob[0] {
			differ++
		}
		if restored.models[0].calib == before {
			t.Fatalf("%s: the calibration did not learn the delayed label", s.im.id)
		}
	}
	if differ < len(imps)/2 {
		t.Fatalf("the calibration moved between impression and outcome for only %d of %d impressions: the test shows nothing", differ, len(imps))
	}
}
