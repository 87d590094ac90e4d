package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"okstream/learner"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"okstream/codec"
	"okstream/internal/kafkatest"
	"okstream/learner/rng"

	"github.com/segmentio/kafka-go"
)

// Precedence: flags > environment > config file > defaults.
func TestConfigLayers(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "okstream.conf")
	os.WriteFile(conf, []byte("# a comment\ndim = 3\nmodel = a=fogd\nmodel = b=nogd\nbrokers = file:1\ninput = 'events'\n"), 0o644)
	newFS := func() (*flag.FlagSet, *runFlags) {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var f runFlags
		f.register(fs)
		return fs, &f
	}
	fs, f := newFS()
	fs.Parse([]string{"--brokers", "flag:1", "--config", conf})
	env := map[string]string{"OKSTREAM_DIM": "5", "OKSTREAM_BROKERS": "env:1", "OKSTREAM_GROUP": "g-env"}
	if err := applyLayers(fs, f.config, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if f.brokers != "flag:1" || f.dim != 5 || f.group != "g-env" || f.input != "events" || len(f.models) != 2 || f.models[1] != "b=nogd" {
		t.Fatalf("resolved brokers=%q dim=%d group=%q input=%q models=%v", f.brokers, f.dim, f.group, f.input, f.models)
	}
	// Repeatable flags from the environment, separated by ';'.
	fs, f = newFS()
	fs.Parse(nil)
	env = map[string]string{"OKSTREAM_MODEL": "x=fogd; y=nogd"}
	if err := applyLayers(fs, "", func(k string) string { return env[k] }); err != nil || len(f.models) != 2 || f.models[1] != "y=nogd" {
		t.Fatalf("models from env: %v %v", f.models, err)
	}
	// Errors name their source.
	fs, _ = newFS()
	fs.Parse(nil)
	err := applyLayers(fs, "", func(k string) string { return map[string]string{"OKSTREAM_DIM": "three"}[k] })
	if err == nil || !strings.Contains(err.Error(), "OKSTREAM_DIM") {
		t.Fatalf("bad env value: %v", err)
	}
	os.WriteFile(conf, []byte("dimension = 3\n"), 0o644)
	fs, f = newFS()
	fs.Parse([]string{"--config", conf})
	err = applyLayers(fs, f.config, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), `unknown setting "dimension"`) || !strings.Contains(err.Error(), "okstream.conf:1") {
		t.Fatalf("unknown setting: %v", err)
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	var out, errb bytes.Buffer
	code := runRunContext(context.Background(), []string{"--input", "x", "--model", "m=fogd:sigma=-1", "--metrics-addr", ""}, &out, &errb, func(string) string { return "" })
	msg := errb.String()
	if code != 2 || !strings.Contains(msg, "--brokers") || !strings.Contains(msg, "--dim") || !strings.Contains(msg, "must be > 0") {
		t.Fatalf("exit %d, stderr:\n%s", code, msg)
	}
}

func events(n, dim int, seed uint64) []kafka.Message {
	src := rng.New(seed)
	var out []kafka.Message
	for i := 0; i < n; i++ {
		x := make([]float64, dim)
		for j := range x {
			x[j] = 2*src.Float64() - 1
		}
		y := 1.0
		if x[0]*x[1] < 0 {
			y = -1
		}
		b, _ := codec.AppendEvent(nil, &codec.Event{Version: 1, Key: string(rune('a' + i%7)), X: x, Y: y, HasY: true})
		out = append(out, kafka.Message{Key: []byte(string(rune('a' + i%7))), Value: b})
	}
	return out
}

