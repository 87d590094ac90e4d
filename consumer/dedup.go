package consumer

// Effectively-once output (Config.Delivery = "effectively-once", the
// default).
//
// The learners are deterministic, so a worker that restores its checkpoint
// at offset c recomputes, byte for byte, every prediction and dead letter it
// (or a previous owner of its partition) already published after c. It only
// has to know which of them are already in the output, and skip publishing
// those while it learns from the events as before.
//
// To make that question cheap and certain, the output is partitioned by
// input partition: the prediction records and dead letters of input
// partition p go to partition p of the output and dead-letter topics (which
// therefore have the input's partition count; setup checks it), keyed as in
// at-least-once mode, and carry two headers: okstream-group, the consumer
// group, and okstream-unit, the input offset f at which the record's
// micro-batch starts. The records of output partition p that belong to this
// worker are those whose group header is the worker's group and whose
// source (prediction: topic, partition, offset; dead letter: the
// okstream-source header) is the worker's input partition. An event has at
// most one output record across both topics (a prediction, or a dead letter
// in its place), so one set of published source offsets covers both.
//
// The writer writes a partition's micro-batches one after the other, the
// next only once every record of the previous one is acknowledged, and a
// recovering worker publishes what is missing before going on. Hence the
// invariant: when a record with okstream-unit f is in the log, every source
// offset below f has its output record. Only the last micro-batch can be
// incomplete — and not only at its end: a write of several batches can
// fail in the first and land the second.
//
// findPublished, after the restore at c, reads each of the two partitions
// backwards from its high watermark in chunks of publishedChunk records,
// until it has passed below the okstream-unit f of the last of its records
// (or reached the log's start; one micro-batch, typically), and keeps the
// offsets ≥ c it saw, plus "everything in [c, F)" with F the larger f of
// the two topics; emit and deadLetter skip those offsets, so gaps are filled
// and nothing found is published again. The same scan runs before the
// writer retries a failed write (resync), because a write whose
// acknowledgement was lost may have landed; kafka-go's own retries are off
// in this mode for that reason (Writer.MaxAttempts = 1).
//
// What is not covered, and is counted where it can be seen (see the
// README's Guarantees): a record the scan cannot see yet because the broker
// appended but has not committed it (above the high watermark) when the scan
// ran, and a zombie — an instance cut off from the group that keeps writing
// (kafka-go has no producer fencing). Source offsets found twice in a
// scanned tail are counted in okstream_output_duplicates_detected_total.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"okstream/codec"
	"okstream/internal/kafkautil"
	"okstream/share"
)

// Delivery modes (Config.Delivery).
const (
	// DeliveryEffectivelyOnce: one output record per input offset across
	// crashes, restarts, broker restarts and rebalances; output partition =
	// input partition.
	DeliveryEffectivelyOnce = "effectively-once"
	// DeliveryAtLeastOnce: records keyed and partitioned by key hash
	// (murmur2); after a crash the predictions since the last checkpoint
	// are published again, byte-identical.
	DeliveryAtLeastOnce = "at-least-once"
)

// HeaderGroup carries the consumer group on prediction records and dead
// letters in effectively-once mode.
const HeaderGroup = "okstream-group"

// HeaderUnit carries, in effectively-once mode, the input offset at which
// the record's micro-batch starts (see the invariant above).
const HeaderUnit = "okstream-unit"

// publishedChunk is how many records findPublished reads per step back (a
// variable for tests).
var publishedChunk int64 = 2000

// dedupMetrics are the counters of effectively-once delivery.
type dedupMetrics struct {
	suppressed *prometheus.CounterVec // by phase: restore, retry
	duplicates *prometheus.CounterVec // by topic: predictions, dead_letters
	// seen[{topic label, partition}]: the source offsets whose duplicate
	// this process has counted and logged already, the newest
	// seenKeep of them. Every scan of a partition's tail (each restore,
	// each write retry, in every later generation) reads the same records
	// again; a duplicate is counted once per process, not once per scan.
	seenMu sync.Mutex
	seen   map[dupKey][]int64
	// rejected: control records refused (share_validate.go), by topic
	// (share, predictions, dead_letters) and reason (share.Reasons).
	rejected *prometheus.CounterVec
	ctlOnce  sync.Once
	ctl      *control // Pipeline.control
}

