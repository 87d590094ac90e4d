package consumer

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/internal/kafkatest"
	"okstream/learner"
	"okstream/share"
)

// Untrusted control records (issue 37; share_validate.go). Each test writes
// forged records to the embedded broker and checks that they are refused
// and counted, with no effect: the shared models end bit for bit where the
// simulator's do (no reset, no exit, no stall), and every offset has its
// prediction.

// fogdDelta returns a FOGD delta of the shared model's spec (a fresh copy
// after learning a few events: non-zero codes) and the offset of its 8-bit
// section (the u32 count, the scale, then the codes).
func fogdDelta(t *testing.T, cfg Config) (data []byte, codes int) {
	t.Helper()
	l, err := learner.New(cfg.Models[0].Spec, cfg.Dim)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		x := make([]float64, cfg.Dim)
		x[0], x[1] = float64(i)/5, 1-float64(i)/5
		l.Learn(x, float64(2*(i%2)-1))
	}
	d, err := l.(learner.Sharer).ShareDelta()
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n+12 <= len(d); n++ {
		if int(binary.LittleEndian.Uint32(d[len(d)-n-12:])) == n {
			return d, len(d) - n - 12
		}
	}
	t.Fatal("no 8-bit section in the delta")
	return nil, 0
}

// forged is a sync record to write and the reason it must be refused for.
type forged struct {
	what, reason string
	rec          share.Record
	sign         []byte // sign with this secret (nil: unsigned)
	badMAC       bool   // a MAC header that does not verify
}

// twoInstances starts two instances of cfg on an empty input of three
// partitions, waits until they share the partitions, writes the forged
// records to the sync topic, then the events, and returns once every event
// is processed and both have stopped cleanly.
func runForged(t *testing.T, cfg Config, e *kafkatest.Env, input string, recs func(window int64) []forged) (a, b *running, events []kafka.Message) {
	t.Helper()
	cfg.ShareMaxWait = time.Minute // longer than any rebalance: the strict schedule throughout
	a = start(t, cfg)
	b = start(t, cfg)
	waitFor(t, 60*time.Second, "two instances to share the partitions", func() bool {
		return owned(a) > 0 && owned(b) > 0 && owned(a)+owned(b) == 3
	})
	window := a.p.cfg.ShareWindow
	prefix := share.Prefix(cfg.Group, cfg.Input)
	var msgs []kafka.Message
	for _, f := range recs(window) {
		v := f.rec.Encode()
		k := []byte(share.Key(prefix, f.rec.Kind, f.rec.Partition, f.rec.Epoch, window))
		m := kafka.Message{Key: k, Value: v}
		if f.sign != nil {
			auth, err := share.NewAuth(f.sign)
			if err != nil {
				t.Fatal(err)
			}
			m.Headers = []kafka.Header{{Key: share.HeaderMAC, Value: auth.SyncMAC(nil, k, v)}}
		}
		if f.badMAC {
			m.Headers = []kafka.Header{{Key: share.HeaderMAC, Value: []byte(strings.Repeat("A", share.MACLen))}}
		}
		msgs = append(msgs, m)
	}
	e.Produce(t, cfg.ShareTopic, msgs...)
	events = labelledEvents(1500, 37)
	produceRoundRobin(t, e, input, events)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "the instances to process every event (a stall fails here)", func() bool { return caughtUp(ends, a, b) })
	for _, r := range []*running{a, b} {
		if err := r.shutdown(t); err != nil {
			t.Fatalf("an instance stopped with an error: %v", err)
		}
	}
	return a, b, events
}

// checkUnforged checks that the run ended where an unforged one does (the
// simulator, strict schedule), with every prediction, and that every
// reason was counted by the two instances together.
func checkUnforged(t *testing.T, e *kafkatest.Env, cfg Config, input string, events []kafka.Message, rs []*running, reasons []string) {
	t.Helper()
	equalsStrictSchedule(t, e, cfg, input, 3, " after forged sync records")
	if got := predictionsByOffset(t, e, cfg.Output); len(got) != len(events) {
		t.Fatalf("%d offsets have predictions, want %d", len(got), len(events))
	}
	for _, reason := range reasons {
		n := 0.0
		for _, r := range rs {
			n += counterValue(r.p.dm.rejected.WithLabelValues(controlShare, reason))
		}
		if n < 1 {
			t.Errorf("okstream_control_records_rejected_total{topic=share,reason=%s} = %v, want ≥ 1", reason, n)
		}
	}
	for _, r := range rs {
		if n := counterValue(r.p.m.modelResets.WithLabelValues("champion", "non_finite")); n != 0 {
			t.Errorf("%v non-finite resets of the shared model", n)
		}
	}
}

