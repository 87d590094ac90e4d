package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"okstream/codec"
	"okstream/internal/kafkatest"
	"okstream/internal/kafkautil"
)

// An unknown flag is one line naming it (and the nearest flag), not the
// whole usage.
func TestUnknownFlagIsOneLine(t *testing.T) {
	for _, cmd := range []string{"run", "replay", "eval", "inspect", "topics"} {
		args := []string{cmd, "--brokerz", "x"}
		if cmd == "topics" {
			args = []string{cmd, "create", "--brokerz", "x"}
		}
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 2 {
			t.Errorf("%s: exit %d", cmd, code)
		}
		lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
		if len(lines) != 2 || !strings.Contains(lines[0], "okstream "+cmd+": flag provided but not defined: -brokerz") ||
			(cmd != "eval" && !strings.Contains(lines[0], "did you mean --brokers?")) || !strings.Contains(lines[1], "okstream help "+cmd) {
			t.Errorf("%s: stderr %q", cmd, errb.String())
		}
	}
}

// A misspelt OKSTREAM_ variable is reported with the nearest flag's
// variable; variables that are flags, or used otherwise, are not.
func TestUnknownEnvWarned(t *testing.T) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var f runFlags
	f.register(fs)
	env := []string{"OKSTREAM_CHECKPOINT_EVRY=5", "OKSTREAM_BROKERS=x:1", "OKSTREAM_DATA_ROOT=/d", "OKSTREAM_TEST_BROKERS=y",
		"OKSTREAM_MY_SECRET=hunter2", "OKSTREAM_FROBNICATE=1", "PATH=/bin", "OKSTREAM_metrics_addr=:1"}
	got := unknownEnv(fs, env, "OKSTREAM_MY_SECRET")
	want := []string{
		"environment variable OKSTREAM_CHECKPOINT_EVRY is not a setting of okstream run and is ignored (did you mean OKSTREAM_CHECKPOINT_EVERY?)",
		"environment variable OKSTREAM_FROBNICATE is not a setting of okstream run and is ignored",
		"environment variable OKSTREAM_metrics_addr is not a setting of okstream run and is ignored (did you mean OKSTREAM_METRICS_ADDR?)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, w := range got {
		if strings.Contains(w, "hunter2") || strings.Contains(w, "=5") {
			t.Errorf("a warning shows a value: %s", w)
		}
	}
}

func TestHelpVersion(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"help", "version"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "Usage: okstream version") {
		t.Errorf("help version: exit %d, %q %q", code, out.String(), errb.String())
	}
	out.Reset()
	if code := run([]string{"help", "topics"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "topics create") {
		t.Errorf("help topics: exit %d, %q", code, out.String())
	}
}

// --passthrough takes the same configuration as a run with models — every
// flag of a learning run, the --model flags included — so that a
// deployment switches to pass-through by adding one flag: the models are
// validated, then not run (a log line says so), and every event still gets
// its prediction record, without scores. A bare spec names its model after
// the learner, as the help says.
func TestPassthroughAcceptsModels(t *testing.T) {
	e := kafkatest.New(t)
	in := e.Name("pt")
	e.CreateTopic(t, in, 2, nil)
	e.Produce(t, in, events(300, 2, 7)...)
	learning := []string{"--brokers", strings.Join(e.Brokers, ","), "--input", in, "--dim", "2", "--group", e.Name("g"),
		"--model", "champion=fogd:sigma=1,budget=20", "--model", "nogd:sigma=1,budget=30",
		"--feedback-buffer", "100", "--on-model-change", "reset", "--checkpoint-every", "100",
		"--session-timeout", "6s", "--heartbeat-interval", "300ms",
		"--metrics-addr", "", "--checkpoint-topic", e.Name("pt-ckpt")}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	var errb kafkatest.SyncBuffer
	go func() {
		done <- runRunContext(ctx, append(learning, "--passthrough"), io.Discard, &errb, func(string) string { return "" })
	}()
	var recs []kafkautil.Record
	for deadline := time.Now().Add(60 * time.Second); len(recs) < 300; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 300 predictions; stderr:\n%s", len(recs), errb.String())
		}
		recs, _ = kafkatest.ReadAll(context.Background(), e.Client, in+".predictions")
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errb.String())
	}
	for _, r := range recs {
		p, err := codec.DecodePrediction(r.Value)
		if err != nil || len(p.Models) != 0 {
			t.Fatalf("offset %d: a pass-through prediction with models %+v (%v)", p.Offset, p.Models, err)
		}
	}
	if s := errb.String(); !strings.Contains(s, "passthrough: the configured models are not run") || !strings.Contains(s, "champion") {
		t.Errorf("no log line saying the models are not run; stderr:\n%s", s)
	}
	// The same flags are refused alike in both modes: a bad spec fails a
	// pass-through run too.
	bad := append(append([]string(nil), learning...), "--model", "x=fogd:sigma=-1", "--passthrough")
	if code := runRunContext(context.Background(), bad, io.Discard, &errb, func(string) string { return "" }); code != 2 {
		t.Errorf("a bad --model with --passthrough: exit %d, want 2", code)
	}
	var f runFlags
	f.models = listFlag{"fogd:sigma=1"}
	f.brokers = "x:1"
	cfg, err := f.pipelineConfig(nil)
	if err != nil || len(cfg.Models) != 1 || cfg.Models[0].Name != "fogd" {
		t.Errorf("bare spec: %+v %v", cfg.Models, err)
	}
}

// eval --json writes the divergence warning to stderr (stdout is the JSON).
func TestEvalJSONKeepsWarnings(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"eval", "--data", filepath.Join("..", "..", "testdata", "spambase", "spambase.data"), "--scale", "minmax01",
		"--limit", "300", "--runs", "1", "--quiet", "--json", "--model", "fogd:loss=squared_hinge,eta=1e12,sigma=0.1,budget=20"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.HasPrefix(strings.TrimSpace(out.String()), "{") || !strings.Contains(errb.String(), "okstream eval: warning: ") ||
		!strings.Contains(errb.String(), "diverged") {
		t.Errorf("stdout %.80q, stderr %q", out.String(), errb.String())
	}
}