func newDedupMetrics(reg prometheus.Registerer) *dedupMetrics {
	m := &dedupMetrics{
		suppressed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "okstream_output_suppressed_total",
			Help: "Output records (predictions and dead letters) recomputed but not published because the output already had them: after a restore (phase=restore) or before retrying a failed write (phase=retry).",
		}, []string{"phase"}),
		duplicates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "okstream_output_duplicates_detected_total",
			Help: "Source offsets found more than once in the tail of an output partition scanned by effectively-once delivery (a zombie instance, or a write that landed after a scan missed it).",
		}, []string{"topic"}),
	}
	m.rejected = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "okstream_control_records_rejected_total",
		Help: "Control records refused and ignored: sync-topic deltas and decisions (topic=share) and effectively-once output headers (topic=predictions, dead_letters), by reason: bad_mac, unsigned, malformed, partition_range, epoch_range, frontier_range, delta_invalid, unit_range. Any increase means a forged, damaged or misdirected record (or an instance with another secret).",
	}, []string{"topic", "reason"})
	for _, t := range []string{controlShare, controlPredictions, controlDeadLetters} {
		for _, r := range share.Reasons {
			m.rejected.WithLabelValues(t, r)
		}
	}
	for _, ph := range []string{"restore", "retry"} {
		m.suppressed.WithLabelValues(ph)
	}
	for _, t := range []string{"predictions", "dead_letters"} {
		m.duplicates.WithLabelValues(t)
	}
	reg.MustRegister(m.suppressed, m.duplicates, m.rejected)
	return m
}

type dupKey struct {
	label string
	part  int
}

// seenKeep bounds the duplicates remembered per output partition.
const seenKeep = 1024

// firstSeen reports whether the duplicate of source offset o in the label's
// partition part is seen for the first time by this process (and notes
// it).
func (m *dedupMetrics) firstSeen(label string, part int, o int64) bool {
	m.seenMu.Lock()
	defer m.seenMu.Unlock()
	if m.seen == nil {
		m.seen = map[dupKey][]int64{}
	}
	k := dupKey{label, part}
	if slices.Contains(m.seen[k], o) {
		return false
	}
	s := append(m.seen[k], o)
	if len(s) > seenKeep {
		s = s[len(s)-seenKeep:]
	}
	m.seen[k] = s
	return true
}

// offsetSet is a set of source offsets ≥ base: every offset below full,
// and those of a bitmap.
type offsetSet struct {
	base, full int64
	bits       []uint64
	n          int
}

func (s *offsetSet) add(o int64) (dup bool) {
	i := o - s.base
	if i < 0 {
		return false
	}
	for int(i>>6) >= len(s.bits) {
		s.bits = append(s.bits, 0)
	}
	w, b := &s.bits[i>>6], uint64(1)<<(i&63)
	if *w&b != 0 {
		return true
	}
	*w |= b
	s.n++
	return false
}

func (s *offsetSet) has(o int64) bool {
	if s == nil {
		return false
	}
	if o >= s.base && o < s.full {
		return true
	}
	i := o - s.base
	return i >= 0 && int(i>>6) < len(s.bits) && s.bits[i>>6]&(uint64(1)<<(i&63)) != 0
}

// size is how many offsets the set holds.
func (s *offsetSet) size() int64 {
	n := int64(s.n) + max(0, s.full-s.base)
	for o := s.base; o < s.full && int((o-s.base)>>6) < len(s.bits); o++ {
		if s.bits[(o-s.base)>>6]&(uint64(1)<<((o-s.base)&63)) != 0 {
			n-- // counted twice
		}
	}
	return n
}

// effectivelyOnce reports whether the pipeline runs in effectively-once mode.
func (p *Pipeline) effectivelyOnce() bool { return p.cfg.Delivery == DeliveryEffectivelyOnce }