// Without a secret, the checks alone refuse every forged record that could
// harm, each written alone to the sync topic before the events (so that it
// is read before the real record of its slot): a delta with a NaN scale (it
// reset every shared model), truncated codes (a fatal merge error), a
// finite but huge scale (merged silently), a decision whose frontier is the
// boundary + 10^6 (its partition stalled for good), a record of a partition
// ≥ P (memory, and an epoch counted complete without a real delta), and an
// epoch far beyond what the input holds (it would push a needed record out
// of its slot).
func TestSharedForgedSyncRecordsRefused(t *testing.T) {
	for _, c := range []struct {
		name   string
		reason string
		forge  func(cfg Config, good []byte, at int, window int64) []share.Record
	}{
		{"nan_scale", share.ReasonDeltaInvalid, func(cfg Config, good []byte, at int, _ int64) []share.Record {
			d := bytes.Clone(good)
			binary.LittleEndian.PutUint64(d[at+4:], math.Float64bits(math.NaN()))
			return []share.Record{forgedDelta(cfg, 0, 0, d)}
		}},
		{"truncated_codes", share.ReasonDeltaInvalid, func(cfg Config, good []byte, _ int, _ int64) []share.Record {
			return []share.Record{forgedDelta(cfg, 1, 0, good[:len(good)-7])}
		}},
		{"huge_scale", share.ReasonDeltaInvalid, func(cfg Config, good []byte, at int, _ int64) []share.Record {
			d := bytes.Clone(good)
			binary.LittleEndian.PutUint64(d[at+4:], math.Float64bits(1e6))
			for i := at + 12; i < len(d); i++ {
				d[i] = 127
			}
			return []share.Record{forgedDelta(cfg, 2, 1, d)}
		}},
		{"frontier_boundary_plus_1e6", share.ReasonFrontierRange, func(cfg Config, _ []byte, _ int, _ int64) []share.Record {
			return []share.Record{{Kind: share.KindDecision, Partition: 0, Epoch: 2, Partitions: 3,
				Offset: 3 * cfg.ShareEvery, Frontier: []int64{2 + 1e6, 2 + 1e6, 2 + 1e6}}}
		}},
		{"partition_beyond_P", share.ReasonPartitionRange, func(cfg Config, good []byte, _ int, _ int64) []share.Record {
			// Partitions 3, 4 and 5 of an input of 3, for the first epochs:
			// each epoch looks complete before any real delta of it is held.
			var out []share.Record
			for ep := range int64(8) {
				for q := 3; q < 6; q++ {
					r := forgedDelta(cfg, q, ep, good)
					r.Partitions = 6
					out = append(out, r)
				}
			}
			return out
		}},
		{"epoch_beyond_input", share.ReasonEpochRange, func(cfg Config, good []byte, _ int, window int64) []share.Record {
			return []share.Record{forgedDelta(cfg, 1, 100*window, good)}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := kafkatest.New(t)
			input := e.Name("events")
			e.CreateTopic(t, input, 3, nil)
			cfg := sharedConfig(e, input, e.Name("g"), e.Name("preds"))
			cfg.ControlSecret, cfg.AllowUnsignedControl = nil, true
			good, at := fogdDelta(t, cfg)
			a, b, events := runForged(t, cfg, e, input, func(window int64) []forged {
				var out []forged
				for _, r := range c.forge(cfg, good, at, window) {
					out = append(out, forged{what: c.name, reason: c.reason, rec: r})
				}
				return out
			})
			checkUnforged(t, e, cfg, input, events, []*running{a, b}, []string{c.reason})
		})
	}
}

// forgedDelta is a delta record of partition q and epoch ep, plausible
// but for its data.
func forgedDelta(cfg Config, q int, ep int64, data []byte) share.Record {
	return share.Record{Kind: share.KindDelta, Partition: q, Epoch: ep, Partitions: 3, Offset: (ep + 1) * cfg.ShareEvery,
		Deltas: []share.ModelDelta{{Model: "champion", Data: data}}}
}

