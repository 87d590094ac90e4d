package consumer

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/segmentio/kafka-go"

	"okstream/codec"
	"okstream/features"
	"okstream/internal/kafkatest"
	"okstream/learner/rng"
)

// namedDim is the named-feature tests' --dim: the coordinates the stream
// needs (a, b, device×3, age, age=<missing>, vip, gone, gone=<missing>,
// late×2, noise, noise=<missing>) with headroom.
const namedDim = 20

// namedEvent draws event i of n of a named-feature stream: the label is +1
// when a + b²/2 + 0.8·[device = ios] − 0.8·[device = web] + 0.5·vip > 0.4,
// with a and b uniform on [−1, 1] and the string "device" and the bool
// "vip" uniform. It also carries an irrelevant "age" that is nil one time
// in five, a "noise" that is nil one time in ten, a field "gone" removed half way and a string
// field "late" added half way.
func namedEvent(src *rng.Source, i, n int) codec.Event {
	a, b := 2*src.Float64()-1, 2*src.Float64()-1
	dev, vip := src.IntN(3), src.IntN(2)
	y := -1.0
	if a+0.5*b*b+[...]float64{0.8, 0, -0.8}[dev]+0.5*float64(vip) > 0.4 {
		y = 1
	}
	num := func(name string, v float64) codec.Field {
		return codec.Field{Name: name, Kind: codec.FieldNumber, Num: v}
	}
	str := func(name, v string) codec.Field { return codec.Field{Name: name, Kind: codec.FieldString, Str: v} }
	f := []codec.Field{num("a", a), num("b", b), str("device", [...]string{"ios", "android", "web"}[dev])}
	if src.IntN(5) == 0 {
		f = append(f, codec.Field{Name: "age", Kind: codec.FieldMissing})
	} else {
		f = append(f, num("age", float64(20+src.IntN(40))))
	}
	f = append(f, codec.Field{Name: "vip", Kind: codec.FieldBool, Num: float64(vip)})
	if i < n/2 {
		f = append(f, num("gone", src.Float64()))
	} else {
		f = append(f, str("late", [...]string{"x", "y"}[src.IntN(2)]))
	}
	switch {
	case src.IntN(10) == 0:
		f = append(f, codec.Field{Name: "noise", Kind: codec.FieldMissing})
	default:
		f = append(f, num("noise", src.Float64()))
	}
	return codec.Event{Version: codec.NamedEventVersion, F: f, Y: y, HasY: true}
}

// namedModels: the default model beside an online linear one.
var namedModels = []Model{{Name: "auto", Spec: "auto"}, {Name: "linear", Spec: "linear"}}

// namedMessages makes n named-feature events (every 7th unlabelled), keyed
// to spread over partitions.
func namedMessages(n int, seed uint64) []kafka.Message {
	src := rng.New(seed)
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		ev := namedEvent(src, i, n)
		ev.ID = fmt.Sprintf("n%d", i)
		ev.Key = fmt.Sprintf("user-%d", src.IntN(50))
		ev.HasY = i%7 != 3
		b, err := codec.AppendEvent(nil, &ev)
		if err != nil {
			panic(err)
		}
		msgs[i] = kafka.Message{Key: []byte(ev.Key), Value: b}
	}
	return msgs
}