// checkOutputPartitions refuses output topics whose partition count is not
// the input's in effectively-once mode.
func (p *Pipeline) checkOutputPartitions(ctx context.Context, inputParts int) error {
	if !p.effectivelyOnce() {
		return nil
	}
	for _, t := range []string{p.cfg.Output, p.cfg.DeadLetter} {
		n, err := kafkautil.Partitions(ctx, p.client, t)
		if err != nil {
			return fmt.Errorf("topic %s: %w", t, err)
		}
		if n != inputParts {
			return fmt.Errorf("topic %s has %d partitions, the input %s has %d: effectively-once delivery writes the output of input partition p to partition p, so the output and dead-letter topics need the input's partition count (recreate %s with %d partitions, or run with --delivery at-least-once to partition the output by key hash, with duplicates after a crash)",
				t, n, p.cfg.Input, inputParts, t, inputParts)
		}
	}
	return nil
}

// stamp sets the output partition and the group and unit headers of the
// unit's records (idempotent: writeUnit calls it before every attempt, and
// settle adds records between attempts).
func (w *worker) stamp(u *unit) {
	if !w.p.effectivelyOnce() {
		return
	}
	hdrs := w.unitHeaders(u)
	hdrs[1].Value = strconv.AppendInt(hdrs[1].Value[:0], u.first, 10)
	auth := w.p.control().auth
	if auth.Enabled() {
		// Each record's claim is signed (outputMAC): three headers and a
		// MAC per record, in one allocation each per attempt.
		hs := make([]kafka.Header, 3*len(u.preds))
		macs := make([]byte, 0, share.MACLen*len(u.preds))
		for i := range u.preds {
			m := &u.preds[i]
			m.Partition = w.part
			n := len(macs)
			macs = w.outputMAC(auth, macs, u.first, m.Value, "")
			h := hs[3*i : 3*i+3 : 3*i+3]
			h[0], h[1], h[2] = hdrs[0], hdrs[1], kafka.Header{Key: share.HeaderMAC, Value: macs[n:len(macs):len(macs)]}
			m.Headers = h
		}
	}
	// Unsigned, emit stamped the predictions as it made them (partition,
	// and the unit's headers, whose value is set above).
	for i := range u.dlq {
		m := &u.dlq[i]
		m.Partition = w.part
		if header(*m, HeaderGroup) == "" {
			m.Headers = append(m.Headers, hdrs...)
			if auth.Enabled() {
				m.Headers = append(m.Headers, kafka.Header{Key: share.HeaderMAC,
					Value: w.outputMAC(auth, nil, u.first, nil, header(*m, HeaderSource))})
			}
		}
	}
}

// unitHeaders returns the unit's effectively-once headers (group, unit):
// the one slice every unsigned prediction record of the unit refers to
// (emit), whose unit value stamp sets in place before each attempt.
func (w *worker) unitHeaders(u *unit) []kafka.Header {
	if len(u.hdrs) != 2 {
		u.hdrs = []kafka.Header{w.p.groupHdr[0], {Key: HeaderUnit}}
	}
	return u.hdrs
}

// outputMAC appends the MAC of an output record's effectively-once claim to
// dst: the group, the unit, and what says which source offset it is the
// output of — a prediction's value (which holds the source topic,
// partition and offset) or a dead letter's okstream-source header (source
// non-empty).
func (w *worker) outputMAC(a *share.Auth, dst []byte, unit int64, value []byte, source string) []byte {
	if source != "" {
		return a.OutputMAC(dst, w.p.groupHdr[0].Value, unit, 'd', []byte(source))
	}
	return a.OutputMAC(dst, w.p.groupHdr[0].Value, unit, 'p', value)
}

// maxUnitSpan bounds how far below its source offset a record's unit
// (okstream-unit) may be: a micro-batch holds at most BatchSize records,
// and the offsets it spans can exceed that only by the offsets the input
// skips (transaction markers, compacted records). A unit further below
// does not suppress anything it should not (only a unit above a record's
// offset claims offsets it has not published), but it would make every
// later scan read back to it, so such a record is refused too.
func (w *worker) maxUnitSpan() int64 { return max(64*int64(w.p.cfg.BatchSize), 1<<16) }

