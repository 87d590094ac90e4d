// Package serve answers prediction requests over HTTP with okstream's
// models: POST /v1/predict takes a batch of events in the input topic's
// schema (JSON or msgpack) and answers, per event, the prediction record the
// pipeline would publish for it (package codec's schema: every model's
// score, decision, probability, a multi-class model's class and top
// classes). The models come from checkpoint payloads (consumer.NewScorer):
// the live models of an okstream run in the same process (Live), read-only
// replicas following the checkpoint topic (Follow), or a model file
// (LoadFile). docs/serving.md is the user's guide.
//
// A Server holds one model per input partition in an immutable snapshot
// behind an atomic pointer: a request reads the snapshot once and scores its
// whole batch against it (consistent answers), a new model replaces the
// snapshot (copy on write) and never blocks a request, and a request never
// blocks the source that publishes models (for Live, the pipeline's
// workers).
//
// Which partition's model answers an event: the request's ?partition=N
// when given; else the partition the input topic's producers send a record
// keyed by the event's "key" to (murmur2, kafka-go's Murmur2Balancer and
// Java's default partitioner: (murmur2(key) & 0x7fffffff) mod the input
// topic's partition count, SetPartitions; 503 while it is not known, unless
// the server holds one model from a file); else, when the server holds
// exactly one model, that one. An event that none of these routes is
// refused (400).
//
// Hostile requests: the body is read through http.MaxBytesReader
// (Options.MaxBodyBytes: 413 beyond it), a batch holds at most
// Options.MaxBatch events (413), every event is decoded by codec's decoder
// with the pipeline's limits (400 with codec's reason), at most
// Options.MaxInFlight requests are decoded and scored at once (the others
// wait for a slot until their context ends), so the memory requests hold
// is bounded by MaxInFlight × (MaxBodyBytes + the answer to MaxBatch
// events). Every refusal is a JSON object {"error": "...", ...} with a 4xx
// or 5xx status; nothing a client sends panics the server.
package serve

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/segmentio/kafka-go"

	"okstream/codec"
	"okstream/consumer"
)

// Options configure a Server. The zero value takes every default.
type Options struct {
	// MaxBodyBytes bounds a request's body (default 4 MiB): 413 beyond.
	MaxBodyBytes int64
	// MaxBatch bounds the events of one request (default 1000): 413 beyond.
	MaxBatch int
	// MaxInFlight bounds the requests decoded and scored at once (default
	// 4 × GOMAXPROCS); the others wait for a slot.
	MaxInFlight int
	// MaxAge makes /readyz answer 503 when a model is older than this
	// (Model.Time); 0: no age limit (/readyz then needs only a model).
	MaxAge time.Duration
	// Event limits, as okstream run's flags: MaxEventBytes (0: 1 MiB),
	// MaxAbsValue (0: consumer.DefaultMaxAbsValue; negative: off),
	// MaxIDBytes (0: consumer.DefaultMaxIDBytes; negative: off).
	MaxEventBytes int
	MaxAbsValue   float64
	MaxIDBytes    int
	// Tokens, when not empty, are the bearer tokens /v1/ requests must
	// carry (Authorization: Bearer TOKEN): 401 without one of them.
	// /healthz, /readyz and /metrics need none.
	Tokens [][]byte
	// Registerer takes the server's metrics (nil: a registry of its own,
	// served on /metrics).
	Registerer prometheus.Registerer
	// Logger (nil: discard).
	Logger *slog.Logger
	// Now is the clock (nil: time.Now); tests set it.
	Now func() time.Time
}

// Defaults of Options.
const (
	DefaultMaxBodyBytes = 4 << 20
	DefaultMaxBatch     = 1000
)

