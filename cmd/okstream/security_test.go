package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"okstream/internal/kafkasec"
	"okstream/internal/kafkatest"
)

// Inconsistent or unreadable security options are refused at start by every
// command that connects, with a message naming the flag, and the password
// appears in no output.
func TestSecurityFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pem")
	os.WriteFile(bad, []byte("not PEM\n"), 0o600)
	const secret = "hunter2-do-not-print"
	t.Setenv("OKSTREAM_TEST_SECRET_PW", secret)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", bad}, "without --tls-key"},
		{[]string{"--tls-ca", bad}, "holds no PEM certificate"},
		{[]string{"--tls-ca", filepath.Join(dir, "missing.pem")}, "--tls-ca"},
		{[]string{"--sasl-mechanism", "scram-sha-512", "--sasl-password-env", "OKSTREAM_TEST_SECRET_PW"}, "needs --sasl-username"},
		{[]string{"--sasl-mechanism", "scram-sha-256", "--sasl-username", "u"}, "--sasl-password-env"},
		{[]string{"--sasl-mechanism", "kerberos", "--sasl-username", "u", "--sasl-password-env", "OKSTREAM_TEST_SECRET_PW"}, "use plain, scram-sha-256 or scram-sha-512"},
		{[]string{"--sasl-mechanism", "plain", "--sasl-username", "u", "--sasl-password-env", "OKSTREAM_TEST_SECRET_PW", "--tls-ca", bad}, "--tls-ca"},
	}
	commands := map[string]func(args []string, stdout, stderr io.Writer) int{
		"run": func(args []string, stdout, stderr io.Writer) int {
			return runRunContext(context.Background(), append([]string{"--brokers", "127.0.0.1:1", "--input", "in", "--dim", "2", "--model", "fogd", "--metrics-addr", ""}, args...), stdout, stderr, os.Getenv)
		},
		"replay": func(args []string, stdout, stderr io.Writer) int {
			return run(append([]string{"replay", "--data", "german", "--brokers", "127.0.0.1:1", "--topic", "t"}, args...), stdout, stderr)
		},
		"inspect": func(args []string, stdout, stderr io.Writer) int {
			return runInspect(append([]string{"events", "--brokers", "127.0.0.1:1", "--topic", "t"}, args...), stdout, stderr)
		},
	}
	for name, cmd := range commands {
		for _, c := range cases {
			var out, errb bytes.Buffer
			code := cmd(c.args, &out, &errb)
			if code != 2 || !strings.Contains(errb.String(), c.want) {
				t.Errorf("%s %v: exit %d, want 2 with %q; stderr:\n%s", name, c.args, code, c.want, errb.String())
			}
			if strings.Contains(out.String()+errb.String(), secret) {
				t.Errorf("%s %v printed the password:\n%s", name, c.args, errb.String())
			}
		}
	}
	// demo's embedded broker is plaintext: the flags need --brokers.
	var errb bytes.Buffer
	if code := runDemo([]string{"--tls"}, io.Discard, &errb); code != 2 || !strings.Contains(errb.String(), "apply to --brokers") {
		t.Errorf("demo --tls without --brokers: exit %d: %s", code, errb.String())
	}
	errb.Reset()
	// The password itself is not a flag.
	if code := runInspect([]string{"events", "--brokers", "x:1", "--topic", "t", "--sasl-password", "pw"}, io.Discard, &errb); code != 2 {
		t.Errorf("--sasl-password was accepted (exit %d)", code)
	}
}

// The security flags also come from OKSTREAM_<FLAG> in every command.
func TestSecurityFlagsFromEnvironment(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var s secFlags
	s.register(fs)
	fs.Parse([]string{"--sasl-username", "flag-user"})
	env := map[string]string{"OKSTREAM_SASL_MECHANISM": "scram-sha-512", "OKSTREAM_SASL_USERNAME": "env-user",
		"OKSTREAM_SASL_PASSWORD_ENV": "PW", "OKSTREAM_TLS_INSECURE_SKIP_VERIFY": "true"}
	if err := s.fromEnv(fs, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if s.o.SASLMechanism != "scram-sha-512" || s.o.SASLUsername != "flag-user" || s.o.SASLPasswordEnv != "PW" || !s.o.InsecureSkipVerify {
		t.Fatalf("options from the environment: %+v", s.o)
	}
	// run reads them through its configuration layers.
	fs = flag.NewFlagSet("run", flag.ContinueOnError)
	var f runFlags
	f.register(fs)
	fs.Parse(nil)
	if err := applyLayers(fs, "", func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if f.sec.o.SASLMechanism != "scram-sha-512" || f.sec.o.SASLUsername != "env-user" {
		t.Fatalf("run's options from the environment: %+v", f.sec.o)
	}
	for _, name := range secFlagNames {
		if fs.Lookup(name) == nil {
			t.Errorf("run has no --%s", name)
		}
	}
}

// The metrics server, which has no authentication, listens on loopback
// unless told otherwise.
func TestMetricsAddrDefaultsToLoopback(t *testing.T) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var f runFlags
	f.register(fs)
	if d := fs.Lookup("metrics-addr").DefValue; d != "127.0.0.1:9090" {
		t.Fatalf("--metrics-addr default %q, want 127.0.0.1:9090", d)
	}
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "OKSTREAM_METRICS_ADDR=:9090") {
		t.Fatal("the Dockerfile does not expose the metrics in the container (OKSTREAM_METRICS_ADDR=:9090)")
	}
}

