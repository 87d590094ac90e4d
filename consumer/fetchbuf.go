package consumer

import (
	"strconv"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"

	"okstream/internal/kafkautil"
)

// This file holds the worker's hot-path economies: what the pipeline does
// per event besides decoding, learning and encoding, done without an
// allocation per event (issue 17: the pipeline with FORKS at B = 100 at
// ≥ 70 % of pass-through; see BenchmarkPipelineRatio).

// recycle hands a processed fetch's record slice and key/value blocks back
// to the fetcher, so that fetches stop allocating (and growing) a slice of
// a few thousand records and the blocks their keys and values are copied
// into; they are dropped when the fetcher has enough. Nothing may refer to
// the records' keys and values any more: a dead letter copies them
// (deadLetterMsg), a prediction's key is a string of its own.
func (w *worker) recycle(f fetched) {
	if cap(f.recs) == 0 && len(f.blocks) == 0 {
		return
	}
	clear(f.recs) // drop the references to the keys, values and headers
	select {
	case w.spent <- fetched{recs: f.recs[:0], blocks: f.blocks}:
	default:
	}
}

// reuse returns an empty record slice for a fetch of at most limit bytes:
// a recycled one if there is one with room for the records such a fetch is
// expected to hold, else a new one with that room. Expected: the longest
// fetch's count, and while the fetches grow (fetchLoop's slow start doubles
// their bound) twice the last one's, at most limit over the bytes per
// record seen so far. Sizing it ahead spares the fetch re-growing the slice
// record by record (a measured 13 % of a pass-through pipeline's CPU while
// the fetches grow, issue 41); a recycled slice too small is dropped.
func (w *worker) reuse(limit int) []kafkautil.Record {
	want := w.fetchLen
	if limit > w.lastLimit && w.recBytes > 0 {
		want = max(want, min(limit/w.recBytes, 2*w.lastLen, maxFetchRecords))
	}
	w.lastLimit = limit
	select {
	case f := <-w.spent:
		w.mem.Give(f.blocks)
		if cap(f.recs) >= want {
			return f.recs
		}
	default:
	}
	return make([]kafkautil.Record, 0, want)
}

// maxFetchRecords bounds the records a fetch's slice is sized for ahead.
const maxFetchRecords = 1 << 16

// noteFetch updates the fetcher's record-count statistics with a fetch.
func (w *worker) noteFetch(recs []kafkautil.Record) {
	w.fetchLen = max(w.fetchLen, len(recs))
	if len(recs) == 0 {
		return
	}
	w.lastLen = len(recs)
	n := 0
	for i := range recs {
		n += len(recs[i].Key) + len(recs[i].Value) + recordOverhead
	}
	w.recBytes = max(1, n/len(recs))
}

// recordOverhead approximates a record's bytes in a fetch response beyond
// its key and value (its framing in the record batch).
const recordOverhead = 16

// updateSample is how often the learner update latency
// (okstream_learner_update_seconds) is timed: one model step in
// updateSample. Timing every step took two clock reads and a histogram
// observation per model and event, about a tenth of FORKS' own step at
// B = 100; a sample of one in 16 describes the distribution as well.
const updateSample = 16

// sampledObs returns the observers for the update latency when this event
// is one of the sampled ones, else nil (modelSet.score then reads no clock).
func (w *worker) sampledObs() []prometheus.Observer {
	w.timed++
	if w.timed%updateSample != 1 {
		return nil
	}
	return w.obs
}

// defaultID is the id of an event that has none: topic/partition/offset.
// The string shares the worker's buffer and is valid until the next call:
// emit only encodes it into the record (codec.AppendPrediction and
// AppendPredictionJSON copy it).
func (w *worker) defaultID(offset int64) string {
	b := append(w.idBuf[:0], w.p.cfg.Input...)
	b = append(b, '/')
	b = append(b, w.label...)
	b = append(b, '/')
	b = strconv.AppendInt(b, offset, 10)
	w.idBuf = b
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// appendKey copies a prediction's key into the unit's arena (next to the
// values) rather than into an allocation of its own.
func (u *unit) appendKey(key string) []byte {
	n := len(u.arena)
	u.arena = append(u.arena, key...)
	return u.arena[n:len(u.arena):len(u.arena)]
}
