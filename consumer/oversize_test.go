package consumer

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kmsg"

	"okstream/codec"
	"okstream/internal/kafkatest"
)

// eventOfSize returns a valid event record of exactly size bytes whose dense
// features are far too many for testDim (so it is dead-lettered).
func eventOfSize(t *testing.T, size int) []byte {
	t.Helper()
	n := (size - 64) / 9
	for dn := 0; dn < 4; dn++ {
		for idLen := 0; idLen < 300; idLen++ {
			x := make([]float64, n-dn)
			for i := range x {
				x[i] = float64(i%7) / 8
			}
			b, err := codec.AppendEvent(nil, &codec.Event{Version: codec.EventVersion, ID: strings.Repeat("i", idLen), X: x, Y: 1, HasY: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(b) == size {
				return b
			}
		}
	}
	t.Fatalf("no event of exactly %d bytes", size)
	return nil
}

// bigWriter writes records of up to 16 MiB (the test input topic's limit).
func bigWriter(e *kafkatest.Env, topic string) *kafka.Writer {
	w := e.Writer(topic)
	w.BatchBytes = 16 << 20
	w.BatchSize = 50
	return w
}

// dlqHeaders returns a dead letter's headers as a map.
func dlqHeaders(r kafkatest.Record) map[string]string {
	h := map[string]string{}
	for _, x := range r.Headers {
		h[x.Key] = string(x.Value)
	}
	return h
}

// peakHeap samples the heap in use until stop is called and returns the
// largest value seen.
func peakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak.Load() }
}

// heapNow returns the heap in use after a collection, and the bytes
// allocated so far.
func heapNow() (inuse, allocated uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse, ms.TotalAlloc
}

// special is a record placed between valid events, and the dead letter it
// must produce.
type special struct {
	key, value []byte
	reason     string
	truncated  bool // the dead letter carries a prefix of key and value
	reference  bool // the dead letter carries neither (written again after a refusal)
}

// interleave puts specials[k] after the valid event every*k + every/2 and
// returns the records and the specials by input offset (of a new topic).
func interleave(good []kafka.Message, every int, specials ...special) ([]kafka.Message, map[int64]special) {
	var msgs []kafka.Message
	at := map[int64]special{}
	for i, g := range good {
		msgs = append(msgs, g)
		if k := i / every; i%every == every/2 && k < len(specials) {
			at[int64(len(msgs))] = specials[k]
			msgs = append(msgs, kafka.Message{Key: specials[k].key, Value: specials[k].value})
		}
	}
	return msgs, at
}

// smallEvent is a valid event without key.
func smallEvent() []byte {
	b, _ := codec.AppendEvent(nil, &codec.Event{Version: 1, X: []float64{0.1, 0.2, 0.3, 0.4, 0.5}, Y: 1, HasY: true})
	return b
}

func notMsgpack(n int) []byte { return bytes.Repeat([]byte{0xc1}, n) }

