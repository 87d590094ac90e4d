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

// TestPythonExampleLabels sends the producer's other label encodings — 0/1, bools,
// two strings, three string classes and a real-valued target — through a pipeline with
// okstream run's default model and task (champion=auto:base=fogd, each
// partition's labels decide), as README "Bring your own stream" does:
// nothing is dead-lettered, the binary streams are learnt as
// classification well below the class prior's mistake rate (the three
// classes as multi-class: records with the class index ci), and the
// regression stream as regression (prediction records without decisions)
// with an MSE well below the running mean's.
func TestPythonExampleLabels(t *testing.T) {
	py := python(t)
	e := kafkatest.New(t)
	brokers := strings.Join(e.Brokers, ",")
	const events = 400
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pyRun := func(script string, args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, py, append([]string{filepath.Join("python", script)}, args...)...).CombinedOutput()
		t.Logf("%s %s:\n%s", script, strings.Join(args, " "), out)
		if err != nil {
			t.Fatalf("%s: %v", script, err)
		}
		return string(out)
	}
	mistakes := regexp.MustCompile(`model (\w+): (\d+) mistakes in (\d+) labelled events`)
	prior := regexp.MustCompile(`baseline class prior: (\d+) mistakes in (\d+) labelled events`)
	mse := regexp.MustCompile(`model (\w+): MSE ([0-9.]+) over (\d+) labelled events`)
	mean := regexp.MustCompile(`baseline running mean: MSE ([0-9.]+) over (\d+) labelled events`)
	num := func(s string) float64 { f, _ := strconv.ParseFloat(s, 64); return f }

	for _, c := range []struct{ labels, positive string }{{"01", ""}, {"bool", ""}, {"strings", "spam"}, {"classes", ""}, {"regression", ""}} {
		t.Run(c.labels, func(t *testing.T) {
			in := e.Name("py-" + c.labels)
			e.CreateTopic(t, in, 2, nil)
			reg := prometheus.NewRegistry()
			cfg := consumer.NewConfig()
			cfg.Brokers, cfg.Input, cfg.Group, cfg.Dim = e.Brokers, in, e.Name("py-group-"+c.labels), 8
			cfg.Checkpoints, cfg.CheckpointPartitions = e.Name("py-ckpt-"+c.labels), 1
			cfg.Models = []consumer.Model{{Name: "champion", Spec: "auto:base=fogd"}} // okstream run's default
			cfg.Positive = c.positive
			cfg.Registerer, cfg.SessionTimeout, cfg.HeartbeatInterval = reg, time.Second, 100*time.Millisecond
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

			pyRun("producer.py", "--brokers", brokers, "--topic", in, "--count", strconv.Itoa(events), "--dim", "8", "--labels", c.labels)
			// Every event's prediction arrives: none was dead-lettered.
			out := pyRun("consumer.py", "--brokers", brokers, "--topic", in+".predictions", "--count", strconv.Itoa(events), "--timeout", "45")
			if dl := counterSum(t, reg, "okstream_dead_letters_total"); dl != 0 {
				t.Errorf("%v events dead-lettered", dl)
			}
			if c.labels != "regression" {
				m, b := mistakes.FindAllStringSubmatch(out, -1), prior.FindStringSubmatch(out)
				if len(m) != 1 || b == nil || mse.MatchString(out) {
					t.Fatalf("want one classifier's mistakes and the class prior's, no MSE:\n%s", out)
				}
				k, n, bk := num(m[0][2]), num(m[0][3]), num(b[1])
				if n < events/2 || k > 0.25*n || k > 0.5*bk {
					t.Errorf("%v mistakes in %v labelled events, the class prior %v", k, n, bk)
				}
				if c.labels == "classes" && !strings.Contains(out, "multi-class") {
					t.Errorf("no multi-class records:\n%s", out)
				}
				return
			}
			m, b := mse.FindAllStringSubmatch(out, -1), mean.FindStringSubmatch(out)
			if len(m) != 1 || b == nil || mistakes.MatchString(out) {
				t.Fatalf("want one regression model's MSE and the running mean's, no mistakes:\n%s", out)
			}
			if v, bv := num(m[0][2]), num(b[1]); num(m[0][3]) < events/2 || v > 0.5*bv {
				t.Errorf("MSE %v, the running mean's %v", v, bv)
			}
		})
	}
}

