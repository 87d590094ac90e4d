package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/internal/kafkatest"
	"okstream/learner/rng"
)

// The named-feature flags reach the pipeline's configuration, and a wrong
// value is refused at start with a message that says how to fix it.
func TestNamedFeatureFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var f runFlags
	f.register(fs)
	if err := fs.Parse([]string{"--input", "events", "--dim", "30", "--max-values-per-name", "8", "--missing", "refuse", "--missing-category"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := f.pipelineConfig(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil || cfg.MaxValuesPerName != 8 || cfg.Missing != "refuse" || !cfg.MissingCategory {
		t.Fatalf("%+v %v", cfg, err)
	}
	env := func(k string) string { return map[string]string{"OKSTREAM_BROKERS": "127.0.0.1:1"}[k] }
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--missing", "drop"}, `--missing "drop": use impute`},
		{[]string{"--max-values-per-name", "50"}, "--max-values-per-name 50: use 1 to --dim (20)"},
		{[]string{"--max-values-per-name", "-1"}, "--max-values-per-name -1: use 1 to --dim (20)"},
	} {
		var out, errb bytes.Buffer
		code := runRunContext(context.Background(), append([]string{"--input", "x", "--dim", "20", "--metrics-addr", ""}, tc.args...), &out, &errb, env)
		if code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("run %v: exit %d, stderr:\n%s", tc.args, code, errb.String())
		}
	}
}

// namedJSON makes n JSON named-feature events ("v": 3, "f": ...): numbers,
// a string, a bool, nulls; a field added half way.
func namedJSON(n int, seed uint64) []kafka.Message {
	src := rng.New(seed)
	out := make([]kafka.Message, n)
	for i := range out {
		a, b := 2*src.Float64()-1, 2*src.Float64()-1
		dev := [...]string{"ios", "android", "web"}[src.IntN(3)]
		y := -1
		if a+b > 0 {
			y = 1
		}
		age := "null"
		if src.IntN(4) != 0 {
			age = fmt.Sprint(20 + src.IntN(40))
		}
		extra := ""
		if i >= n/2 {
			extra = fmt.Sprintf(`, "plan": "p%d"`, src.IntN(2))
		}
		out[i] = kafka.Message{Key: []byte(fmt.Sprint("k", i%13)), Value: []byte(fmt.Sprintf(
			`{"v": 3, "id": "e%d", "f": {"a": %g, "b": %g, "device": %q, "age": %s, "vip": %v%s}, "y": %d}`,
			i, a, b, dev, age, src.IntN(2) == 1, extra, y))}
	}
	return out
}

// okstream run on a JSON named-feature stream end to end: every event is
// predicted, none dead-lettered; okstream inspect checkpoints lists the
// feature names and kinds of each partition, and inspect events shows the
// named features.
func TestRunNamedAndInspect(t *testing.T) {
	e := kafkatest.New(t)
	in := e.Name("events")
	e.CreateTopic(t, in, 2, nil)
	const n = 600
	e.Produce(t, in, namedJSON(n, 3)...)
	ckpt := e.Name("ckpt")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var out, errb bytes.Buffer
	go func() {
		done <- runRunContext(ctx, []string{"--input", in, "--dim", "16", "--group", e.Name("g"), "--checkpoint-topic", ckpt,
			"--input-format", "json", "--metrics-addr", "",
			"--session-timeout", "6s", "--heartbeat-interval", "300ms"}, &out, &errb,
			func(k string) string { return map[string]string{"OKSTREAM_BROKERS": strings.Join(e.Brokers, ",")}[k] })
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
	if dl, _ := kafkatest.ReadAll(context.Background(), e.Client, in+".dlq"); len(dl) != 0 {
		t.Fatalf("%d dead letters", len(dl))
	}
	brokers := strings.Join(e.Brokers, ",")
	var o bytes.Buffer
	if code := runInspect([]string{"checkpoints", "--brokers", brokers, "--topic", ckpt, "--models"}, &o, &errb); code != 0 {
		t.Fatalf("inspect checkpoints: %s", errb.String())
	}
	s := o.String()
	if strings.Count(s, "features: named, 6 names") != 2 {
		t.Fatalf("inspect checkpoints output (want both partitions' dictionaries):\n%s", s)
	}
	for _, want := range []string{`"a"  numeric  (`, `"device=ios"  indicator`, `"age=<missing>"  missing`, `"plan=p1"  indicator`, `"vip"  numeric`} {
		if strings.Count(s, want) != 2 {
			t.Fatalf("inspect checkpoints output lacks %q twice:\n%s", want, s)
		}
	}
	o.Reset()
	if code := runInspect([]string{"events", "--brokers", brokers, "--topic", in, "--dim", "16", "--limit", "1"}, &o, &errb); code != 0 {
		t.Fatalf("inspect events: %s", errb.String())
	}
	if s := o.String(); !strings.Contains(s, `f={a=`) || !strings.Contains(s, `device="`) || !strings.Contains(s, "600 events, 0 would be dead-lettered") {
		t.Fatalf("inspect events output:\n%s", s)
	}
}