// trustOutput reports whether one of this worker's output records found by
// the tail scan (source offset o, unit) may count: its unit is within
// [o − maxUnitSpan, o], and with a secret its MAC verifies. A record that
// fails contributes nothing (counted and logged as a rejected control
// record).
func (w *worker) trustOutput(r *kafkautil.Record, role string, o, unit int64) bool {
	c := w.p.control()
	if unit > o || unit < o-w.maxUnitSpan() {
		c.reject(role, share.ReasonUnitRange, w.part, fmt.Errorf("okstream-unit %d for source offset %d", unit, o), "offset", r.Offset)
		return false
	}
	if !c.auth.Enabled() {
		return true
	}
	mac := macOf(r.Headers)
	if mac == nil {
		c.reject(role, share.ReasonUnsigned, w.part, errors.New("no okstream-mac header (a control secret is set)"), "offset", r.Offset)
		return false
	}
	source, value := "", r.Value
	for _, h := range r.Headers {
		if h.Key == HeaderSource {
			source, value = string(h.Value), nil
		}
	}
	kind := byte('p')
	if source != "" {
		kind = 'd'
	}
	if !c.auth.VerifyOutput(mac, w.p.groupHdr[0].Value, unit, kind, []byte(source), value) {
		c.reject(role, share.ReasonBadMAC, w.part, errors.New("okstream-mac does not verify"), "offset", r.Offset)
		return false
	}
	return true
}

// suppressed reports whether the output record of input offset o is
// already published (and counts it).
func (w *worker) suppressed(o int64) bool {
	if !w.published.has(o) {
		return false
	}
	w.p.dm.suppressed.WithLabelValues("restore").Inc()
	return true
}

