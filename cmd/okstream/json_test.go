package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/codec"
	"okstream/consumer"
	"okstream/internal/kafkatest"
)

// The format flags reach the pipeline's configuration, and a wrong value is
// refused at start with a message naming the flag's values.
func TestFormatFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		in, out string
	}{
		{nil, consumer.FormatMsgpack, consumer.FormatMsgpack},
		{[]string{"--input-format", "json"}, consumer.FormatJSON, consumer.FormatMsgpack},
		{[]string{"--output-format", "json"}, consumer.FormatMsgpack, consumer.FormatJSON},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		var f runFlags
		f.register(fs)
		if err := fs.Parse(append([]string{"--input", "events", "--dim", "3"}, tc.args...)); err != nil {
			t.Fatal(err)
		}
		cfg, err := f.pipelineConfig(slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil || cfg.InputFormat != tc.in || cfg.OutputFormat != tc.out {
			t.Errorf("%v: %q %q, %v", tc.args, cfg.InputFormat, cfg.OutputFormat, err)
		}
	}
	env := func(k string) string { return map[string]string{"OKSTREAM_BROKERS": "127.0.0.1:1"}[k] }
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--input-format", "avro"}, `input format "avro": use msgpack or json`},
		{[]string{"--output-format", "protobuf"}, `output format "protobuf": use msgpack or json`},
	} {
		var out, errb bytes.Buffer
		code := runRunContext(context.Background(), append([]string{"--input", "x", "--dim", "2", "--metrics-addr", ""}, tc.args...), &out, &errb, env)
		if code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("run %v: exit %d, stderr:\n%s", tc.args, code, errb.String())
		}
	}
	// The variables and config files take them too (the run flags' layers).
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var f runFlags
	f.register(fs)
	if err := applyLayers(fs, "", func(k string) string {
		return map[string]string{"OKSTREAM_INPUT_FORMAT": "json"}[k]
	}); err != nil || f.inputFormat != "json" {
		t.Errorf("OKSTREAM_INPUT_FORMAT: %q, %v", f.inputFormat, err)
	}
	for _, tc := range []struct {
		cmd  func([]string, io.Writer, io.Writer) int
		args []string
		want string
	}{
		{runDemo, []string{"--input-format", "xml"}, `--input-format "xml": use msgpack or json`},
		{runDemo, []string{"--output-format", "JSON"}, `--output-format "JSON": use msgpack or json`},
		{runInspect, []string{"events", "--brokers", "127.0.0.1:1", "--topic", "t", "--format", "avro"}, `--format "avro": use auto, msgpack or json`},
	} {
		var out, errb bytes.Buffer
		if code := tc.cmd(tc.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr:\n%s", tc.args, code, errb.String())
		}
	}
}

// okstream run --input-format json --output-format json end to end, then
// okstream inspect on what it wrote: the predictions (auto-detected JSON)
// count every event once; inspect events reads the JSON events, and with
// --format msgpack says what a msgpack consumer would make of them; the
// dead letters show a JSON record's text.
func TestRunJSONAndInspect(t *testing.T) {
	e := kafkatest.New(t)
	in := e.Name("events")
	e.CreateTopic(t, in, 2, nil)
	var msgs []kafka.Message
	for _, m := range events(800, 4, 2) {
		ev, err := codec.DecodeEvent(m.Value, codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := codec.AppendEventJSON(nil, &ev)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, kafka.Message{Key: m.Key, Value: b})
	}
	msgs = append(msgs, kafka.Message{Value: []byte(`{"v": 1, "x": [1, 2, 3, 4], "y": 1,}`)})
	e.Produce(t, in, msgs...)
	ckpt := e.Name("ckpt")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var out, errb bytes.Buffer
	go func() {
		done <- runRunContext(ctx, []string{"--input", in, "--dim", "4", "--group", e.Name("g"), "--checkpoint-topic", ckpt,
			"--input-format", "json", "--output-format", "json",
			"--model", "champion=fogd:sigma=1,budget=20", "--metrics-addr", "",
			"--session-timeout", "6s", "--heartbeat-interval", "300ms"}, &out, &errb,
			func(k string) string { return map[string]string{"OKSTREAM_BROKERS": strings.Join(e.Brokers, ",")}[k] })
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		recs, _ := kafkatest.ReadAll(context.Background(), e.Client, in+".predictions")
		dl, _ := kafkatest.ReadAll(context.Background(), e.Client, in+".dlq")
		if len(recs) >= 800 && len(dl) >= 1 {
			for _, r := range recs {
				if !codec.IsJSONRecord(r.Value) {
					t.Fatalf("a msgpack prediction: %x", r.Value)
				}
			}
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
	inspect := func(args ...string) string {
		t.Helper()
		var o, eb bytes.Buffer
		if code := runInspect(append(args, "--brokers", brokers), &o, &eb); code != 0 {
			t.Fatalf("inspect %v: exit %d: %s", args, code, eb.String())
		}
		return o.String()
	}
	if s := inspect("predictions", "--topic", in+".predictions", "--limit", "2"); !strings.Contains(s, "800 distinct source events") || !strings.Contains(s, "champion") {
		t.Fatalf("inspect predictions output:\n%s", s)
	}
	if s := inspect("predictions", "--topic", in+".predictions", "--limit", "0", "--format", "json"); !strings.Contains(s, "800 distinct source events") {
		t.Fatalf("inspect predictions --format json output:\n%s", s)
	}
	if s := inspect("events", "--topic", in, "--dim", "4", "--limit", "0"); !strings.Contains(s, "801 events, 1 would be dead-lettered; not_json: 1") {
		t.Fatalf("inspect events output:\n%s", s)
	}
	if s := inspect("events", "--topic", in, "--dim", "4", "--limit", "0", "--format", "msgpack"); !strings.Contains(s, "801 events, 801 would be dead-lettered; looks_like_json: 801") {
		t.Fatalf("inspect events --format msgpack output:\n%s", s)
	}
	if s := inspect("dead-letters", "--topic", in+".dlq"); !strings.Contains(s, "not_json: 1") || !strings.Contains(s, `text: {"v": 1, "x": [1, 2, 3, 4], "y": 1,}`) {
		t.Fatalf("inspect dead-letters output:\n%s", s)
	}
}

// The demo with JSON events and predictions completes and verifies exact
// recovery (small size for the test).
func TestDemoJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("demo end to end in -short mode")
	}
	var out, errb bytes.Buffer
	code := runDemo([]string{"--events", "4000", "--partitions", "2", "--input-format", "json", "--output-format", "json"}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "events as json, predictions as json") ||
		!strings.Contains(out.String(), "prediction records: 4000 for 4000 events") ||
		!strings.Contains(out.String(), "exact recovery: every partition's final models are bit-identical") {
		t.Fatalf("demo exited %d:\n%s\n%s", code, out.String(), errb.String())
	}
}
