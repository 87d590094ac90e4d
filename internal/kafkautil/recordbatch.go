package kafkautil

import (
	"encoding/binary"
	"hash/crc32"
	"time"

	"github.com/segmentio/kafka-go"
)

// AppendRecordBatch appends to dst a Kafka record set holding msgs' keys,
// values, headers and times as one uncompressed record batch (magic 2, the
// message format of Kafka ≥ 0.11; KIP-98), in the form
// kafka.Client.RawProduce sends: a 4-byte size, then the batch. Offsets are
// the records' indices; a record with a zero Time gets now. The producer id,
// epoch and base sequence are −1 (no idempotence, no transaction), as
// kafka-go's own producer writes them.
//
// It is the whole of what kafka-go's RecordSet.WriteTo does for such a
// batch, byte for byte (TestAppendRecordBatchMatchesKafkaGo), written into
// one growing slice instead of kafka-go's page buffers through per-record
// interface calls: the caller reuses dst, so a batch costs no allocation.
// A nil Key or Value is a null one; an empty one is empty.
func AppendRecordBatch(dst []byte, msgs []kafka.Message, now time.Time) []byte {
	start := len(dst)
	var hdr [4 + 61]byte
	dst = append(dst, hdr[:]...) // size, base offset, length, epoch, magic, crc, ... (filled in below)
	b := dst[start+4:]
	binary.BigEndian.PutUint32(b[12:], ^uint32(0)) // partition leader epoch −1
	b[16] = 2                                      // magic
	// attributes 0 (b[21:23]); lastOffsetDelta, timestamps filled in below
	binary.BigEndian.PutUint64(b[43:], ^uint64(0)) // producer id −1
	binary.BigEndian.PutUint16(b[51:], ^uint16(0)) // producer epoch −1
	binary.BigEndian.PutUint32(b[53:], ^uint32(0)) // base sequence −1
	binary.BigEndian.PutUint32(b[57:], uint32(len(msgs)))

	nowMs := now.UnixMilli()
	var first, maxTs int64
	// Records that share their headers (the same slice: a unit's
	// effectively-once headers) share their encoding: the previous
	// record's is copied rather than encoded again.
	var prevHdrs []kafka.Header
	hdrFrom, hdrTo, hdrLen := 0, 0, 0
	for i := range msgs {
		m := &msgs[i]
		ts := nowMs
		if !m.Time.IsZero() {
			ts = m.Time.UnixMilli()
		}
		if i == 0 {
			first = ts
		}
		maxTs = max(maxTs, ts)
		delta := ts - first
		same := i > 0 && len(m.Headers) == len(prevHdrs) && (len(m.Headers) == 0 || &m.Headers[0] == &prevHdrs[0])
		if !same {
			hdrLen = varintLen(int64(len(m.Headers)))
			for _, h := range m.Headers {
				hdrLen += varintLen(int64(len(h.Key))) + len(h.Key) + nullBytesLen(h.Value)
			}
		}
		length := 1 + varintLen(delta) + varintLen(int64(i)) + nullBytesLen(m.Key) + nullBytesLen(m.Value) + hdrLen
		dst = binary.AppendVarint(dst, int64(length))
		dst = append(dst, 0) // record attributes
		dst = binary.AppendVarint(dst, delta)
		dst = binary.AppendVarint(dst, int64(i))
		dst = appendNullBytes(dst, m.Key)
		dst = appendNullBytes(dst, m.Value)
		if same {
			dst = append(dst, dst[hdrFrom:hdrTo]...)
			continue
		}
		hdrFrom = len(dst)
		dst = binary.AppendVarint(dst, int64(len(m.Headers)))
		for _, h := range m.Headers {
			dst = binary.AppendVarint(dst, int64(len(h.Key)))
			dst = append(dst, h.Key...)
			dst = appendNullBytes(dst, h.Value)
		}
		hdrTo, prevHdrs = len(dst), m.Headers
	}
	b = dst[start+4:]
	binary.BigEndian.PutUint32(dst[start:], uint32(len(b)))
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12)) // batch length: after the length field
	if len(msgs) > 0 {
		binary.BigEndian.PutUint32(b[23:], uint32(len(msgs)-1)) // last offset delta
	}
	binary.BigEndian.PutUint64(b[27:], uint64(first))
	binary.BigEndian.PutUint64(b[35:], uint64(maxTs))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoli)) // from attributes on
	return dst
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// varintLen is the length of v as a zig-zag varint.
func varintLen(v int64) int {
	u := uint64(v<<1 ^ v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// nullBytesLen is the encoded length of a nullable byte string.
func nullBytesLen(b []byte) int {
	if b == nil {
		return 1 // varint −1
	}
	return varintLen(int64(len(b))) + len(b)
}

// appendNullBytes appends a nullable byte string: its length as a varint
// (−1 for nil), then its bytes.
func appendNullBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}