// findPublished, after the restore, sets w.published to the source offsets
// ≥ w.next whose output records are already in the output or dead-letter
// topic (see the file comment). It retries until it succeeds or ctx ends.
func (w *worker) findPublished(ctx context.Context) error {
	if !w.p.effectivelyOnce() {
		return nil
	}
	start := time.Now()
	for {
		set, err := w.scanPublished(ctx, w.next)
		if err == nil {
			w.published = set
			if n := set.size(); n > 0 {
				w.log.Info("output already published after the checkpoint: recomputing it without publishing",
					"from", w.next, "published", n, "took", time.Since(start).Round(time.Millisecond).String())
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		w.log.Warn("reading the output's tail failed; retrying", "err", err)
		sleep(ctx, time.Second)
	}
}

// scanPublished returns the set of source offsets ≥ from of this worker's
// records in the tails of its output and dead-letter partitions.
func (w *worker) scanPublished(ctx context.Context, from int64) (*offsetSet, error) {
	_, end, err := kafkautil.Offsets(ctx, w.p.client, w.p.cfg.Input, w.part)
	if err != nil {
		return nil, err
	}
	set := &offsetSet{base: from, full: from}
	for _, t := range []struct{ topic, label string }{{w.p.cfg.Output, "predictions"}, {w.p.cfg.DeadLetter, "dead_letters"}} {
		unit, err := w.scanTail(ctx, t.topic, t.label, from, end, func(o int64) {
			if set.add(o) && w.p.dm.firstSeen(t.label, w.part, o) {
				w.p.dm.duplicates.WithLabelValues(t.label).Inc()
				w.log.Warn("duplicate output record found (a zombie instance, or a write that landed after a scan missed it)", "topic", t.topic, "source_offset", o)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("topic %s partition %d: %w", t.topic, w.part, err)
		}
		set.full = max(set.full, min(unit, end))
	}
	return set, nil
}

// scanTail reads partition w.part of topic backwards from its high
// watermark, publishedChunk records at a time, calling found with the
// source offset (in [from, end)) of each of this worker's records, until it
// has read one of its records whose source offset is below the unit start
// of the last of them (or the log's start), which it returns (-1: none of
// its records).
func (w *worker) scanTail(ctx context.Context, topic, role string, from, end int64, found func(int64)) (int64, error) {
	first, hwm, err := kafkautil.Offsets(ctx, w.p.client, topic, w.part)
	if err != nil {
		return -1, err
	}
	last := int64(-1) // unit start of the last of our records
	var recs, chunk []kafkautil.Record
	for hi := hwm; hi > first; hi -= publishedChunk {
		lo := max(first, hi-publishedChunk)
		chunk = chunk[:0]
		for pos := lo; pos < hi; {
			recs, _, err = kafkautil.FetchBatch(ctx, w.p.client, topic, w.part, pos, w.p.cfg.FetchMaxBytes, w.p.cfg.FetchMaxWait, recs[:0])
			if err != nil {
				return -1, err
			}
			if len(recs) == 0 {
				break // nothing readable left in the chunk
			}
			for _, r := range recs {
				if r.Offset < hi {
					chunk = append(chunk, r)
				}
			}
			pos = recs[len(recs)-1].Offset + 1
		}
		below := false
		for i := len(chunk) - 1; i >= 0; i-- {
			o, unit, ok := w.sourceOf(&chunk[i])
			if !ok {
				// A record of this input partition without the group header
				// was written before effectively-once delivery (an upgrade,
				// or --delivery at-least-once): what precedes it is not
				// partitioned for the scan, so it ends here (the output of
				// that era may be published again once, at least once).
				below = below || w.legacy(&chunk[i])
				continue
			}
			if !w.trustOutput(&chunk[i], role, o, unit) {
				continue // contributes nothing (share_validate.go)
			}
			if last < 0 {
				last = unit
			}
			if o >= from && o < end {
				found(o)
			}
			below = below || o < last
		}
		if below {
			break
		}
	}
	return last, nil
}

// sourceOf returns the source offset and unit start of an output record if
// it is one of this worker's (its group, input topic and partition).
func (w *worker) sourceOf(r *kafkautil.Record) (offset, unit int64, ok bool) {
	group, source, us := "", "", ""
	for _, h := range r.Headers {
		switch h.Key {
		case HeaderGroup:
			group = string(h.Value)
		case HeaderSource:
			source = string(h.Value)
		case HeaderUnit:
			us = string(h.Value)
		}
	}
	if group != w.p.cfg.Group {
		return 0, 0, false
	}
	unit, err := strconv.ParseInt(us, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if source != "" { // a dead letter
		prefix := w.p.cfg.Input + "/" + w.label + "/"
		if !strings.HasPrefix(source, prefix) {
			return 0, 0, false
		}
		o, err := strconv.ParseInt(source[len(prefix):], 10, 64)
		return o, unit, err == nil
	}
	pr, err := codec.DecodePredictionAny(r.Value) // either --output-format: a restart may change it
	if err != nil || pr.Topic != w.p.cfg.Input || int(pr.Partition) != w.part {
		return 0, 0, false
	}
	return pr.Offset, unit, true
}

// legacy reports whether an output record without the group header is the
// output of this worker's input partition.
func (w *worker) legacy(r *kafkautil.Record) bool {
	source := ""
	for _, h := range r.Headers {
		switch h.Key {
		case HeaderGroup:
			return false
		case HeaderSource:
			source = string(h.Value)
		}
	}
	if source != "" {
		return strings.HasPrefix(source, w.p.cfg.Input+"/"+w.label+"/")
	}
	pr, err := codec.DecodePredictionAny(r.Value) // either --output-format: a restart may change it
	return err == nil && pr.Topic == w.p.cfg.Input && int(pr.Partition) == w.part
}

// msgSource is the source offset of an output record the worker is writing
// (-1 if it cannot be told).
func (w *worker) msgSource(m *kafka.Message) int64 {
	r := kafkautil.Record{Value: m.Value, Headers: m.Headers}
	if o, _, ok := w.sourceOf(&r); ok {
		return o
	}
	return -1
}

// resync, before the writer retries a failed write, drops from the unit the
// records that the output already has (a write can fail after it landed).
func (w *worker) resync(ctx context.Context, u *unit) error {
	if !w.p.effectivelyOnce() {
		return nil
	}
	w.stamp(u)
	from := int64(-1)
	for _, ms := range [][]kafka.Message{u.preds, u.dlq} {
		for i := range ms {
			if o := w.msgSource(&ms[i]); o >= 0 && (from < 0 || o < from) {
				from = o
			}
		}
	}
	if from < 0 {
		return nil
	}
	set, err := w.scanPublished(ctx, from)
	if err != nil {
		return err
	}
	drop := func(ms []kafka.Message) []kafka.Message {
		out := ms[:0]
		for i := range ms {
			if set.has(w.msgSource(&ms[i])) {
				w.p.dm.suppressed.WithLabelValues("retry").Inc()
				continue
			}
			out = append(out, ms[i])
		}
		return out
	}
	u.preds, u.dlq = drop(u.preds), drop(u.dlq)
	return nil
}
