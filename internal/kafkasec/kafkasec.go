// Package kafkasec is the one place where okstream builds the security of
// its broker connections: TLS (server verification against a CA file or the
// system roots, optionally a client certificate for mTLS) and SASL (PLAIN,
// SCRAM-SHA-256, SCRAM-SHA-512), and where it turns them into the
// segmentio/kafka-go objects every connection goes through:
//
//   - a kafka.Transport (TLS + SASL) for kafka.Client (metadata, topic
//     creation, describe configs, list offsets, fetch) and kafka.Writer;
//   - a kafka.Dialer (TLS + SASLMechanism) for kafka.ConsumerGroup (join,
//     sync, heartbeat, offset commits) and any kafka.Conn or kafka.Reader.
//
// Options (from the command line) are validated and read once, at start:
// files that cannot be read, bad PEM, a certificate without its key, a SASL
// mechanism without a user or a password are refused with a message that
// names the flag. The password is never a flag value: it comes from an
// environment variable or a file named by a flag, and no String, error or
// log line of this package contains it.
//
// With no option set, Transport and Dialer return nil, which makes kafka-go
// use its defaults (kafka.DefaultTransport, kafka.DefaultDialer): plaintext,
// unauthenticated, exactly as before.
package kafkasec

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
)

// SASL mechanism names accepted by Options.SASLMechanism (case-insensitive;
// "" and "none" mean no SASL).
const (
	MechanismPlain       = "plain"
	MechanismSCRAMSHA256 = "scram-sha-256"
	MechanismSCRAMSHA512 = "scram-sha-512"
)

// Options say how to secure the broker connections. The zero value is
// plaintext without authentication.
type Options struct {
	// TLS enables TLS with the system's root CAs even when no other TLS
	// option is set; CAFile, CertFile, KeyFile and InsecureSkipVerify imply
	// it.
	TLS bool
	// CAFile is a PEM file of the CA certificate(s) that signed the
	// brokers' certificates; they replace the system roots.
	CAFile string
	// CertFile and KeyFile are the client's PEM certificate and private key
	// (mTLS); both or neither.
	CertFile, KeyFile string
	// InsecureSkipVerify accepts any broker certificate (no CA or host-name
	// check): the connection is encrypted but not authenticated, so an
	// attacker on the path can read and change everything. For tests only;
	// Build returns a warning.
	InsecureSkipVerify bool

	// SASLMechanism is plain, scram-sha-256, scram-sha-512, or "" (none).
	SASLMechanism string
	// SASLUsername is the SASL user.
	SASLUsername string
	// SASLPasswordEnv names the environment variable that holds the
	// password; SASLPasswordFile names a file that holds it (one trailing
	// newline is removed). Exactly one of them when SASLMechanism is set.
	SASLPasswordEnv, SASLPasswordFile string
}

// Enabled reports whether any TLS or SASL option is set.
func (o Options) Enabled() bool {
	return o.tlsEnabled() || o.saslName() != ""
}

func (o Options) tlsEnabled() bool {
	return o.TLS || o.CAFile != "" || o.CertFile != "" || o.KeyFile != "" || o.InsecureSkipVerify
}

func (o Options) saslName() string {
	m := strings.ToLower(strings.TrimSpace(o.SASLMechanism))
	if m == "none" {
		return ""
	}
	return m
}

// Security is a built configuration: what every connection of a process
// uses. The zero value is plaintext without authentication.
type Security struct {
	// TLS is nil for plaintext connections.
	TLS *tls.Config
	// SASL is nil for no authentication.
	SASL sasl.Mechanism
	// Warnings are things the operator should know (skipped verification,
	// PLAIN credentials sent without TLS); callers log them.
	Warnings []string

	desc string
}

