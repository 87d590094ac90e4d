package consumer

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/codec"
	"okstream/internal/kafkatest"
)

// asJSON re-encodes msgpack event records as JSON (codec.AppendEventJSON);
// records that are not events (garbage) stay as they are.
func asJSON(t testing.TB, msgs []kafka.Message) []kafka.Message {
	t.Helper()
	out := make([]kafka.Message, len(msgs))
	for i, m := range msgs {
		out[i] = m
		ev, err := codec.DecodeEvent(m.Value, codec.Limits{})
		if err != nil {
			continue
		}
		b, err := codec.AppendEventJSON(nil, &ev)
		if err != nil {
			t.Fatal(err)
		}
		out[i].Value = b
	}
	return out
}

// anyPredictions reads an output topic of either format (or both) and
// returns the predictions by source (partition, offset), failing on
// duplicates, undecodable records and predictions in another output
// partition than their input partition; json counts the JSON records.
func anyPredictions(t *testing.T, e *kafkatest.Env, output string) (preds map[[2]int64]codec.Prediction, json int) {
	t.Helper()
	preds = map[[2]int64]codec.Prediction{}
	for _, r := range e.ReadAll(t, output) {
		pr, err := codec.DecodePredictionAny(r.Value)
		if err != nil {
			t.Fatalf("undecodable prediction %q: %v", r.Value, err)
		}
		if codec.IsJSONRecord(r.Value) {
			json++
		}
		if int(pr.Partition) != r.Partition {
			t.Fatalf("prediction of input partition %d in output partition %d", pr.Partition, r.Partition)
		}
		k := [2]int64{int64(pr.Partition), pr.Offset}
		if _, dup := preds[k]; dup {
			t.Fatalf("duplicate prediction record for %v (effectively-once delivery)", k)
		}
		preds[k] = pr
	}
	return preds, json
}

// samePredictions checks that two runs over copies of one stream (input
// topics ta and tb) published equal predictions, whatever their formats.
func samePredictions(t *testing.T, a, b map[[2]int64]codec.Prediction, ta, tb string) {
	t.Helper()
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("%d and %d predictions", len(a), len(b))
	}
	for k, pa := range a {
		pb, ok := b[k]
		if !ok {
			t.Fatalf("no prediction for %v in the second run", k)
		}
		if pa.Topic != ta || pb.Topic != tb {
			t.Fatalf("%v: topics %q and %q, want %q and %q", k, pa.Topic, pb.Topic, ta, tb)
		}
		pb.Topic = ta
		if !reflect.DeepEqual(pa, pb) {
			t.Fatalf("%v: predictions differ\n%+v\n%+v", k, pa, pb)
		}
	}
}

