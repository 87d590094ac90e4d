package checkpoint

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	"okstream/internal/memtest"

	"github.com/segmentio/kafka-go"

	"okstream/internal/kafkatest"
)

// allocBound is the documented allocation bound for restoring a partition
// whose checkpoint records hold about 1 KiB (forged or not): far below any
// declared size, far above what decoding 1 KiB needs.
const allocBound = 64 << 20

// allocated is the bytes allocated while f runs.
var allocated = memtest.Allocated

// forgedRecords is a slot of id whose chunks are a real 1 KiB payload and
// whose manifest declares size bytes, with every checksum valid: only the
// size is a lie.
func forgedRecords(id ID, e Epoch, size uint64, chunks int) (man []byte, values [][]byte) {
	m, values := encodeCheckpoint(Checkpoint{ID: id, Epoch: e, NextOffset: 1, Payload: payload(1024, 7)}, (1024+chunks-1)/chunks)
	m.size = size
	return encodeManifest(m), values
}

// withCount rewrites a manifest's chunk count field (keeping its CRC
// valid), leaving the CRC list as it is.
func withCount(man []byte, id ID, n uint32) []byte {
	b := append([]byte(nil), man...)
	off := 4 + 2 + 4 + len(id.Group) + 4 + len(id.Topic) + 4 + 4 + 8 + 8 + 8
	binary.BigEndian.PutUint32(b[off:], n)
	binary.BigEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], crcTable))
	return b
}

func chunkMap(values [][]byte) map[int][]byte {
	m := map[int][]byte{}
	for i, v := range values {
		m[i] = v
	}
	return m
}

// The pure validation: forged sizes and counts are rejected with their
// reason, allocating far less than they declare.
func TestAssembleForged(t *testing.T) {
	id, e := ID{"g", "t", 3}, Epoch{2, 6}
	lim := Config{}.limits()
	man, values := forgedRecords(id, e, 1024, 3)
	if cp, r, why := assemble(id, "A", man, chunkMap(values), lim); cp == nil || len(cp.Payload) != 1024 {
		t.Fatalf("the unforged slot is rejected: %s %s", r, why)
	}
	man1, values1 := forgedRecords(id, e, DefaultMaxStateBytes, 1)
	manyCRCs := encodeManifest(manifest{id: id, epoch: e, size: 1024, crcs: make([]uint32, DefaultMaxChunks+1)})
	chunkCount := append([]byte(nil), values[0]...)
	binary.BigEndian.PutUint32(chunkCount[22:], 1<<31)
	cases := []struct {
		name   string
		man    []byte
		chunks [][]byte
		reason Reason
	}{
		{"size 2^40", must(forgedRecords(id, e, 1<<40, 3)), values, ReasonTooLarge},
		{"size 2^62", must(forgedRecords(id, e, 1<<62, 3)), values, ReasonTooLarge},
		{"size 2^64-1", must(forgedRecords(id, e, 1<<64-1, 3)), values, ReasonTooLarge},
		// Under MaxStateBytes: only the bytes present can refuse it.
		{"size 512 MiB", must(forgedRecords(id, e, 512<<20, 3)), values, ReasonSizeMismatch},
		{"size 1 GiB, one chunk", man1, values1, ReasonSizeMismatch},
		{"count 2^32-1", withCount(man, id, 1<<32-1), values, ReasonTooManyChunks},
		{"count 65536 without the CRCs", withCount(man, id, DefaultMaxChunks), values, ReasonMalformed},
		{"65537 CRCs present", manyCRCs, values, ReasonTooManyChunks},
		// The chunk header is not under the chunk's CRC; the manifest check catches it.
		{"chunk count field 2^31", man, [][]byte{chunkCount, values[1], values[2]}, ReasonTorn},
		{"chunk 2 missing", man, values[:2], ReasonTorn},
	}
	for _, c := range cases {
		var reason Reason
		var why string
		n := allocated(func() {
			var cp *Checkpoint
			cp, reason, why = assemble(id, "A", c.man, chunkMap(c.chunks), lim)
			if cp != nil {
				t.Errorf("%s: accepted", c.name)
			}
		})
		if reason != c.reason || why == "" {
			t.Errorf("%s: reason %q (%s), want %q", c.name, reason, why, c.reason)
		}
		if n > allocBound {
			t.Errorf("%s: allocated %d bytes, bound %d", c.name, n, allocBound)
		}
		t.Logf("%-28s %-16s %8d B allocated  %s", c.name, reason, n, why)
	}
	if _, r, _ := assemble(id, "B", man, chunkMap(values), lim); r != ReasonForeign {
		t.Fatalf("epoch of slot A in slot B: %s", r)
	}
}