// Build validates the options, reads the CA, certificate, key and password
// (getenv reads the environment, e.g. os.Getenv) and returns the security
// configuration. Every problem is reported, each naming its flag.
func (o Options) Build(getenv func(string) string) (Security, error) {
	var s Security
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	if o.tlsEnabled() {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if o.CAFile != "" {
			pool, err := LoadCAs(o.CAFile)
			if err != nil {
				bad("--tls-ca: %v", err)
			}
			cfg.RootCAs = pool
		}
		switch {
		case o.CertFile != "" && o.KeyFile == "":
			bad("--tls-cert %s is given without --tls-key: a client certificate needs its private key", o.CertFile)
		case o.CertFile == "" && o.KeyFile != "":
			bad("--tls-key %s is given without --tls-cert: a private key needs its client certificate", o.KeyFile)
		case o.CertFile != "":
			cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
			if err != nil {
				bad("--tls-cert %s / --tls-key %s: %v", o.CertFile, o.KeyFile, pemHint(err))
			} else {
				cfg.Certificates = []tls.Certificate{cert}
			}
		}
		if o.InsecureSkipVerify {
			cfg.InsecureSkipVerify = true
			s.Warnings = append(s.Warnings, "--tls-insecure-skip-verify: the brokers' certificates are NOT verified; the connection is encrypted but anyone on the path can impersonate the brokers (use --tls-ca instead)")
		}
		s.TLS = cfg
	}

	switch name := o.saslName(); name {
	case "":
		if o.SASLUsername != "" || o.SASLPasswordEnv != "" || o.SASLPasswordFile != "" {
			bad("--sasl-username, --sasl-password-env and --sasl-password-file need --sasl-mechanism (plain, scram-sha-256 or scram-sha-512)")
		}
	case MechanismPlain, MechanismSCRAMSHA256, MechanismSCRAMSHA512:
		if o.SASLUsername == "" {
			bad("--sasl-mechanism %s needs --sasl-username", name)
		}
		pw, err := o.password(getenv)
		if err != nil {
			bad("--sasl-mechanism %s: %v", name, err)
		}
		if o.SASLUsername == "" || err != nil {
			break
		}
		switch name {
		case MechanismPlain:
			s.SASL = redacted{plain.Mechanism{Username: o.SASLUsername, Password: pw}, o.SASLUsername}
			if s.TLS == nil {
				s.Warnings = append(s.Warnings, "--sasl-mechanism plain without TLS: the password crosses the network in clear text (add --tls or --tls-ca)")
			}
		case MechanismSCRAMSHA256, MechanismSCRAMSHA512:
			algo := scram.SHA256
			if name == MechanismSCRAMSHA512 {
				algo = scram.SHA512
			}
			m, err := scram.Mechanism(algo, o.SASLUsername, pw)
			if err != nil {
				// xdg-go/scram's error quotes the string that failed
				// SASLprep, which may be the password: never pass it on.
				what := "the user name"
				if strings.Contains(err.Error(), "password") {
					what = "the password"
				}
				bad("--sasl-mechanism %s: %s is not valid for SCRAM (SASLprep refuses control, unassigned or prohibited characters)", name, what)
				break
			}
			s.SASL = redacted{m, o.SASLUsername}
		}
	default:
		bad("--sasl-mechanism %q: use plain, scram-sha-256 or scram-sha-512", o.SASLMechanism)
	}
	if err := errors.Join(errs...); err != nil {
		return Security{}, err
	}
	s.desc = o.describe()
	return s, nil
}

// password reads the SASL password from the environment variable or file
// the options name. Its errors never contain the password.
func (o Options) password(getenv func(string) string) (string, error) {
	switch {
	case o.SASLPasswordEnv != "" && o.SASLPasswordFile != "":
		return "", errors.New("give the password in one place: --sasl-password-env or --sasl-password-file, not both")
	case o.SASLPasswordEnv != "":
		pw := getenv(o.SASLPasswordEnv)
		if pw == "" {
			return "", fmt.Errorf("--sasl-password-env %s: the environment variable %s is empty or not set", o.SASLPasswordEnv, o.SASLPasswordEnv)
		}
		return pw, nil
	case o.SASLPasswordFile != "":
		b, err := os.ReadFile(o.SASLPasswordFile)
		if err != nil {
			return "", fmt.Errorf("--sasl-password-file: %v", err)
		}
		pw := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		if pw == "" {
			return "", fmt.Errorf("--sasl-password-file %s is empty", o.SASLPasswordFile)
		}
		return pw, nil
	}
	return "", errors.New("no password: name an environment variable with --sasl-password-env or a file with --sasl-password-file (a password is never a flag value)")
}

// redacted wraps a SASL mechanism so that printing it, or a configuration
// holding it (fmt's %v and %#v, slog, encoding/json), shows the mechanism
// and the user but never the password (plain.Mechanism would print it).
type redacted struct {
	sasl.Mechanism
	user string
}

func (r redacted) String() string {
	return "SASL " + r.Mechanism.Name() + " user=" + r.user + " password=<redacted>"
}
func (r redacted) GoString() string             { return r.String() }
func (r redacted) LogValue() slog.Value         { return slog.StringValue(r.String()) }
func (r redacted) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// LoadCAs reads a PEM file of one or more CA certificates. It fails when the
// file cannot be read, holds no CERTIFICATE block, or a block does not parse.
func LoadCAs(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	n := 0
	for rest := b; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: certificate %d: %v", path, n+1, err)
		}
		pool.AddCert(c)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("%s holds no PEM certificate (want -----BEGIN CERTIFICATE----- blocks)", path)
	}
	return pool, nil
}

func pemHint(err error) error {
	if strings.Contains(err.Error(), "PEM") || strings.Contains(err.Error(), "pem") {
		return fmt.Errorf("%v (both must be PEM files: the certificate, and its unencrypted private key)", err)
	}
	return err
}

