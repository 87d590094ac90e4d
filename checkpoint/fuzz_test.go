package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"hash/crc32"
	"slices"
	"testing"
)

// A fuzz input is one slot's records:
//
//	flags byte | u32 manifest length | manifest | { u32 chunk index | u32 length | value }*
//
// Lengths are clamped to the bytes left. Before assembly the harness
// recomputes every checksum (chunk CRCs, the manifest's own CRC, and with
// flag bit 0 the manifest's chunk CRC list and payload SHA-256), so that
// mutations of sizes, counts, indices and epochs reach the checks behind
// the checksums instead of stopping at them.

type fuzzRecord struct {
	index int
	value []byte
}

func fuzzEncode(flags byte, manifest []byte, recs []fuzzRecord) []byte {
	b := []byte{flags}
	b = binary.BigEndian.AppendUint32(b, uint32(len(manifest)))
	b = append(b, manifest...)
	for _, r := range recs {
		b = binary.BigEndian.AppendUint32(b, uint32(r.index))
		b = binary.BigEndian.AppendUint32(b, uint32(len(r.value)))
		b = append(b, r.value...)
	}
	return b
}

func fuzzDecode(b []byte) (flags byte, manifest []byte, recs []fuzzRecord) {
	take := func(n int) []byte {
		n = min(n, len(b))
		out := b[:n:n]
		b = b[n:]
		return out
	}
	u32 := func() int {
		v := take(4)
		if len(v) < 4 {
			return 0
		}
		return int(binary.BigEndian.Uint32(v))
	}
	if len(b) == 0 {
		return 0, nil, nil
	}
	flags = take(1)[0]
	manifest = take(u32())
	for len(b) > 0 {
		idx := u32()
		recs = append(recs, fuzzRecord{idx, take(u32())})
	}
	return flags, manifest, recs
}

// fixChecksums recomputes the checksums of a slot's records in place (see
// above) and returns the (re-encoded) manifest.
func fixChecksums(flags byte, man []byte, recs []fuzzRecord) []byte {
	for _, r := range recs {
		if v := r.value; len(v) >= chunkHeader && string(v[:4]) == chunkMagic {
			binary.BigEndian.PutUint32(v[26:], crc32.Checksum(v[chunkHeader:], crcTable))
		}
	}
	if len(man) < 8 || string(man[:4]) != manifestMagic {
		return man
	}
	man = slices.Clone(man)
	binary.BigEndian.PutUint32(man[len(man)-4:], crc32.Checksum(man[:len(man)-4], crcTable))
	if flags&1 == 0 {
		return man
	}
	m, err := decodeManifest(man, 1<<20)
	if err != nil {
		return man
	}
	// The chunk CRCs and SHA-256 a writer would have put there (the last
	// record of an index wins, as in the log), keeping the forged size and
	// count.
	latest := map[int][]byte{}
	for _, r := range recs {
		latest[r.index] = r.value
	}
	h := sha256.New()
	for i := range m.crcs {
		if c, err := decodeChunk(latest[i]); err == nil {
			m.crcs[i] = c.crc
			h.Write(c.data)
		}
	}
	h.Sum(m.sum[:0])
	return encodeManifest(m)
}

var fuzzLimits = []limits{
	{maxState: 4 << 10, maxChunks: 8}, // small: the fuzzer reaches the bounds
	{maxState: DefaultMaxStateBytes, maxChunks: DefaultMaxChunks},
}

func checkAssemble(t *testing.T, data []byte) {
	flags, man, recs := fuzzDecode(data)
	man = fixChecksums(flags, man, recs)
	id, slot := ID{"g", "t", 0}, "A"
	if m, err := decodeManifest(man, 1<<20); err == nil {
		id, slot = m.id, m.epoch.Slot()
	}
	for _, lim := range fuzzLimits {
		var sr slotRecords
		sr.add(-1, man, lim)
		for _, r := range recs {
			sr.add(r.index, r.value, lim)
			if sr.bytes > lim.slotBytes() || len(sr.chunks) > lim.maxChunks {
				t.Fatalf("slot keeps %d bytes in %d chunks; bounds %d, %d", sr.bytes, len(sr.chunks), lim.slotBytes(), lim.maxChunks)
			}
		}
		var sum int64
		for _, v := range sr.chunks {
			sum += int64(len(v))
		}
		if sum != sr.bytes {
			t.Fatalf("slot keeps %d bytes, counted %d", sum, sr.bytes)
		}
		cp, reason, why := assemble(id, slot, man, sr.chunks, lim)
		if cp == nil {
			if !slices.Contains(Reasons(), reason) || why == "" {
				t.Fatalf("rejected with reason %q, detail %q", reason, why)
			}
			continue
		}
		m, err := decodeManifest(man, lim.maxChunks)
		if err != nil {
			t.Fatalf("accepted a manifest that does not decode: %v", err)
		}
		if int64(len(cp.Payload)) > lim.maxState || uint64(len(cp.Payload)) != m.size || sha256.Sum256(cp.Payload) != m.sum {
			t.Fatalf("accepted %d bytes: manifest size %d, limit %d", len(cp.Payload), m.size, lim.maxState)
		}
		var want []byte
		for i := range m.crcs {
			c, _ := decodeChunk(sr.chunks[i])
			want = append(want, c.data...)
		}
		if !bytes.Equal(want, cp.Payload) || cp.Epoch != m.epoch || cp.ID != id || reason != "" {
			t.Fatal("accepted payload is not the chunks' data")
		}
	}
}