// flow runs a pipeline over the input until it has processed every record,
// shuts it down, checks that each of the nGood valid events has its
// prediction, and returns the pipeline and the dead letters.
func flow(t *testing.T, e *kafkatest.Env, cfg Config, nGood int) (*running, []kafkatest.Record) {
	t.Helper()
	ends := endOffsets(t, e, cfg.Input)
	r := start(t, cfg)
	waitFor(t, 2*time.Minute, "the partitions to flow past every special record", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if n := len(predictionsByOffset(t, e, cfg.Output)); n != nGood {
		t.Fatalf("%d predictions, want %d (one per valid event)", n, nGood)
	}
	return r, e.ReadAll(t, cfg.DeadLetter)
}

// checkDeadLetters checks that the dead letters are those of the special
// records, each with its reason, a detail, its source, at most limit bytes of
// key and value, a prefix of the record's key and value, and the truncation
// headers when (and only when) it was cut.
func checkDeadLetters(t *testing.T, dl []kafkatest.Record, input string, want map[int64]special, limit int) {
	t.Helper()
	if len(dl) != len(want) {
		t.Fatalf("%d dead letters, want %d", len(dl), len(want))
	}
	for _, d := range dl {
		h := dlqHeaders(d)
		off, err := strconv.ParseInt(strings.TrimPrefix(h[HeaderSource], input+"/0/"), 10, 64)
		s, ok := want[off]
		if err != nil || !ok {
			t.Fatalf("dead letter with source %q: not one of the special records", h[HeaderSource])
		}
		if h[HeaderReason] != s.reason || h[HeaderDetail] == "" {
			t.Fatalf("offset %d: reason %q (detail %q), want %s", off, h[HeaderReason], h[HeaderDetail], s.reason)
		}
		n := len(d.Key) + len(d.Value)
		switch {
		case n > limit:
			t.Fatalf("offset %d: dead letter copies %d bytes, over the limit %d", off, n, limit)
		case !bytes.HasPrefix(s.value, d.Value) || !bytes.HasPrefix(s.key, d.Key):
			t.Fatalf("offset %d: dead letter's key or value is not a prefix of the record's", off)
		case !s.truncated && !s.reference:
			if !bytes.Equal(d.Value, s.value) || !bytes.Equal(d.Key, s.key) || h[HeaderTruncated] != "" {
				t.Fatalf("offset %d: a %d-byte record was not copied whole (headers %v)", off, len(s.key)+len(s.value), h)
			}
		case h[HeaderTruncated] != "true" || h[HeaderKeyBytes] != strconv.Itoa(len(s.key)):
			t.Fatalf("offset %d: headers %v, want truncated with the original key size %d", off, h, len(s.key))
		case s.reference && n != 0:
			t.Fatalf("offset %d: want a reference-only dead letter, got %d bytes", off, n)
		case s.truncated && (len(d.Key) == 0 || len(d.Value) == 0 || h[HeaderValueBytes] != strconv.Itoa(len(s.value))):
			t.Fatalf("offset %d: truncated dead letter: key %d, value %d bytes, headers %v; want prefixes of both and the value size %d", off, len(d.Key), len(d.Value), h, len(s.value))
		}
	}
}

// Size classes: records of 400 kB (under the dead-letter limit), 700 kB,
// 1,000,000 bytes, 1 MiB and 10 MiB (over it), and one whose 1,000,000-byte
// key makes its prediction record too large for the output writer, between
// valid events on one partition of a topic that accepts 16 MiB records. The
// partition keeps flowing (every valid event has its prediction), every
// refused record is in the dead-letter topic with its reason, a prefix of its
// bytes and the truncation headers, no dead letter exceeds the limit, and the
// heap stays within a bound of a few times the largest record.
func TestRecordSizeClasses(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, map[string]string{"max.message.bytes": strconv.Itoa(16 << 20)})
	good := genEvents(350, 11, "s")
	oneMB := eventOfSize(t, 1000000)
	oneMBReason := string(codec.ReasonOf(codec.NewDecoder(codec.Limits{Dim: testDim, MaxBytes: 1 << 20}).DecodeEvent(oneMB, new(codec.Event))))
	msgs, want := interleave(good, 50,
		special{[]byte("k-1MB"), oneMB, oneMBReason, true, false},
		special{[]byte("k-1MiB"), notMsgpack(1 << 20), string(codec.ReasonNotMsgpack), true, false},
		special{[]byte("k-10MiB"), notMsgpack(10 << 20), string(codec.ReasonOversized), true, false},
		special{bytes.Repeat([]byte("K"), 1000000), smallEvent(), reasonPredictionTooLarge, true, false},
		special{[]byte("k-700kB"), notMsgpack(700000), string(codec.ReasonNotMsgpack), true, false},
		special{[]byte("k-400kB"), notMsgpack(400000), string(codec.ReasonNotMsgpack), false, false})
	w := bigWriter(e, input)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("producing the records: %v", err)
	}
	cancel()
	w.Close()
	msgs, oneMB = nil, nil

	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	base, alloc0 := heapNow()
	stop := peakHeap()
	r, dl := flow(t, e, cfg, len(good))
	peak := stop()
	_, alloc1 := heapNow()

	// Memory: the pipeline holds a bounded number of fetches and units
	// (README "Dead letters"); with the embedded broker the broker's copies
	// are in this heap too.
	grew := int64(peak) - int64(base)
	bound := int64(12 * (10 << 20))
	if e.Real {
		bound = 8 * (10 << 20)
	}
	t.Logf("heap in use: %d MiB before, peak %d MiB (grew %d MiB, bound %d MiB); allocated %d MiB in all",
		base>>20, peak>>20, grew>>20, bound>>20, (alloc1-alloc0)>>20)
	if grew > bound {
		t.Fatalf("heap grew by %d MiB while processing, over the bound of %d MiB", grew>>20, bound>>20)
	}
	// Every large record is read, copied and cut a bounded number of
	// times (about 14 MiB of input in all): no retry loop re-reads or
	// re-sends them.
	if total := int64(alloc1 - alloc0); total > 2*bound {
		t.Fatalf("%d MiB allocated while processing 14 MiB of input, over %d MiB", total>>20, 2*bound>>20)
	}
	checkDeadLetters(t, dl, input, want, NewConfig().DeadLetterMaxBytes)
	body := scrape(t, r.p)
	for _, reason := range []string{reasonPredictionTooLarge, string(codec.ReasonOversized)} {
		if !strings.Contains(body, `okstream_dead_letters_total{reason="`+reason+`"} 1`) {
			t.Fatalf("dead-letter metric for %s missing:\n%s", reason, grep(body, "dead_letters"))
		}
	}
	if writeErrored(body) {
		t.Fatalf("writes failed (nothing should have been refused):\n%s", grep(body, "write_errors"))
	}
}

