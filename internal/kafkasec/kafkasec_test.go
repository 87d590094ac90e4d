package kafkasec

import (
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
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// testPKI is a CA with a server certificate for 127.0.0.1 and a client
// certificate, all written as PEM files under dir.
type testPKI struct {
	dir                       string
	ca, serverCert, serverKey string
	clientCert, clientKey     string
	caCert                    *x509.Certificate
}

func newPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	p := testPKI{dir: dir}
	caKey := mustKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "okstream test CA"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<33, 0),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	p.caCert, _ = x509.ParseCertificate(caDER)
	p.ca = writePEM(t, dir, "ca.pem", "CERTIFICATE", caDER)
	issue := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		k := mustKey(t)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<33, 0),
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature,
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kd, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return writePEM(t, dir, name+".pem", "CERTIFICATE", der), writePEM(t, dir, name+"-key.pem", "EC PRIVATE KEY", kd)
	}
	p.serverCert, p.serverKey = issue("server", 2, x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = issue("client", 3, x509.ExtKeyUsageClientAuth)
	return p
}

func mustKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeFile(t *testing.T, dir, name, content string) string {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func noEnv(string) string { return "" }

func TestZeroOptionsArePlaintext(t *testing.T) {
	s, err := Options{}.Build(noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if s.TLS != nil || s.SASL != nil || s.Enabled() || len(s.Warnings) != 0 {
		t.Fatalf("zero options built %+v", s)
	}
	if Transport(s.TLS, s.SASL) != nil || Dialer(s.TLS, s.SASL) != nil {
		t.Fatal("zero options must leave kafka-go's default transport and dialer")
	}
	if s.String() != "plaintext" {
		t.Fatalf("String() = %q", s.String())
	}
	if (Options{SASLMechanism: "none"}).Enabled() {
		t.Fatal(`--sasl-mechanism none enabled SASL`)
	}
}

// TestValidation checks that every inconsistent or unreadable option is
// refused at Build with a message naming the flag.
func TestValidation(t *testing.T) {
	p := newPKI(t)
	garbage := writeFile(t, p.dir, "garbage.pem", "not a certificate\n")
	badBlock := writeFile(t, p.dir, "badblock.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")})))
	emptyPW := writeFile(t, p.dir, "empty.txt", "\n")
	pwFile := writeFile(t, p.dir, "pw.txt", "s3cret\n")
	env := func(k string) string {
		if k == "PW" {
			return "s3cret"
		}
		return ""
	}
	cases := []struct {
		name string
		o    Options
		want string // substring of the error
	}{
		{"missing CA file", Options{CAFile: filepath.Join(p.dir, "nope.pem")}, "--tls-ca"},
		{"CA not PEM", Options{CAFile: garbage}, "holds no PEM certificate"},
		{"CA block not a certificate", Options{CAFile: badBlock}, "certificate 1"},
		{"cert without key", Options{CertFile: p.clientCert}, "without --tls-key"},
		{"key without cert", Options{KeyFile: p.clientKey}, "without --tls-cert"},
		{"cert and key mismatch", Options{CertFile: p.clientCert, KeyFile: p.serverKey}, "--tls-cert"},
		{"cert not PEM", Options{CertFile: garbage, KeyFile: p.clientKey}, "PEM"},
		{"unknown mechanism", Options{SASLMechanism: "gssapi", SASLUsername: "u", SASLPasswordEnv: "PW"}, `"gssapi"`},
		{"mechanism without user", Options{SASLMechanism: "plain", SASLPasswordEnv: "PW"}, "--sasl-username"},
		{"mechanism without password", Options{SASLMechanism: "scram-sha-512", SASLUsername: "u"}, "--sasl-password-env"},
		{"password env unset", Options{SASLMechanism: "scram-sha-256", SASLUsername: "u", SASLPasswordEnv: "NOPE"}, "NOPE is empty or not set"},
		{"password file missing", Options{SASLMechanism: "plain", SASLUsername: "u", SASLPasswordFile: filepath.Join(p.dir, "nope")}, "--sasl-password-file"},
		{"password file empty", Options{SASLMechanism: "plain", SASLUsername: "u", SASLPasswordFile: emptyPW}, "is empty"},
		{"password in two places", Options{SASLMechanism: "plain", SASLUsername: "u", SASLPasswordFile: pwFile, SASLPasswordEnv: "PW"}, "not both"},
		{"user without mechanism", Options{SASLUsername: "u"}, "need --sasl-mechanism"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.o.Build(env)
			if err == nil {
				t.Fatalf("%+v was accepted", c.o)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not say %q", err, c.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("error %q contains the password", err)
			}
		})
	}
	// A password SCRAM refuses (SASLprep: no control characters) is
	// reported without quoting it.
	ctrl := writeFile(t, p.dir, "ctrl.txt", "s3cret\x07bell")
	_, err := Options{SASLMechanism: "scram-sha-512", SASLUsername: "u", SASLPasswordFile: ctrl}.Build(noEnv)
	if err == nil || !strings.Contains(err.Error(), "the password is not valid for SCRAM") || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("SASLprep failure: %v", err)
	}
	// Several problems are all reported.
	_, err = Options{CertFile: p.clientCert, SASLMechanism: "plain"}.Build(env)
	if err == nil || !strings.Contains(err.Error(), "--tls-key") || !strings.Contains(err.Error(), "--sasl-username") {
		t.Fatalf("want both problems reported, got %v", err)
	}
}

