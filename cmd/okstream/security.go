package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/internal/kafkasec"
)

// secFlags are the connection-security flags of every command that talks
// to brokers (run, replay, inspect, demo --brokers). The password is never
// a flag value: --sasl-password-env names an environment variable and
// --sasl-password-file a file.
type secFlags struct {
	o kafkasec.Options
}

// secFlagNames are the flags secFlags registers.
var secFlagNames = []string{"tls", "tls-ca", "tls-cert", "tls-key", "tls-insecure-skip-verify",
	"sasl-mechanism", "sasl-username", "sasl-password-env", "sasl-password-file"}

func (s *secFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&s.o.TLS, "tls", false, "connect to the brokers over TLS, verifying them against the system's root CAs (implied by the other --tls-* flags)")
	fs.StringVar(&s.o.CAFile, "tls-ca", "", "PEM file of the CA certificate(s) that signed the brokers' certificates (enables TLS)")
	fs.StringVar(&s.o.CertFile, "tls-cert", "", "PEM client certificate for mutual TLS (with --tls-key)")
	fs.StringVar(&s.o.KeyFile, "tls-key", "", "PEM private key of --tls-cert (unencrypted)")
	fs.BoolVar(&s.o.InsecureSkipVerify, "tls-insecure-skip-verify", false, "TLS without verifying the brokers' certificates (encrypted but not authenticated; for tests only, logs a warning)")
	fs.StringVar(&s.o.SASLMechanism, "sasl-mechanism", "", "SASL authentication: plain, scram-sha-256 or scram-sha-512 (default: none)")
	fs.StringVar(&s.o.SASLUsername, "sasl-username", "", "SASL user name")
	fs.StringVar(&s.o.SASLPasswordEnv, "sasl-password-env", "", "name of the environment variable holding the SASL password (the password itself is never a flag)")
	fs.StringVar(&s.o.SASLPasswordFile, "sasl-password-file", "", "file holding the SASL password (one trailing newline is ignored)")
}

// fromEnv fills the security flags not given on the command line from
// OKSTREAM_<FLAG> (OKSTREAM_TLS_CA, OKSTREAM_SASL_MECHANISM, ...), for the
// commands that do not read every flag from the environment (applyLayers
// does it for run).
func (s *secFlags) fromEnv(fs *flag.FlagSet, getenv func(string) string) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range secFlagNames {
		if set[name] {
			continue
		}
		if v := getenv(envName(name)); v != "" {
			if err := fs.Set(name, v); err != nil {
				return fmt.Errorf("%s=%q: invalid value for --%s: %v", envName(name), v, name, err)
			}
		}
	}
	return nil
}

// build validates the flags and reads the files and the password; it writes
// the warnings (skipped verification, PLAIN without TLS) to warn.
func (s *secFlags) build(getenv func(string) string, warn func(string)) (kafkasec.Security, error) {
	sec, err := s.o.Build(getenv)
	if err != nil {
		return sec, err
	}
	for _, w := range sec.Warnings {
		warn(w)
	}
	return sec, nil
}

// warnTo returns a warn function writing "okstream CMD: warning: ..." lines.
func warnTo(w io.Writer, cmd string) func(string) {
	return func(msg string) { fmt.Fprintf(w, "okstream %s: warning: %s\n", cmd, msg) }
}

// connection is a client to a command's brokers, with the security flags
// applied (for the commands without the config-file layer: inspect,
// checkpoints).
type connection struct {
	brokers   []string
	client    *kafka.Client
	transport kafka.RoundTripper
}

// connect fills the security flags not given from OKSTREAM_<FLAG>, builds
// them (warnings to stderr as "okstream CMD: warning: ..."), and opens a
// client to brokers, or to $OKSTREAM_BROKERS when brokers is empty (an
// error if both are). Close the connection when done.
func (s *secFlags) connect(fs *flag.FlagSet, brokers, cmd string, stderr io.Writer) (*connection, error) {
	if err := s.fromEnv(fs, os.Getenv); err != nil {
		return nil, err
	}
	sec, err := s.build(os.Getenv, warnTo(stderr, cmd))
	if err != nil {
		return nil, err
	}
	if brokers == "" {
		brokers = os.Getenv("OKSTREAM_BROKERS")
	}
	if brokers == "" {
		return nil, fmt.Errorf("--brokers is required (or set OKSTREAM_BROKERS; see okstream %s --help)", cmd)
	}
	c := &connection{brokers: strings.Split(brokers, ","), transport: kafkasec.Transport(sec.TLS, sec.SASL)}
	c.client = kafkasec.Client(c.brokers, c.transport, 30*time.Second)
	return c, nil
}

func (c *connection) close() { kafkasec.CloseTransport(c.transport) }