// Topic limits: output and dead-letter topics created with a small
// max.message.bytes lower the writers' limits at start. A prediction that
// would exceed the output topic's limit is dead-lettered, and dead letters
// are cut to fit the dead-letter topic, so the broker never refuses a record.
func TestTopicLimitsLowerRecordLimits(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	const topicMax = 20000
	e.CreateTopic(t, cfg.Output, 1, map[string]string{"max.message.bytes": strconv.Itoa(topicMax)})
	e.CreateTopic(t, cfg.DeadLetter, 1, map[string]string{"max.message.bytes": strconv.Itoa(topicMax)})
	good := genEvents(200, 12, "l")
	msgs, want := interleave(good, 100,
		special{bytes.Repeat([]byte("K"), 30000), smallEvent(), reasonPredictionTooLarge, true, false},
		special{[]byte("big"), notMsgpack(100000), string(codec.ReasonNotMsgpack), true, false})
	e.Produce(t, input, msgs...)
	r, dl := flow(t, e, cfg, len(good))
	checkDeadLetters(t, dl, input, want, topicMax-recordHeadroom-recordFraming-deadLetterHeaderRoom)
	if body := scrape(t, r.p); writeErrored(body) {
		t.Fatalf("the broker refused writes:\n%s", grep(body, "write_errors"))
	}
}

