package serve

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"okstream/checkpoint"
	"okstream/codec"
	"okstream/consumer"
	"okstream/internal/kafkatest"
	"okstream/modelfile"
)

// serve's answers == the Scorer's == the pipeline's prediction records: a
// pipeline learns 600 labelled events on two partitions and stops (its
// final checkpoints); 200 unlabelled events follow, which the restarted
// pipeline scores (without learning: its models stay the checkpoints'). A
// server of the checkpoints answers each of them, routed by key (murmur2,
// as the events were produced), in a JSON and a msgpack batch, with the
// records' partition and the models' scores, probabilities, decisions,
// update counts and class bit for bit; ?partition=N and ?model=NAME pick.
func TestServeEqualsScorerEqualsPipeline(t *testing.T) {
	e, cfg, cps := trained(t, 2, 600)
	srv := serverOf(t, Options{}, cps, cfg.Input)
	evs := events(200, 2, "b", false)
	produce(t, e, cfg.Input, evs)
	r := startPipeline(t, cfg)
	r.waitCaughtUp(t, e, cfg.Input)
	r.shutdown(t)
	recs := map[string]codec.Prediction{} // by id
	for _, rec := range e.ReadAll(t, cfg.Output) {
		p, err := codec.DecodePredictionAny(rec.Value)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(p.ID, "b") {
			recs[p.ID] = p
		}
	}
	if len(recs) != len(evs) {
		t.Fatalf("%d pipeline records of the unlabelled events, want %d", len(recs), len(evs))
	}
	h := srv.Handler()
	for _, msgpack := range []bool{false, true} {
		body, ct := jsonBatch(t, evs), "application/json"
		if msgpack {
			body, ct = msgpackBatch(t, evs), "application/msgpack"
		}
		code, out := post(t, h, ct, "", bytes.NewReader(body))
		if code != http.StatusOK {
			t.Fatalf("msgpack %v: %d %s", msgpack, code, out)
		}
		got := answers(t, out, msgpack)
		if len(got) != len(evs) {
			t.Fatalf("%d answers for %d events", len(got), len(evs))
		}
		for i, a := range got {
			want := recs[evs[i].ID]
			if a.ID != evs[i].ID || a.Key != evs[i].Key || a.Partition != want.Partition || a.Topic != cfg.Input || a.Offset != cps[int(want.Partition)].NextOffset {
				t.Fatalf("answer %d: id %q key %q partition %d topic %q offset %d; pipeline: partition %d", i, a.ID, a.Key, a.Partition, a.Topic, a.Offset, want.Partition)
			}
			if err := sameScores(a.Models, want.Models); err != nil || a.Class != want.Class {
				t.Fatalf("event %s (msgpack %v): served %+v, pipeline %+v: %v", a.ID, msgpack, a, want, err)
			}
			sc := srv.snap.Load().models[want.Partition].Scorer
			direct, err := sc.Score(&evs[i], nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameScores(direct, want.Models); err != nil {
				t.Fatalf("event %s: Scorer %v", a.ID, err)
			}
		}
	}
	// ?partition=1&model=fogd: partition 1's fogd, for an event of either
	// partition.
	code, out := post(t, h, "", "?partition=1&model=fogd", bytes.NewReader(jsonBatch(t, evs[:3])))
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, out)
	}
	for i, a := range answers(t, out, false) {
		sc := srv.snap.Load().models[1].Scorer
		full, _ := sc.Score(&evs[i], nil)
		if a.Partition != 1 || len(a.Models) != 1 || sameScores(a.Models, full[1:2]) != nil {
			t.Fatalf("answer %d: %+v", i, a)
		}
	}
}