// counterSum is the sum of a counter family's series in reg (0 if absent).
func counterSum(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// TestPythonExamplesJSON runs the Python producer and consumer with JSON
// records (producer.py --format json into a pipeline with InputFormat and
// OutputFormat json; consumer.py --format json) and, on another topic, the
// same events as msgpack: the consumer reads every prediction, nothing is
// dead-lettered, and the models' mistake counts are the same in both
// formats (the same events in the same partitions give the same models).
func TestPythonExamplesJSON(t *testing.T) {
	py := python(t)
	e := kafkatest.New(t)
	brokers := strings.Join(e.Brokers, ",")
	const events = 500
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pyRun := func(script string, args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, py, append([]string{filepath.Join("python", script)}, args...)...).CombinedOutput()
		t.Logf("%s %s:\n%s", script, strings.Join(args, " "), out)
		if err != nil {
			t.Fatalf("%s: %v", script, err)
		}
		return string(out)
	}
	mistakes := regexp.MustCompile(`model (\w+): (\d+) mistakes in (\d+) labelled events`)
	lines := map[string][][]string{}
	for _, format := range []string{consumer.FormatMsgpack, consumer.FormatJSON} {
		in := e.Name("py-" + format)
		e.CreateTopic(t, in, 2, nil)
		reg := prometheus.NewRegistry()
		cfg := consumer.NewConfig()
		cfg.Brokers, cfg.Input, cfg.Group, cfg.Dim = e.Brokers, in, e.Name("py-group-"+format), 8
		cfg.Checkpoints, cfg.CheckpointPartitions = e.Name("py-ckpt-"+format), 1
		cfg.Models = []consumer.Model{{Name: "champion", Spec: "fogd:sigma=1,budget=100"}, {Name: "challenger", Spec: "nogd:sigma=1,budget=100"}}
		cfg.InputFormat, cfg.OutputFormat = format, format
		cfg.Registerer, cfg.SessionTimeout, cfg.HeartbeatInterval = reg, time.Second, 100*time.Millisecond
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		p, err := consumer.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- p.Run(runCtx) }()
		pyRun("producer.py", "--brokers", brokers, "--topic", in, "--count", strconv.Itoa(events), "--dim", "8", "--format", format)
		out := pyRun("consumer.py", "--brokers", brokers, "--topic", in+".predictions", "--count", strconv.Itoa(events), "--timeout", "60", "--format", format)
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("pipeline: %v", err)
		}
		if dl := counterSum(t, reg, "okstream_dead_letters_total"); dl != 0 {
			t.Errorf("%s: %v events dead-lettered", format, dl)
		}
		if !strings.Contains(out, "read "+strconv.Itoa(events)+" predictions") {
			t.Fatalf("%s: consumer output lacks the count", format)
		}
		if lines[format] = mistakes.FindAllStringSubmatch(out, -1); len(lines[format]) != 2 {
			t.Fatalf("%s: %d model lines, want 2", format, len(lines[format]))
		}
	}
	for i, m := range lines[consumer.FormatMsgpack] {
		if j := lines[consumer.FormatJSON][i]; j[0] != m[0] {
			t.Errorf("msgpack %q, JSON %q: the same events should give the same models", m[0], j[0])
		}
	}
}

// TestPythonExampleNamed sends the producer's named-feature events
// (--features named: a dict of numbers, a string, None now and then, a
// field added half way) as msgpack and, on another topic, as JSON, through
// a pipeline with okstream run's default model (--dim 32, the feature
// dictionary's cap) beside an online linear model: nothing is
// dead-lettered, the default model learns the stream with at most half
// the class prior's mistakes, and both formats give the same
// mistake counts (the same events give the same models).
func TestPythonExampleNamed(t *testing.T) {
	py := python(t)
	e := kafkatest.New(t)
	brokers := strings.Join(e.Brokers, ",")
	const events = 500
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pyRun := func(script string, args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, py, append([]string{filepath.Join("python", script)}, args...)...).CombinedOutput()
		t.Logf("%s %s:\n%s", script, strings.Join(args, " "), out)
		if err != nil {
			t.Fatalf("%s: %v", script, err)
		}
		return string(out)
	}
	mistakes := regexp.MustCompile(`model (\w+): (\d+) mistakes in (\d+) labelled events`)
	prior := regexp.MustCompile(`baseline class prior: (\d+) mistakes in (\d+) labelled events`)
	num := func(s string) float64 { f, _ := strconv.ParseFloat(s, 64); return f }
	lines := map[string]string{}
	for _, format := range []string{consumer.FormatMsgpack, consumer.FormatJSON} {
		in := e.Name("py-named-" + format)
		e.CreateTopic(t, in, 2, nil)
		reg := prometheus.NewRegistry()
		cfg := consumer.NewConfig()
		cfg.Brokers, cfg.Input, cfg.Group, cfg.Dim = e.Brokers, in, e.Name("py-group-named-"+format), 32
		cfg.Checkpoints, cfg.CheckpointPartitions = e.Name("py-ckpt-named-"+format), 1
		// okstream run's default, beside an online linear model.
		cfg.Models = []consumer.Model{{Name: "champion", Spec: "auto:base=fogd"}, {Name: "linear", Spec: "linear"}}
		cfg.InputFormat = format
		cfg.Registerer, cfg.SessionTimeout, cfg.HeartbeatInterval = reg, time.Second, 100*time.Millisecond
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		p, err := consumer.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- p.Run(runCtx) }()
		pyRun("producer.py", "--brokers", brokers, "--topic", in, "--count", strconv.Itoa(events), "--dim", "8", "--features", "named", "--format", format)
		out := pyRun("consumer.py", "--brokers", brokers, "--topic", in+".predictions", "--count", strconv.Itoa(events), "--timeout", "60")
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("pipeline: %v", err)
		}
		if dl := counterSum(t, reg, "okstream_dead_letters_total"); dl != 0 {
			t.Errorf("%s: %v events dead-lettered", format, dl)
		}
		m, b := mistakes.FindAllStringSubmatch(out, -1), prior.FindStringSubmatch(out)
		if len(m) != 2 || b == nil {
			t.Fatalf("%s: want two classifiers' mistakes and the class prior's:\n%s", format, out)
		}
		if k, n, bk := num(m[0][2]), num(m[0][3]), num(b[1]); n < events/2 || k > 0.5*bk {
			t.Errorf("%s: %v mistakes in %v labelled events, the class prior %v", format, k, n, bk)
		}
		lines[format] = m[0][0] + "; " + m[1][0]
	}
	if lines[consumer.FormatMsgpack] != lines[consumer.FormatJSON] {
		t.Errorf("msgpack %q, JSON %q: the same events should give the same models", lines[consumer.FormatMsgpack], lines[consumer.FormatJSON])
	}
}
