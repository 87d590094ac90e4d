package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"okstream/consumer"
)

// okstream run --share refuses to start without a control secret unless
// --allow-unsigned-control is given, and refuses a short secret with a
// message saying how to make one; the secret file can come from
// OKSTREAM_CONTROL_SECRET_FILE; a file's later lines are earlier secrets.
func TestRunControlSecret(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("too-short\n"), 0o600)
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte("  current-secret-0123456789abcdef-0123  \n\nprevious-secret-0123456789abcdef-0123\n"), 0o600)
	run := func(env map[string]string, args ...string) (int, string) {
		var errb bytes.Buffer
		base := []string{"--brokers", "127.0.0.1:1", "--input", "in", "--dim", "2", "--model", "m=fogd:sigma=1", "--share", "m", "--metrics-addr", ""}
		code := runRunContext(context.Background(), append(base, args...), io.Discard, &errb, func(k string) string { return env[k] })
		return code, errb.String()
	}
	if code, msg := run(nil); code != 2 || !strings.Contains(msg, "--control-secret-file") || !strings.Contains(msg, "--allow-unsigned-control") {
		t.Fatalf("--share without a secret: exit %d, %q", code, msg)
	}
	if code, msg := run(nil, "--control-secret-file", short); code != 2 || !strings.Contains(msg, "at least 32 bytes") || !strings.Contains(msg, "head -c 32 /dev/urandom") {
		t.Fatalf("a short secret: exit %d, %q", code, msg)
	}
	if code, msg := run(map[string]string{"OKSTREAM_CONTROL_SECRET_FILE": short}); code != 2 || !strings.Contains(msg, "at least 32 bytes") {
		t.Fatalf("a short secret from the environment: exit %d, %q", code, msg)
	}
	cur, prev, err := readControlSecrets(good)
	if err != nil || string(cur) != "current-secret-0123456789abcdef-0123" || len(prev) != 1 || string(prev[0]) != "previous-secret-0123456789abcdef-0123" {
		t.Fatalf("secrets %q %q %v", cur, prev, err)
	}
	cfgWithShare := consumer.Config{Share: []string{"m"}}
	var f runFlags
	f.controlSecretFile = good
	if err := f.applyControl(&cfgWithShare); err != nil || string(cfgWithShare.ControlSecret) != string(cur) {
		t.Fatalf("applyControl: %v", err)
	}
	f = runFlags{allowUnsignedControl: true}
	cfgWithShare.ControlSecret = nil
	if err := f.applyControl(&cfgWithShare); err != nil || !cfgWithShare.AllowUnsignedControl {
		t.Fatalf("--allow-unsigned-control: %v", err)
	}
}
