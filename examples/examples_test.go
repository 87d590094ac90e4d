// Package examples holds client examples in other languages (python/: a
// producer of okstream events and a consumer of its predictions, with
// confluent-kafka and msgpack). Its test runs them against the embedded
// broker (or $OKSTREAM_TEST_BROKERS) and an okstream pipeline.
package examples

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"okstream/consumer"
	"okstream/internal/kafkatest"
)

// python returns the interpreter to run the examples with
// ($OKSTREAM_PYTHON, else python3) if it has their dependencies; otherwise
// the test is skipped, or fails when $OKSTREAM_REQUIRE_PYTHON_EXAMPLES is
// set (.ci/run sets it after installing them into a venv).
func python(t *testing.T) string {
	t.Helper()
	py := os.Getenv("OKSTREAM_PYTHON")
	if py == "" {
		py = "python3"
	}
	out, err := exec.Command(py, "-c", "import confluent_kafka, msgpack").CombinedOutput()
	if err != nil {
		msg := "the Python examples need python3 with confluent-kafka and msgpack (python3 -m venv /tmp/venv && /tmp/venv/bin/pip install -r examples/python/requirements.txt, then OKSTREAM_PYTHON=/tmp/venv/bin/python): " +
			strings.TrimSpace(string(out)) + " " + errString(err)
		if os.Getenv("OKSTREAM_REQUIRE_PYTHON_EXAMPLES") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return py
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestPythonExamples sends events with python/producer.py, runs an
// okstream pipeline on them, and reads the predictions back with
// python/consumer.py: every event's prediction arrives, the models' mistake
// rates are printed and those of a learnable stream. The producer refuses a
// topic that does not exist (the silent failure the README warns about).
func TestPythonExamples(t *testing.T) {
	py := python(t)
	e := kafkatest.New(t)
	brokers := strings.Join(e.Brokers, ",")
	in := e.Name("py-events")
	const events = 600

	pyRun := func(ctx context.Context, script string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, py, append([]string{filepath.Join("python", script)}, args...)...)
		out, err := cmd.CombinedOutput()
		t.Logf("%s %s:\n%s", script, strings.Join(args, " "), out)
		return string(out), err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// A missing topic: the producer says so and fails, instead of sending nothing.
	out, err := pyRun(ctx, "producer.py", "--brokers", brokers, "--topic", e.Name("missing"), "--count", "5")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !strings.Contains(out, "does not exist") || !strings.Contains(out, "okstream topics create") {
		t.Errorf("producer to a missing topic: %v, %q", err, out)
	}

	e.CreateTopic(t, in, 2, nil)
	cfg := consumer.NewConfig() // creates the output topics, as okstream run does
	cfg.Brokers, cfg.Input, cfg.Group, cfg.Dim = e.Brokers, in, e.Name("py-group"), 8
	cfg.Checkpoints, cfg.CheckpointPartitions = e.Name("py-ckpt"), 1
	cfg.Models = []consumer.Model{{Name: "champion", Spec: "fogd:sigma=1,budget=100"}, {Name: "challenger", Spec: "nogd:sigma=1,budget=100"}}
	cfg.Registerer, cfg.SessionTimeout, cfg.HeartbeatInterval = prometheus.NewRegistry(), time.Second, 100*time.Millisecond
	cfg.Output, cfg.DeadLetter = "", ""
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	p, err := consumer.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("pipeline: %v", err)
		}
	}()

	if _, err := pyRun(ctx, "producer.py", "--brokers", brokers, "--topic", in, "--count", strconv.Itoa(events), "--dim", "8"); err != nil {
		t.Fatalf("producer: %v", err)
	}
	out, err = pyRun(ctx, "consumer.py", "--brokers", brokers, "--topic", in+".predictions", "--count", strconv.Itoa(events), "--timeout", "90")
	if err != nil {
		t.Fatalf("consumer: %v", err)
	}
	if !strings.Contains(out, "read "+strconv.Itoa(events)+" predictions") {
		t.Errorf("consumer output lacks the count")
	}
	rates := regexp.MustCompile(`model (\w+): (\d+) mistakes in (\d+) labelled events`).FindAllStringSubmatch(out, -1)
	if len(rates) != 2 {
		t.Fatalf("consumer output: %d model lines, want 2", len(rates))
	}
	for _, r := range rates {
		k, _ := strconv.Atoi(r[2])
		n, _ := strconv.Atoi(r[3])
		// About 90 % of the events are labelled; a learnable linear concept:
		// far better than chance after a few hundred events.
		if n < events/2 || n > events || float64(k) > 0.35*float64(n) {
			t.Errorf("model %s: %d mistakes in %d labelled events", r[1], k, n)
		}
	}
}