func (o *Options) fill() error {
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.MaxInFlight == 0 {
		o.MaxInFlight = 4 * runtime.GOMAXPROCS(0)
	}
	if o.MaxEventBytes == 0 {
		o.MaxEventBytes = 1 << 20
	}
	if o.MaxAbsValue == 0 {
		o.MaxAbsValue = consumer.DefaultMaxAbsValue
	}
	if o.MaxIDBytes == 0 {
		o.MaxIDBytes = consumer.DefaultMaxIDBytes
	}
	switch {
	case o.MaxBodyBytes < 1:
		return fmt.Errorf("serve: max body bytes %d: must be positive", o.MaxBodyBytes)
	case o.MaxBatch < 1:
		return fmt.Errorf("serve: max batch %d: must be positive", o.MaxBatch)
	case o.MaxInFlight < 1:
		return fmt.Errorf("serve: max in flight %d: must be positive", o.MaxInFlight)
	case o.MaxAge < 0:
		return fmt.Errorf("serve: max age %s: must be 0 (off) or positive", o.MaxAge)
	case o.MaxEventBytes < 1:
		return fmt.Errorf("serve: max event bytes %d: must be positive", o.MaxEventBytes)
	}
	for i, t := range o.Tokens {
		if len(t) < 16 {
			return fmt.Errorf("serve: token %d has %d bytes: use at least 16 (e.g. head -c 32 /dev/urandom | base64)", i+1, len(t))
		}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// Model is one input partition's models as a Server serves them.
type Model struct {
	Scorer    *consumer.Scorer
	Partition int
	// Topic and Group name the pipeline the model comes from ("" when not
	// known); Topic is the answers' "t".
	Topic, Group string
	// NextOffset is the first input offset the model has not learnt (the
	// checkpoint's): the answers' "o".
	NextOffset int64
	// Time is when the model's state was taken (a checkpoint's write
	// time); /readyz and okstream_serve_model_age_seconds measure the
	// model's age from it.
	Time time.Time
	// Source says where the model comes from: "live", "replica" or "file".
	Source string
}

// snapshot is what a request reads: immutable once published.
type snapshot struct {
	models []*Model // by partition; nil where none
	count  int      // models held
	parts  []int    // 0..n-1, n the partition count the keys are routed over
}

// Server answers prediction requests (see the package documentation).
type Server struct {
	o    Options
	snap atomic.Pointer[snapshot]
	mu   sync.Mutex // serialises the writers of snap
	sem  chan struct{}
	reg  *prometheus.Registry // nil when Options.Registerer was given
	m    *metrics
	bufs sync.Pool // *reqBuf
}

// New returns a Server without models (it answers 503 until one is set).
func New(o Options) (*Server, error) {
	if err := o.fill(); err != nil {
		return nil, err
	}
	s := &Server{o: o, sem: make(chan struct{}, o.MaxInFlight)}
	s.snap.Store(&snapshot{})
	reg := o.Registerer
	if reg == nil {
		s.reg = prometheus.NewRegistry()
		reg = s.reg
	}
	s.m = newMetrics(s)
	if err := reg.Register(s.m); err != nil {
		return nil, fmt.Errorf("serve: registering metrics: %w", err)
	}
	return s, nil
}

// Set serves m for its partition, replacing the partition's model. Safe
// for concurrent use; it never waits for a request.
func (s *Server) Set(m *Model) {
	s.m.updates.WithLabelValues(m.Source).Inc()
	s.update(func(n *snapshot) {
		for len(n.models) <= m.Partition {
			n.models = append(n.models, nil)
		}
		n.models[m.Partition] = m
	})
}

// sourceError counts and logs a source's failure to read or build a
// model (the partition's previous model, if any, stays served).
func (s *Server) sourceError(source string, err error, args ...any) {
	s.m.errs.WithLabelValues(source).Inc()
	s.o.Logger.Error("serve: a model could not be loaded; the previous one (if any) stays served", append([]any{"source", source, "err", err}, args...)...)
}

// Drop stops serving partition p's model (an instance that no longer owns
// the partition).
func (s *Server) Drop(p int) {
	s.update(func(n *snapshot) {
		if p < len(n.models) {
			n.models[p] = nil
		}
	})
}

// SetPartitions sets the input topic's partition count, over which events
// are routed by key (0: not known; a server with one model then answers
// every event with it, one with several refuses keys).
func (s *Server) SetPartitions(n int) {
	s.update(func(sn *snapshot) {
		sn.parts = make([]int, max(n, 0))
		for i := range sn.parts {
			sn.parts[i] = i
		}
	})
}

// update publishes a modified copy of the snapshot.
func (s *Server) update(f func(*snapshot)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.snap.Load()
	n := &snapshot{models: slices.Clone(old.models), parts: old.parts}
	f(n)
	n.count = 0
	for _, m := range n.models {
		if m != nil {
			n.count++
		}
	}
	s.snap.Store(n)
}

// Models lists the models served now, by partition.
func (s *Server) Models() []*Model {
	var out []*Model
	for _, m := range s.snap.Load().models {
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}

// Handler serves POST /v1/predict, GET /v1/models, /healthz, /readyz and
// (with a registry of its own) /metrics.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/predict", s.predict)
	mux.HandleFunc("/v1/models", s.models)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", s.readyz)
	if s.reg != nil {
		mux.Handle("/metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	}
	return mux
}

// apiError is an answer other than 200.
type apiError struct {
	code  int
	msg   string
	event int // the event at fault, −1 when none
	extra map[string]any
}

func (e *apiError) Error() string { return e.msg }

func failf(code int, format string, a ...any) *apiError {
	return &apiError{code: code, msg: fmt.Sprintf(format, a...), event: -1}
}

// writeError answers e as {"error": msg, "event": i, ...}.
func writeError(w http.ResponseWriter, e *apiError) {
	body := map[string]any{"error": e.msg}
	if e.event >= 0 {
		body["event"] = e.event
	}
	for k, v := range e.extra {
		body[k] = v
	}
	b, _ := json.Marshal(body)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	if e.code == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="okstream"`)
	}
	if e.code == http.StatusServiceUnavailable {
		h.Set("Retry-After", "1")
	}
	w.WriteHeader(e.code)
	w.Write(append(b, '\n'))
}

// authorized checks the bearer token (constant time over the tokens).
func (s *Server) authorized(r *http.Request) bool {
	if len(s.o.Tokens) == 0 {
		return true
	}
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return false
	}
	good := 0
	for _, t := range s.o.Tokens {
		good |= subtle.ConstantTimeCompare([]byte(tok), t)
	}
	return good == 1
}

// reqBuf is a request's reusable memory.
type reqBuf struct {
	body   bytes.Buffer
	out    []byte
	scores []codec.ModelScore
	pick   []codec.ModelScore
	ev     codec.Event
	dec    *codec.Decoder
	raws   [][2]int // event spans in body
}

// Format of a request and its answer.
const (
	formatJSON    = "json"
	formatMsgpack = "msgpack"
)

func (s *Server) predict(w http.ResponseWriter, r *http.Request) {
	start := s.o.Now()
	n, err := s.serve(w, r)
	code := http.StatusOK
	if err != nil {
		code = err.code
		writeError(w, err)
	}
	s.m.observe(code, n, s.o.Now().Sub(start))
}

// serve handles one predict request: the events answered, or the error to
// answer.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) (int, *apiError) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return 0, failf(http.StatusMethodNotAllowed, "use POST with a batch of events")
	}
	if !s.authorized(r) {
		return 0, failf(http.StatusUnauthorized, "missing or wrong bearer token (Authorization: Bearer TOKEN)")
	}
	format, aerr := requestFormat(r.Header.Get("Content-Type"))
	if aerr != nil {
		return 0, aerr
	}
	snap := s.snap.Load()
	if snap.count == 0 {
		return 0, failf(http.StatusServiceUnavailable, "no model loaded yet")
	}
	q := r.URL.Query()
	part := -1
	if v := q.Get("partition"); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 0 {
			return 0, failf(http.StatusBadRequest, "partition %q: want a partition number, 0 or more", v)
		}
		if p >= len(snap.models) || snap.models[p] == nil {
			return 0, &apiError{code: http.StatusNotFound, msg: fmt.Sprintf("no model of partition %d here", p), event: -1, extra: map[string]any{"partitions": snap.held()}}
		}
		part = p
	}
	var names []string
	for _, v := range q["model"] {
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	}
	if len(names) > 0 {
		known := snap.names()
		for _, n := range names {
			if !slices.Contains(known, n) {
				return 0, &apiError{code: http.StatusNotFound, msg: fmt.Sprintf("unknown model %q", n), event: -1, extra: map[string]any{"models": known}}
			}
		}
	}
	select {
	case s.sem <- struct{}{}:
		defer func() { <-s.sem }()
	case <-r.Context().Done():
		return 0, failf(http.StatusServiceUnavailable, "busy: %d requests in flight", s.o.MaxInFlight)
	}
	b, _ := s.bufs.Get().(*reqBuf)
	if b == nil {
		b = &reqBuf{dec: codec.NewDecoder(s.limits())}
	}
	defer s.bufs.Put(b)
	b.body.Reset()
	if _, err := b.body.ReadFrom(http.MaxBytesReader(w, r.Body, s.o.MaxBodyBytes)); err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return 0, failf(http.StatusRequestEntityTooLarge, "request body over %d bytes (send smaller batches)", s.o.MaxBodyBytes)
		}
		return 0, failf(http.StatusBadRequest, "reading the request body: %v", err)
	}
	body := b.body.Bytes()
	out := b.out[:0]
	// answer appends the prediction for event i, decoded in b.ev, to out.
	answer := func(i int) *apiError {
		m, aerr := snap.route(&b.ev, part)
		if aerr != nil {
			aerr.event = i
			return aerr
		}
		scores, serr := m.Scorer.Score(&b.ev, b.scores[:0])
		b.scores = scores[:0]
		if serr != nil {
			return &apiError{code: http.StatusBadRequest, msg: serr.Error(), event: i}
		}
		pred := codec.Prediction{
			Version: codec.PredictionVersionProb, ID: b.ev.ID, Key: b.ev.Key, TS: b.ev.TS, HasTS: b.ev.HasTS,
			Topic: m.Topic, Partition: int32(m.Partition), Offset: m.NextOffset,
			Class: m.Scorer.ClassName(scores), Models: scores,
		}
		if len(names) > 0 {
			b.pick = b.pick[:0]
			for _, sc := range scores {
				if slices.Contains(names, sc.Name) {
					b.pick = append(b.pick, sc)
				}
			}
			if len(b.pick) != len(names) {
				return &apiError{code: http.StatusNotFound, msg: fmt.Sprintf("partition %d's models are %v, not all of %v", m.Partition, m.Scorer.Names(), names), event: i}
			}
			pred.Models = b.pick
		}
		if format == formatJSON {
			if i > 0 {
				out = append(out, ',')
			}
			out = codec.AppendPredictionJSON(out, &pred)
		} else {
			out = codec.AppendPrediction(out, &pred)
		}
		return nil
	}
	// A JSON batch is decoded in place in one pass; at any problem it is
	// served again below, whose spans and errors are the reference.
	var n int
	done := false
	if format == formatJSON {
		out = appendHead(out, format, 0)
		n, done = decodeJSONBatch(body, s.o.MaxBatch, b.dec, &b.ev, func(i int) bool { return answer(i) == nil })
	}
	if !done {
		var spans [][2]int
		var err error
		if format == formatJSON {
			spans, err = splitJSON(body, s.o.MaxBatch, b.raws[:0])
		} else {
			spans, err = splitMsgpack(body, s.o.MaxBatch, b.raws[:0])
		}
		b.raws = spans[:0]
		if err != nil {
			var ae *apiError
			if errors.As(err, &ae) {
				return 0, ae
			}
			return 0, failf(http.StatusBadRequest, "malformed %s batch: %v (send an array of events, or {\"events\": [...]})", format, err)
		}
		out = appendHead(out[:0], format, len(spans))
		for i, sp := range spans {
			raw := body[sp[0]:sp[1]]
			var derr error
			if format == formatJSON {
				derr = b.dec.DecodeEventJSON(raw, &b.ev)
			} else {
				derr = b.dec.DecodeEvent(raw, &b.ev)
			}
			if derr != nil {
				e := &apiError{code: http.StatusBadRequest, msg: derr.Error(), event: i}
				if rs := codec.ReasonOf(derr); rs != "" {
					e.extra = map[string]any{"reason": string(rs)}
				}
				return 0, e
			}
			if aerr := answer(i); aerr != nil {
				return 0, aerr
			}
		}
		n = len(spans)
	}
	if format == formatJSON {
		out = append(out, "]}\n"...)
	}
	b.out = out
	h := w.Header()
	h.Set("Content-Type", "application/"+format)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(out))) // one write, not chunked
	w.Write(out)
	if cap(b.out) > 4*int(s.o.MaxBodyBytes) { // keep the pool's memory bounded
		b.out = nil
	}
	return n, nil
}

// limits are the event decoder's (any dimension: the Scorer checks it
// against the routed partition's models).
func (s *Server) limits() codec.Limits {
	return codec.Limits{MaxBytes: s.o.MaxEventBytes, MaxAbsValue: s.o.MaxAbsValue, MaxIDBytes: s.o.MaxIDBytes}
}

// requestFormat is the request's format from its Content-Type (JSON when
// absent).
func requestFormat(ct string) (string, *apiError) {
	if ct == "" {
		return formatJSON, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", failf(http.StatusUnsupportedMediaType, "Content-Type %q: %v", ct, err)
	}
	switch mt {
	case "application/json":
		return formatJSON, nil
	case "application/msgpack", "application/x-msgpack", "application/vnd.msgpack":
		return formatMsgpack, nil
	}
	return "", failf(http.StatusUnsupportedMediaType, "Content-Type %q: send application/json or application/msgpack", ct)
}

// appendHead starts the answer: {"predictions":[ in JSON, a map of one key
// and an array header of n in msgpack.
func appendHead(out []byte, format string, n int) []byte {
	if format == formatJSON {
		return append(out, `{"predictions":[`...)
	}
	out = append(out, 0x81, 0xa0|byte(len("predictions")))
	out = append(out, "predictions"...)
	return appendArrayHeader(out, n)
}

// appendArrayHeader appends a msgpack array header for n elements.
func appendArrayHeader(out []byte, n int) []byte {
	switch {
	case n < 16:
		return append(out, 0x90|byte(n))
	case n < 1<<16:
		return append(out, 0xdc, byte(n>>8), byte(n))
	}
	return append(out, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// route picks the model that answers ev (see the package documentation).
func (sn *snapshot) route(ev *codec.Event, part int) (*Model, *apiError) {
	if part >= 0 {
		return sn.models[part], nil
	}
	if ev.Key != "" && (len(sn.parts) > 0 || sn.count > 1 || sn.only().Source != SourceFile) {
		if len(sn.parts) == 0 {
			return nil, &apiError{code: http.StatusServiceUnavailable, msg: "the input topic's partition count is not known here (yet), so the key cannot be routed: give ?partition=N", extra: map[string]any{"partitions": sn.held()}}
		}
		p := kafka.Murmur2Balancer{Consistent: true}.Balance(kafka.Message{Key: []byte(ev.Key)}, sn.parts...)
		if p >= len(sn.models) || sn.models[p] == nil {
			return nil, &apiError{code: http.StatusServiceUnavailable, msg: fmt.Sprintf("key %q belongs to partition %d, whose model is not on this server (not loaded yet, or owned by another instance)", ev.Key, p), extra: map[string]any{"partition": p, "partitions": sn.held()}}
		}
		return sn.models[p], nil
	}
	if sn.count == 1 {
		return sn.only(), nil
	}
	return nil, &apiError{code: http.StatusBadRequest, msg: "the event has no key and the server holds several partitions' models: give the event's key or ?partition=N", extra: map[string]any{"partitions": sn.held()}}
}

// only is the model of a snapshot with one (count 1).
func (sn *snapshot) only() *Model {
	for _, m := range sn.models {
		if m != nil {
			return m
		}
	}
	return nil
}

// held lists the partitions with a model.
func (sn *snapshot) held() []int {
	out := []int{}
	for p, m := range sn.models {
		if m != nil {
			out = append(out, p)
		}
	}
	return out
}

// names are the models' names over every partition, in first-seen order.
func (sn *snapshot) names() []string {
	var out []string
	for _, m := range sn.models {
		if m == nil {
			continue
		}
		for _, n := range m.Scorer.Names() {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// modelInfo describes a served model (/v1/models, /readyz).
type modelInfo struct {
	Partition  int      `json:"partition"`
	Topic      string   `json:"topic,omitempty"`
	Group      string   `json:"group,omitempty"`
	Source     string   `json:"source"`
	NextOffset int64    `json:"next_offset"`
	AgeSeconds float64  `json:"age_seconds"`
	Models     []string `json:"models"`
	Dim        int      `json:"dim"`
}

func (s *Server) infos() []modelInfo {
	now := s.o.Now()
	var out []modelInfo
	for _, m := range s.Models() {
		out = append(out, modelInfo{Partition: m.Partition, Topic: m.Topic, Group: m.Group, Source: m.Source, NextOffset: m.NextOffset,
			AgeSeconds: now.Sub(m.Time).Seconds(), Models: m.Scorer.Names(), Dim: m.Scorer.Dim()})
	}
	return out
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		writeError(w, failf(http.StatusUnauthorized, "missing or wrong bearer token (Authorization: Bearer TOKEN)"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": s.infos()})
}

// readyz: 200 when a model is loaded and none is older than MaxAge; the
// body lists the models and their ages either way.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	infos := s.infos()
	body := map[string]any{"models": infos}
	code := http.StatusOK
	var stale []int
	for _, in := range infos {
		if s.o.MaxAge > 0 && in.AgeSeconds > s.o.MaxAge.Seconds() {
			stale = append(stale, in.Partition)
		}
	}
	switch {
	case len(infos) == 0:
		code, body["error"] = http.StatusServiceUnavailable, "no model loaded yet"
	case len(stale) > 0:
		code, body["error"] = http.StatusServiceUnavailable, fmt.Sprintf("the models of partitions %v are older than --max-age %s", stale, s.o.MaxAge)
	}
	body["ready"] = code == http.StatusOK
	writeJSON(w, code, body)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}