// A JSON stream and the same msgpack stream give bit-identical models and
// predictions: the same events are produced as msgpack to one topic and as
// JSON to another (same keys, so the same partitions); one pipeline reads
// msgpack and writes msgpack predictions, one reads JSON and writes JSON
// predictions, one reads JSON and writes msgpack. The checkpointed model
// states are byte-identical, the msgpack predictions of the two msgpack
// writers are byte-identical but for the topic name, and the JSON
// predictions decode to the same Prediction values.
func TestJSONStreamSameAsMsgpack(t *testing.T) {
	e := kafkatest.New(t)
	events := genEvents(1500, 39, "js")
	in := map[string]string{"mp": e.Name("events-mp"), "js": e.Name("events-js")}
	e.CreateTopic(t, in["mp"], 2, nil)
	e.CreateTopic(t, in["js"], 2, nil)
	e.Produce(t, in["mp"], events...)
	jsEvents := asJSON(t, events)
	if !bytes.HasPrefix(jsEvents[0].Value, []byte(`{"v":`)) {
		t.Fatalf("not JSON: %q", jsEvents[0].Value)
	}
	e.Produce(t, in["js"], jsEvents...)
	ends := endOffsets(t, e, in["mp"])
	if jsEnds := endOffsets(t, e, in["js"]); !reflect.DeepEqual(ends, jsEnds) {
		t.Fatalf("the two topics' partitions differ: %v and %v", ends, jsEnds)
	}
	runs := []struct {
		name, input, inFmt, outFmt string
	}{
		{"mp-mp", in["mp"], FormatMsgpack, FormatMsgpack},
		{"js-js", in["js"], FormatJSON, FormatJSON},
		{"js-mp", in["js"], FormatJSON, FormatMsgpack},
	}
	cfgs := make([]Config, len(runs))
	for i, rn := range runs {
		cfg := testConfig(e, rn.input, e.Name("g-"+rn.name), e.Name("preds-"+rn.name))
		cfg.InputFormat, cfg.OutputFormat = rn.inFmt, rn.outFmt
		r := start(t, cfg)
		waitFor(t, 90*time.Second, rn.name+" to catch up", func() bool { return caughtUp(ends, r) })
		if err := r.shutdown(t); err != nil {
			t.Fatal(err)
		}
		if n := counterValue(r.p.m.deadLetters.WithLabelValues(string(codec.ReasonLooksLikeJSON))) + counterValue(r.p.m.deadLetters.WithLabelValues(string(codec.ReasonLooksLikeMsgpack))); n != 0 {
			t.Fatalf("%s: %v records dead-lettered for their format", rn.name, n)
		}
		cfgs[i] = cfg
	}
	// Models: bit-identical checkpoints.
	ref, refNext := checkpointStates(t, e, cfgs[0], 2)
	for i := 1; i < len(runs); i++ {
		st, next := checkpointStates(t, e, cfgs[i], 2)
		if !reflect.DeepEqual(next, refNext) {
			t.Fatalf("%s: checkpoints at %v, reference at %v", runs[i].name, next, refNext)
		}
		for p := 0; p < 2; p++ {
			for m := range testModels {
				if !bytes.Equal(st[p][m], ref[p][m]) {
					t.Fatalf("%s: partition %d model %s: state differs from the msgpack run's", runs[i].name, p, testModels[m].Name)
				}
			}
		}
	}
	// Predictions: equal values; JSON records in the JSON run only.
	preds := make([]map[[2]int64]codec.Prediction, len(runs))
	for i, rn := range runs {
		var nJSON int
		preds[i], nJSON = anyPredictions(t, e, cfgs[i].Output)
		if want := map[bool]int{true: len(preds[i]), false: 0}[rn.outFmt == FormatJSON]; nJSON != want {
			t.Fatalf("%s: %d JSON prediction records of %d", rn.name, nJSON, len(preds[i]))
		}
	}
	labelled := 0
	for _, p := range preds[0] {
		if p.HasY {
			labelled++
		}
	}
	if labelled < 1000 || len(preds[0]) != 1500 {
		t.Fatalf("%d predictions, %d labelled: the stream is not what the test needs", len(preds[0]), labelled)
	}
	samePredictions(t, preds[0], preds[1], in["mp"], in["js"])
	samePredictions(t, preds[0], preds[2], in["mp"], in["js"])
	// The msgpack predictions of the JSON input are the msgpack input's
	// bytes, with the other topic name.
	mpBytes := map[[2]int64][]byte{}
	for _, r := range e.ReadAll(t, cfgs[0].Output) {
		pr, _ := codec.DecodePrediction(r.Value)
		mpBytes[[2]int64{int64(pr.Partition), pr.Offset}] = r.Value
	}
	for _, r := range e.ReadAll(t, cfgs[2].Output) {
		pr, _ := codec.DecodePrediction(r.Value)
		pr.Topic = in["mp"]
		if !bytes.Equal(codec.AppendPrediction(nil, &pr), mpBytes[[2]int64{int64(pr.Partition), pr.Offset}]) {
			t.Fatalf("%d/%d: msgpack prediction bytes differ", pr.Partition, pr.Offset)
		}
	}
}