// okstream run end to end on the test broker, then okstream inspect on what
// it wrote.
func TestRunAndInspect(t *testing.T) {
	e := kafkatest.New(t)
	in := e.Name("events")
	e.CreateTopic(t, in, 2, nil)
	msgs := events(1500, 4, 1)
	msgs = append(msgs, kafka.Message{Value: []byte("garbage")})
	e.Produce(t, in, msgs...)
	ckpt := e.Name("ckpt")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var out, errb bytes.Buffer
	go func() {
		done <- runRunContext(ctx, []string{"--input", in, "--dim", "4", "--group", e.Name("g"), "--checkpoint-topic", ckpt,
			"--model", "champion=fogd:sigma=1,budget=20", "--model", "challenger=nogd:sigma=1,budget=30", "--metrics-addr", "127.0.0.1:0",
			"--session-timeout", "6s", "--heartbeat-interval", "300ms", "--checkpoint-every", "400"}, &out, &errb,
			func(k string) string { return map[string]string{"OKSTREAM_BROKERS": strings.Join(e.Brokers, ",")}[k] })
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		recs, _ := kafkatest.ReadAll(context.Background(), e.Client, in+".predictions")
		if len(recs) >= 1500 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d predictions; stderr:\n%s", len(recs), errb.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("run exited %d:\n%s", code, errb.String())
	}
	brokers := strings.Join(e.Brokers, ",")
	var io1 bytes.Buffer
	if code := runInspect([]string{"predictions", "--brokers", brokers, "--topic", in + ".predictions", "--limit", "3"}, &io1, &errb); code != 0 {
		t.Fatalf("inspect predictions: %s", errb.String())
	}
	if s := io1.String(); !strings.Contains(s, "1500 distinct source events") || !strings.Contains(s, "champion") || !strings.Contains(s, "challenger") {
		t.Fatalf("inspect predictions output:\n%s", s)
	}
	var io2 bytes.Buffer
	if code := runInspect([]string{"checkpoints", "--brokers", brokers, "--topic", ckpt, "--models"}, &io2, &errb); code != 0 {
		t.Fatalf("inspect checkpoints: %s", errb.String())
	}
	if s := io2.String(); strings.Count(s, "newest: epoch") != 2 || !strings.Contains(s, "fogd:budget=20") || !strings.Contains(s, "mistake rate") ||
		!regexp.MustCompile(`, probability σ\(\S+·score [+-]\S+\)`).MatchString(s) || strings.Contains(s, "probability σ(1·score +0)") {
		t.Fatalf("inspect checkpoints output (the models' calibrations, checkpointed, moved from σ(score)):\n%s", s)
	}
	var io3 bytes.Buffer
	if code := runInspect([]string{"dead-letters", "--brokers", brokers, "--topic", in + ".dlq"}, &io3, &errb); code != 0 {
		t.Fatalf("inspect dead-letters: %s", errb.String())
	}
	if s := io3.String(); !strings.Contains(s, "1 dead letters; not_a_map: 1") || !strings.Contains(s, "67617262616765") {
		t.Fatalf("inspect dead-letters output:\n%s", s)
	}
}

// The demo completes and verifies exact recovery (small size for the test).
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("demo end to end in -short mode")
	}
	var out, errb bytes.Buffer
	code := runDemo([]string{"--events", "8000", "--partitions", "2"}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "exact recovery: every partition's final models are bit-identical") {
		t.Fatalf("demo exited %d:\n%s\n%s", code, out.String(), errb.String())
	}
}

// Every okstream run flag is documented in the README's configuration table.
func TestREADMEDocumentsRunFlags(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var f runFlags
	f.register(fs)
	fs.VisitAll(func(fl *flag.Flag) {
		if !strings.Contains(string(b), "| `--"+fl.Name+"` |") {
			t.Errorf("README's configuration reference lacks --%s", fl.Name)
		}
	})
}

// Every registered learner has a row in the README's learners table.
func TestREADMEListsEveryLearner(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range learner.Names() {
		if !strings.Contains(string(b), "| `"+name+"` |") {
			t.Errorf("README's learners table lacks %s", name)
		}
	}
}

// The value and id limits: on by default, 0 turns them off (a negative
// Config value), other values pass through; --feedback-buffer-bytes too.
func TestLimitFlags(t *testing.T) {
	for _, tc := range []struct {
		args          []string
		abs           float64
		idBytes       int
		feedbackBytes int64
	}{
		{nil, 1e9, 1024, 64 << 20},
		{[]string{"--max-abs-value", "0", "--max-id-bytes", "0"}, -1, -1, 64 << 20},
		{[]string{"--max-abs-value", "1e6", "--max-id-bytes", "64", "--feedback-buffer-bytes", "1000"}, 1e6, 64, 1000},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		var f runFlags
		f.register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		cfg, _ := f.pipelineConfig(slog.New(slog.NewTextHandler(io.Discard, nil)))
		if cfg.MaxAbsValue != tc.abs || cfg.MaxIDBytes != tc.idBytes || cfg.FeedbackBufferBytes != tc.feedbackBytes {
			t.Errorf("%v: MaxAbsValue %v, MaxIDBytes %d, FeedbackBufferBytes %d", tc.args, cfg.MaxAbsValue, cfg.MaxIDBytes, cfg.FeedbackBufferBytes)
		}
	}
}

// Without --model, run uses the self-tuning configuration (and nothing with
// --passthrough); the demo's defaults start with the same champion.
func TestRunDefaultModel(t *testing.T) {
	f := &runFlags{input: "events", dim: 3}
	cfg, err := f.pipelineConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Models) != 1 || cfg.Models[0].Name != "champion" || cfg.Models[0].Spec != "auto:base=fogd" {
		t.Fatalf("default models %+v", cfg.Models)
	}
	f.passthrough = true
	if cfg, _ = f.pipelineConfig(nil); len(cfg.Models) != 0 {
		t.Fatalf("passthrough with models %+v", cfg.Models)
	}
	if demoDefaultModels[0] != defaultRunModel {
		t.Fatalf("demo champion %s, run's default %s", demoDefaultModels[0], defaultRunModel)
	}
}
