package consumer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
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

func heapNow() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// Size classes: records of 400 kB (under the dead-letter limit), 700 kB,
// 1,000,000 bytes, 1 MiB and 10 MiB (over it), and one whose 1,000,000-byte key
// makes its prediction record too large for the output writer, between
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
	smallEvent, _ := codec.AppendEvent(nil, &codec.Event{Version: 1, X: []float64{0.1, 0.2, 0.3, 0.4, 0.5}, Y: 1, HasY: true})
	notMsgpack := func(n int) []byte { return bytes.Repeat([]byte{0xc1}, n) }
	oneMB := eventOfSize(t, 1000000)
	oneMBReason := string(codec.ReasonOf(codec.NewDecoder(codec.Limits{Dim: testDim, MaxBytes: 1 << 20}).DecodeEvent(oneMB, new(codec.Event))))
	type special struct {
		key, value []byte
		reason     string
		truncated  bool
	}
	specials := []special{
		{[]byte("k-1MB"), oneMB, oneMBReason, true},
		{[]byte("k-1MiB"), notMsgpack(1 << 20), string(codec.ReasonNotMsgpack), true},
		{[]byte("k-10MiB"), notMsgpack(10 << 20), string(codec.ReasonOversized), true},
		{bytes.Repeat([]byte("K"), 1000000), smallEvent, reasonPredictionTooLarge, true},
		{[]byte("k-700kB"), notMsgpack(700000), string(codec.ReasonNotMsgpack), true},
		{[]byte("k-400kB"), notMsgpack(400000), string(codec.ReasonNotMsgpack), false},
	}
	var msgs []kafka.Message
	want := map[int64]special{} // by input offset (the topic is new: offsets from 0)
	for i, g := range good {
		msgs = append(msgs, g)
		if i%50 == 25 && i/50 < len(specials) {
			s := specials[i/50]
			want[int64(len(msgs))] = s
			msgs = append(msgs, kafka.Message{Key: s.key, Value: s.value})
		}
	}
	w := bigWriter(e, input)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("producing the records: %v", err)
	}
	cancel()
	w.Close()
	msgs, specials, oneMB = nil, nil, nil
	ends := endOffsets(t, e, input)

	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	base := heapNow()
	stop := peakHeap()
	r := start(t, cfg)
	waitFor(t, 2*time.Minute, "the partition to flow past every large record", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	peak := stop()
	body := scrape(t, r.p)

	// Memory: the pipeline holds a bounded number of fetches and units
	// (README "Dead letters"); with the embedded broker the broker's copies
	// are in this heap too.
	grew := int64(peak) - int64(base)
	bound := int64(12 * (10 << 20))
	if e.Real {
		bound = 8 * (10 << 20)
	}
	t.Logf("heap in use: %d MiB before, peak %d MiB (grew %d MiB, bound %d MiB)", base>>20, peak>>20, grew>>20, bound>>20)
	if grew > bound {
		t.Fatalf("heap grew by %d MiB while processing, over the bound of %d MiB", grew>>20, bound>>20)
	}

	if n := len(predictionsByOffset(t, e, cfg.Output)); n != len(good) {
		t.Fatalf("%d predictions, want %d (one per valid event)", n, len(good))
	}
	dl := e.ReadAll(t, cfg.DeadLetter)
	if len(dl) != len(want) {
		t.Fatalf("%d dead letters, want %d", len(dl), len(want))
	}
	limit := NewConfig().DeadLetterMaxBytes
	for _, d := range dl {
		h := dlqHeaders(d)
		off, err := strconv.ParseInt(strings.TrimPrefix(h[HeaderSource], input+"/0/"), 10, 64)
		s, ok := want[off]
		if err != nil || !ok {
			t.Fatalf("dead letter with source %q: not one of the refused records", h[HeaderSource])
		}
		if h[HeaderReason] != s.reason || h[HeaderDetail] == "" {
			t.Fatalf("offset %d: reason %q (detail %q), want %s", off, h[HeaderReason], h[HeaderDetail], s.reason)
		}
		if len(d.Key)+len(d.Value) > limit {
			t.Fatalf("offset %d: dead letter copies %d bytes, over the limit %d", off, len(d.Key)+len(d.Value), limit)
		}
		if !bytes.HasPrefix(s.value, d.Value) || !bytes.HasPrefix(s.key, d.Key) {
			t.Fatalf("offset %d: dead letter's key or value is not a prefix of the record's", off)
		}
		if !s.truncated {
			if !bytes.Equal(d.Value, s.value) || !bytes.Equal(d.Key, s.key) || h[HeaderTruncated] != "" {
				t.Fatalf("offset %d: a %d-byte record was not copied whole (headers %v)", off, len(s.value), h)
			}
			continue
		}
		if h[HeaderTruncated] != "true" || h[HeaderValueBytes] != strconv.Itoa(len(s.value)) || h[HeaderKeyBytes] != strconv.Itoa(len(s.key)) {
			t.Fatalf("offset %d: truncation headers %v, want truncated with the original sizes %d/%d", off, h, len(s.key), len(s.value))
		}
		if len(d.Key) == 0 || len(d.Value) == 0 {
			t.Fatalf("offset %d: truncated dead letter kept no prefix (key %d, value %d bytes)", off, len(d.Key), len(d.Value))
		}
	}
	for _, reason := range []string{reasonPredictionTooLarge, string(codec.ReasonOversized)} {
		if !strings.Contains(body, `okstream_dead_letters_total{reason="`+reason+`"} 1`) {
			t.Fatalf("dead-letter metric for %s missing:\n%s", reason, grep(body, "dead_letters"))
		}
	}
	if strings.Contains(body, `okstream_write_errors_total{role="predictions"}`) || strings.Contains(body, `okstream_write_errors_total{role="dead_letters"}`) {
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
	smallEvent, _ := codec.AppendEvent(nil, &codec.Event{Version: 1, X: []float64{0.1, 0.2, 0.3, 0.4, 0.5}, Y: 1, HasY: true})
	msgs := append([]kafka.Message{}, good[:100]...)
	msgs = append(msgs, kafka.Message{Key: bytes.Repeat([]byte("K"), 30000), Value: smallEvent}) // offset 100
	msgs = append(msgs, good[100:150]...)
	msgs = append(msgs, kafka.Message{Key: []byte("big"), Value: bytes.Repeat([]byte{0xc1}, 100000)}) // offset 151
	msgs = append(msgs, good[150:]...)
	e.Produce(t, input, msgs...)
	ends := endOffsets(t, e, input)
	r := start(t, cfg)
	waitFor(t, time.Minute, "the partition to flow", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if n := len(predictionsByOffset(t, e, cfg.Output)); n != len(good) {
		t.Fatalf("%d predictions, want %d", n, len(good))
	}
	dl := e.ReadAll(t, cfg.DeadLetter)
	if len(dl) != 2 {
		t.Fatalf("%d dead letters, want 2", len(dl))
	}
	for i, want := range []struct {
		reason string
		off    int
	}{{reasonPredictionTooLarge, 100}, {string(codec.ReasonNotMsgpack), 151}} {
		h := dlqHeaders(dl[i])
		if h[HeaderReason] != want.reason || h[HeaderSource] != fmt.Sprintf("%s/0/%d", input, want.off) || h[HeaderTruncated] != "true" {
			t.Fatalf("dead letter %d: headers %v, want reason %s, source offset %d, truncated", i, h, want.reason, want.off)
		}
		if n := len(dl[i].Key) + len(dl[i].Value); n > topicMax-recordHeadroom-recordFraming-deadLetterHeaderRoom || n == 0 {
			t.Fatalf("dead letter %d copies %d bytes: not cut to the dead-letter topic's limit", i, n)
		}
	}
	if body := scrape(t, r.p); strings.Contains(body, `okstream_write_errors_total{role=`) {
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

// Records the broker refuses for good are not retried forever: a refused
// prediction becomes a dead letter (prediction_refused); a refused dead
// letter is written again without key and value; the records that shared
// the refused batch are written; the partition keeps flowing.
func TestRefusedRecordsAreReplaced(t *testing.T) {
	e := kafkatest.New(t)
	if e.Real {
		t.Skip("needs the embedded broker to refuse chosen records")
	}
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	marker := []byte("REFUSE-ME")
	has := func(b []byte) bool { return bytes.Contains(b, marker) }
	refuseProduce(e, cfg.Output, int16(kafka.MessageSizeTooLarge), always, has)
	refuseProduce(e, cfg.DeadLetter, int16(kafka.InvalidRecord), always, has)
	good := genEvents(300, 13, "r")
	smallEvent, _ := codec.AppendEvent(nil, &codec.Event{Version: 1, X: []float64{0.1, 0.2, 0.3, 0.4, 0.5}, Y: 1, HasY: true})
	msgs := append([]kafka.Message{}, good[:120]...)
	msgs = append(msgs, kafka.Message{Key: []byte("REFUSE-ME-1"), Value: smallEvent})         // offset 120: its prediction is refused
	msgs = append(msgs, good[120:200]...)                                                     //
	msgs = append(msgs, kafka.Message{Key: []byte("REFUSE-ME-2"), Value: []byte("\xc1 bad")}) // offset 201: its dead letter is refused
	msgs = append(msgs, good[200:]...)
	e.Produce(t, input, msgs...)
	ends := endOffsets(t, e, input)
	r := start(t, cfg)
	waitFor(t, time.Minute, "the partition to flow past the refused records", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if n := len(predictionsByOffset(t, e, cfg.Output)); n != len(good) {
		t.Fatalf("%d predictions, want %d (the refused record's batch-mates must be written)", n, len(good))
	}
	dl := e.ReadAll(t, cfg.DeadLetter)
	if len(dl) != 2 {
		t.Fatalf("%d dead letters, want 2", len(dl))
	}
	for i, want := range []struct {
		reason string
		off    int
	}{{reasonPredictionRefused, 120}, {string(codec.ReasonNotMsgpack), 201}} {
		h := dlqHeaders(dl[i])
		if h[HeaderReason] != want.reason || h[HeaderSource] != fmt.Sprintf("%s/0/%d", input, want.off) {
			t.Fatalf("dead letter %d: headers %v, want reason %s for offset %d", i, h, want.reason, want.off)
		}
		// Both carried the marker, so both were refused once and written
		// again as references.
		if h[HeaderTruncated] != "true" || len(dl[i].Key)+len(dl[i].Value) != 0 || h[HeaderKeyBytes] != strconv.Itoa(len("REFUSE-ME-1")) {
			t.Fatalf("dead letter %d: want a reference-only record with the original sizes, got key %q value %d bytes headers %v", i, dl[i].Key, len(dl[i].Value), h)
		}
	}
	body := scrape(t, r.p)
	if !strings.Contains(body, `okstream_dead_letters_total{reason="prediction_refused"} 1`) || strings.Contains(body, `okstream_dead_letters_dropped_total{`) {
		t.Fatalf("want one prediction_refused dead letter and none dropped:\n%s", grep(body, "dead_letters"))
	}
}

// A dead letter the broker refuses even without key and value is dropped,
// logged and counted; it never holds up the partition.
func TestRefusedDeadLettersAreDropped(t *testing.T) {
	e := kafkatest.New(t)
	if e.Real {
		t.Skip("needs the embedded broker to refuse every dead letter")
	}
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	refuseProduce(e, cfg.DeadLetter, int16(kafka.InvalidRecord), always, nil)
	good := genEvents(300, 14, "x")
	var msgs []kafka.Message
	for i, g := range good {
		msgs = append(msgs, g)
		if i%100 == 50 {
			msgs = append(msgs, kafka.Message{Key: []byte("poison"), Value: []byte("\xc1 bad")})
		}
	}
	e.Produce(t, input, msgs...)
	ends := endOffsets(t, e, input)
	r := start(t, cfg)
	waitFor(t, time.Minute, "the partition to flow past the dropped dead letters", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if n := len(predictionsByOffset(t, e, cfg.Output)); n != len(good) {
		t.Fatalf("%d predictions, want %d", n, len(good))
	}
	if dl := e.ReadAll(t, cfg.DeadLetter); len(dl) != 0 {
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
	e := kafkatest.New(t)
	if e.Real {
		t.Skip("needs the embedded broker to fail writes")
	}
	input := e.Name("events")
	e.CreateTopic(t, input, 2, nil)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.StuckAfter = time.Second
	var failing atomic.Bool
	failing.Store(true)
	refuseProduce(e, cfg.Output, int16(kafka.NotEnoughReplicas), failing.Load, nil)
	e.Produce(t, input, genEvents(400, 15, "t")...)
	ends := endOffsets(t, e, input)
	r := start(t, cfg)
	srv := httptest.NewServer(r.p.Handler())
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
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
