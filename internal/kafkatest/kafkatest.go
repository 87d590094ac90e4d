// Package kafkatest gives tests a Kafka to talk to: the real broker named by
// $OKSTREAM_TEST_BROKERS when it is set (CI starts one with
// scripts/kafka.sh), otherwise an embedded in-process broker
// (github.com/twmb/franz-go/pkg/kfake) started for the test and closed when
// it ends. The same test code runs against both.
//
// The embedded broker is guarded to behave like Apache Kafka 4.x on the
// protocol versions it accepts: a request below Kafka 4.0's minimum API
// version (KIP-896) is refused, as a 4.x broker refuses it, so an old client
// code path fails here too and not only against the real broker.
package kafkatest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"okstream/internal/kafkautil"
)

// Env is a broker for one test.
type Env struct {
	Brokers []string
	// Real is true when the tests run against $OKSTREAM_TEST_BROKERS.
	Real bool
	// Cluster is the embedded broker (nil when Real).
	Cluster *kfake.Cluster
	Client  *kafka.Client
	prefix  string

	mu       sync.Mutex
	refusals []string
	down     atomic.Bool // the embedded broker drops every request (StopBroker)
	logs     tailLog     // Logger's last lines, printed if the test fails
}

// kafka4Min is Kafka 4.0's minimum version per API key (KIP-896; Produce ≥ 3
// since 4.0 removed message format v0/v1).
var kafka4Min = map[int16]int16{
	0: 3, 1: 4, 2: 1, 8: 2, 9: 1, 11: 2, 19: 2, 20: 1, 23: 2, 27: 1,
	29: 1, 30: 1, 31: 1, 32: 1, 34: 1, 35: 1, 38: 1, 39: 1, 40: 1, 41: 1,
}

// Options tune the embedded broker.
type Options struct {
	// BrokerConfigs are passed to kfake (e.g. "log.cleaner.backoff.ms").
	BrokerConfigs map[string]string
}

// New returns the test's broker.
func New(t testing.TB) *Env { return NewWith(t, Options{}) }

// NewWith returns the test's broker with options for the embedded one.
func NewWith(t testing.TB, o Options) *Env {
	t.Helper()
	e := &Env{prefix: prefix(t)}
	if b := os.Getenv("OKSTREAM_TEST_BROKERS"); b != "" {
		e.Real = true
		e.Brokers = strings.Split(b, ",")
	} else {
		// The minimum session timeout is set as a broker configuration too:
		// kfake enforces GroupMinSessionTimeout but reports the broker
		// configuration (6000 unless set) to DescribeConfigs, where okstream
		// run checks --session-timeout against it.
		bcfgs := map[string]string{"group.min.session.timeout.ms": "500"}
		for k, v := range o.BrokerConfigs {
			bcfgs[k] = v
		}
		opts := []kfake.Opt{
			kfake.NumBrokers(1),
			kfake.GroupMinSessionTimeout(500 * time.Millisecond),
			kfake.BrokerConfigs(bcfgs),
		}
		c, err := kfake.NewCluster(opts...)
		if err != nil {
			t.Fatalf("kafkatest: starting embedded broker: %v", err)
		}
		c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
			c.KeepControl()
			if e.down.Load() {
				return nil, errors.New("kafkatest: broker stopped"), true // kfake closes the connection
			}
			if min, ok := kafka4Min[req.Key()]; ok && req.GetVersion() < min {
				e.mu.Lock()
				e.refusals = append(e.refusals, fmt.Sprintf("api key %d v%d (Kafka 4 minimum v%d)", req.Key(), req.GetVersion(), min))
				e.mu.Unlock()
				return nil, errors.New("unsupported version"), true
			}
			return nil, nil, false
		})
		e.Cluster = c
		e.Brokers = c.ListenAddrs()
		t.Cleanup(func() {
			c.Close()
			e.mu.Lock()
			defer e.mu.Unlock()
			if len(e.refusals) > 0 {
				t.Errorf("kafkatest: requests a Kafka 4.x broker would refuse: %s", strings.Join(e.refusals, "; "))
			}
		})
	}
	e.Client = &kafka.Client{Addr: kafka.TCP(e.Brokers...), Timeout: 20 * time.Second}
	// Registered after the broker's cleanup, so it runs before it: the
	// pipelines' last lines are printed while the failure is fresh.
	t.Cleanup(func() {
		if t.Failed() {
			if tail := e.logs.String(); tail != "" {
				t.Logf("kafkatest: the last %d lines logged by the test's pipelines (Env.Logger):\n%s", e.logs.lines(), tail)
			}
		}
	})
	return e
}

// Logger returns a logger (level Info) whose last logTail lines are
// printed with the test's output if it fails, and not at all otherwise: a
// failure in CI then shows what the pipelines said before it.
func (e *Env) Logger() *slog.Logger { return slog.New(slog.NewTextHandler(&e.logs, nil)) }

// logTail is how many lines Env.Logger keeps.
const logTail = 400

// tailLog keeps the last logTail lines written to it.
type tailLog struct {
	mu   sync.Mutex
	ring [logTail]string
	n    int // lines written
}

func (l *tailLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range strings.SplitAfter(string(p), "\n") {
		if line != "" {
			l.ring[l.n%logTail] = line
			l.n++
		}
	}
	return len(p), nil
}

func (l *tailLog) lines() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return min(l.n, logTail)
}

func (l *tailLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for i := max(0, l.n-logTail); i < l.n; i++ {
		b.WriteString(l.ring[i%logTail])
	}
	return b.String()
}

func prefix(t testing.TB) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, t.Name())
	if len(name) > 60 {
		name = name[:60]
	}
	return "t-" + name + "-" + hex.EncodeToString(b[:])
}

