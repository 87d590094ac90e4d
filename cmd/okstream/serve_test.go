package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
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
	fileAddr := startServe(t, "--model", path)
	code, got := ask(fileAddr)
	if code != 200 {
		t.Fatalf("serve --model: %d", code)
	}
	same := func(what string, got []codec.Prediction) {
		t.Helper()
		for i := range got {
			if got[i].Partition != live[i].Partition || got[i].Offset != live[i].Offset || got[i].ID != live[i].ID ||
				got[i].Models[0].Score != live[i].Models[0].Score || got[i].Models[0].Prob != live[i].Models[0].Prob || got[i].Models[0].Updates != live[i].Models[0].Updates {
				t.Fatalf("event %d: %s %+v, live %+v", i, what, got[i], live[i])
			}
		}
	}
	same("file", got)
	// A replica of the stopped pipeline serves its final checkpoints.
	repAddr := startServe(t, "--brokers", strings.Join(e.Brokers, ","), "--input", in, "--group", group, "--checkpoint-topic", ckpt, "--poll", "50ms")
	waitUntil(t, 30*time.Second, "the replica's models", func() bool {
		code, got = ask(repAddr)
		return code == 200
	})
	same("replica", got)

	// HTTPS and bearer tokens.
	dir := t.TempDir()
	certPEM, keyPEM := selfSigned(t)
	certFile, keyFile, tokFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem"), filepath.Join(dir, "tokens")
	os.WriteFile(certFile, certPEM, 0o600)
	os.WriteFile(keyFile, keyPEM, 0o600)
	os.WriteFile(tokFile, []byte("an-old-token-still-accepted-000\nthe-current-token-0123456789abcdef\n"), 0o600)
	tlsAddr := startServe(t, "--model", path, "--http-tls-cert", certFile, "--http-tls-key", keyFile, "--token-file", tokFile)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	for _, c := range []struct {
		token string
		code  int
	}{{"", 401}, {"wrong-token-wrong-token-wrong", 401}, {"the-current-token-0123456789abcdef", 200}, {"an-old-token-still-accepted-000", 200}} {
		req, _ := http.NewRequest(http.MethodPost, "https://"+tlsAddr+"/v1/predict", bytes.NewReader(batch.Bytes()))
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("token %q: %d, want %d", c.token, resp.StatusCode, c.code)
		}
	}
	if resp, err := http.Post("http://"+tlsAddr+"/v1/predict", "application/json", bytes.NewReader(batch.Bytes())); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP answered on the HTTPS address")
		}
	}
}

// startServe runs okstream serve with args (on 127.0.0.1:0) until the test
// ends, and returns its address.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc, done := make(chan string, 1), make(chan int, 1)
	var serr kafkatest.SyncBuffer
	go func() {
		done <- runServeContext(ctx, append(args, "--addr", "127.0.0.1:0"), io.Discard, &serr, func(a string) { addrc <- a })
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve %v exited %d: %s", args, code, serr.String())
		}
	})
	select {
	case a := <-addrc:
		return a
	case code := <-done:
		done <- code
		t.Fatalf("serve %v exited %d: %s", args, code, serr.String())
		return ""
	}
}

// selfSigned is a self-signed certificate for 127.0.0.1 and its key, PEM.
func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "okstream test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
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