// describe is the options in a form fit for a log line: files and user,
// never the password.
func (o Options) describe() string {
	var parts []string
	if o.tlsEnabled() {
		t := "TLS"
		if o.CAFile != "" {
			t += " ca=" + o.CAFile
		} else {
			t += " ca=system"
		}
		if o.CertFile != "" {
			t += " client-cert=" + o.CertFile
		}
		if o.InsecureSkipVerify {
			t += " INSECURE-SKIP-VERIFY"
		}
		parts = append(parts, t)
	} else {
		parts = append(parts, "plaintext")
	}
	if n := o.saslName(); n != "" {
		src := "env " + o.SASLPasswordEnv
		if o.SASLPasswordFile != "" {
			src = "file " + o.SASLPasswordFile
		}
		parts = append(parts, fmt.Sprintf("SASL %s user=%s password from %s", strings.ToUpper(n), o.SASLUsername, src))
	}
	return strings.Join(parts, ", ")
}

// String describes the configuration for logs ("TLS ca=ca.pem, SASL
// SCRAM-SHA-512 user=okstream password from env KAFKA_PASSWORD"); it never
// contains the password.
func (s Security) String() string {
	if s.desc != "" {
		return s.desc
	}
	if s.TLS == nil && s.SASL == nil {
		return "plaintext"
	}
	d := "plaintext"
	if s.TLS != nil {
		d = "TLS"
	}
	if s.SASL != nil {
		d += ", SASL " + s.SASL.Name()
	}
	return d
}

// Enabled reports whether TLS or SASL is configured.
func (s Security) Enabled() bool { return s.TLS != nil || s.SASL != nil }

// Transport returns a kafka.Transport with the TLS configuration and SASL
// mechanism, for kafka.Client and kafka.Writer; nil when neither is set
// (kafka-go then uses kafka.DefaultTransport). Share one Transport among the
// clients and writers of a component (it pools connections) and call
// CloseTransport when done with it.
func Transport(t *tls.Config, m sasl.Mechanism) kafka.RoundTripper {
	if t == nil && m == nil {
		return nil
	}
	return &kafka.Transport{
		DialTimeout: 10 * time.Second,
		TLS:         t,
		SASL:        m,
	}
}

// Dialer returns a kafka.Dialer with the TLS configuration and SASL
// mechanism, for kafka.ConsumerGroup, kafka.Reader and kafka.Conn; nil when
// neither is set (kafka-go then uses kafka.DefaultDialer).
func Dialer(t *tls.Config, m sasl.Mechanism) *kafka.Dialer {
	if t == nil && m == nil {
		return nil
	}
	return &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, TLS: t, SASLMechanism: m}
}

// Client returns a kafka.Client for the brokers over the given transport
// (nil: kafka-go's default).
func Client(brokers []string, transport kafka.RoundTripper, timeout time.Duration) *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: timeout, Transport: transport}
}

// CloseTransport closes the idle connections of a transport made by
// Transport (nothing for nil or kafka.DefaultTransport).
func CloseTransport(rt kafka.RoundTripper) {
	if t, ok := rt.(*kafka.Transport); ok && rt != kafka.DefaultTransport {
		t.CloseIdleConnections()
	}
}

// Explain wraps a connection error with Advice when it comes from
// authentication or TLS; other errors are returned unchanged.
func Explain(err error) error {
	if a := Advice(err); a != "" {
		return fmt.Errorf("%w: %s", err, a)
	}
	return err
}

// Advice says what to check when err comes from authentication or TLS (a
// wrong password, a mechanism the listener does not enable, an untrusted
// certificate, TLS spoken to a plaintext port or the reverse), and is ""
// for any other error.
func Advice(err error) string {
	if err == nil {
		return ""
	}
	var (
		unknownAuth x509.UnknownAuthorityError
		hostname    x509.HostnameError
		invalid     x509.CertificateInvalidError
		recordHdr   tls.RecordHeaderError
	)
	switch {
	case errors.Is(err, kafka.SASLAuthenticationFailed):
		return "the brokers refused the SASL credentials; check --sasl-mechanism (the broker must enable it), --sasl-username and the password (--sasl-password-env / --sasl-password-file)"
	case errors.Is(err, kafka.UnsupportedSASLMechanism):
		return "the broker's listener does not enable this --sasl-mechanism (see its sasl.enabled.mechanisms)"
	case errors.Is(err, kafka.IllegalSASLState):
		return "SASL exchange failed; is the listener a SASL listener, and --sasl-mechanism one it enables?"
	case errors.As(err, &unknownAuth):
		return "the broker's certificate is not signed by a trusted CA; give its CA with --tls-ca"
	case errors.As(err, &hostname):
		return "the broker's certificate does not name the address in --brokers; use the name in its certificate"
	case errors.As(err, &invalid):
		return "the broker's certificate is invalid (expired, or not for a server)"
	case errors.As(err, &recordHdr):
		return "the broker did not answer TLS: is this a plaintext listener? (drop the --tls flags, or use the TLS port)"
	case strings.Contains(err.Error(), "tls: "), strings.Contains(err.Error(), "remote error"):
		return "TLS handshake failed; check --tls-ca, and --tls-cert/--tls-key if the broker requires client certificates"
	}
	return ""
}
