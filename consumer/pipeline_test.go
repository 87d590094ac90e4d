package consumer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/vmihailenco/msgpack/v5"

	"okstream/codec"
	"okstream/internal/kafkatest"
)

// Equivalence: for every partition, the scores the pipeline publishes equal,
// bit for bit, the scores the offline path (eval.Replay) computes on that
// partition's event sequence; the final checkpointed states equal the
// offline models' final states byte for byte.
func TestEquivalenceWithOfflineEval(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 3, nil)
	e.Produce(t, input, genEvents(2400, 1, "a")...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 90*time.Second, "the pipeline to process every event", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}

	want := offline(t, e, input, cfg.Models, cfg.Dim)
	got := predictionsByOffset(t, e, cfg.Output)
	if len(got) != 2400 || len(want.scores) != 2400 {
		t.Fatalf("%d predictions, %d offline scores, want 2400", len(got), len(want.scores))
	}
	for k, raw := range got {
		pr, _ := codec.DecodePrediction(raw)
		if len(pr.Models) != 2 || pr.Models[0].Name != "champion" || pr.Models[1].Name != "challenger" {
			t.Fatalf("prediction %v: models %+v", k, pr.Models)
		}
		// Schema version 3: each model's probability, and the champion's
		// decision as the stream writes its labels (±1; "" for −1 before
		// the partition's first −1 label).
		if pr.Version != codec.PredictionVersionProb {
			t.Fatalf("prediction %v: version %d", k, pr.Version)
		}
		for _, m := range pr.Models {
			if !m.HasProb || !(m.Prob >= 0 && m.Prob <= 1) {
				t.Fatalf("prediction %v: model %+v", k, m)
			}
		}
		if want := map[int8]string{1: "1", -1: "-1"}[pr.Models[0].Decision]; pr.Class != want && (pr.Class != "" || want != "-1") {
			t.Fatalf("prediction %v: class %q, champion's decision %d", k, pr.Class, pr.Models[0].Decision)
		}
		for i, m := range pr.Models {
			if !sameScore(m.Score, want.scores[k][i]) {
				t.Fatalf("partition %d offset %d model %s: published %v, offline %v", k[0], k[1], m.Name, m.Score, want.scores[k][i])
			}
		}
	}
	states, next := checkpointStates(t, e, cfg, 3)
	for p := 0; p < 3; p++ {
		if next[p] != ends[p] {
			t.Fatalf("partition %d: final checkpoint at %d, end %d", p, next[p], ends[p])
		}
		for i := range cfg.Models {
			if !bytes.Equal(states[p][i], want.states[p][i]) {
				t.Fatalf("partition %d model %s: checkpointed state differs from the offline model", p, cfg.Models[i].Name)
			}
		}
	}
}

// Exact recovery: kill the pipeline abruptly (no final checkpoint) at
// several points and restart it; the final model state is byte-identical to
// an uninterrupted run's, every input offset has a prediction, and
// re-emitted predictions are byte-identical to the first ones.
func TestExactRecoveryAfterKills(t *testing.T) {
	exactRecoveryAfterKills(t, testModels, 170, []int{400, 1100, 1900, 2600})
}

// exactRecoveryAfterKills runs the kill-and-restart scenario above for
// models, checkpointing every checkpointEvery events and killing after
// about each of killAt predictions.
func exactRecoveryAfterKills(t *testing.T, models []Model, checkpointEvery int, killAt []int) {
	recoveryAfterKills(t, func(e *kafkatest.Env, input string) { e.Produce(t, input, genEvents(3000, 2, "b")...) },
		func(e *kafkatest.Env, input, group, output string) Config {
			c := testConfig(e, input, group, output)
			c.Models = models
			return c
		}, checkpointEvery, killAt)
}

