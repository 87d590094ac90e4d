package serve

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the server's Prometheus metrics:
//
//	okstream_serve_requests_total{code}       predict requests by HTTP status
//	okstream_serve_request_seconds            predict latency (read, decode, score, encode, write)
//	okstream_serve_batch_events               events per answered request
//	okstream_serve_events_total               events answered
//	okstream_serve_model_age_seconds{partition}  age of each served model (now − Model.Time), at scrape time
//	okstream_serve_model_next_offset{partition}  the served model's next input offset
//	okstream_serve_model_updates_total{source}   models published to the server (Set), by source
//	okstream_serve_source_errors_total{source}   failures of a source to load or build a model
type metrics struct {
	s        *Server
	requests *prometheus.CounterVec
	latency  prometheus.Histogram
	batch    prometheus.Histogram
	events   prometheus.Counter
	updates  *prometheus.CounterVec
	errs     *prometheus.CounterVec
	age      *prometheus.Desc
	next     *prometheus.Desc
}

func newMetrics(s *Server) *metrics {
	return &metrics{
		s: s,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "okstream_serve_requests_total",
			Help: "Predict requests answered, by HTTP status code."}, []string{"code"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "okstream_serve_request_seconds",
			Help:    "Predict request latency in the handler: body read, decode, score, encode, write.",
			Buckets: prometheus.ExponentialBuckets(25e-6, 2, 18)}),
		batch: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "okstream_serve_batch_events",
			Help: "Events per answered predict request.", Buckets: prometheus.ExponentialBuckets(1, 4, 8)}),
		events: prometheus.NewCounter(prometheus.CounterOpts{Name: "okstream_serve_events_total",
			Help: "Events answered by predict requests."}),
		updates: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "okstream_serve_model_updates_total",
			Help: "Models published to the server, by source (live, replica, file)."}, []string{"source"}),
		errs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "okstream_serve_source_errors_total",
			Help: "Failures of a model source to read or build a model (the server keeps serving the previous one)."}, []string{"source"}),
		age: prometheus.NewDesc("okstream_serve_model_age_seconds",
			"Age of each served model: now minus the time its state was taken (its checkpoint's write time).", []string{"partition"}, nil),
		next: prometheus.NewDesc("okstream_serve_model_next_offset",
			"The first input offset the served model has not learnt.", []string{"partition"}, nil),
	}
}

func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	m.requests.Describe(ch)
	m.latency.Describe(ch)
	m.batch.Describe(ch)
	m.events.Describe(ch)
	m.updates.Describe(ch)
	m.errs.Describe(ch)
	ch <- m.age
	ch <- m.next
}

func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	m.requests.Collect(ch)
	m.latency.Collect(ch)
	m.batch.Collect(ch)
	m.events.Collect(ch)
	m.updates.Collect(ch)
	m.errs.Collect(ch)
	now := m.s.o.Now()
	for _, md := range m.s.Models() {
		p := strconv.Itoa(md.Partition)
		ch <- prometheus.MustNewConstMetric(m.age, prometheus.GaugeValue, now.Sub(md.Time).Seconds(), p)
		ch <- prometheus.MustNewConstMetric(m.next, prometheus.GaugeValue, float64(md.NextOffset), p)
	}
}

// observe counts a predict request.
func (m *metrics) observe(code, events int, d time.Duration) {
	m.requests.WithLabelValues(strconv.Itoa(code)).Inc()
	m.latency.Observe(d.Seconds())
	if code == 200 {
		m.batch.Observe(float64(events))
		m.events.Add(float64(events))
	}
}