// A replica follows a running pipeline's checkpoint topic: it serves the
// partitions' checkpoints as they land (its answers to the same events
// change when the checkpoints do, and equal a Scorer of the newest
// checkpoint), /readyz says how old the models are and fails past
// --max-age, and the metrics show the ages.
func TestServeReplicaFollowsCheckpoints(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 2, nil)
	cfg := pipelineConfig(e, input)
	produce(t, e, input, events(300, 1, "a", true))
	r := startPipeline(t, cfg)

	var skew atomic.Int64 // the server's clock runs ahead by this
	srv, err := New(Options{MaxAge: time.Hour, Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store, err := checkpoint.Open(ctx, checkpoint.Config{Brokers: e.Brokers, Topic: cfg.Checkpoints})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	done := make(chan error, 1)
	go func() {
		done <- Follow(ctx, srv, FollowConfig{Store: store, Client: e.Client, Group: cfg.Group, Input: input, CheckpointTopic: cfg.Checkpoints, Poll: 20 * time.Millisecond})
	}()
	defer func() { cancel(); <-done }()
	h := srv.Handler()
	probe := events(20, 9, "p", false)

	r.waitCaughtUp(t, e, input)
	answer := func() []codec.Prediction {
		code, out := post(t, h, "application/json", "", bytes.NewReader(jsonBatch(t, probe)))
		if code != http.StatusOK {
			t.Fatalf("%d %s", code, out)
		}
		return answers(t, out, false)
	}
	// Wait for the replica to serve the checkpoints at the end of the
	// first 300 events (every partition checkpoints every 100 events; the
	// ends are the final ones only after a stop: wait for what is there).
	var first map[int]int64
	waitFor(t, 60*time.Second, "the replica to load both partitions", func() bool {
		ms := srv.Models()
		if len(ms) != 2 {
			return false
		}
		first = map[int]int64{ms[0].Partition: ms[0].NextOffset, ms[1].Partition: ms[1].NextOffset}
		return true
	})
	before := answer()
	code, out := get(t, h, "/readyz")
	if code != http.StatusOK || !bytes.Contains(out, []byte(`"age_seconds"`)) {
		t.Fatalf("/readyz %d %s", code, out)
	}

	produce(t, e, input, events(400, 3, "c", true))
	r.waitCaughtUp(t, e, input)
	waitFor(t, 60*time.Second, "the replica to follow new checkpoints", func() bool {
		for _, m := range srv.Models() {
			if m.NextOffset <= first[m.Partition] {
				return false
			}
		}
		return true
	})
	after := answer()
	changed := 0
	for i := range probe {
		if sameScores(before[i].Models, after[i].Models) != nil {
			changed++
		}
	}
	if changed == 0 {
		t.Fatal("the replica's answers did not change when the checkpoints did")
	}
	// The served models are the newest checkpoints once the pipeline
	// stops (its final ones): the answers equal their Scorers'.
	r.shutdown(t)
	cps := checkpoints(t, e, cfg, 2)
	waitFor(t, 60*time.Second, "the replica to load the final checkpoints", func() bool {
		for _, m := range srv.Models() {
			if m.NextOffset != cps[m.Partition].NextOffset {
				return false
			}
		}
		return true
	})
	final := answer()
	for i, a := range final {
		sc, err := consumer.NewScorer(cps[int(a.Partition)].Payload)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := sc.Score(&probe[i], nil)
		if err := sameScores(a.Models, want); err != nil {
			t.Fatalf("probe %d: %v", i, err)
		}
	}
	for _, m := range srv.Models() {
		if m.Time.IsZero() || time.Since(m.Time) > time.Minute {
			t.Fatalf("partition %d: model time %v (the checkpoint's write time)", m.Partition, m.Time)
		}
	}
	skew.Store(int64(2 * time.Hour))
	if code, out := get(t, h, "/readyz"); code != http.StatusServiceUnavailable || !bytes.Contains(out, []byte("older than")) {
		t.Fatalf("/readyz with models 2 h old, --max-age 1h: %d %s", code, out)
	}
	if code, out := get(t, h, "/metrics"); code != http.StatusOK || !bytes.Contains(out, []byte(`okstream_serve_model_age_seconds{partition="1"} 7`)) ||
		!bytes.Contains(out, []byte(`okstream_serve_requests_total{code="200"}`)) {
		t.Fatalf("/metrics %d:\n%s", code, out)
	}
}

func get(t testing.TB, h http.Handler, path string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, path, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// Live serving inside okstream run: the pipeline hands its checkpoints to
// a Live (consumer.Config.OnModels), which serves them; the answers change
// as the pipeline learns, equal a Scorer of the partitions' checkpoints,
// and the models are dropped when the pipeline stops.
func TestServeLiveInsideRun(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 2, nil)
	cfg := pipelineConfig(e, input)
	srv, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	live := NewLive(srv, LiveConfig{Topic: input, Group: cfg.Group, Client: e.Client})
	cfg.OnModels = live.Publish
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go live.Run(ctx)
	h := srv.Handler()
	probe := events(10, 9, "p", false)
	answer := func() []codec.Prediction {
		code, out := post(t, h, "application/msgpack", "", bytes.NewReader(msgpackBatch(t, probe)))
		if code != http.StatusOK {
			t.Fatalf("%d %s", code, out)
		}
		return answers(t, out, true)
	}
	produce(t, e, input, events(300, 1, "a", true))
	r := startPipeline(t, cfg)
	r.waitCaughtUp(t, e, input)
	waitFor(t, 30*time.Second, "live models of both partitions", func() bool { return len(srv.Models()) == 2 })
	first := answer()
	// The worker publishes at every checkpoint (every 100 events here).
	produce(t, e, input, events(300, 3, "c", true))
	r.waitCaughtUp(t, e, input)
	var second []codec.Prediction
	waitFor(t, 30*time.Second, "the live answers to change", func() bool {
		second = answer()
		for i := range probe {
			if sameScores(first[i].Models, second[i].Models) != nil {
				return true
			}
		}
		return false
	})
	r.shutdown(t)
	waitFor(t, 30*time.Second, "the live models to be dropped at the stop", func() bool { return len(srv.Models()) == 0 })
	if code, out := post(t, h, "", "", bytes.NewReader(jsonBatch(t, probe))); code != http.StatusServiceUnavailable {
		t.Fatalf("no models: %d %s", code, out)
	}
	// The last published models were the final checkpoints: serve them
	// again (as a replica would) and compare with the pipeline's records
	// of the unlabelled probe events, scored by a pipeline restarted on
	// them.
	cps := checkpoints(t, e, cfg, 2)
	srv2 := serverOf(t, Options{}, cps, input)
	produce(t, e, input, probe)
	r = startPipeline(t, cfg)
	r.waitCaughtUp(t, e, input)
	r.shutdown(t)
	recs := map[string]codec.Prediction{}
	for _, rec := range e.ReadAll(t, cfg.Output) {
		p, _ := codec.DecodePredictionAny(rec.Value)
		recs[p.ID] = p
	}
	code, out := post(t, srv2.Handler(), "", "", bytes.NewReader(jsonBatch(t, probe)))
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, out)
	}
	for i, a := range answers(t, out, false) {
		if err := sameScores(a.Models, recs[probe[i].ID].Models); err != nil {
			t.Fatalf("probe %d: %v", i, err)
		}
	}
}