// recoveryAfterKills is the scenario of exactRecoveryAfterKills with 3000
// events written by produce into a 2-partition topic and pipelines
// configured by config.
func recoveryAfterKills(t *testing.T, produce func(e *kafkatest.Env, input string), config func(e *kafkatest.Env, input, group, output string) Config, checkpointEvery int, killAt []int) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 2, nil)
	produce(e, input)
	ends := endOffsets(t, e, input)

	// Uninterrupted reference run.
	ref := config(e, input, e.Name("ref"), e.Name("ref-preds"))
	r := start(t, ref)
	waitFor(t, 90*time.Second, "the reference run", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	refStates, _ := checkpointStates(t, e, ref, 2)
	refCalibs := checkpointCalibs(t, e, ref, 2)
	refPreds := predictionsByOffset(t, e, ref.Output)

	// Crashing run: killed after about each of killAt predictions.
	cfg := config(e, input, e.Name("crash"), e.Name("crash-preds"))
	cfg.CheckpointEvery = checkpointEvery
	for _, at := range killAt {
		r := start(t, cfg)
		waitFor(t, 90*time.Second, fmt.Sprintf("%d predictions", at), func() bool {
			return int(r.p.m.predictionsCount()) >= at/2 || caughtUp(ends, r)
		})
		r.kill(t)
	}
	r = start(t, cfg)
	waitFor(t, 90*time.Second, "the final run", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	states, _ := checkpointStates(t, e, cfg, 2)
	for p := 0; p < 2; p++ {
		for i := range cfg.Models {
			if !bytes.Equal(states[p][i], refStates[p][i]) {
				t.Fatalf("partition %d model %s: state after kills differs from the uninterrupted run", p, cfg.Models[i].Name)
			}
		}
	}
	// The probability calibrations too (payload version 6): restored, not
	// restarted, so the published probabilities below agree.
	if calibs := checkpointCalibs(t, e, cfg, 2); !reflect.DeepEqual(calibs, refCalibs) {
		t.Fatalf("calibrations after kills %v, uninterrupted %v", calibs, refCalibs)
	}
	preds := predictionsByOffset(t, e, cfg.Output) // fails on differing duplicates
	if len(preds) != len(refPreds) || len(preds) != 3000 {
		t.Fatalf("%d distinct predictions after kills, %d in the reference run, want 3000", len(preds), len(refPreds))
	}
	for k, v := range refPreds {
		if !bytes.Equal(preds[k], v) {
			t.Fatalf("prediction %v differs from the uninterrupted run's", k)
		}
	}
	all := e.ReadAll(t, cfg.Output)
	t.Logf("%d prediction records for 3000 events (%d re-emitted after kills)", len(all), len(all)-3000)
}

// Rebalance: two, then three instances in one group while events keep
// arriving; partitions move with their models and nothing is lost: every
// offset has a prediction and every prediction equals the offline replay of
// its partition.
func TestRebalanceTwoThenThree(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 6, nil)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.CheckpointEvery = 150
	events := genEvents(3600, 3, "c")

	done := produceSlowly(t, e, input, events, nil)
	a := start(t, cfg)
	waitFor(t, 60*time.Second, "instance A to own partitions", func() bool { return a.p.m.predictionsCount() > 0 })
	b := start(t, cfg)
	waitFor(t, 60*time.Second, "instance B to own partitions", func() bool { return owned(b) > 0 })
	c := start(t, cfg)
	waitFor(t, 60*time.Second, "instance C to own partitions", func() bool { return owned(c) > 0 && owned(a)+owned(b)+owned(c) == 6 })
	<-done
	ends := endOffsets(t, e, input)
	waitFor(t, 90*time.Second, "all instances to catch up", func() bool { return caughtUp(ends, a, b, c) })
	for _, r := range []*running{c, b, a} {
		if err := r.shutdown(t); err != nil {
			t.Fatal(err)
		}
	}
	_, ta := a.p.Status()
	if ta.Generations < 3 {
		t.Fatalf("instance A saw %d generations, want ≥ 3 (it should have been rebalanced twice)", ta.Generations)
	}
	want := offline(t, e, input, cfg.Models, cfg.Dim)
	got := predictionsByOffset(t, e, cfg.Output)
	if len(got) != len(events) {
		t.Fatalf("%d offsets have predictions, want %d", len(got), len(events))
	}
	for k, raw := range got {
		pr, _ := codec.DecodePrediction(raw)
		for i, m := range pr.Models {
			if !sameScore(m.Score, want.scores[k][i]) {
				t.Fatalf("partition %d offset %d model %s: %v, offline %v (model did not move intact with its partition)", k[0], k[1], m.Name, m.Score, want.scores[k][i])
			}
		}
	}
}