// A named-feature stream (numbers, strings, bools, nils, a field
// added half way and one removed) through okstream run: nothing is
// dead-lettered, the models learn well above the class prior, the metrics
// show the encoder; a run killed mid-stream (it resumes from an earlier
// checkpoint and reprocesses) publishes byte-identical records and ends in
// byte-identical checkpoints (the feature dictionary included); and the
// same stream as JSON (--input-format json) gives bit-identical scores and
// checkpointed models and dictionary.
func TestNamedFeaturesPipeline(t *testing.T) {
	e := kafkatest.New(t)
	input, inputJSON := e.Name("events"), e.Name("events-json")
	e.CreateTopic(t, input, 2, nil)
	e.CreateTopic(t, inputJSON, 2, nil)
	const n = 1400
	msgs := namedMessages(n, 39)
	jmsgs := asJSON(t, msgs)
	for i := range jmsgs {
		if bytes.Equal(jmsgs[i].Value, msgs[i].Value) || !bytes.Contains(jmsgs[i].Value, []byte(`"f"`)) {
			t.Fatalf("event %d not converted to JSON: %q", i, jmsgs[i].Value)
		}
	}
	e.Produce(t, input, msgs[:n/2]...)
	e.Produce(t, inputJSON, jmsgs...)

	conf := func(in, name string) Config {
		c := testConfig(e, in, e.Name("g-"+name), e.Name("preds-"+name))
		c.Models = namedModels
		c.Dim = namedDim
		return c
	}
	ref, killed, js := conf(input, "ref"), conf(input, "kill"), conf(inputJSON, "json")
	js.InputFormat = FormatJSON

	a, b, c := start(t, ref), start(t, killed), start(t, js)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "the first half", func() bool { return caughtUp(ends, a) && caughtUp(ends, b) })
	b.kill(t) // no final checkpoint: b resumes from one before n/2 and reprocesses
	if _, next := checkpointNext(t, e, killed, 2); next[0]+next[1] >= n/2 {
		t.Fatalf("checkpoints at %v after the kill: nothing to reprocess", next)
	}
	e.Produce(t, input, msgs[n/2:]...)
	b = start(t, killed)
	ends = endOffsets(t, e, input)
	jends := endOffsets(t, e, inputJSON)
	waitFor(t, 60*time.Second, "the second half", func() bool {
		return caughtUp(ends, a) && caughtUp(ends, b) && caughtUp(jends, c)
	})
	for _, r := range []*running{a, b, c} {
		if err := r.shutdown(t); err != nil {
			t.Fatal(err)
		}
	}
	if s := counterValue(b.p.dm.suppressed.WithLabelValues("restore")); s == 0 {
		t.Fatal("the restarted run reprocessed nothing: the kill did not fall between checkpoints")
	}
	for _, cfg := range []Config{ref, killed, js} {
		if d := deadLetters(t, e, cfg.Output+".dlq"); len(d) > 0 {
			t.Fatalf("%s: %d dead letters, first %s", cfg.Input, len(d), d[0])
		}
	}

	pa, pb := predictionsByOffset(t, e, ref.Output), predictionsByOffset(t, e, killed.Output)
	pj, _ := anyPredictions(t, e, js.Output)
	if len(pa) != n || len(pb) != n || len(pj) != n {
		t.Fatalf("%d, %d and %d records, want %d", len(pa), len(pb), len(pj), n)
	}
	var right, rightLate [2]int
	labelled, labelledLate, pos := 0, 0, 0
	for k, rec := range pa {
		if !bytes.Equal(rec, pb[k]) {
			t.Fatalf("record %v of the killed run differs from the uninterrupted run's", k)
		}
		p, err := codec.DecodePrediction(rec)
		if err != nil {
			t.Fatal(err)
		}
		q := pj[k]
		if q.ID != p.ID || len(q.Models) != len(p.Models) {
			t.Fatalf("record %v: JSON input gives %+v, msgpack %+v", k, q, p)
		}
		for m := range p.Models {
			if !sameScore(q.Models[m].Score, p.Models[m].Score) || !sameScore(q.Models[m].Prob, p.Models[m].Prob) {
				t.Fatalf("record %v, model %d: JSON input gives %+v, msgpack %+v", k, m, q.Models[m], p.Models[m])
			}
		}
		if !p.HasY {
			continue
		}
		var i int
		fmt.Sscanf(p.ID, "n%d", &i)
		labelled++
		if i >= n/2 {
			labelledLate++
		}
		if p.Y > 0 {
			pos++
		}
		for m := range p.Models {
			if (p.Models[m].Score > 0) == (p.Y > 0) {
				right[m]++
				if i >= n/2 {
					rightLate[m]++
				}
			}
		}
	}
	prior := float64(max(pos, labelled-pos)) / float64(labelled)
	acc := func(r, l int) float64 { return float64(r) / float64(l) }
	t.Logf("prequential accuracy over %d labels: auto %.4f (%.4f over the %d after the schema change), linear %.4f (%.4f); class prior (majority rate) %.4f",
		labelled, acc(right[0], labelled), acc(rightLate[0], labelledLate), labelledLate, acc(right[1], labelled), acc(rightLate[1], labelledLate), prior)
	if acc(right[0], labelled) < prior+0.25 || acc(rightLate[0], labelledLate) < prior+0.25 {
		t.Fatal("the default model does not learn the named-feature stream")
	}

	ca, cb := multiCheckpoints(t, e, ref, 2), multiCheckpoints(t, e, killed, 2)
	cj := multiCheckpoints(t, e, js, 2)
	for p := 0; p < 2; p++ {
		if !bytes.Equal(ca[p], cb[p]) || !bytes.Equal(ca[p], cj[p]) {
			t.Fatalf("partition %d: the checkpoints of the killed run (%v) or the JSON run (%v) differ from the uninterrupted run's", p, bytes.Equal(ca[p], cb[p]), bytes.Equal(ca[p], cj[p]))
		}
		pl, err := DescribePayload(ca[p])
		if err != nil || pl.FeatureKind != "named" || pl.Features == nil {
			t.Fatalf("partition %d: %+v %v", p, pl, err)
		}
		names := strings.Join(pl.Features.Names(), " ")
		for _, want := range []string{"a", "device=web", "age=<missing>", "vip", "gone=<missing>", "late=x", "noise=<missing>"} {
			if !strings.Contains(" "+names+" ", " "+want+" ") {
				t.Fatalf("partition %d: feature names %q lack %q", p, names, want)
			}
		}
		st := pl.Features.Stats()
		if st.Dropped != 0 || st.Imputed == 0 || st.Events == 0 {
			t.Fatalf("partition %d: encoder stats %+v", p, st)
		}
	}
	if v := gaugeValue(a.p.m.featuresInUse.WithLabelValues("0")); v < 10 || v > namedDim {
		t.Fatalf("okstream_features_in_use{partition=0} = %v", v)
	}
	if v := counterValue(a.p.m.featuresImputed); v == 0 {
		t.Fatal("okstream_features_imputed_total is 0")
	}
}