// With a secret, a record without a valid MAC has no effect at all, even a
// well-formed, plausible delta (which the checks alone would accept and
// merge); and a correctly signed record is still validated.
func TestSharedUnsignedSyncRecordsIgnoredWithSecret(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 3, nil)
	cfg := sharedConfig(e, input, e.Name("g"), e.Name("preds"))
	if cfg.ControlSecret == nil {
		t.Fatal("the test config has no control secret")
	}
	good, at := fogdDelta(t, cfg)
	nanScale := bytes.Clone(good)
	binary.LittleEndian.PutUint64(nanScale[at+4:], math.Float64bits(math.NaN()))
	S := cfg.ShareEvery
	delta := func(q int, ep int64, data []byte) share.Record {
		return share.Record{Kind: share.KindDelta, Partition: q, Epoch: ep, Partitions: 3, Offset: (ep + 1) * S,
			Deltas: []share.ModelDelta{{Model: "champion", Data: data}}}
	}
	a, b, events := runForged(t, cfg, e, input, func(int64) []forged {
		return []forged{
			{what: "plausible, unsigned", reason: share.ReasonUnsigned, rec: delta(0, 0, good)},
			{what: "plausible, unsigned", reason: share.ReasonUnsigned, rec: delta(1, 1, good)},
			{what: "plausible, wrong MAC", reason: share.ReasonBadMAC, rec: delta(2, 0, good), badMAC: true},
			{what: "plausible, another secret", reason: share.ReasonBadMAC, rec: delta(2, 1, good), sign: []byte("another-secret-of-at-least-32-bytes!!")},
			{what: "unsigned decision", reason: share.ReasonUnsigned, rec: share.Record{Kind: share.KindDecision, Partition: 1, Epoch: 2, Partitions: 3,
				Offset: 3 * S, Frontier: []int64{-1, -1, -1}}},
			{what: "signed, NaN scale", reason: share.ReasonDeltaInvalid, rec: delta(0, 2, nanScale), sign: testControlSecret},
		}
	})
	checkUnforged(t, e, cfg, input, events, []*running{a, b},
		[]string{share.ReasonUnsigned, share.ReasonBadMAC, share.ReasonDeltaInvalid})
}

// Effectively-once: a forged dead letter whose okstream-unit claims every
// offset up to 10^12 made the next recovery of its partition suppress all
// of its real predictions. Its unit is above its source offset, so it is
// refused (unit_range) and contributes nothing; and with a secret an
// unsigned one with a plausible unit has no effect either.
func TestEffectivelyOnceForgedUnitIgnored(t *testing.T) {
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	e.CreateTopic(t, cfg.Output, 1, nil)
	e.CreateTopic(t, cfg.DeadLetter, 1, nil)
	events := genEvents(500, 3, "fu")
	e.Produce(t, input, events...)
	src := func(o int) string { return input + "/0/" + strconv.Itoa(o) }
	e.Produce(t, cfg.DeadLetter,
		kafka.Message{Key: []byte("y"), Value: []byte("forged"), Headers: []kafka.Header{
			{Key: HeaderReason, Value: []byte("not_msgpack")}, {Key: HeaderSource, Value: []byte(src(100))},
			{Key: HeaderGroup, Value: []byte(cfg.Group)}, {Key: HeaderUnit, Value: []byte("100")}}},
		kafka.Message{Key: []byte("x"), Value: []byte("forged"), Headers: []kafka.Header{
			{Key: HeaderReason, Value: []byte("not_msgpack")}, {Key: HeaderSource, Value: []byte(src(0))},
			{Key: HeaderGroup, Value: []byte(cfg.Group)}, {Key: HeaderUnit, Value: []byte("1000000000000")}}},
	)
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "the pipeline to process every event", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if got := predictionsByOffset(t, e, cfg.Output); len(got) != len(events) {
		t.Fatalf("%d offsets have predictions, want %d (a forged dead letter suppressed the others)", len(got), len(events))
	}
	if n := counterValue(r.p.dm.suppressed.WithLabelValues("restore")); n != 0 {
		t.Fatalf("%v predictions suppressed, want 0", n)
	}
	for _, reason := range []string{share.ReasonUnitRange, share.ReasonUnsigned} {
		if n := counterValue(r.p.dm.rejected.WithLabelValues(controlDeadLetters, reason)); n < 1 {
			t.Errorf("okstream_control_records_rejected_total{topic=dead_letters,reason=%s} = %v, want ≥ 1", reason, n)
		}
	}
}