// A model file's entries are served as their partitions' models.
func TestServeModelFile(t *testing.T) {
	_, cfg, cps := trained(t, 2, 300)
	f := &modelfile.File{}
	for p := 0; p < 2; p++ {
		f.Entries = append(f.Entries, modelfile.Entry{Kind: modelfile.KindCheckpoint, Group: cfg.Group, Topic: cfg.Input, Partition: p, NextOffset: cps[p].NextOffset, Payload: cps[p].Payload})
	}
	b, err := modelfile.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	rf, err := modelfile.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := New(Options{})
	if err := LoadFile(srv, rf, time.Now(), consumer.ScorerOptions{}); err != nil {
		t.Fatal(err)
	}
	ref := serverOf(t, Options{}, cps, cfg.Input)
	probe := events(30, 5, "p", false)
	_, a := post(t, srv.Handler(), "", "", bytes.NewReader(jsonBatch(t, probe)))
	_, b2 := post(t, ref.Handler(), "", "", bytes.NewReader(jsonBatch(t, probe)))
	ga, gb := answers(t, a, false), answers(t, b2, false)
	for i := range ga {
		if err := sameScores(ga[i].Models, gb[i].Models); err != nil || ga[i].Partition != gb[i].Partition {
			t.Fatalf("probe %d: %v", i, err)
		}
	}
	// Two entries of one partition are refused.
	f.Entries[1].Partition = 0
	if err := LoadFile(srv, f, time.Now(), consumer.ScorerOptions{}); err == nil {
		t.Fatal("two entries of partition 0 accepted")
	}
}

