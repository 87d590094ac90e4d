package consumer

import (
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/codec"
	"okstream/internal/kafkatest"
)

// A change in the stream that auto detects and acts on (issue 40,
// learner/auto_track.go) is a metric and a log line: a binary stream whose
// concept flips at event 1,500 (every label inverted) makes auto restart
// its bank; okstream_model_changes_detected_total counts it and an info
// line names the model and the offset. A model that does not detect
// changes (fogd) reports none.
func TestDriftChangeReported(t *testing.T) {
	const n, change = 3000, 1500
	src := rand.New(rand.NewPCG(3, 4))
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		x := []float64{2*src.Float64() - 1, 2*src.Float64() - 1, 2*src.Float64() - 1, 2*src.Float64() - 1}
		y := 1.0
		if x[0]+0.5*x[1] < 0 {
			y = -1
		}
		if i >= change {
			y = -y
		}
		msgs[i] = kafka.Message{Key: []byte("k"), Value: mustEvent(t, codec.Event{Version: 1, X: x, Y: y, HasY: true})}
	}
	e := kafkatest.New(t)
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	e.Produce(t, input, msgs...)
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.Models = []Model{{Name: "auto", Spec: "auto:halving=50,budget=20"}, {Name: "fogd", Spec: "fogd"}}
	cfg.Dim = 4
	logs := &kafkatest.SyncBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	r := start(t, cfg)
	ends := endOffsets(t, e, input)
	waitFor(t, 60*time.Second, "the run", func() bool { return caughtUp(ends, r) })
	body := scrape(t, r.p)
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, `okstream_model_changes_detected_total{model="auto"} 1`) &&
		!strings.Contains(body, `okstream_model_changes_detected_total{model="auto"} 2`) {
		t.Fatalf("want 1 or 2 changes of auto:\n%s", grep(body, "changes_detected"))
	}
	if strings.Contains(body, `okstream_model_changes_detected_total{model="fogd"}`) {
		t.Fatalf("fogd reported a change:\n%s", grep(body, "changes_detected"))
	}
	line := grep(logs.String(), "detected a change")
	if !strings.Contains(line, "model=auto") || !strings.Contains(line, "offset=") {
		t.Fatalf("no log line for the change:\n%s", logs.String()[:min(2000, len(logs.String()))])
	}
	t.Logf("%s%s", grep(body, "changes_detected"), line)
}