// saslEnv is the SASL_SSL listener of scripts/kafka.sh (KAFKA_SASL_PORT).
type saslEnv struct {
	brokers, ca, cert, key, user string
}

func saslListener(t *testing.T) saslEnv {
	t.Helper()
	e := saslEnv{
		brokers: os.Getenv("OKSTREAM_TEST_SASL_BROKERS"), ca: os.Getenv("OKSTREAM_TEST_TLS_CA"),
		cert: os.Getenv("OKSTREAM_TEST_TLS_CERT"), key: os.Getenv("OKSTREAM_TEST_TLS_KEY"),
		user: os.Getenv("OKSTREAM_TEST_SASL_USER"),
	}
	if e.brokers == "" || e.ca == "" || e.user == "" || os.Getenv("OKSTREAM_TEST_SASL_PASSWORD") == "" {
		t.Skip("no SASL_SSL broker: start one with KAFKA_SASL_PORT=9094 scripts/kafka.sh start and eval its exports (OKSTREAM_TEST_SASL_BROKERS, OKSTREAM_TEST_TLS_CA, OKSTREAM_TEST_SASL_USER, OKSTREAM_TEST_SASL_PASSWORD)")
	}
	return e
}

// TestSASLSSL runs replay (topic creation, metadata, writer), run (client,
// consumer-group join, heartbeats and commits through the Dialer, the
// prediction, dead-letter and checkpoint writers) and inspect against the
// SASL_SSL listener, once per mechanism, and once with a client certificate
// (mTLS) as well. Every connection must be secured: the listener accepts
// nothing else.
func TestSASLSSL(t *testing.T) {
	se := saslListener(t)
	csv := writeReplayCSV(t, 60)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"scram-sha-512", []string{"--sasl-mechanism", "scram-sha-512"}},
		{"scram-sha-256", []string{"--sasl-mechanism", "scram-sha-256"}},
		{"plain", []string{"--sasl-mechanism", "plain"}},
		{"scram-sha-512+mtls", []string{"--sasl-mechanism", "SCRAM-SHA-512", "--tls-cert", se.cert, "--tls-key", se.key}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sec := append([]string{"--brokers", se.brokers, "--tls-ca", se.ca, "--sasl-username", se.user,
				"--sasl-password-env", "OKSTREAM_TEST_SASL_PASSWORD"}, c.args...)
			suffix := strings.NewReplacer("+", "-").Replace(c.name) + "-" + kafkatestSuffix()
			in := "sasl-events-" + suffix
			var out, errb bytes.Buffer
			code := run(append([]string{"replay", "--data", csv, "--label", "label", "--drop", "user", "--scale", "minmax11",
				"--topic", in, "--create-topic", "--partitions", "2", "--quiet"}, sec...), &out, &errb)
			if code != 0 {
				t.Fatalf("replay over SASL_SSL: exit %d\n%s\n%s", code, out.String(), errb.String())
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			rctx, stop := context.WithCancel(ctx)
			done := make(chan int, 1)
			var rout, rerr kafkatest.SyncBuffer
			go func() {
				done <- runRunContext(rctx, append([]string{"--input", in, "--dim", "3", "--group", "sasl-g-" + suffix,
					"--checkpoint-topic", "sasl-ckpt-" + suffix, "--model", "fogd:sigma=1,budget=10", "--metrics-addr", "",
					"--session-timeout", "6s", "--heartbeat-interval", "300ms", "--checkpoint-every", "20"}, sec...), &rout, &rerr, os.Getenv)
			}()
			// Read the predictions over SASL_SSL too.
			s, err := kafkasec.Options{CAFile: se.ca, SASLMechanism: "scram-sha-512", SASLUsername: se.user,
				SASLPasswordEnv: "OKSTREAM_TEST_SASL_PASSWORD"}.Build(os.Getenv)
			if err != nil {
				t.Fatal(err)
			}
			tr := kafkasec.Transport(s.TLS, s.SASL)
			defer kafkasec.CloseTransport(tr)
			client := kafkasec.Client([]string{se.brokers}, tr, 20*time.Second)
			for {
				recs, _ := kafkatest.ReadAll(ctx, client, in+".predictions")
				if len(recs) >= 60 {
					break
				}
				select {
				case code := <-done:
					t.Fatalf("run exited %d before writing the predictions:\n%s", code, rerr.String())
				case <-ctx.Done():
					t.Fatalf("only %d of 60 predictions over SASL_SSL; run's log:\n%s", len(recs), rerr.String())
				case <-time.After(200 * time.Millisecond):
				}
			}
			stop()
			if code := <-done; code != 0 {
				t.Fatalf("run exited %d:\n%s", code, rerr.String())
			}
			log := rerr.String()
			if !strings.Contains(log, "SASL "+strings.ToUpper(strings.TrimSuffix(c.name, "+mtls"))) || strings.Contains(log, os.Getenv("OKSTREAM_TEST_SASL_PASSWORD")) {
				t.Fatalf("run's log must name the mechanism and not the password:\n%s", log)
			}
			var iout, ierr bytes.Buffer
			if code := runInspect(append([]string{"checkpoints", "--topic", "sasl-ckpt-" + suffix}, sec...), &iout, &ierr); code != 0 {
				t.Fatalf("inspect checkpoints over SASL_SSL: exit %d: %s", code, ierr.String())
			}
			if !strings.Contains(iout.String(), "newest: epoch") {
				t.Fatalf("inspect checkpoints:\n%s", iout.String())
			}
			iout.Reset()
			if code := runInspect(append([]string{"predictions", "--topic", in + ".predictions"}, sec...), &iout, &ierr); code != 0 {
				t.Fatalf("inspect predictions over SASL_SSL: exit %d: %s", code, ierr.String())
			}
			if !strings.Contains(iout.String(), "60 distinct source events") {
				t.Fatalf("inspect predictions:\n%s", iout.String())
			}
		})
	}
}