// Requests while models are swapped in concurrently (run with -race): every
// answer is 200 and equals the one answer of the (identical) models.
func TestServeConcurrentSwaps(t *testing.T) {
	_, cfg, cps := trained(t, 2, 300)
	srv := serverOf(t, Options{}, cps, cfg.Input)
	h := srv.Handler()
	body := jsonBatch(t, events(20, 5, "p", false))
	_, ref := post(t, h, "", "", bytes.NewReader(body))
	want := answers(t, ref, false)
	stop, swapped := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		defer func() { swapped <- n }()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p := i % 2
			sc, err := consumer.NewScorer(cps[p].Payload)
			if err != nil {
				panic(err)
			}
			srv.Set(&Model{Scorer: sc, Partition: p, Topic: cfg.Input, NextOffset: cps[p].NextOffset, Time: time.Now(), Source: SourceLive})
			n++
		}
	}()
	var wg sync.WaitGroup
	var bad atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				code, out := post(t, h, "", "", bytes.NewReader(body))
				if code != http.StatusOK {
					bad.Add(1)
					continue
				}
				for i, a := range answers(t, out, false) {
					if sameScores(a.Models, want[i].Models) != nil {
						bad.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	if n := <-swapped; n == 0 {
		t.Fatal("no swap happened")
	}
	if bad.Load() != 0 {
		t.Fatalf("%d bad answers during swaps", bad.Load())
	}
}

// A multi-class pipeline (three string classes, --task multiclass): the
// served answers carry each model's class, its probability and the top
// classes, equal to the pipeline's records, and the record's class.
func TestServeMultiClass(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 2, nil)
	names := [3]string{"red", "green", "blue"}
	three := func(evs []codec.Event) []codec.Event {
		for i := range evs {
			x := evs[i].X
			s := [3]float64{x[0], -0.5*x[0] + 0.866*x[1], -0.5*x[0] - 0.866*x[1]}
			c := 0
			for k := 1; k < 3; k++ {
				if s[k] > s[c] {
					c = k
				}
			}
			if evs[i].HasY {
				evs[i].Y, evs[i].YKind, evs[i].YStr = 0, codec.LabelString, names[c]
			}
		}
		return evs
	}
	produce(t, e, input, three(events(600, 1, "a", true)))
	cfg := pipelineConfig(e, input)
	cfg.Task = "multiclass"
	r := startPipeline(t, cfg)
	r.waitCaughtUp(t, e, input)
	r.shutdown(t)
	cps := checkpoints(t, e, cfg, 2)
	srv := serverOf(t, Options{}, cps, input)
	probe := events(60, 2, "b", false)
	produce(t, e, input, probe)
	r = startPipeline(t, cfg)
	r.waitCaughtUp(t, e, input)
	r.shutdown(t)
	recs := map[string]codec.Prediction{}
	for _, rec := range e.ReadAll(t, cfg.Output) {
		// Every record decodes (auto's multi-class mixture once gave a
		// probability of 1.0000000000000004 after one update, which codec's
		// decoder refuses); the probes' are compared.
		p, err := codec.DecodePredictionAny(rec.Value)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(p.ID, "b") {
			recs[p.ID] = p
		}
	}
	if len(recs) != len(probe) {
		t.Fatalf("%d records of the probes, want %d", len(recs), len(probe))
	}
	for _, msgpack := range []bool{false, true} {
		body, ct := jsonBatch(t, probe), "application/json"
		if msgpack {
			body, ct = msgpackBatch(t, probe), "application/msgpack"
		}
		code, out := post(t, srv.Handler(), ct, "", bytes.NewReader(body))
		if code != http.StatusOK {
			t.Fatalf("%d %s", code, out)
		}
		for i, a := range answers(t, out, msgpack) {
			want := recs[probe[i].ID]
			if err := sameScores(a.Models, want.Models); err != nil || a.Class != want.Class || a.Partition != want.Partition {
				t.Fatalf("probe %d (msgpack %v): served %+v, pipeline %+v (%v)", i, msgpack, a, want, err)
			}
			if !a.Models[0].Multi || len(a.Models[0].Dist) != 3 || a.Class == "" {
				t.Fatalf("probe %d: not a multi-class answer: %+v", i, a)
			}
		}
	}
}
