package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"okstream/checkpoint"
	"okstream/codec"
	"okstream/internal/kafkatest"
	"okstream/internal/kafkautil"
	"okstream/modelfile"
)

// Bad okstream serve flags are refused at start with a message that says
// how to fix them.
func TestServeRefusesBadFlags(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("abc\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("\n\n"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--model FILE, or --brokers and --input"},
		{[]string{"--model", "f", "--brokers", "b:1", "--input", "x"}, "not both"},
		{[]string{"--brokers", "b:1"}, "--input is required"},
		{[]string{"--model", "f", "--poll", "0s"}, "--poll"},
		{[]string{"--model", "f", "--top-k", "-2"}, "--top-k"},
		{[]string{"--model", "f", "--http-tls-cert", "c.pem"}, "--http-tls-cert and --http-tls-key go together"},
		{[]string{"--model", "f", "--max-batch", "0"}, "--max-batch 0"},
		{[]string{"--model", "f", "--max-body-bytes", "-1"}, "--max-body-bytes"},
		{[]string{"--model", "f", "--max-age", "-1s"}, "--max-age"},
		{[]string{"--model", "f", "--token-file", short}, "at least 16"},
		{[]string{"--model", "f", "--token-file", empty}, "no token"},
		{[]string{"--model", filepath.Join(dir, "absent"), "--addr", "127.0.0.1:0"}, "--model"},
		{[]string{"--model", short, "--addr", "127.0.0.1:0"}, "model file"},
	} {
		var out, errb bytes.Buffer
		code := runServeContext(context.Background(), c.args, &out, &errb, nil)
		if code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errb.String(), c.want)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"serve", "--help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "POST /v1/predict") || !strings.Contains(out.String(), "-max-batch") {
		t.Errorf("serve --help: exit %d, %q", code, out.String())
	}
	if code := runRunContext(context.Background(), []string{"--input", "x", "--dim", "3", "--serve", "127.0.0.1:0", "--serve-max-batch", "0", "--metrics-addr", ""}, &out, &errb,
		func(k string) string { return map[string]string{"OKSTREAM_BROKERS": "localhost:1"}[k] }); code != 2 || !strings.Contains(errb.String(), "--serve: --serve-max-batch 0") {
		t.Errorf("run --serve-max-batch 0: exit %d, %q", code, errb.String())
	}
}

// okstream run --serve answers prediction requests with its live models;
// the final checkpoints, exported as a model file, served by okstream
// serve --model, answer the same events with the same scores as the live
// server's last answers (the same models: the final checkpoint is the last
// one the live server got).
func TestRunServeAndServeModelFile(t *testing.T) {
	e := kafkatest.New(t)
	in := e.Name("events")
	e.CreateTopic(t, in, 2, nil)
	e.Produce(t, in, events(1200, 4, 1)...)
	group, ckpt := e.Name("g"), e.Name("ckpt")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int)
	var errb kafkatest.SyncBuffer
	go func() {
		done <- runRunContext(ctx, []string{"--input", in, "--dim", "4", "--group", group, "--checkpoint-topic", ckpt,
			"--model", "fogd=fogd:sigma=1,budget=20", "--metrics-addr", "", "--serve", "127.0.0.1:0",
			"--session-timeout", "6s", "--heartbeat-interval", "300ms", "--checkpoint-every", "200", "--checkpoint-interval", "300ms"}, io.Discard, &errb,
			func(k string) string { return map[string]string{"OKSTREAM_BROKERS": strings.Join(e.Brokers, ",")}[k] })
	}()
	addrRE := regexp.MustCompile(`serving the live models" addr=(\S+)`)
	var addr string
	waitUntil(t, 60*time.Second, "the live server", func() bool {

		if strings.Contains(errb.String(), "level=ERROR") {
			t.Fatalf("stderr:\n%s", errb.String())
		}
		m := addrRE.FindStringSubmatch(errb.String())
		if m != nil {
			addr = m[1]
		}
		return addr != ""
	})
	// Events keyed a..g as the input's (every partition answers).
	var batch bytes.Buffer
	batch.WriteByte('[')
	for i := 0; i < 7; i++ {
		if i > 0 {
			batch.WriteByte(',')
		}
		fmt.Fprintf(&batch, `{"v":1,"id":"q%d","key":"%c","x":[0.%d,-0.5,0.25,0.125]}`, i, 'a'+i, i)
	}
	batch.WriteByte(']')
	ask := func(addr string) (int, []codec.Prediction) {
		resp, err := http.Post("http://"+addr+"/v1/predict", "application/json", bytes.NewReader(batch.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			return resp.StatusCode, nil
		}
		var a struct{ Predictions []json.RawMessage }
		if err := json.Unmarshal(body, &a); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		var out []codec.Prediction
		for _, r := range a.Predictions {
			p, err := codec.DecodePredictionJSON(r)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
		return 200, out
	}
	ends := map[int32]int64{}
	for p := 0; p < 2; p++ {
		_, end, err := kafkautil.Offsets(context.Background(), e.Client, in, p)
		if err != nil {
			t.Fatal(err)
		}
		ends[int32(p)] = end
	}
	var live []codec.Prediction
	waitUntil(t, 60*time.Second, "the live models to have learnt everything", func() bool {
		code, a := ask(addr)
		if code != 200 || len(a) != 7 {
			return false
		}
		live = a
		for _, p := range a {
			if p.Offset != ends[p.Partition] {
				return false
			}
		}
		return true
	})
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("run exited %d:\n%s", code, errb.String())
	}
	// The final checkpoints as a model file, served by okstream serve.
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ccancel()
	st, err := checkpoint.Open(cctx, checkpoint.Config{Brokers: e.Brokers, Topic: ckpt})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f := &modelfile.File{}
	for p := 0; p < 2; p++ {
		cp, _, err := st.Load(cctx, checkpoint.ID{Group: group, Topic: in, Partition: p})
		if err != nil || cp == nil {
			t.Fatal(err)
		}
		f.Entries = append(f.Entries, modelfile.Entry{Kind: modelfile.KindCheckpoint, Group: group, Topic: in, Partition: p, NextOffset: cp.NextOffset, Payload: cp.Payload})
	}
	path := filepath.Join(t.TempDir(), "m.okm")
	b, err := modelfile.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, b, 0o600)
	sctx, scancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	sdone := make(chan int)
	var serr bytes.Buffer
	go func() {
		sdone <- runServeContext(sctx, []string{"--model", path, "--addr", "127.0.0.1:0"}, io.Discard, &serr, func(a string) { addrc <- a })
	}()
	var fileAddr string
	select {
	case fileAddr = <-addrc:
	case code := <-sdone:
		t.Fatalf("serve exited %d: %s", code, serr.String())
	}
	code, got := ask(fileAddr)
	if code != 200 {
		t.Fatalf("serve --model: %d", code)
	}
	for i := range got {
		if got[i].Partition != live[i].Partition || got[i].Offset != live[i].Offset || got[i].ID != live[i].ID ||
			got[i].Models[0].Score != live[i].Models[0].Score || got[i].Models[0].Prob != live[i].Models[0].Prob || got[i].Models[0].Updates != live[i].Models[0].Updates {
			t.Fatalf("event %d: file %+v, live %+v", i, got[i], live[i])
		}
	}
	scancel()
	if code := <-sdone; code != 0 {
		t.Fatalf("serve exited %d: %s", code, serr.String())
	}
}

func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
