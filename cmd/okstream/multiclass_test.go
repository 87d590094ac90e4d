package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/codec"
	"okstream/internal/kafkatest"
	"okstream/learner/rng"
)

// multiEvents is a stream of three string classes, linearly separable in
// (x0, x1) with directions 120° apart.
func multiEvents(n, dim int, seed uint64) []kafka.Message {
	names := []string{"red", "green", "blue"}
	src := rng.New(seed)
	var out []kafka.Message
	for i := 0; i < n; i++ {
		x := make([]float64, dim)
		for j := range x {
			x[j] = 2*src.Float64() - 1
		}
		s := [3]float64{x[0], -0.5*x[0] + 0.866*x[1], -0.5*x[0] - 0.866*x[1]}
		c := 0
		for k := 1; k < 3; k++ {
			if s[k] > s[c] {
				c = k
			}
		}
		key := string(rune('a' + i%7))
		b, _ := codec.AppendEvent(nil, &codec.Event{Version: 1, Key: key, X: x, HasY: true, YKind: codec.LabelString, YStr: names[c]})
		out = append(out, kafka.Message{Key: []byte(key), Value: b})
	}
	return out
}

// okstream run with no --model and no --task on a stream of three string
// classes learns multi-class: nothing is dead-lettered, inspect predictions
// shows each record's class and top classes and a mistake rate far below
// the class prior's (about 64 %), inspect events reports the multi-class
// task and its class count, inspect checkpoints --models the multi-class
// models.
func TestRunMultiClass(t *testing.T) {
	e := kafkatest.New(t)
	in := e.Name("events")
	e.CreateTopic(t, in, 2, nil)
	const n = 1500
	e.Produce(t, in, multiEvents(n, 4, 3)...)
	ckpt := e.Name("ckpt")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var out, errb bytes.Buffer
	brokers := strings.Join(e.Brokers, ",")
	go func() {
		done <- runRunContext(ctx, []string{"--brokers", brokers, "--input", in, "--dim", "4", "--group", e.Name("g"), "--checkpoint-topic", ckpt,
			"--metrics-addr", "", "--session-timeout", "6s", "--heartbeat-interval", "300ms", "--checkpoint-every", "400"}, &out, &errb,
			func(string) string { return "" })
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		recs, _ := kafkatest.ReadAll(context.Background(), e.Client, in+".predictions")
		if len(recs) >= n {
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
	if recs, _ := kafkatest.ReadAll(context.Background(), e.Client, in+".dlq"); len(recs) != 0 {
		t.Fatalf("%d dead letters", len(recs))
	}
	var o1 bytes.Buffer
	if code := runInspect([]string{"predictions", "--brokers", brokers, "--topic", in + ".predictions", "--limit", "-1"}, &o1, &errb); code != 0 {
		t.Fatalf("inspect predictions: %s", errb.String())
	}
	s := o1.String()
	if !regexp.MustCompile(`champion: "(red|green|blue)" p=0\.\d+ \[(red|green|blue) 0\.\d+, (red|green|blue) 0\.\d+, (red|green|blue) \d\.\d+(e-\d+)?\] u=\d+\n`).MatchString(s) {
		t.Fatalf("inspect predictions shows no class and top classes:\n%.3000s", s)
	}
	m := regexp.MustCompile(`champion\s+\d+\s+([0-9.]+)% \(\d+\) multi-class`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no multi-class mistake rate:\n%s", s[max(0, len(s)-600):])
	}
	t.Logf("okstream run, no --model, three string classes: %s%% mistakes (class prior about 64%%)", m[1])
	if rate, err := strconv.ParseFloat(m[1], 64); err != nil || rate > 20 {
		t.Fatalf("mistake rate %s%%", m[1])
	}
	var o2 bytes.Buffer
	if code := runInspect([]string{"events", "--brokers", brokers, "--topic", in, "--dim", "4", "--limit", "0"}, &o2, &errb); code != 0 {
		t.Fatalf("inspect events: %s", errb.String())
	}
	if s := o2.String(); !strings.Contains(s, "1500 events, 0 would be dead-lettered") || strings.Count(s, ": multiclass, strings 3 classes") != 2 {
		t.Fatalf("inspect events:\n%s", s)
	}
	var o3 bytes.Buffer
	if code := runInspect([]string{"checkpoints", "--brokers", brokers, "--topic", ckpt, "--models"}, &o3, &errb); code != 0 {
		t.Fatalf("inspect checkpoints: %s", errb.String())
	}
	if s := o3.String(); strings.Count(s, "multi-class over 3 classes, mistake rate") != 2 || strings.Count(s, "labels: multiclass") != 2 {
		t.Fatalf("inspect checkpoints:\n%s", s)
	}
}

// Multi-class refusals at start: delayed feedback, shared models, a cap out
// of range.
func TestRunMultiClassRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--task", "multiclass", "--feedback-buffer", "10"}, "do not take delayed feedback"},
		{[]string{"--task", "multi-class", "--share", "champion"}, "cannot be shared"},
		{[]string{"--task", "multiclass", "--positive", "spam"}, "drop --positive"},
		{[]string{"--max-classes", "-1"}, "--max-classes -1"},
		{[]string{"--max-classes", "5000"}, "--max-classes 5000"},
		{[]string{"--top-k", "-1"}, "--top-k -1"},
	} {
		var f runFlags
		fs := newFlagSet("run", "", "", &bytes.Buffer{})
		f.register(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if _, err := f.pipelineConfig(nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
	var f runFlags
	fs := newFlagSet("run", "", "", &bytes.Buffer{})
	f.register(fs)
	if err := fs.Parse([]string{"--task", "multiclass"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := f.pipelineConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Brokers, cfg.Input, cfg.Dim = []string{"localhost:1"}, "in", 3
	if err := cfg.Validate(); err != nil {
		t.Fatalf("--task multiclass with the default model: %v", err)
	}
}