func must(man []byte, _ [][]byte) []byte { return man }

// Through the store and the embedded broker: a forged newest checkpoint
// (sizes 2^40, 2^62, 512 MiB, a huge count) is rejected with its reason,
// Load falls back to the previous valid checkpoint within the allocation
// bound, Scan reports it, and with both slots forged Load refuses with
// ErrNoValidCheckpoint.
func TestForgedManifestFallsBack(t *testing.T) {
	e := kafkatest.New(t)
	s := open(t, e, e.Name("ckpt"), 1000)
	id := ID{"g", "t", 4}
	p1 := payload(3000, 1)
	for _, c := range []struct {
		name   string
		size   uint64
		count  uint32
		reason Reason
	}{
		{"2^40", 1 << 40, 0, ReasonTooLarge},
		{"2^62", 1 << 62, 0, ReasonTooLarge},
		{"512 MiB", 512 << 20, 0, ReasonSizeMismatch},
		{"count 2^32-1", 1024, 1<<32 - 1, ReasonTooManyChunks},
	} {
		// A valid 1.1 in slot B and 1.2 in slot A; then 1.2 is replaced by
		// a forged 1.4 (slot A) with valid checksums.
		if _, err := s.Save(ctx(t), Checkpoint{ID: id, Epoch: Epoch{1, 1}, NextOffset: 10, Payload: p1}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Save(ctx(t), Checkpoint{ID: id, Epoch: Epoch{1, 2}, NextOffset: 20, Payload: payload(3000, 2)}); err != nil {
			t.Fatal(err)
		}
		man, values := forgedRecords(id, Epoch{1, 4}, c.size, 3)
		if c.count != 0 {
			man = withCount(man, id, c.count)
		}
		writeSlot(t, s, id, "A", man, values)
		var cp *Checkpoint
		var st LoadStats
		var err error
		n := allocated(func() { cp, st, err = s.Load(ctx(t), id) })
		if err != nil || cp == nil || cp.Epoch != (Epoch{1, 1}) || string(cp.Payload) != string(p1) {
			t.Fatalf("%s: no fallback to 1.1: %+v %v", c.name, cp, err)
		}
		if len(st.Rejected) != 1 || st.Rejected[0].Reason != c.reason || st.Rejected[0].Slot != "A" {
			t.Fatalf("%s: rejections %v", c.name, st.Rejected)
		}
		if n > allocBound {
			t.Fatalf("%s: Load allocated %d bytes, bound %d", c.name, n, allocBound)
		}
		t.Logf("forged %-12s → %s; Load allocated %d B (%d records)", c.name, st.Rejected[0], n, st.Records)

		sums, err := s.Scan(ctx(t))
		if err != nil || len(sums) != 1 || sums[0].Rejected != 1 || sums[0].Rejections[0].Reason != c.reason ||
			sums[0].Newest == nil || sums[0].Newest.Epoch != (Epoch{1, 1}) || !strings.Contains(sums[0].Slots[0], "REJECTED") {
			t.Fatalf("%s: scan %+v %v", c.name, sums, err)
		}
	}
	// Both slots forged: refuse, with every reason in the error.
	man, values := forgedRecords(id, Epoch{1, 5}, 1<<62, 2)
	writeSlot(t, s, id, "B", man, values)
	n := allocated(func() {
		_, _, err := s.Load(ctx(t), id)
		if !errors.Is(err, ErrNoValidCheckpoint) || !strings.Contains(err.Error(), string(ReasonTooLarge)) {
			t.Errorf("both slots forged: %v", err)
		}
	})
	if n > allocBound {
		t.Fatalf("both forged: Load allocated %d bytes", n)
	}
}

// A flood of chunk records (indices beyond MaxChunks, or more bytes than a
// slot may hold) is dropped while reading; the valid checkpoint still loads.
func TestChunkFloodBounded(t *testing.T) {
	e := kafkatest.New(t)
	s := open(t, e, e.Name("ckpt"), 1000)
	s.lim = limits{maxState: 8 << 10, maxChunks: 16}
	id := ID{"g", "t", 1}
	good := payload(5000, 3)
	if _, err := s.Save(ctx(t), Checkpoint{ID: id, Epoch: Epoch{1, 1}, NextOffset: 5, Payload: good}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Save(ctx(t), Checkpoint{ID: id, Epoch: Epoch{1, 2}, NextOffset: 6, Payload: payload(5000, 4)}); err != nil {
		t.Fatal(err)
	}
	// Slot A: chunks far beyond MaxChunks, then 20 KiB of chunks of one
	// forged epoch at valid indices (over the 8 KiB + 16 × 30 B bound).
	var msgs []kafka.Message
	for i := 0; i < 50; i++ {
		msgs = append(msgs, kafka.Message{Key: []byte(chunkKey(id, "A", 1000+i)), Value: make([]byte, 100)})
	}
	for i := 0; i < 10; i++ {
		msgs = append(msgs, kafka.Message{Key: []byte(chunkKey(id, "A", i)), Value: encodeChunk(Epoch{9, 0}, i, 10, payload(2000, uint64(i)))})
	}
	if err := s.writer.WriteMessages(ctx(t), msgs...); err != nil {
		t.Fatal(err)
	}
	cp, st, err := s.Load(ctx(t), id)
	if err != nil || cp == nil || cp.Epoch != (Epoch{1, 1}) || string(cp.Payload) != string(good) {
		t.Fatalf("flooded: %+v %v", cp, err)
	}
	if st.Dropped < 50 || len(st.Rejected) != 1 || st.Rejected[0].Reason != ReasonTooLarge {
		t.Fatalf("dropped %d, rejections %v", st.Dropped, st.Rejected)
	}
	// Save refuses what Load would refuse.
	if _, err := s.Save(ctx(t), Checkpoint{ID: id, Epoch: Epoch{1, 3}, Payload: payload(9000, 1)}); err == nil || !strings.Contains(err.Error(), "MaxStateBytes") {
		t.Fatalf("oversized save: %v", err)
	}
	s.lim.maxState = 1 << 20
	if _, err := s.Save(ctx(t), Checkpoint{ID: id, Epoch: Epoch{1, 3}, Payload: payload(17000, 1)}); err == nil || !strings.Contains(err.Error(), "MaxChunks") {
		t.Fatalf("save of 17 chunks with MaxChunks 16: %v", err)
	}
}

// writeSlot writes a slot's chunk records, then its manifest.
func writeSlot(t *testing.T, s *Store, id ID, slot string, man []byte, values [][]byte) {
	t.Helper()
	msgs := make([]kafka.Message, 0, len(values)+1)
	for i, v := range values {
		msgs = append(msgs, kafka.Message{Key: []byte(chunkKey(id, slot, i)), Value: v})
	}
	msgs = append(msgs, kafka.Message{Key: []byte(manifestKey(id, slot)), Value: man})
	if err := s.writer.WriteMessages(ctx(t), msgs...); err != nil {
		t.Fatal(err)
	}
}