// TestSASLMechanisms checks each mechanism's name and that the password
// (from an environment variable or a file) reaches the mechanism but no
// printed or encoded form of the configuration.
func TestSASLMechanisms(t *testing.T) {
	dir := t.TempDir()
	const pw = "correct horse battery staple"
	pwFile := writeFile(t, dir, "pw", pw+"\n")
	env := func(k string) string {
		if k == "OKSTREAM_PW" {
			return pw
		}
		return ""
	}
	for _, c := range []struct{ mech, name string }{
		{"plain", "PLAIN"}, {"SCRAM-SHA-256", "SCRAM-SHA-256"}, {"scram-sha-512", "SCRAM-SHA-512"},
	} {
		for _, o := range []Options{
			{TLS: true, SASLMechanism: c.mech, SASLUsername: "alice", SASLPasswordEnv: "OKSTREAM_PW"},
			{TLS: true, SASLMechanism: c.mech, SASLUsername: "alice", SASLPasswordFile: pwFile},
		} {
			s, err := o.Build(env)
			if err != nil {
				t.Fatalf("%s: %v", c.mech, err)
			}
			if s.SASL == nil || s.SASL.Name() != c.name {
				t.Fatalf("%s: mechanism %v", c.mech, s.SASL)
			}
			_, first, err := s.SASL.Start(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if c.name == "PLAIN" && string(first) != "\x00alice\x00"+pw {
				t.Fatalf("PLAIN initial response %q: the password from %+v did not arrive intact", first, o)
			}
			if c.name != "PLAIN" && !strings.Contains(string(first), "n=alice") {
				t.Fatalf("SCRAM client-first %q does not name the user", first)
			}
			holder := struct {
				Brokers []string
				TLS     *tls.Config
				SASL    any
			}{[]string{"b:9092"}, s.TLS, s.SASL}
			// encoding/json refuses a *tls.Config (it holds funcs): marshal
			// the configuration a program would log as JSON, without it.
			js, err := json.Marshal(struct {
				Brokers []string
				SASL    any
			}{holder.Brokers, holder.SASL})
			if err != nil {
				t.Fatalf("%s: JSON: %v", c.mech, err)
			}
			for _, out := range []string{s.String(), fmt.Sprintf("%v", holder), fmt.Sprintf("%+v", holder), fmt.Sprintf("%#v", holder), string(js)} {
				if strings.Contains(out, pw) || strings.Contains(out, "horse") {
					t.Fatalf("%s: the password is printed: %s", c.mech, out)
				}
			}
			if !strings.Contains(string(js), "user=alice") {
				t.Fatalf("%s: the JSON form %s is not the mechanism's redacted form", c.mech, js)
			}
			if !strings.Contains(s.String(), "user=alice") {
				t.Fatalf("String() %q does not name the user", s.String())
			}
			tr := Transport(s.TLS, s.SASL).(*kafka.Transport)
			d := Dialer(s.TLS, s.SASL)
			if tr.TLS != s.TLS || tr.SASL != s.SASL || d.TLS != s.TLS || d.SASLMechanism != s.SASL {
				t.Fatal("Transport/Dialer do not carry the TLS config and SASL mechanism")
			}
		}
	}
	s, err := Options{SASLMechanism: "plain", SASLUsername: "u", SASLPasswordFile: pwFile}.Build(noEnv)
	if err != nil || len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "clear text") {
		t.Fatalf("PLAIN without TLS: want a clear-text warning, got %v %q", err, s.Warnings)
	}
}