// produceSlowly writes events in chunks of 200 every 150 ms (while
// instances come and go), with balancer if not nil; the channel is closed
// when it is done.
func produceSlowly(t *testing.T, e *kafkatest.Env, input string, events []kafka.Message, balancer kafka.Balancer) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		w := e.Writer(input)
		if balancer != nil {
			w.Balancer, w.BatchSize = balancer, 1
		}
		defer w.Close()
		for i := 0; i < len(events); i += 200 {
			if err := w.WriteMessages(context.Background(), events[i:min(i+200, len(events))]...); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(150 * time.Millisecond)
		}
	}()
	return done
}

func owned(r *running) int {
	st, _ := r.p.Status()
	n := 0
	for _, s := range st {
		if s.Owned {
			n++
		}
	}
	return n
}

// Poison: undecodable, NaN, wrong-dimension and badly labelled events land
// in the dead-letter topic with their reason, original bytes and source,
// while the partition keeps flowing.
func TestPoisonEventsGoToDeadLetter(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	good := genEvents(300, 4, "d")
	nanEvent, _ := msgpack.Marshal(map[string]any{"v": 1, "x": []float64{1, 2, nan(), 4, 5}, "y": 1})
	shortEvent, _ := codec.AppendEvent(nil, &codec.Event{Version: 1, X: []float64{1, 2, 3}, Y: 1, HasY: true})
	badLabel, _ := codec.AppendEvent(nil, &codec.Event{Version: 1, X: []float64{1, 2, 3, 4, 5}, Y: 0.5, HasY: true})
	named, err := codec.AppendEvent(nil, &codec.Event{Version: codec.NamedEventVersion, F: []codec.Field{{Name: "amount", Kind: codec.FieldNumber, Num: 12.5}}, Y: 1, HasY: true})
	if err != nil {
		t.Fatal(err)
	}
	json := []byte(`{"v": 1, "x": [1, 2, 3, 4, 5], "y": 1}`)
	poison := []struct {
		value  []byte
		reason string
	}{
		{[]byte("\xc1 not msgpack"), string(codec.ReasonNotMsgpack)},
		{nanEvent, string(codec.ReasonNonFinite)},
		{shortEvent, string(codec.ReasonDimensionMismatch)},
		{badLabel, reasonBadLabel},
		{nil, string(codec.ReasonNotMsgpack)},
		{named, reasonFeatureKind}, // a named event in a dense partition
		{json, string(codec.ReasonLooksLikeJSON)},
	}
	var msgs []kafka.Message
	for i, g := range good {
		msgs = append(msgs, g)
		if i%40 == 20 && i/40 < len(poison) {
			p := poison[i/40]
			msgs = append(msgs, kafka.Message{Key: []byte(fmt.Sprintf("poison-%d", i)), Value: p.value})
		}
	}
	e.Produce(t, input, msgs...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "the partition to flow past the poison", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if n := len(predictionsByOffset(t, e, cfg.Output)); n != len(good) {
		t.Fatalf("%d predictions, want %d (one per valid event)", n, len(good))
	}
	dl := e.ReadAll(t, cfg.DeadLetter)
	if len(dl) != len(poison) {
		t.Fatalf("%d dead letters, want %d", len(dl), len(poison))
	}
	for i, d := range dl {
		h := dlqHeaders(d)
		want := poison[i]
		if h[HeaderReason] != want.reason || !bytes.Equal(d.Value, want.value) || !strings.HasPrefix(h[HeaderSource], input+"/0/") || h[HeaderDetail] == "" {
			t.Fatalf("dead letter %d: headers %v, value %q; want reason %s and the original bytes", i, h, d.Value, want.reason)
		}
		if !strings.HasPrefix(string(d.Key), "poison-") {
			t.Fatalf("dead letter %d lost its key: %q", i, d.Key)
		}
	}
	body := scrape(t, r.p)
	if !strings.Contains(body, `okstream_dead_letters_total{reason="non_finite"} 1`) {
		t.Fatalf("dead-letter metric missing:\n%s", grep(body, "dead_letters"))
	}
}

// Big state: a checkpoint larger than the broker's 1 MiB message limit is
// chunked, written and restored exactly.
func TestBigStateCheckpoint(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	e.Produce(t, input, genEvents(400, 5, "e")...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.Models = []Model{{Name: "wide", Spec: "fogd:sigma=1,features=90000"}} // w has 180,000 floats: 1.4 MiB
	cfg.CheckpointEvery = 150
	ends := endOffsets(t, e, input)
	for _, stopAt := range []int{200, 400} {
		r := start(t, cfg)
		waitFor(t, 120*time.Second, "processing", func() bool {
			// effectively-once: what the output already had is recomputed,
			// not written again; a run restored from a checkpoint at 200
			// (one that completed as the first run was killed) has only
			// 200 events left
			return r.p.m.predictionsCount()+counterValue(r.p.dm.suppressed.WithLabelValues("restore")) >= float64(stopAt-150) || caughtUp(ends, r)
		})
		r.kill(t)
		_, tot := r.p.Status()
		if tot.Checkpoints > 0 && tot.CheckpointBytes/int64(tot.Checkpoints) < 1<<20 {
			t.Fatalf("checkpoints of %d bytes: not over 1 MiB", tot.CheckpointBytes/int64(tot.Checkpoints))
		}
	}
	r := start(t, cfg)
	waitFor(t, 120*time.Second, "the final run", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	states, _ := checkpointStates(t, e, cfg, 1)
	want := offline(t, e, input, cfg.Models, cfg.Dim)
	if len(states[0][0]) < 1<<20 || !bytes.Equal(states[0][0], want.states[0][0]) {
		t.Fatalf("big state (%d bytes) not restored exactly", len(states[0][0]))
	}
}

// A checkpointed model whose spec changed stops the pipeline with an error
// that says what to do, instead of silently discarding the model.
func TestModelChangeRefused(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	e.Produce(t, input, genEvents(100, 6, "f")...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "processing", func() bool { return caughtUp(ends, r) })
	r.shutdown(t)

	cfg.Models = []Model{{Name: "champion", Spec: "fogd:sigma=0.9,budget=10"}, testModels[1]}
	r = start(t, cfg)
	select {
	case err := <-r.done:
		r.done <- err
		if !errors.Is(err, ErrModelChanged) || !strings.Contains(err.Error(), "--on-model-change=reset") {
			t.Fatalf("want ErrModelChanged with advice, got %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("pipeline kept running with a changed model")
	}
	cfg.OnModelChange = "reset"
	r = start(t, cfg)
	waitFor(t, 60*time.Second, "ready with a reset model", r.p.Ready)
	r.shutdown(t)
}

func TestConfigValidation(t *testing.T) {
	c := Config{Models: []Model{{Name: "a", Spec: "fogd"}, {Name: "a", Spec: "nogd:loss=square"}}, Input: "x", Output: "x"}
	err := c.Validate()
	for _, want := range []string{"--brokers", "--dim", "used twice", "separate pipelines", "must differ"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("validation error %v does not mention %q", err, want)
		}
	}
	for in, want := range map[string]Model{
		"champion=fogd:sigma=2": {Name: "champion", Spec: "fogd:sigma=2"},
		"fogd:sigma=2":          {Name: "fogd", Spec: "fogd:sigma=2"},
		"nogd":                  {Name: "nogd", Spec: "nogd"},
	} {
		if m, err := ParseModel(in); err != nil || m != want {
			t.Errorf("ParseModel(%q) = %+v, %v", in, m, err)
		}
	}
}

func TestHealthAndMetricsEndpoints(t *testing.T) {
	cfg := Config{Brokers: []string{"127.0.0.1:1"}, Input: "in", Dim: 3, Models: []Model{{Name: "m", Spec: "fogd"}}}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p.Handler())
	defer srv.Close()
	get := func(path string) (int, string) { return httpGet(t, srv, path) }
	if code, _ := get("/healthz"); code != 200 {
		t.Fatalf("/healthz %d", code)
	}
	if code, _ := get("/readyz"); code != 503 {
		t.Fatalf("/readyz before joining: %d, want 503", code)
	}
	code, body := get("/metrics")
	for _, name := range []string{"okstream_predictions_total", "okstream_dead_letters_total", "okstream_checkpoints_total", "okstream_assigned_partitions", "okstream_restore_duration_seconds", "go_goroutines"} {
		if code != 200 || !strings.Contains(body, name) {
			t.Fatalf("/metrics lacks %s", name)
		}
	}
}

func scrape(t *testing.T, p *Pipeline) string {
	srv := httptest.NewServer(p.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
