package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/internal/kafkatest"
	"okstream/learner/rng"
)

func payload(n int, seed uint64) []byte {
	src := rng.New(seed)
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(src.Uint64())
	}
	return b
}

func open(t *testing.T, e *kafkatest.Env, topic string, chunk int) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := Open(ctx, Config{Brokers: e.Brokers, Topic: topic, Partitions: 3, ChunkBytes: chunk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestSaveLoadRoundTrip(t *testing.T) {
	e := kafkatest.New(t)
	s := open(t, e, e.Name("ckpt"), 0)
	id := ID{Group: "g/1", Topic: "events", Partition: 2}
	if cp, _, err := s.Load(ctx(t), id); err != nil || cp != nil {
		t.Fatalf("empty topic: %v %v", cp, err)
	}
	// A payload over 1 MiB: several chunks, each under the broker's limit.
	big := payload(3<<20+123, 1)
	if _, err := s.Save(ctx(t), Checkpoint{ID: id, Epoch: Epoch{1, 1}, NextOffset: 42, Payload: big}); err != nil {
		t.Fatal(err)
	}
	cp, st, err := s.Load(ctx(t), id)
	if err != nil || cp == nil {
		t.Fatalf("load: %v %v", cp, err)
	}
	if !bytes.Equal(cp.Payload, big) || cp.NextOffset != 42 || cp.Epoch != (Epoch{1, 1}) {
		t.Fatalf("loaded %d bytes, offset %d, epoch %v", len(cp.Payload), cp.NextOffset, cp.Epoch)
	}
	if st.Records < 8 {
		t.Fatalf("a 3 MiB payload in %d records: not chunked", st.Records)
	}
	// Empty payloads are valid checkpoints too.
	if _, err := s.Save(ctx(t), Checkpoint{ID: id, Epoch: Epoch{1, 2}, NextOffset: 43}); err != nil {
		t.Fatal(err)
	}
	cp, _, _ = s.Load(ctx(t), id)
	if cp.NextOffset != 43 || len(cp.Payload) != 0 {
		t.Fatalf("empty payload checkpoint: %+v", cp)
	}
}

func TestNewestWinsAndIDsAreSeparate(t *testing.T) {
	e := kafkatest.New(t)
	s := open(t, e, e.Name("ckpt"), 1000)
	ids := []ID{{"g", "t", 0}, {"g", "t", 1}, {"h", "t", 0}, {"g", "u", 0}}
	for seq := uint64(1); seq <= 5; seq++ {
		for i, id := range ids {
			p := payload(2500+i, seq*10+uint64(i))
			if _, err := s.Save(ctx(t), Checkpoint{ID: id, Epoch: Epoch{3, seq}, NextOffset: int64(seq*100) + int64(i), Payload: p}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, id := range ids {
		cp, _, err := s.Load(ctx(t), id)
		if err != nil || cp == nil {
			t.Fatal(err)
		}
		if cp.Epoch != (Epoch{3, 5}) || cp.NextOffset != 500+int64(i) || !bytes.Equal(cp.Payload, payload(2500+i, 50+uint64(i))) {
			t.Fatalf("%v: got epoch %v offset %d", id, cp.Epoch, cp.NextOffset)
		}
	}
	// A newer generation wins over a higher sequence of an older one.
	s.Save(ctx(t), Checkpoint{ID: ids[0], Epoch: Epoch{4, 6}, NextOffset: 7, Payload: []byte("new")})
	cp, _, _ := s.Load(ctx(t), ids[0])
	if cp.Epoch != (Epoch{4, 6}) {
		t.Fatalf("epoch %v", cp.Epoch)
	}
}

// A crash in the middle of a save (chunks written, manifest not) must leave
// the previous checkpoint loadable.
func TestTornWriteFallsBack(t *testing.T) {
	e := kafkatest.New(t)
	s := open(t, e, e.Name("ckpt"), 1000)
	id := ID{"g", "t", 0}
	p1, p2 := payload(5000, 1), payload(5000, 2)
	s.Save(ctx(t), Checkpoint{ID: id, Epoch: Epoch{1, 1}, NextOffset: 10, Payload: p1})
	s.Save(ctx(t), Checkpoint{ID: id, Epoch: Epoch{1, 2}, NextOffset: 20, Payload: p2})
	// Epoch 1.3 goes to slot B, overwriting epoch 1.1's chunks, but crashes
	// before its manifest: slot B's manifest (1.1) no longer matches.
	if _, _, err := s.writeChunks(ctx(t), Checkpoint{ID: id, Epoch: Epoch{1, 3}, NextOffset: 30, Payload: payload(3000, 3)}); err != nil {
		t.Fatal(err)
	}
	cp, st, err := s.Load(ctx(t), id)
	if err != nil || cp == nil || cp.Epoch != (Epoch{1, 2}) || !bytes.Equal(cp.Payload, p2) {
		t.Fatalf("after torn write: %+v %v", cp, err)
	}
	if len(st.Rejected) != 1 || st.Rejected[0].Reason != ReasonTorn {
		t.Fatalf("rejections %q", st.Rejected)
	}
	// Now a torn write into the other slot too: nothing complete is left.
	if _, _, err := s.writeChunks(ctx(t), Checkpoint{ID: id, Epoch: Epoch{1, 4}, NextOffset: 40, Payload: payload(3000, 4)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Load(ctx(t), id); !errors.Is(err, ErrNoValidCheckpoint) {
		t.Fatalf("want ErrNoValidCheckpoint, got %v", err)
	}
}

// Corrupt bytes in a chunk are caught by the checksums.
func TestCorruptChunkRejected(t *testing.T) {
	e := kafkatest.New(t)
	s := open(t, e, e.Name("ckpt"), 1000)
	id := ID{"g", "t", 5}
	s.Save(ctx(t), Checkpoint{ID: id, Epoch: Epoch{1, 1}, NextOffset: 1, Payload: payload(4000, 1)})
	s.Save(ctx(t), Checkpoint{ID: id, Epoch: Epoch{1, 2}, NextOffset: 2, Payload: payload(4000, 2)})
	// Flip one byte of a chunk of epoch 1.2 (slot A) and rewrite it.
	good := encodeChunk(Epoch{1, 2}, 1, 4, payload(4000, 2)[1000:2000])
	bad := append([]byte(nil), good...)
	bad[len(bad)-7] ^= 0x40
	if err := s.writer.WriteMessages(ctx(t), kafka.Message{Key: []byte(chunkKey(id, "A", 1)), Value: bad}); err != nil {
		t.Fatal(err)
	}
	cp, st, err := s.Load(ctx(t), id)
	if err != nil || cp.Epoch != (Epoch{1, 1}) {
		t.Fatalf("corrupt newest: got %+v %v", cp, err)
	}
	if len(st.Rejected) != 1 || st.Rejected[0].Reason != ReasonChunkCRC {
		t.Fatalf("rejections %q", st.Rejected)
	}
}

// After compaction (holes in the offsets, old versions gone) the newest
// checkpoint still loads, and Load returns without waiting at the end.
func TestLoadAfterCompaction(t *testing.T) {
	e := kafkatest.New(t) // embedded: compacts only when told (Compact), so before/after is deterministic
	topic := e.Name("ckpt")
	s := open(t, e, topic, 1000)
	id := ID{"g", "t", 0}
	var last []byte
	for seq := uint64(1); seq <= 30; seq++ {
		last = payload(3500, seq)
		if _, err := s.Save(ctx(t), Checkpoint{ID: id, Epoch: Epoch{1, seq}, NextOffset: int64(seq), Payload: last}); err != nil {
			t.Fatal(err)
		}
	}
	_, before, _ := s.Load(ctx(t), id)
	if e.Cluster != nil {
		e.Cluster.Compact()
	}
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cp, after, err := s.Load(c, id)
	if err != nil || cp.Epoch != (Epoch{1, 30}) || !bytes.Equal(cp.Payload, last) {
		t.Fatalf("after compaction: %+v %v", cp, err)
	}
	if e.Cluster != nil && after.Records >= before.Records {
		t.Fatalf("compaction removed nothing: %d → %d records", before.Records, after.Records)
	}
}

func TestOpenRefuses(t *testing.T) {
	e := kafkatest.New(t)
	topic := e.Name("notcompact")
	e.CreateTopic(t, topic, 1, map[string]string{"cleanup.policy": "delete"})
	_, err := Open(ctx(t), Config{Brokers: e.Brokers, Topic: topic})
	if err == nil || !strings.Contains(err.Error(), "cleanup.policy=compact") {
		t.Fatalf("non-compacted topic accepted: %v", err)
	}
	small := e.Name("small")
	e.CreateTopic(t, small, 1, map[string]string{"cleanup.policy": "compact", "max.message.bytes": "100000"})
	_, err = Open(ctx(t), Config{Brokers: e.Brokers, Topic: small, ChunkBytes: 200000})
	if err == nil || !strings.Contains(err.Error(), "max.message.bytes") {
		t.Fatalf("oversized chunks accepted: %v", err)
	}
	s, err := Open(ctx(t), Config{Brokers: e.Brokers, Topic: small, ChunkBytes: 50000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := ID{"g", "t", 0}
	p := payload(400000, 9)
	if _, err := s.Save(ctx(t), Checkpoint{ID: id, Epoch: Epoch{1, 1}, Payload: p}); err != nil {
		t.Fatalf("small-limit topic: %v", err)
	}
	cp, _, err := s.Load(ctx(t), id)
	if err != nil || !bytes.Equal(cp.Payload, p) {
		t.Fatal("small-limit topic round trip")
	}
}

// The decoders never panic on arbitrary bytes.
func TestDecodersRobust(t *testing.T) {
	src := rng.New(5)
	m := encodeManifest(manifest{id: ID{"g", "t", 1}, epoch: Epoch{2, 3}, size: 5, crcs: []uint32{1, 2}})
	c := encodeChunk(Epoch{1, 1}, 0, 1, []byte("hello"))
	for i := 0; i < 20000; i++ {
		for _, base := range [][]byte{m, c} {
			b := append([]byte(nil), base...)
			b = b[:src.IntN(len(b)+1)]
			if len(b) > 0 && src.IntN(2) == 0 {
				b[src.IntN(len(b))] ^= byte(src.Uint64())
			}
			decodeManifest(b, DefaultMaxChunks)
			decodeChunk(b)
		}
	}
	if _, err := decodeManifest(m, DefaultMaxChunks); err != nil {
		t.Fatal(err)
	}
}

func TestScanSummarizes(t *testing.T) {
	e := kafkatest.New(t)
	topic := e.Name("ckpt")
	s := open(t, e, topic, 1000)
	a, b := ID{"g 1", "in", 0}, ID{"g 1", "in", 1}
	s.Save(ctx(t), Checkpoint{ID: a, Epoch: Epoch{1, 1}, NextOffset: 5, Payload: payload(2500, 1)})
	s.Save(ctx(t), Checkpoint{ID: a, Epoch: Epoch{1, 2}, NextOffset: 9, Payload: payload(2500, 2)})
	s.Save(ctx(t), Checkpoint{ID: b, Epoch: Epoch{2, 1}, NextOffset: 3, Payload: payload(10, 3)})
	s.writeChunks(ctx(t), Checkpoint{ID: b, Epoch: Epoch{2, 2}, Payload: payload(2500, 4)}) // a torn write into slot A
	ro, err := OpenExisting(ctx(t), Config{Brokers: e.Brokers, Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	sums, err := ro.Scan(ctx(t))
	if err != nil || len(sums) != 2 {
		t.Fatalf("scan: %v %v", sums, err)
	}
	if sums[0].ID != a || sums[0].Newest.NextOffset != 9 || sums[1].ID != b || sums[1].Newest.NextOffset != 3 {
		t.Fatalf("summaries %+v", sums)
	}
	if _, err := OpenExisting(ctx(t), Config{Brokers: e.Brokers, Topic: e.Name("nope")}); err == nil {
		t.Fatal("missing topic accepted")
	}
}

// A Save whose context is cancelled while it writes has a known outcome:
// it either fails without writing (cancelled before it started) or
// finishes, manifest included. kafka-go's WriteMessages returns at
// cancellation while the records it queued are still written; a Save that
// passed that on reported a failure whose manifest landed afterwards, and
// the worker, which then wrote the same epoch again with a newer payload,
// left a slot whose manifest and chunks disagreed (a partition that could
// not restore). Cancellation times are spread over the write; every round
// closes the store (flushing anything queued) before looking.
func TestSaveCancelledWhileWritingHasAKnownOutcome(t *testing.T) {
	e := kafkatest.New(t)
	topic := e.Name("ckpt")
	id := ID{Group: "g", Topic: "events", Partition: 0}
	src := rng.New(7)
	var finished, refused int
	for round := uint64(1); round <= 24; round++ {
		ctx0, cancel0 := context.WithTimeout(context.Background(), 60*time.Second)
		s, err := Open(ctx0, Config{Brokers: e.Brokers, Topic: topic, Partitions: 1, ChunkBytes: 4 << 10})
		if err != nil {
			t.Fatal(err)
		}
		ep := Epoch{1, round}
		wctx, cancel := context.WithCancel(ctx0)
		delay := time.Duration(src.Uint64()%3000) * time.Microsecond
		if round%6 == 0 {
			cancel() // before it starts
		} else {
			time.AfterFunc(delay, cancel)
		}
		_, saveErr := s.Save(wctx, Checkpoint{ID: id, Epoch: ep, NextOffset: int64(round), Payload: payload(40<<10, round)})
		cancel()
		if err := s.Close(); err != nil { // flushes whatever the writer still holds
			t.Fatal(err)
		}
		r, err := Open(ctx0, Config{Brokers: e.Brokers, Topic: topic, Partitions: 1})
		if err != nil {
			t.Fatal(err)
		}
		cps, _, err := r.LoadAll(ctx0, id)
		r.Close()
		cancel0()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		landed := false
		for _, cp := range cps {
			landed = landed || cp.Epoch == ep
		}
		switch {
		case saveErr == nil && !landed:
			t.Fatalf("round %d: Save returned nil but epoch %s cannot be loaded", round, ep)
		case saveErr != nil && landed:
			t.Fatalf("round %d (cancelled after %s): Save failed (%v) but epoch %s landed", round, delay, saveErr, ep)
		case saveErr == nil:
			finished++
		default:
			refused++
		}
	}
	if refused < 4 {
		t.Fatalf("only %d of 24 Saves refused a cancelled context: the ones cancelled before they started must fail", refused)
	}
	t.Logf("%d Saves finished, %d refused at the start", finished, refused)
}
