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

// recycle hands a processed fetch's record chunks and key/value blocks
// back to the fetcher (kafkautil.FetchChunks), so that fetches stop
// allocating them; they are dropped when the fetcher has enough. Nothing
// may refer to the records' keys and values any more: a dead letter
// copies them (deadLetterMsg), a prediction's key is a string of its own.
func (w *worker) recycle(f fetched) {
	if len(f.chunks) == 0 && len(f.blocks) == 0 {
		return
	}
	select {
	case w.spent <- f:
	default:
	}
}

// reclaim takes back what the worker has recycled (the fetcher's only),
// and returns an empty chunk list for the next fetch.
func (w *worker) reclaim() [][]kafkautil.Record {
	select {
	case f := <-w.spent:
		w.chunks.Give(f.chunks)
		w.mem.Give(f.blocks)
		clear(f.chunks)
		return f.chunks[:0]
	default:
		return nil
	}
}

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
