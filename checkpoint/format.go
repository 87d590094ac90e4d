package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ID identifies whose checkpoint it is.
type ID struct {
	Group     string
	Topic     string
	Partition int
}

func (id ID) String() string { return fmt.Sprintf("%s/%s/%d", id.Group, id.Topic, id.Partition) }

// prefix is the key prefix of all records of this ID.
func (id ID) prefix() string {
	return "okstream/v1/" + url.PathEscape(id.Group) + "/" + url.PathEscape(id.Topic) + "/" + strconv.Itoa(id.Partition) + "/"
}

// Epoch orders the checkpoints of one ID: the consumer-group generation that
// wrote it, then a sequence number that grows by one per checkpoint.
type Epoch struct {
	Generation int32
	Seq        uint64
}

// Less reports whether e is older than f.
func (e Epoch) Less(f Epoch) bool {
	if e.Generation != f.Generation {
		return e.Generation < f.Generation
	}
	return e.Seq < f.Seq
}

func (e Epoch) String() string { return fmt.Sprintf("%d.%d", e.Generation, e.Seq) }

// Slot is the slot ("A" or "B") an epoch is written to.
func (e Epoch) Slot() string {
	if e.Seq%2 == 0 {
		return "A"
	}
	return "B"
}

// Checkpoint is one saved state.
type Checkpoint struct {
	ID         ID
	Epoch      Epoch
	NextOffset int64  // the first input offset not reflected in Payload
	Payload    []byte // opaque to this package
	// Time is the manifest record's timestamp when loaded (Load, LoadAll):
	// when the checkpoint was written, by the writer's clock; zero when
	// not known. Save ignores it.
	Time time.Time
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

const (
	chunkMagic    = "OKCC"
	manifestMagic = "OKCM"
	formatVersion = 1
	chunkHeader   = 4 + 2 + 4 + 8 + 4 + 4 + 4 // magic, version, gen, seq, index, count, crc
)

func chunkKey(id ID, slot string, i int) string { return id.prefix() + slot + "/c" + strconv.Itoa(i) }
func manifestKey(id ID, slot string) string     { return id.prefix() + slot + "/m" }

func encodeChunk(e Epoch, index, count int, data []byte) []byte {
	b := make([]byte, 0, chunkHeader+len(data))
	b = append(b, chunkMagic...)
	b = binary.BigEndian.AppendUint16(b, formatVersion)
	b = binary.BigEndian.AppendUint32(b, uint32(e.Generation))
	b = binary.BigEndian.AppendUint64(b, e.Seq)
	b = binary.BigEndian.AppendUint32(b, uint32(index))
	b = binary.BigEndian.AppendUint32(b, uint32(count))
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(data, crcTable))
	return append(b, data...)
}

type chunk struct {
	epoch        Epoch
	index, count int
	crc          uint32
	data         []byte
}

// decodeChunk parses a chunk record. It allocates nothing: data is a
// sub-slice of b. A record that is not a chunk of this format is
// ReasonMalformed, a checksum failure ReasonChunkCRC.
func decodeChunk(b []byte) (chunk, error) {
	if len(b) < chunkHeader || string(b[:4]) != chunkMagic {
		return chunk{}, invalidf(ReasonMalformed, "not a checkpoint chunk")
	}
	if v := binary.BigEndian.Uint16(b[4:]); v != formatVersion {
		return chunk{}, invalidf(ReasonMalformed, "chunk format version %d, this build reads %d", v, formatVersion)
	}
	c := chunk{
		epoch: Epoch{Generation: int32(binary.BigEndian.Uint32(b[6:])), Seq: binary.BigEndian.Uint64(b[10:])},
		index: int(binary.BigEndian.Uint32(b[18:])),
		count: int(binary.BigEndian.Uint32(b[22:])),
		crc:   binary.BigEndian.Uint32(b[26:]),
		data:  b[chunkHeader:],
	}
	if crc32.Checksum(c.data, crcTable) != c.crc {
		return chunk{}, invalidf(ReasonChunkCRC, "chunk CRC mismatch")
	}
	return c, nil
}

// chunkEpochBytes returns the raw epoch field of a chunk record (nil if b is
// too short to be one); used to tell stale chunks apart without decoding.
func chunkEpochBytes(b []byte) []byte {
	if len(b) < chunkHeader {
		return nil
	}
	return b[6:18]
}

type manifest struct {
	id         ID
	epoch      Epoch
	nextOffset int64
	size       uint64
	crcs       []uint32
	sum        [32]byte
}

func encodeManifest(m manifest) []byte {
	var b bytes.Buffer
	b.WriteString(manifestMagic)
	w := func(v any) { _ = binary.Write(&b, binary.BigEndian, v) }
	w(uint16(formatVersion))
	for _, s := range []string{m.id.Group, m.id.Topic} {
		w(uint32(len(s)))
		b.WriteString(s)
	}
	w(int32(m.id.Partition))
	w(m.epoch.Generation)
	w(m.epoch.Seq)
	w(m.nextOffset)
	w(m.size)
	w(uint32(len(m.crcs)))
	for _, c := range m.crcs {
		w(c)
	}
	b.Write(m.sum[:])
	// The manifest protects itself too.
	w(crc32.Checksum(b.Bytes(), crcTable))
	return b.Bytes()
}