// Name returns a topic or group name unique to this test (on a shared real
// broker, tests must not see each other's topics).
func (e *Env) Name(base string) string { return e.prefix + "-" + base }

// CreateTopic creates a topic and waits until its metadata is visible.
func (e *Env) CreateTopic(t testing.TB, name string, partitions int, configs map[string]string) {
	t.Helper()
	var entries []kafka.ConfigEntry
	keys := make([]string, 0, len(configs))
	for k := range configs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		entries = append(entries, kafka.ConfigEntry{ConfigName: k, ConfigValue: configs[k]})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := e.Client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: name, NumPartitions: partitions, ReplicationFactor: 1, ConfigEntries: entries,
	}}})
	if err != nil {
		t.Fatalf("kafkatest: create topic %s: %v", name, err)
	}
	if err := resp.Errors[name]; err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
		t.Fatalf("kafkatest: create topic %s: %v", name, err)
	}
	e.WaitTopic(t, name, partitions)
}

// WaitTopic waits until the topic's partitions all have leaders that answer
// (kafkautil.WaitTopic) with the given partition count.
func (e *Env) WaitTopic(t testing.TB, name string, partitions int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := kafkautil.WaitTopic(ctx, e.Client, name); err != nil {
		t.Fatalf("kafkatest: %v", err)
	}
	if n, err := kafkautil.Partitions(ctx, e.Client, name); err != nil || n != partitions {
		t.Fatalf("kafkatest: topic %s has %d partitions (%v), want %d", name, n, err, partitions)
	}
}

// Writer returns a synchronous, fully acknowledged writer for tests.
func (e *Env) Writer(topic string) *kafka.Writer {
	return &kafka.Writer{
		Addr:         kafka.TCP(e.Brokers...),
		Topic:        topic,
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: 2 * time.Millisecond,
		BatchSize:    500,
		BatchBytes:   1000000, // under the broker's 1 MiB limit per batch
	}
}

// Produce writes messages to topic and waits for the acknowledgements.
func (e *Env) Produce(t testing.TB, topic string, msgs ...kafka.Message) {
	t.Helper()
	w := e.Writer(topic)
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("kafkatest: produce to %s: %v", topic, err)
	}
}

// Record is a record read back from a topic.
type Record = kafkautil.Record

// ReadAll reads every partition of topic from its first offset to its high
// watermark at the time of the call.
func (e *Env) ReadAll(t testing.TB, topic string) []Record {
	t.Helper()
	recs, err := ReadAll(context.Background(), e.Client, topic)
	if err != nil {
		t.Fatalf("kafkatest: read %s: %v", topic, err)
	}
	return recs
}

// ReadAll reads every partition of topic up to its current high watermark,
// sorted by (partition, offset).
func ReadAll(ctx context.Context, c *kafka.Client, topic string) ([]Record, error) {
	n, err := kafkautil.Partitions(ctx, c, topic)
	if err != nil {
		return nil, err
	}
	var out []Record
	for p := 0; p < n; p++ {
		recs, err := kafkautil.ReadPartition(ctx, c, topic, p)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

// OutageEnv enables StopBroker and StartBroker against a real broker:
// OKSTREAM_TEST_KAFKA_OUTAGE=1 lets them stop and restart the broker of
// $OKSTREAM_TEST_BROKERS with scripts/kafka.sh (stop; start --keep-data,
// with the KAFKA_* variables of the environment, so the same ports). It
// stops the broker every other test uses, so run such tests alone (CI runs
// them in a step of their own).
const OutageEnv = "OKSTREAM_TEST_KAFKA_OUTAGE"

// CanStopBroker reports whether StopBroker and StartBroker work here:
// always on the embedded broker, on a real one only with OutageEnv set.
func (e *Env) CanStopBroker() bool { return !e.Real || os.Getenv(OutageEnv) == "1" }

// StopBroker makes the broker unreachable: the embedded one closes every
// connection on its next request (new connections are accepted, their
// requests closed) until StartBroker; a real one is stopped with
// scripts/kafka.sh stop. The broker is started again when the test ends.
func (e *Env) StopBroker(t testing.TB) {
	t.Helper()
	if !e.CanStopBroker() {
		t.Skipf("kafkatest: stopping the real broker needs %s=1", OutageEnv)
	}
	if !e.Real {
		if !e.down.Swap(true) {
			t.Cleanup(func() { e.down.Store(false) })
		}
		return
	}
	kafkaScript(t, "stop")
	t.Cleanup(func() {
		if exec.Command("bash", scriptPath(t), "status").Run() != nil {
			kafkaScript(t, "start", "--keep-data")
		}
	})
}

// StartBroker undoes StopBroker (a real broker restarts with its data:
// scripts/kafka.sh start --keep-data, which waits until it serves clients).
func (e *Env) StartBroker(t testing.TB) {
	t.Helper()
	if !e.Real {
		e.down.Store(false)
		return
	}
	kafkaScript(t, "start", "--keep-data")
}

func kafkaScript(t testing.TB, args ...string) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{scriptPath(t)}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kafkatest: scripts/kafka.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// scriptPath finds scripts/kafka.sh in the module root (the first parent
// directory of the working directory with a go.mod).
func scriptPath(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "scripts", "kafka.sh")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("kafkatest: no go.mod above the working directory: cannot find scripts/kafka.sh")
		}
		dir = parent
	}
}

// SyncBuffer is a bytes.Buffer safe for concurrent writers and a reader:
// for a test that collects the logs or output of goroutines (a pipeline's
// log handler, a command's stderr) while it polls them.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
