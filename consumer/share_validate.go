package consumer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"okstream/internal/kafkautil"
	"okstream/learner"
	"okstream/share"
)

// Untrusted control records (issue 37): the sync topic's deltas and
// decisions, and the effectively-once headers of output records and dead
// letters, steer every instance of a group, so each is checked before it
// is used. With Config.ControlSecret set, a record must carry a valid
// HMAC-SHA-256 (share.Auth) in the okstream-mac header; with or without
// one, a sync record must pass share.Record.Validate, its deltas their
// learner's CheckDelta, and its epoch the input's high watermark (below).
// A record that fails has no effect at all: it is skipped (never stored,
// so it cannot displace a valid record of its slot, and a valid one read
// later is stored), counted in
// okstream_control_records_rejected_total{topic,reason} and logged once
// per reason and partition. Nothing about it is fatal.

// Control-record roles (the topic label of the rejection counter).
const (
	controlShare       = "share"
	controlPredictions = "predictions"
	controlDeadLetters = "dead_letters"
)

// validateControl checks the control-secret settings (Validate calls it).
func (c *Config) validateControl(bad func(string, ...any)) {
	if _, err := share.NewAuth(c.ControlSecret, c.ControlSecretPrevious...); err != nil {
		bad("control secret: %v", err)
	}
}

// control is a pipeline's state for checking control records (created on
// first use: Pipeline.control).
type control struct {
	auth     *share.Auth
	rejected *prometheus.CounterVec
	log      func(msg string, args ...any)
	lim      share.Limits
	checkers []learner.DeltaChecker // per shared model (nil: none)

	mu     sync.Mutex
	logged map[string]bool // reason/role/partition already logged

	// newest[q] is the newest epoch of an accepted sync record of input
	// partition q (−1: none), hwm[q] the newest high watermark of input
	// partition q looked up (see checkEpoch).
	newest []atomic.Int64
	hwm    []atomic.Int64
}

// control returns the pipeline's control-record checker.
func (p *Pipeline) control() *control {
	p.dm.ctlOnce.Do(func() {
		cfg := p.cfg
		auth, _ := share.NewAuth(cfg.ControlSecret, cfg.ControlSecretPrevious...) // validated
		c := &control{auth: auth, rejected: p.dm.rejected, log: cfg.Logger.Warn, logged: map[string]bool{},
			hwm: make([]atomic.Int64, p.inputParts), newest: make([]atomic.Int64, p.inputParts)}
		for q := range c.newest {
			c.newest[q].Store(-1)
		}
		if len(cfg.Share) > 0 && !auth.Enabled() && !cfg.AllowUnsignedControl {
			cfg.Logger.Warn("shared models without a control secret: anyone who can write to the sync topic can steer every instance's shared models (set Config.ControlSecret, --control-secret-file)")
		}
		c.lim = share.Limits{Partitions: p.inputParts, Every: cfg.ShareEvery, Lag: cfg.ShareLag, Models: cfg.Share}
		specs := map[string]string{}
		for _, m := range cfg.Models {
			specs[m.Name] = m.Spec
		}
		checked := false
		for _, name := range cfg.Share {
			var dc learner.DeltaChecker
			if l, err := learner.New(specs[name], max(cfg.Dim, 1)); err == nil {
				dc, _ = l.(learner.DeltaChecker)
			}
			c.checkers = append(c.checkers, dc)
			checked = checked || dc != nil
		}
		if checked {
			c.lim.Check = func(i int, data []byte) error {
				if i < len(c.checkers) && c.checkers[i] != nil {
					return c.checkers[i].CheckDelta(data)
				}
				return nil
			}
		}
		p.dm.ctl = c
	})
	return p.dm.ctl
}

// reject counts a refused control record and logs the first of each
// reason, role and partition.
func (c *control) reject(role, reason string, partition int, err error, args ...any) {
	c.rejected.WithLabelValues(role, reason).Inc()
	k := role + "/" + reason + "/" + strconv.Itoa(partition)
	c.mu.Lock()
	first := !c.logged[k] && len(c.logged) < 4096 // bounded: then only counted
	if first {
		c.logged[k] = true
	}
	c.mu.Unlock()
	if first {
		c.log("refusing a control record (later ones of this reason and partition are only counted in okstream_control_records_rejected_total)",
			append([]any{"topic", role, "reason", reason, "partition", partition, "err", err}, args...)...)
	}
}

// macOf returns the okstream-mac header's value (nil: none).
func macOf(hdrs []kafka.Header) []byte {
	for _, h := range hdrs {
		if h.Key == share.HeaderMAC {
			return h.Value
		}
	}
	return nil
}

// signSync returns m with its MAC header if a secret is set.
func (p *Pipeline) signSync(m kafka.Message) kafka.Message {
	if a := p.control().auth; a.Enabled() {
		m.Headers = append(m.Headers, kafka.Header{Key: share.HeaderMAC, Value: a.SyncMAC(make([]byte, 0, share.MACLen), m.Key, m.Value)})
	}
	return m
}