// decodeManifest parses a manifest record. Every allocation is bounded by
// the bytes present in b: the two strings by the bytes left, the CRC list
// by the bytes left / 4 and by maxChunks (checked first, so a forged count
// is ReasonTooManyChunks, not an allocation). The declared payload size is
// only a number here; assemble checks it.
func decodeManifest(b []byte, maxChunks int) (manifest, error) {
	var m manifest
	if len(b) < 8 || string(b[:4]) != manifestMagic {
		return m, invalidf(ReasonMalformed, "not a checkpoint manifest")
	}
	body, tail := b[:len(b)-4], b[len(b)-4:]
	if crc32.Checksum(body, crcTable) != binary.BigEndian.Uint32(tail) {
		return m, invalidf(ReasonMalformed, "manifest CRC mismatch")
	}
	r := bytes.NewReader(body[4:])
	var err error
	rd := func(v any) {
		if err == nil {
			err = binary.Read(r, binary.BigEndian, v)
		}
	}
	var ver uint16
	rd(&ver)
	if err == nil && ver != formatVersion {
		return m, invalidf(ReasonMalformed, "manifest format version %d, this build reads %d", ver, formatVersion)
	}
	str := func() string {
		var n uint32
		rd(&n)
		if err != nil || int64(n) > int64(r.Len()) {
			if err == nil {
				err = errors.New("bad string length")
			}
			return ""
		}
		s := make([]byte, n)
		_, err = r.Read(s)
		return string(s)
	}
	m.id.Group = str()
	m.id.Topic = str()
	var part int32
	rd(&part)
	m.id.Partition = int(part)
	rd(&m.epoch.Generation)
	rd(&m.epoch.Seq)
	rd(&m.nextOffset)
	rd(&m.size)
	var n uint32
	rd(&n)
	if err != nil {
		return m, invalidf(ReasonMalformed, "manifest truncated: %v", err)
	}
	if int64(n) > int64(maxChunks) {
		return m, invalidf(ReasonTooManyChunks, "epoch %s: manifest declares %d chunks, the limit (MaxChunks) is %d", m.epoch, n, maxChunks)
	}
	if int64(n) > int64(r.Len()/4) {
		return m, invalidf(ReasonMalformed, "epoch %s: manifest declares %d chunks but holds %d bytes of chunk CRCs", m.epoch, n, r.Len())
	}
	m.crcs = make([]uint32, n)
	for i := range m.crcs {
		rd(&m.crcs[i])
	}
	_, _ = r.Read(m.sum[:])
	if err != nil || r.Len() != 0 {
		return m, invalidf(ReasonMalformed, "manifest malformed")
	}
	return m, nil
}

// encodeCheckpoint is cp as records: its manifest (encoded by the caller
// with encodeManifest, after the chunks are durable) and its chunk values,
// cut at chunkBytes.
func encodeCheckpoint(cp Checkpoint, chunkBytes int) (manifest, [][]byte) {
	parts := split(cp.Payload, chunkBytes)
	m := manifest{id: cp.ID, epoch: cp.Epoch, nextOffset: cp.NextOffset, size: uint64(len(cp.Payload)), sum: sum256(cp.Payload)}
	values := make([][]byte, len(parts))
	for i, p := range parts {
		m.crcs = append(m.crcs, crc32.Checksum(p, crcTable))
		values[i] = encodeChunk(cp.Epoch, i, len(parts), p)
	}
	return m, values
}

// split cuts payload into chunks of at most size bytes (at least one chunk,
// possibly empty).
func split(payload []byte, size int) [][]byte {
	if len(payload) == 0 {
		return [][]byte{nil}
	}
	var out [][]byte
	for len(payload) > 0 {
		n := min(size, len(payload))
		out = append(out, payload[:n])
		payload = payload[n:]
	}
	return out
}

func sum256(b []byte) [32]byte { return sha256.Sum256(b) }

// belongs reports whether key is a record of id, returning the slot and the
// chunk index (-1 for the manifest).
func belongs(key string, id ID) (slot string, index int, ok bool) {
	rest, ok := strings.CutPrefix(key, id.prefix())
	if !ok {
		return "", 0, false
	}
	slot, what, ok := strings.Cut(rest, "/")
	if !ok || (slot != "A" && slot != "B") {
		return "", 0, false
	}
	if what == "m" {
		return slot, -1, true
	}
	if s, ok := strings.CutPrefix(what, "c"); ok {
		if i, err := strconv.Atoi(s); err == nil && i >= 0 {
			return slot, i, true
		}
	}
	return "", 0, false
}
