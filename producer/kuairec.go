package producer

import (
	"container/heap"
	"fmt"
	"io"
	"math"

	"github.com/segmentio/kafka-go"

	"okstream/codec"
	"okstream/dataset/kuairec"
)

// KuaiRecMode says what a KuaiRec replay sends per interaction.
type KuaiRecMode int

// KuaiRec replay modes.
const (
	// KuaiRecLabelled sends one event per interaction (schema version 1):
	// id, ts, key, the features and y.
	KuaiRecLabelled KuaiRecMode = iota
	// KuaiRecFeedback sends an impression at the interaction's time (schema
	// version 2: id, ts, key, features, no y) and, play_duration later in
	// event time, a feedback event (version 2: id "<impression id>/fb", ts,
	// the same key, ref = the impression's id, y, no features), merged into
	// one stream ordered by event time. With StreamConfig.Speedup the
	// feedback therefore follows its impression by play_duration / Speedup
	// of wall time.
	KuaiRecFeedback
)

// String returns "labelled" or "feedback".
func (m KuaiRecMode) String() string {
	switch m {
	case KuaiRecLabelled:
		return "labelled"
	case KuaiRecFeedback:
		return "feedback"
	}
	return fmt.Sprintf("KuaiRecMode(%d)", int(m))
}

// KuaiRecConfig configures a KuaiRecSource.
type KuaiRecConfig struct {
	Mode KuaiRecMode
	// IDPrefix is put before every event id (and so every ref).
	IDPrefix string
	// Sparse sends the non-zero features as xi/xv (the kuairec-v1 vectors
	// are mostly zeros and ones).
	Sparse bool
}

// KuaiRecSource is the Source of a KuaiRec replay: the events of a
// kuairec.Stream in replay order (timestamp, user_id, video_id), keyed by
// user_id, with event time = the interaction's timestamp (ms), id
// "<user>-<video>" (see kuairec.Event.ID), the stream's features and label
// (watch_ratio > threshold → +1, else −1).
type KuaiRecSource struct {
	s   *kuairec.Stream
	cfg KuaiRecConfig
	th  float64
	i   int // next interaction
	fb  feedbackHeap
	seq int64
	x   []float64
	xi  []uint32
	xv  []float64

	// Counts of events returned so far.
	Impressions, Feedback, Labelled int64
}

// NewKuaiRecSource returns a Source over s.
func NewKuaiRecSource(s *kuairec.Stream, cfg KuaiRecConfig) (*KuaiRecSource, error) {
	if cfg.Mode != KuaiRecLabelled && cfg.Mode != KuaiRecFeedback {
		return nil, fmt.Errorf("producer: unknown KuaiRecMode %d", int(cfg.Mode))
	}
	return &KuaiRecSource{s: s, cfg: cfg, th: s.Options.Thresh()}, nil
}

// Len returns the number of events the source yields.
func (k *KuaiRecSource) Len() int64 {
	n := int64(len(k.s.Events))
	if k.cfg.Mode == KuaiRecFeedback {
		n *= 2
	}
	return n
}

// Headers returns the record headers that describe a KuaiRec replay:
// okstream-features (the feature schema version, e.g. "kuairec-v1") and
// okstream-data ("kuairec-synthetic/small_matrix" or "kuairec/...").
func (k *KuaiRecSource) Headers() []kafka.Header {
	data := "kuairec/"
	if k.s.Dir.Synthetic {
		data = "kuairec-synthetic/"
	}
	return []kafka.Header{
		{Key: "okstream-features", Value: []byte(k.s.Features.SchemaVersion())},
		{Key: "okstream-data", Value: []byte(data + k.s.Matrix)},
	}
}

// pendingFeedback is a feedback event waiting for its time.
type pendingFeedback struct {
	ts  int64
	seq int64 // order of the impressions, to break ties
	id  string
	key string
	y   float64
}

type feedbackHeap []pendingFeedback

func (h feedbackHeap) Len() int { return len(h) }
func (h feedbackHeap) Less(i, j int) bool {
	if h[i].ts != h[j].ts {
		return h[i].ts < h[j].ts
	}
	return h[i].seq < h[j].seq
}
func (h feedbackHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *feedbackHeap) Push(x any)   { *h = append(*h, x.(pendingFeedback)) }
func (h *feedbackHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Next implements Source. The returned event's feature slices are reused by
// the next call.
func (k *KuaiRecSource) Next() (codec.Event, error) {
	// A feedback event goes first if it is due strictly before the next
	// impression (at equal times the impression goes first).
	if len(k.fb) > 0 && (k.i >= len(k.s.Events) || k.fb[0].ts < k.s.Events[k.i].TS) {
		f := heap.Pop(&k.fb).(pendingFeedback)
		k.Feedback++
		k.Labelled++
		return codec.Event{Version: 2, ID: f.id + "/fb", TS: f.ts, HasTS: true, Key: f.key, Ref: f.id, Y: f.y, HasY: true}, nil
	}
	if k.i >= len(k.s.Events) {
		return codec.Event{}, io.EOF
	}
	e := &k.s.Events[k.i]
	k.i++
	ev := codec.Event{Version: 1, ID: k.cfg.IDPrefix + e.ID(), TS: e.TS, HasTS: true, Key: e.Key()}
	k.x = k.s.Features.BuildEvent(k.x, e)
	if k.cfg.Sparse {
		k.xi, k.xv = k.xi[:0], k.xv[:0]
		for j, v := range k.x {
			if math.Float64bits(v) != 0 {
				k.xi = append(k.xi, uint32(j))
				k.xv = append(k.xv, v)
			}
		}
		if len(k.xi) == 0 {
			k.xi, k.xv = append(k.xi, 0), append(k.xv, 0)
		}
		ev.XI, ev.XV = k.xi, k.xv
	} else {
		ev.X = k.x
	}
	y := e.Label(k.th)
	if k.cfg.Mode == KuaiRecLabelled {
		ev.Y, ev.HasY = y, true
		k.Labelled++
		return ev, nil
	}
	ev.Version = 2
	k.Impressions++
	heap.Push(&k.fb, pendingFeedback{ts: e.TS + e.PlayMS, seq: k.seq, id: ev.ID, key: ev.Key, y: y})
	k.seq++
	return ev, nil
}