// slotInput is a slot's manifest and chunk values (indices 0, 1, ...) as a
// fuzz input.
func slotInput(man []byte, values [][]byte) []byte {
	recs := make([]fuzzRecord, len(values))
	for i, v := range values {
		recs[i] = fuzzRecord{i, v}
	}
	return fuzzEncode(1, man, recs)
}

// fuzzSeed is a real checkpoint's slot as a fuzz input.
func fuzzSeed(cp Checkpoint, chunkBytes int) []byte {
	m, values := encodeCheckpoint(cp, chunkBytes)
	return slotInput(encodeManifest(m), values)
}

// FuzzAssemble feeds one slot's records, checksums recomputed, through the
// same collection (slotRecords) and validation (assemble) as Load and Scan,
// under small and default limits: no panic, the per-slot bound holds, a
// rejection has a known reason, and an accepted checkpoint is exactly the
// chunks' data, of the declared size, within MaxStateBytes.
func FuzzAssemble(f *testing.F) {
	id := ID{"g", "t", 0}
	f.Add(fuzzSeed(Checkpoint{ID: id, Epoch: Epoch{1, 2}, NextOffset: 7, Payload: payload(100, 1)}, 40))
	f.Add(fuzzSeed(Checkpoint{ID: id, Epoch: Epoch{3, 5}, NextOffset: 9, Payload: payload(5000, 2)}, 1000))
	f.Add(fuzzSeed(Checkpoint{ID: ID{"g/1", "events", 2}, Epoch: Epoch{1, 1}, Payload: nil}, 10))
	f.Add(fuzzSeed(Checkpoint{ID: id, Epoch: Epoch{2, 4}, NextOffset: 1, Payload: []byte("x")}, 1))
	for _, size := range []uint64{1 << 40, 1 << 62} {
		f.Add(forgedSlot(id, Epoch{1, 2}, size, 3))
	}
	f.Fuzz(checkAssemble)
}

// forgedSlot is forgedRecords as a fuzz input.
func forgedSlot(id ID, e Epoch, size uint64, chunks int) []byte {
	return slotInput(forgedRecords(id, e, size, chunks))
}

// The harness is not vacuous: the real checkpoints among the seeds are
// accepted after the checksum fix-up, and the forged ones rejected.
func TestFuzzHarnessAccepts(t *testing.T) {
	id := ID{"g", "t", 0}
	for _, c := range []struct {
		in   []byte
		want bool
	}{
		{fuzzSeed(Checkpoint{ID: id, Epoch: Epoch{3, 5}, NextOffset: 9, Payload: payload(5000, 2)}, 1000), true},
		{fuzzSeed(Checkpoint{ID: id, Epoch: Epoch{1, 1}}, 10), true},
		{forgedSlot(id, Epoch{1, 2}, 1<<40, 3), false},
	} {
		flags, man, recs := fuzzDecode(c.in)
		man = fixChecksums(flags, man, recs)
		m, err := decodeManifest(man, DefaultMaxChunks)
		if err != nil {
			t.Fatal(err)
		}
		var sr slotRecords
		for _, r := range recs {
			sr.add(r.index, r.value, fuzzLimits[1])
		}
		cp, reason, why := assemble(m.id, m.epoch.Slot(), man, sr.chunks, fuzzLimits[1])
		if (cp != nil) != c.want {
			t.Fatalf("epoch %s: accepted %v, want %v (%s %s)", m.epoch, cp != nil, c.want, reason, why)
		}
		checkAssemble(t, c.in)
	}
}