// refuseProduce makes the embedded broker answer produce requests to topic
// with the error code while active() and, if match is set, the request's
// raw records satisfy it.
func refuseProduce(e *kafkatest.Env, topic string, code int16, active func() bool, match func([]byte) bool) {
	e.Cluster.ControlKey(int16(kmsg.Produce), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		e.Cluster.KeepControl()
		req := kreq.(*kmsg.ProduceRequest)
		hit := false
		for _, tp := range req.Topics {
			for _, p := range tp.Partitions {
				hit = hit || tp.Topic == topic && (match == nil || match(p.Records))
			}
		}
		if !hit || !active() {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		resp.SetVersion(req.GetVersion())
		for _, tp := range req.Topics {
			rt := kmsg.NewProduceResponseTopic()
			rt.Topic = tp.Topic
			for _, p := range tp.Partitions {
				rp := kmsg.NewProduceResponseTopicPartition()
				rp.Partition = p.Partition
				rp.ErrorCode = code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil, true
	})
}

func always() bool { return true }

// faultyBroker returns the embedded broker (the test is skipped against a
// real one: it injects faults) with an input topic of the given partitions,
// and a pipeline config for it.
func faultyBroker(t *testing.T, partitions int) (*kafkatest.Env, Config) {
	t.Helper()
	e := kafkatest.New(t)
	if e.Real {
		t.Skip("injects broker faults: needs the embedded broker")
	}
	input := e.Name("events")
	e.CreateTopic(t, input, partitions, nil)
	return e, testConfig(e, input, e.Name("g"), e.Name("preds"))
}

// httpGet returns the status and body of a GET of path.
func httpGet(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Records the broker refuses for good are not retried forever: a refused
// prediction becomes a dead letter (prediction_refused); a refused dead
// letter is written again without key and value; the records that shared
// the refused batch are written; the partition keeps flowing.
func TestRefusedRecordsAreReplaced(t *testing.T) {
	e, cfg := faultyBroker(t, 1)
	input := cfg.Input
	marker := []byte("REFUSE-ME")
	has := func(b []byte) bool { return bytes.Contains(b, marker) }
	refuseProduce(e, cfg.Output, int16(kafka.MessageSizeTooLarge), always, has)
	refuseProduce(e, cfg.DeadLetter, int16(kafka.InvalidRecord), always, has)
	good := genEvents(300, 13, "r")
	// Both records carry the marker: the first one's prediction is
	// refused, then its dead letter (which holds the prediction record);
	// the second one's dead letter is refused. Both are written again as
	// references.
	msgs, want := interleave(good, 120,
		special{[]byte("REFUSE-ME-1"), smallEvent(), reasonPredictionRefused, false, true},
		special{[]byte("REFUSE-ME-2"), []byte("\xc1 bad"), string(codec.ReasonNotMsgpack), false, true})
	e.Produce(t, input, msgs...)
	r, dl := flow(t, e, cfg, len(good)) // the refused records' batch-mates are written
	checkDeadLetters(t, dl, input, want, 0)
	body := scrape(t, r.p)
	if !strings.Contains(body, `okstream_dead_letters_total{reason="prediction_refused"} 1`) || strings.Contains(body, `okstream_dead_letters_dropped_total{`) {
		t.Fatalf("want one prediction_refused dead letter and none dropped:\n%s", grep(body, "dead_letters"))
	}
}

// A dead letter the broker refuses even without key and value is dropped,
// logged and counted; it never holds up the partition.
func TestRefusedDeadLettersAreDropped(t *testing.T) {
	e, cfg := faultyBroker(t, 1)
	input := cfg.Input
	refuseProduce(e, cfg.DeadLetter, int16(kafka.InvalidRecord), always, nil)
	poison := special{[]byte("poison"), []byte("\xc1 bad"), string(codec.ReasonNotMsgpack), false, false}
	good := genEvents(300, 14, "x")
	msgs, _ := interleave(good, 100, poison, poison, poison)
	e.Produce(t, input, msgs...)
	r, dl := flow(t, e, cfg, len(good))
	if len(dl) != 0 {
		t.Fatalf("%d dead letters written through a broker that refuses them all", len(dl))
	}
	if body := scrape(t, r.p); !strings.Contains(body, `okstream_dead_letters_dropped_total{reason="not_msgpack"} 3`) {
		t.Fatalf("dropped dead letters not counted:\n%s", grep(body, "dead_letters"))
	}
}

// A partition whose output cannot be written (a transient error that does
// not go away) is retried, and once that lasts longer than StuckAfter it is
// visible: /readyz answers 503 naming the partition and
// okstream_partition_stuck is 1. When the broker recovers, everything is
// written (nothing was skipped) and the partition is ready again.
func TestStuckPartitionIsVisible(t *testing.T) {
	e, cfg := faultyBroker(t, 2)
	input := cfg.Input
	cfg.StuckAfter = time.Second
	var failing atomic.Bool
	failing.Store(true)
	refuseProduce(e, cfg.Output, int16(kafka.NotEnoughReplicas), failing.Load, nil)
	e.Produce(t, input, genEvents(400, 15, "t")...)
	ends := endOffsets(t, e, input)
	r := start(t, cfg)
	srv := httptest.NewServer(r.p.Handler())
	defer srv.Close()
	get := func(path string) (int, string) { return httpGet(t, srv, path) }
	waitFor(t, time.Minute, "/readyz to report the stuck partitions", func() bool {
		code, body := get("/readyz")
		return code == 503 && strings.Contains(body, "partition 0 stuck: output unacknowledged") && strings.Contains(body, "partition 1 stuck")
	})
	_, body := get("/readyz")
	t.Logf("/readyz: %s", strings.TrimSpace(body))
	if _, m := get("/metrics"); !strings.Contains(m, `okstream_partition_stuck{partition="0",stage="write"} 1`) ||
		!strings.Contains(m, `okstream_partition_stuck{partition="0",stage="fetch"} 0`) {
		t.Fatalf("stuck gauge not set:\n%s", grep(m, "partition_st"))
	}
	// The error shows once kafka-go's own retries of the write give up.
	waitFor(t, time.Minute, "Status to report the stall with its error", func() bool {
		st, _ := r.p.Status()
		return len(st) > 0 && len(st[0].Stuck) == 1 && st[0].Stuck[0].Stage == "write" && strings.Contains(st[0].Stuck[0].Err, "Not Enough Replicas")
	})
	t0 := time.Now()
	failing.Store(false)
	waitFor(t, time.Minute, "the partitions to catch up once the broker accepts writes", func() bool { return caughtUp(ends, r) && r.p.Ready() })
	t.Logf("caught up %s after the broker recovered", time.Since(t0).Round(time.Millisecond))
	if _, m := get("/metrics"); !strings.Contains(m, `okstream_partition_stuck{partition="0",stage="write"} 0`) {
		t.Fatalf("stuck gauge not cleared:\n%s", grep(m, "partition_st"))
	}

	// Fetches that keep failing are a stall too.
	var fetchFailing atomic.Bool
	fetchFailing.Store(true)
	e.Cluster.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		e.Cluster.KeepControl()
		req := kreq.(*kmsg.FetchRequest)
		if !fetchFailing.Load() || len(req.Topics) != 1 || req.Topics[0].Topic != input {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		resp.SetVersion(req.GetVersion())
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic, rt.TopicID = req.Topics[0].Topic, req.Topics[0].TopicID
		for _, p := range req.Topics[0].Partitions {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, int16(kafka.KafkaStorageError)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
		return resp, nil, true
	})
	waitFor(t, time.Minute, "/readyz to report failing fetches", func() bool {
		code, body := get("/readyz")
		return code == 503 && strings.Contains(body, "partition 0 stuck: fetches failing") && strings.Contains(body, "partition 1 stuck: fetches failing") && strings.Contains(body, "Storage")
	})
	if _, m := get("/metrics"); !strings.Contains(m, `okstream_partition_stuck{partition="1",stage="fetch"} 1`) {
		t.Fatalf("stuck gauge not set for the fetch stage:\n%s", grep(m, "partition_st"))
	}
	fetchFailing.Store(false)
	waitFor(t, time.Minute, "ready again once fetches succeed", r.p.Ready)
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if n := len(predictionsByOffset(t, e, cfg.Output)); n != 400 {
		t.Fatalf("%d predictions after the outage, want 400", n)
	}
}

// setMaxMessageBytes changes topics' max.message.bytes on the broker.
func setMaxMessageBytes(t *testing.T, e *kafkatest.Env, n int, topics ...string) {
	t.Helper()
	req := &kafka.IncrementalAlterConfigsRequest{}
	for _, topic := range topics {
		req.Resources = append(req.Resources, kafka.IncrementalAlterConfigsRequestResource{
			ResourceType: kafka.ResourceTypeTopic, ResourceName: topic,
			Configs: []kafka.IncrementalAlterConfigsRequestConfig{{Name: "max.message.bytes", Value: strconv.Itoa(n), ConfigOperation: kafka.ConfigOperationSet}},
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := e.Client.IncrementalAlterConfigs(ctx, req)
	if err != nil {
		t.Fatalf("altering max.message.bytes: %v", err)
	}
	for _, r := range resp.Resources {
		if r.Error != nil {
			t.Fatalf("altering max.message.bytes of %s: %v", r.ResourceName, r.Error)
		}
	}
}

// A broker that refuses a prediction record for good (here: the output
// topic's max.message.bytes was lowered while the pipeline runs, below what
// it read at start) gets neither an endless retry nor a stalled partition:
// the refused batch is written again record by record, the one record that
// cannot be written becomes a prediction_refused dead letter carrying the
// prediction record, and every other prediction is written. Real broker
// refusals, on the embedded and on the real Kafka.
func TestBrokerRefusalWhileRunning(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	e.CreateTopic(t, cfg.Output, 1, nil)
	probe := e.Name("probe")
	e.CreateTopic(t, probe, 1, nil)
	first := genEvents(100, 16, "p")
	e.Produce(t, input, first...)
	ends := endOffsets(t, e, input)
	r := start(t, cfg)
	waitFor(t, time.Minute, "the first events", func() bool { return caughtUp(ends, r) })

	const topicMax = 2500
	setMaxMessageBytes(t, e, topicMax, cfg.Output, probe)
	// Wait until the broker enforces the new limit (on the probe topic,
	// changed in the same request).
	pw := e.Writer(probe)
	defer pw.Close()
	waitFor(t, time.Minute, "the broker to enforce the lowered limit", func() bool {
		return refused(pw.WriteMessages(context.Background(), kafka.Message{Value: make([]byte, 2*topicMax)}))
	})

	bigKey := bytes.Repeat([]byte("K"), 2*topicMax)
	second := genEvents(40, 17, "q")
	msgs, want := interleave(second, 40, special{key: bigKey, value: smallEvent(), reason: reasonPredictionRefused})
	e.Produce(t, input, msgs...)
	ends = endOffsets(t, e, input)
	waitFor(t, time.Minute, "the partition to flow past the refused prediction", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if n := len(predictionsByOffset(t, e, cfg.Output)); n != len(first)+len(second) {
		t.Fatalf("%d predictions, want %d", n, len(first)+len(second))
	}
	dl := e.ReadAll(t, cfg.DeadLetter)
	if len(dl) != 1 {
		t.Fatalf("%d dead letters, want 1", len(dl))
	}
	var off int64
	for o := range want {
		off = o + int64(len(first))
	}
	h := dlqHeaders(dl[0])
	pr, err := codec.DecodePrediction(dl[0].Value)
	if h[HeaderReason] != reasonPredictionRefused || h[HeaderSource] != input+"/0/"+strconv.FormatInt(off, 10) ||
		!strings.Contains(h[HeaderDetail], "Message Size Too Large") || !bytes.Equal(dl[0].Key, bigKey) ||
		err != nil || pr.Offset != off || pr.Key != string(bigKey) {
		t.Fatalf("dead letter: headers %v, key %d bytes, prediction %+v (%v); want the refused prediction of offset %d", h, len(dl[0].Key), pr, err, off)
	}
}

// writeErrored reports whether a scrape shows a write error (the series
// exist at 0 from the start).
func writeErrored(body string) bool {
	return regexp.MustCompile(`(?m)^okstream_write_errors_total\{role="[a-z_]+"\} [^0]`).MatchString(body)
}