// gaugeValue reads a gauge.
func gaugeValue(g prometheus.Gauge) float64 {
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		return -1
	}
	return m.GetGauge().GetValue()
}

// --missing refuse dead-letters an event with a nil value or without a
// known name (reason missing_feature); a dense event in a named partition
// is dead-lettered as feature_kind_mismatch; the rest is predicted, and
// the refused events left the dictionary as it was.
func TestNamedFeaturesRefuse(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	src := rng.New(5)
	var msgs []kafka.Message
	want := map[int]string{}
	for i := 0; i < 300; i++ {
		ev := namedEvent(src, 0, 1)
		ev.F = ev.F[:3] // a, b, device
		switch i % 50 {
		case 10:
			ev.F[0] = codec.Field{Name: "a", Kind: codec.FieldMissing}
			want[i] = features.MissingReason
		case 20:
			ev.F = ev.F[1:] // "a" absent
			want[i] = features.MissingReason
		case 30:
			ev = codec.Event{Version: codec.EventVersion, X: make([]float64, namedDim), Y: 1, HasY: true}
			want[i] = reasonFeatureKind
		}
		v, err := codec.AppendEvent(nil, &ev)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, kafka.Message{Value: v})
	}
	e.Produce(t, input, msgs...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.Models, cfg.Dim, cfg.Missing = []Model{flexModel}, namedDim, "refuse"
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "processing", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	dl := e.ReadAll(t, cfg.DeadLetter)
	if len(dl) != len(want) {
		t.Fatalf("%d dead letters, want %d", len(dl), len(want))
	}
	for _, d := range dl {
		h := dlqHeaders(d)
		var off int
		fmt.Sscanf(h[HeaderSource][strings.LastIndex(h[HeaderSource], "/")+1:], "%d", &off)
		if h[HeaderReason] != want[off] || h[HeaderDetail] == "" {
			t.Fatalf("dead letter of offset %d: %v, want reason %s", off, h, want[off])
		}
	}
	if n := len(predictionsByOffset(t, e, cfg.Output)); n != 300-len(want) {
		t.Fatalf("%d predictions, want %d", n, 300-len(want))
	}
	cp := multiCheckpoints(t, e, cfg, 1)
	pl, err := DescribePayload(cp[0])
	if err != nil || pl.Features == nil {
		t.Fatal(pl, err)
	}
	if st := pl.Features.Stats(); st.Events != uint64(300-len(want)) || st.Coords != 5 || st.Imputed != 0 {
		t.Fatalf("encoder stats %+v: want %d events, 5 coordinates (a, b, device×3), nothing imputed", st, 300-len(want))
	}
}