// admitPeek checks what a sync record's first bytes say (before its value
// is read): a partition the input has.
func (t *tailer) admitPeek(key []byte, kind, part int) bool {
	c := t.p.control()
	if part >= c.lim.Partitions {
		c.reject(controlShare, share.ReasonPartitionRange, part, fmt.Errorf("partition %d of an input of %d partitions", part, c.lim.Partitions), "key", string(key))
		return false
	}
	return true
}

// landedSkipped reports whether a sync record the tailer skips (it holds
// one of its kind, partition and epoch) may count as evidence that the
// partition's deltas up to its epoch are on the topic (tailer.raiseDurable):
// always without a secret; with one, only if its MAC verifies (the value,
// after the first bytes in hdr, is streamed through the MAC, not kept).
func (t *tailer) landedSkipped(key []byte, r *kafka.Record, hdr []byte, n int, buf *[]byte) (bool, error) {
	c := t.p.control()
	if !c.auth.Enabled() {
		return true, nil
	}
	mac := macOf(r.Headers)
	if mac == nil {
		return false, nil
	}
	w, ok := c.auth.SyncVerifier(key, n)
	w.Write(hdr)
	if len(*buf) == 0 {
		*buf = make([]byte, 4096)
	}
	if _, err := io.CopyBuffer(w, r.Value, *buf); err != nil {
		return false, err
	}
	return ok(mac), nil
}

// admitSync checks a decoded sync record (its key and value v as read)
// before the tailer stores it: the MAC with a secret, then
// share.Record.Validate, then the epoch against the input (checkEpoch).
func (t *tailer) admitSync(ctx context.Context, key []byte, hdrs []kafka.Header, v []byte, rec *share.Record) bool {
	c := t.p.control()
	if c.auth.Enabled() {
		mac := macOf(hdrs)
		switch {
		case mac == nil:
			c.reject(controlShare, share.ReasonUnsigned, rec.Partition, errors.New("no okstream-mac header (a control secret is set)"), "key", string(key))
			return false
		case !c.auth.VerifySync(mac, key, v):
			c.reject(controlShare, share.ReasonBadMAC, rec.Partition, errors.New("okstream-mac does not verify"), "key", string(key))
			return false
		}
	}
	if err := rec.Validate(c.lim); err != nil {
		reason := share.ReasonMalformed
		var inv *share.Invalid
		if errors.As(err, &inv) {
			reason = inv.Reason
		}
		c.reject(controlShare, reason, rec.Partition, err, "key", string(key), "epoch", rec.Epoch)
		return false
	}
	if err := t.checkEpoch(ctx, rec); err != nil {
		c.reject(controlShare, share.ReasonEpochRange, rec.Partition, err, "key", string(key), "epoch", rec.Epoch)
		return false
	}
	if q := rec.Partition; q < len(c.newest) {
		raise(&c.newest[q], rec.Epoch)
	}
	return true
}

// raise sets a to max(a, v).
func raise(a *atomic.Int64, v int64) {
	for old := a.Load(); v > old && !a.CompareAndSwap(old, v); old = a.Load() {
	}
}

// checkEpoch refuses a record whose writer's next input offset is beyond
// the input partition's high watermark: it cannot have consumed records
// that do not exist. A record's epoch e takes the slot of epoch e − W (and
// e − 2W, …), so a forged epoch far ahead would push a record still needed
// out of its slot (errOverwritten stops the pipeline). Validate has checked
// (e+1)·S ≤ Offset; here Offset is checked against the high watermark,
// looked up (one ListOffsets) only for a record of a partition more than
// two epochs past its newest accepted one (a partition's records come in
// epoch order, a decision of boundary e just before its delta e) or the
// first of its partition, and only when Offset is beyond the last value
// looked up. A valid record always passes: the input held its offsets when
// it was written, and a high watermark does not go down. What it cannot
// tell: an epoch up to what the input holds, ahead of a partition that
// lags behind its input (a control secret stands against that).
func (t *tailer) checkEpoch(ctx context.Context, rec *share.Record) error {
	c := t.p.control()
	q := rec.Partition
	if q >= len(c.hwm) {
		return nil // Validate checked it
	}
	if n := c.newest[q].Load(); (n >= 0 && rec.Epoch <= n+2) || rec.Offset <= c.hwm[q].Load() {
		return nil
	}
	_, end, err := kafkautil.Offsets(ctx, t.p.client, t.p.cfg.Input, q)
	if err != nil {
		return nil // cannot tell: accepted (Validate's checks stand)
	}
	raise(&c.hwm[q], end)
	if rec.Offset > end {
		return fmt.Errorf("epoch %d written at input offset %d, beyond the high watermark %d of input partition %d", rec.Epoch, rec.Offset, end, q)
	}
	return nil
}