// A wrong password is refused promptly with a message that says so, by
// every command; none of them waits for its context.
func TestSASLSSLWrongPassword(t *testing.T) {
	se := saslListener(t)
	t.Setenv("OKSTREAM_TEST_WRONG_PW", "not-the-password")
	for _, mech := range []string{"scram-sha-512", "scram-sha-256", "plain"} {
		sec := []string{"--brokers", se.brokers, "--tls-ca", se.ca, "--sasl-mechanism", mech, "--sasl-username", se.user,
			"--sasl-password-env", "OKSTREAM_TEST_WRONG_PW"}
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		start := time.Now()
		var errb kafkatest.SyncBuffer
		code := runRunContext(ctx, append([]string{"--input", "sasl-wrong-pw", "--dim", "3", "--model", "fogd", "--metrics-addr", ""}, sec...), io.Discard, &errb, os.Getenv)
		if ctx.Err() != nil {
			t.Fatalf("%s: run with a wrong password waited for its context (%v); log:\n%s", mech, time.Since(start), errb.String())
		}
		cancel()
		if code == 0 || !strings.Contains(errb.String(), "refused the SASL credentials") {
			t.Fatalf("%s: run with a wrong password: exit %d, log:\n%s", mech, code, errb.String())
		}
		t.Logf("%s: run refused in %v: %s", mech, time.Since(start).Round(time.Millisecond), lastLine(errb.String()))
		var rb bytes.Buffer
		if code := run(append([]string{"replay", "--data", writeReplayCSV(t, 5), "--label", "label", "--topic", "sasl-wrong-pw", "--quiet"}, sec...), io.Discard, &rb); code == 0 || !strings.Contains(rb.String(), "refused the SASL credentials") {
			t.Fatalf("%s: replay with a wrong password: exit %d: %s", mech, code, rb.String())
		}
		rb.Reset()
		if code := runInspect(append([]string{"events", "--topic", "sasl-wrong-pw"}, sec...), io.Discard, &rb); code == 0 || !strings.Contains(rb.String(), "refused the SASL credentials") {
			t.Fatalf("%s: inspect with a wrong password: exit %d: %s", mech, code, rb.String())
		}
	}
	// TLS to the SASL_SSL port without trusting its CA fails with a hint.
	var errb bytes.Buffer
	code := runInspect([]string{"events", "--topic", "x", "--brokers", se.brokers, "--tls", "--sasl-mechanism", "scram-sha-512",
		"--sasl-username", se.user, "--sasl-password-env", "OKSTREAM_TEST_SASL_PASSWORD"}, io.Discard, &errb)
	if code == 0 || !strings.Contains(errb.String(), "--tls-ca") {
		t.Fatalf("untrusted broker certificate: exit %d: %s", code, errb.String())
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		return s[i+1:]
	}
	return s
}

func kafkatestSuffix() string { return time.Now().Format("150405.000000") }