// tlsServer accepts connections, completes the handshake and reports its
// result on the returned channel.
func tlsServer(t *testing.T, p testPKI, requireClientCert bool) (string, <-chan error) {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(p.serverCert, p.serverKey)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if requireClientCert {
		pool := x509.NewCertPool()
		pool.AddCert(p.caCert)
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	res := make(chan error, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			err = c.(*tls.Conn).HandshakeContext(context.Background())
			if err == nil {
				// TLS 1.3 reports a rejected client certificate on the
				// client's first read: send a byte so it has one.
				_, err = c.Write([]byte{1})
			}
			c.Close()
			res <- err
		}
	}()
	return ln.Addr().String(), res
}

// handshake dials addr with the built TLS config (as kafka-go does: the
// server name from the address) and reads one byte.
func handshake(addr string, cfg *tls.Config) error {
	c := cfg.Clone()
	c.ServerName, _, _ = net.SplitHostPort(addr)
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, c)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	_, err = conn.Read(make([]byte, 1))
	return err
}

func TestTLSVerifiesAgainstCAFile(t *testing.T) {
	p := newPKI(t)
	addr, _ := tlsServer(t, p, false)
	s, err := Options{CAFile: p.ca}.Build(noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if s.TLS.MinVersion != tls.VersionTLS12 || s.TLS.InsecureSkipVerify {
		t.Fatalf("TLS config %+v", s.TLS)
	}
	if err := handshake(addr, s.TLS); err != nil {
		t.Fatalf("handshake with the right CA: %v", err)
	}
	// Another CA: the server is not trusted, and Explain says to use --tls-ca.
	other := newPKI(t)
	s2, err := Options{CAFile: other.ca}.Build(noEnv)
	if err != nil {
		t.Fatal(err)
	}
	err = handshake(addr, s2.TLS)
	if err == nil {
		t.Fatal("a server signed by another CA was trusted")
	}
	if !strings.Contains(Explain(err).Error(), "--tls-ca") {
		t.Fatalf("Explain(%v) does not point to --tls-ca", err)
	}
	// Skipping verification connects, with a warning.
	s3, err := Options{InsecureSkipVerify: true}.Build(noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(s3.Warnings) != 1 || !strings.Contains(s3.Warnings[0], "NOT verified") {
		t.Fatalf("--tls-insecure-skip-verify warnings %q", s3.Warnings)
	}
	if err := handshake(addr, s3.TLS); err != nil {
		t.Fatalf("insecure handshake: %v", err)
	}
}

func TestMutualTLS(t *testing.T) {
	p := newPKI(t)
	addr, res := tlsServer(t, p, true)
	with, err := Options{CAFile: p.ca, CertFile: p.clientCert, KeyFile: p.clientKey}.Build(noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(with.TLS.Certificates) != 1 {
		t.Fatal("client certificate not loaded")
	}
	if err := handshake(addr, with.TLS); err != nil {
		t.Fatalf("mTLS handshake with the client certificate: %v", err)
	}
	if err := <-res; err != nil {
		t.Fatalf("server side of the mTLS handshake: %v", err)
	}
	without, err := Options{CAFile: p.ca}.Build(noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if err := handshake(addr, without.TLS); err == nil {
		t.Fatal("a server requiring client certificates accepted a client without one")
	}
	if err := <-res; err == nil {
		t.Fatal("server accepted the handshake without a client certificate")
	}
}

func TestExplain(t *testing.T) {
	if Explain(nil) != nil {
		t.Fatal("Explain(nil) != nil")
	}
	plainErr := fmt.Errorf("dial: %w", kafka.UnknownTopicOrPartition)
	if Explain(plainErr) != plainErr {
		t.Fatal("Explain changed an unrelated error")
	}
	err := Explain(fmt.Errorf("metadata: %w", kafka.SASLAuthenticationFailed))
	if !strings.Contains(err.Error(), "refused the SASL credentials") {
		t.Fatalf("Explain: %v", err)
	}
}