// A JSON consumer dead-letters what is not a JSON event, with the reason
// that says why (looks_like_msgpack for a msgpack record, not_json for
// malformed JSON, the schema's reasons otherwise) and the record's bytes
// as they were; the valid events around them are predicted.
func TestJSONPoisonEvents(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	good := asJSON(t, genEvents(300, 40, "jp"))
	msgpackEvent, err := codec.AppendEvent(nil, &codec.Event{Version: 1, X: []float64{1, 2, 3, 4, 5}, Y: 1, HasY: true})
	if err != nil {
		t.Fatal(err)
	}
	poison := []struct {
		value  []byte
		reason string
	}{
		{msgpackEvent, string(codec.ReasonLooksLikeMsgpack)},
		{[]byte(`{"v": 1, "x": [1, 2, 3, 4, 5], "y": 1`), string(codec.ReasonNotJSON)},
		{[]byte(`{"v": 1, "x": [1, 2, 3, 4, 5], "y": 1,}`), string(codec.ReasonNotJSON)},
		{[]byte("garbage, not json"), string(codec.ReasonNotJSON)},
		{nil, string(codec.ReasonNotJSON)},
		{[]byte(`{"v": 1, "x": [1, 2, NaN, 4, 5], "y": 1}`), string(codec.ReasonNonFinite)},
		{[]byte(`{"v": 1, "x": [1, 2, 3], "y": 1}`), string(codec.ReasonDimensionMismatch)},
		{[]byte(`{"v": 3, "f": {"amount": 12.5}, "y": 1}`), reasonFeatureKind}, // a named event in a dense partition
	}
	var msgs []kafka.Message
	for i, g := range good {
		msgs = append(msgs, g)
		if i%30 == 10 && i/30 < len(poison) {
			msgs = append(msgs, kafka.Message{Key: []byte(fmt.Sprintf("poison-%d", i)), Value: poison[i/30].value})
		}
	}
	e.Produce(t, input, msgs...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.InputFormat, cfg.OutputFormat = FormatJSON, FormatJSON
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "the partition to flow past the poison", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if preds, nJSON := anyPredictions(t, e, cfg.Output); len(preds) != len(good) || nJSON != len(good) {
		t.Fatalf("%d predictions (%d JSON), want %d (one per valid event)", len(preds), nJSON, len(good))
	}
	dl := e.ReadAll(t, cfg.DeadLetter)
	if len(dl) != len(poison) {
		t.Fatalf("%d dead letters, want %d", len(dl), len(poison))
	}
	for i, d := range dl {
		h := dlqHeaders(d)
		want := poison[i]
		if h[HeaderReason] != want.reason || !bytes.Equal(d.Value, want.value) || !strings.HasPrefix(h[HeaderSource], input+"/0/") {
			t.Fatalf("dead letter %d: headers %v, value %q; want reason %s and the original bytes", i, h, d.Value, want.reason)
		}
		if want.reason == string(codec.ReasonLooksLikeMsgpack) && !strings.Contains(h[HeaderDetail], "--input-format msgpack") {
			t.Fatalf("the looks_like_msgpack dead letter has no hint: %q", h[HeaderDetail])
		}
	}
}

// Effectively-once with JSON predictions: a pipeline killed repeatedly
// mid-stream (no final checkpoint) and restored publishes each input
// offset's output exactly once; the effectively-once scan reads the JSON
// predictions in the output's tail. One restart switches to msgpack
// output and the next back to JSON (a change of --output-format): the
// scan reads both. The predictions equal an uninterrupted run's and the
// final models are bit-identical to it.
func TestJSONOutputEffectivelyOnceAfterKills(t *testing.T) {
	msgs := asJSON(t, withGarbage(genEvents(3000, 41, "jk")))
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 2, nil)
	produced := make(chan struct{})
	go func() { // events keep arriving while the instances are killed
		defer close(produced)
		w := e.Writer(input)
		defer w.Close()
		for i := 0; i < len(msgs); i += 100 {
			if err := w.WriteMessages(context.Background(), msgs[i:i+100]...); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.InputFormat, cfg.OutputFormat = FormatJSON, FormatJSON
	cfg.CheckpointEvery = 170
	formats := []string{FormatJSON, FormatJSON, FormatMsgpack, FormatJSON, FormatJSON}
	suppressed := 0.0
	for i, f := range formats {
		cfg.OutputFormat = f
		r := start(t, cfg)
		at := float64(30 + 10*i)
		waitFor(t, 90*time.Second, fmt.Sprintf("%v predictions", at), func() bool {
			return r.p.m.predictionsCount() >= at
		})
		r.kill(t)
		suppressed += counterValue(r.p.dm.suppressed.WithLabelValues("restore"))
		if d := counterValue(r.p.dm.duplicates.WithLabelValues("predictions")); d != 0 {
			t.Fatalf("%v duplicates detected", d)
		}
	}
	select {
	case <-produced:
		t.Fatal("the events were all produced before the last kill: the test is too slow to test kills mid-stream")
	default:
	}
	<-produced
	ends := endOffsets(t, e, input)
	cfg.OutputFormat = FormatJSON
	r := start(t, cfg)
	waitFor(t, 90*time.Second, "the last run to catch up", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	suppressed += counterValue(r.p.dm.suppressed.WithLabelValues("restore"))
	if suppressed == 0 {
		t.Fatal("no output was suppressed after the kills: they did not hit between checkpoints")
	}

	// Exactly one output record per input offset, across both topics.
	preds, nJSON := anyPredictions(t, e, cfg.Output)
	count := map[[2]int64]int{}
	for k := range preds {
		count[k]++
	}
	dlq := 0
	for _, d := range e.ReadAll(t, cfg.DeadLetter) {
		f := strings.Split(dlqHeaders(d)[HeaderSource], "/")
		p, _ := strconv.Atoi(f[len(f)-2])
		o, _ := strconv.ParseInt(f[len(f)-1], 10, 64)
		count[[2]int64{int64(p), o}]++
		dlq++
	}
	for p, end := range ends {
		for o := int64(0); o < end; o++ {
			if n := count[[2]int64{int64(p), o}]; n != 1 {
				t.Fatalf("input partition %d offset %d: %d output records, want exactly 1", p, o, n)
			}
		}
	}
	if dlq == 0 || nJSON == 0 || nJSON == len(preds) {
		t.Fatalf("%d dead letters, %d JSON predictions of %d: want some dead letters and both formats", dlq, nJSON, len(preds))
	}

	// The same values and models as an uninterrupted msgpack run.
	ref := testConfig(e, input, e.Name("ref"), e.Name("ref-preds"))
	ref.InputFormat = FormatJSON
	rr := start(t, ref)
	waitFor(t, 90*time.Second, "the reference run", func() bool { return caughtUp(ends, rr) })
	if err := rr.shutdown(t); err != nil {
		t.Fatal(err)
	}
	refPreds, _ := anyPredictions(t, e, ref.Output)
	samePredictions(t, refPreds, preds, input, input)
	refStates, _ := checkpointStates(t, e, ref, 2)
	states, _ := checkpointStates(t, e, cfg, 2)
	for p := 0; p < 2; p++ {
		for m := range testModels {
			if !bytes.Equal(states[p][m], refStates[p][m]) {
				t.Fatalf("partition %d model %s: final state differs from the uninterrupted run's", p, testModels[m].Name)
			}
		}
	}
	t.Logf("%d kills: %d predictions (%d JSON), %d dead letters; %v recomputed without publishing", len(formats), len(preds), nJSON, dlq, suppressed)
}

// The formats are validated at start with a message that says what to use.
func TestFormatValidation(t *testing.T) {
	for _, tc := range []struct {
		in, out, want string
	}{
		{"avro", "", `input format "avro": use msgpack or json`},
		{"", "JSON", `output format "JSON": use msgpack or json`},
	} {
		cfg := Config{Brokers: []string{"b:9092"}, Input: "events", Dim: 2, Models: testModels, InputFormat: tc.in, OutputFormat: tc.out}
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("in %q out %q: got %v, want %q", tc.in, tc.out, err, tc.want)
		}
	}
	cfg := Config{Brokers: []string{"b:9092"}, Input: "events", Dim: 2, Models: testModels}
	if err := cfg.Validate(); err != nil || cfg.InputFormat != FormatMsgpack || cfg.OutputFormat != FormatMsgpack {
		t.Errorf("defaults: %v, %q, %q", err, cfg.InputFormat, cfg.OutputFormat)
	}
	cfg.InputFormat, cfg.OutputFormat = FormatJSON, FormatJSON
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
}

// BenchmarkPipelineFormats: the pipeline's throughput with msgpack and with
// JSON records (events in, predictions out) for a 30-float dense event,
// with no model (pass-through: the infrastructure and codec cost alone)
// and with FOGD (B = 100). It reports events per second of the processing
// window and per CPU-second of the whole process (embedded broker
// included), the one that other work disturbs least. Run with
//
//	go test -run xxx -bench PipelineFormats -benchtime 1x ./consumer/
//
// OKSTREAM_BENCH_EVENTS sets the number of events (default 100,000).
func BenchmarkPipelineFormats(b *testing.B) {
	const dim = 30
	msgs := benchEvents(100000, dim)
	jsonMsgs := asJSON(b, msgs)
	for _, m := range []struct {
		name   string
		models []Model
	}{{"passthrough", nil}, {"fogd", []Model{{Name: "fogd", Spec: "fogd:sigma=4,budget=100"}}}} {
		for _, format := range []string{FormatMsgpack, FormatJSON} {
			b.Run(m.name+"/"+format, func(b *testing.B) {
				in := msgs
				if format == FormatJSON {
					in = jsonMsgs
				}
				var sum benchRate
				for i := 0; i < b.N; i++ {
					_, cfg, ends := benchSetup(b, in, dim, m.models)
					cfg.InputFormat, cfg.OutputFormat = format, format
					p := mustNew(b, cfg)
					r := startPipeline(b, p)
					for !allReady(p, len(ends)) {
						time.Sleep(time.Millisecond)
					}
					cpu0, start, first := cpuTime(), time.Now(), processed(p)
					for !caughtUp(ends, r) {
						time.Sleep(5 * time.Millisecond)
					}
					end, cpu := time.Now(), cpuTime()-cpu0
					if err := r.shutdown(b); err != nil {
						b.Fatal(err)
					}
					n := float64(int64(len(in)) - first)
					sum.steady += n / end.Sub(start).Seconds()
					sum.perCPU += n / cpu.Seconds()
				}
				b.ReportMetric(sum.steady/float64(b.N), "events/s")
				b.ReportMetric(sum.perCPU/float64(b.N), "events/cpu-s")
				b.ReportMetric(float64(len(in[0].Value)), "bytes/event")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
