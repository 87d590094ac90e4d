package consumer

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"okstream/codec"
	"okstream/internal/kafkautil"
	"okstream/share"
)

// fuzzWorker is a worker of input partition 0 of topic "in", group "g",
// batches of 100, with the test control secret (secret false: none), as
// far as the tail scan's record checks need one.
func fuzzWorker(secret bool) *worker {
	cfg := Config{Group: "g", Input: "in", BatchSize: 100, Logger: quietLogger()}
	if secret {
		cfg.ControlSecret = testControlSecret
	}
	p := &Pipeline{cfg: cfg, dm: newDedupMetrics(prometheus.NewRegistry()), inputParts: 1,
		groupHdr: []kafka.Header{{Key: HeaderGroup, Value: []byte(cfg.Group)}}}
	return &worker{p: p, part: 0, label: partLabel(0)}
}

// FuzzOutputHeaders feeds arbitrary headers and values to what
// effectively-once reads from the output and dead-letter topics' tails
// (sourceOf, then trustOutput): neither panics; a record trusted has a unit
// at most its source offset and at most maxUnitSpan below it, names this
// worker's group, input and partition, and with a secret carries a MAC of
// exactly that claim.
func FuzzOutputHeaders(f *testing.F) {
	signer := fuzzWorker(true)
	auth := signer.p.control().auth
	pred := codec.Prediction{Version: codec.PredictionVersion, Topic: "in", Partition: 0, Offset: 42}
	pv := codec.AppendPrediction(nil, &pred)
	f.Add(true, "g", "40", "", pv, string(signer.outputMAC(auth, nil, 40, pv, "")))
	f.Add(true, "g", "0", "in/0/7", []byte("x"), string(signer.outputMAC(auth, nil, 0, nil, "in/0/7")))
	f.Add(false, "g", "1000000000000", "in/0/0", []byte("forged"), "")
	f.Add(false, "g", "-5", "in/0/3", []byte(nil), "")
	f.Add(true, "g", "100", "in/0/100", []byte("forged"), "AAAA")
	f.Fuzz(func(t *testing.T, secret bool, group, unit, source string, value []byte, mac string) {
		w := fuzzWorker(secret)
		hdrs := []kafka.Header{{Key: HeaderGroup, Value: []byte(group)}, {Key: HeaderUnit, Value: []byte(unit)}}
		if source != "" {
			hdrs = append(hdrs, kafka.Header{Key: HeaderSource, Value: []byte(source)})
		}
		if mac != "" {
			hdrs = append(hdrs, kafka.Header{Key: share.HeaderMAC, Value: []byte(mac)})
		}
		r := kafkautil.Record{Value: value, Headers: hdrs}
		o, u, ok := w.sourceOf(&r)
		if !ok || !w.trustOutput(&r, controlPredictions, o, u) {
			return
		}
		if u > o || u < o-w.maxUnitSpan() || group != "g" {
			t.Fatalf("trusted unit %d for offset %d, group %q", u, o, group)
		}
		if secret && string(w.outputMAC(auth, nil, u, value, source)) != mac {
			t.Fatalf("trusted a record whose MAC is not its claim's")
		}
	})
}
