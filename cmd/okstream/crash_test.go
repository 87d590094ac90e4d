package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"okstream/checkpoint"
	"okstream/codec"
	"okstream/consumer"
	"okstream/eval"
	"okstream/internal/kafkatest"
	"okstream/share"

	"github.com/segmentio/kafka-go"
)

// A real crash: the okstream process is killed with SIGKILL (no final
// checkpoint, no LeaveGroup) six times while it works, restarted each time,
// and finally stopped with SIGTERM (which must drain and checkpoint). With
// the default effectively-once delivery every input offset has exactly one
// output record (its prediction, or its dead letter: no duplicates), and the
// final models are bit-identical to an offline replay of each partition.
func TestSIGKILLRecovery(t *testing.T) { sigkillRecovery(t, false) }

// The same with the champion shared across the partitions (--share): its
// final state equals the offline simulator's (share.Simulate, the same
// schedule in one process) bit for bit.
func TestSIGKILLRecoveryShared(t *testing.T) { sigkillRecovery(t, true) }

func sigkillRecovery(t *testing.T, shared bool) {
	if testing.Short() {
		t.Skip("subprocess crash test in -short mode")
	}
	e := kafkatest.New(t)
	in := e.Name("events")
	e.CreateTopic(t, in, 2, nil)
	const n = 20000
	msgs := events(n, 4, 7)
	for i := 11; i < n; i += 97 { // some dead letters
		msgs[i] = kafka.Message{Key: msgs[i].Key, Value: []byte("garbage " + strconv.Itoa(i))}
	}
	e.Produce(t, in, msgs...)
	group, ckpt := e.Name("g"), e.Name("ckpt")
	models := []string{"champion=fogd:sigma=1,budget=20", "challenger=nogd:sigma=1,budget=30"}
	args := []string{"run", "--brokers", strings.Join(e.Brokers, ","), "--input", in, "--dim", "4", "--group", group,
		"--checkpoint-topic", ckpt, "--model", models[0], "--model", models[1],
		"--checkpoint-every", "300", "--batch-size", "100", "--session-timeout", "2s", "--heartbeat-interval", "200ms", "--rebalance-timeout", "4s", "--log-level", "info"}
	if shared {
		// The partitions' streams end at different offsets (keyed input): the
		// longer one waits --share-max-wait once for the other's missing
		// deltas, as the simulator's skip does.
		args = append(args, "--share", "champion", "--share-every", "25", "--share-max-wait", "3s", "--share-topic", e.Name("sync"))
		// Signed control records (issue 37): the restarts must read back
		// what the killed processes signed.
		secret := filepath.Join(t.TempDir(), "control.secret")
		if err := os.WriteFile(secret, []byte("crash-test-control-secret-0123456789abcdef\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--control-secret-file", secret)
	}
	// Each process serves /metrics on its own port: progress and readiness
	// are read from there.
	var metricsURL string
	start := func() (*exec.Cmd, *bytes.Buffer) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		metricsURL = "http://" + addr
		cmd := exec.Command(os.Args[0], append(append([]string(nil), args...), "--metrics-addr", addr)...)
		cmd.Env = append(os.Environ(), "OKSTREAM_TEST_AS_MAIN=1")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, &errb
	}
	// metric returns the sum of a metric's samples in the current process.
	metric := func(name string) float64 {
		resp, err := http.Get(metricsURL + "/metrics")
		if err != nil {
			return -1
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		sum, found := 0.0, false
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, name+" ") || strings.HasPrefix(line, name+"{") {
				f := strings.Fields(line)
				v, _ := strconv.ParseFloat(f[len(f)-1], 64)
				sum += v
				found = true
			}
		}
		if !found {
			return -1
		}
		return sum
	}
	// outputs counts the output records (predictions and dead letters) of
	// each source (partition, offset).
	outputs := func() map[[2]int64]int {
		seen := map[[2]int64]int{}
		recs, err := kafkatest.ReadAll(context.Background(), e.Client, in+".predictions")
		if err != nil {
			t.Logf("reading the predictions: %v", err)
		}
		for _, r := range recs {
			p, err := codec.DecodePrediction(r.Value)
			if err == nil {
				seen[[2]int64{int64(p.Partition), p.Offset}]++
			}
		}
		recs, _ = kafkatest.ReadAll(context.Background(), e.Client, in+".dlq")
		for _, r := range recs {
			for _, h := range r.Headers {
				if h.Key == consumer.HeaderSource {
					f := strings.Split(string(h.Value), "/")
					p, _ := strconv.Atoi(f[len(f)-2])
					o, _ := strconv.ParseInt(f[len(f)-1], 10, 64)
					seen[[2]int64{int64(p), o}]++
				}
			}
		}
		return seen
	}
	distinct := func() int { return len(outputs()) }
	waitFor := func(what string, cond func() bool, errb *bytes.Buffer) {
		deadline := time.Now().Add(90 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; stderr:\n%s", what, errb.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for _, killAt := range []float64{400, 800, 300, 600, 500, 700} { // predictions written by each process before its SIGKILL
		cmd, errb := start()
		waitFor("predictions", func() bool { return metric("okstream_predictions_total") >= killAt }, errb)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		t.Logf("SIGKILL after %v predictions: %d offsets have output", killAt, distinct())
	}
	if d := distinct(); d >= n {
		t.Fatalf("the killed processes already covered all %d events: the kills were not mid-stream", d)
	}
	cmd, errb := start()
	waitFor("all predictions", func() bool { return distinct() == n }, errb)
	// ... and this process has processed them itself: it owns both
	// partitions and has no lag.
	waitFor("the last process to catch up", func() bool {
		return metric("okstream_assigned_partitions") == 2 && metric("okstream_consumer_lag_records") == 0
	}, errb)
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, errb.String())
	}

	// Exactly one output record per input offset, in the output partition
	// of its input partition.
	for k, c := range outputs() {
		if c != 1 {
			t.Fatalf("input partition %d offset %d: %d output records, want exactly 1 (effectively-once)", k[0], k[1], c)
		}
	}
	recs := e.ReadAll(t, in+".predictions")
	for _, r := range recs {
		if p, _ := codec.DecodePrediction(r.Value); int(p.Partition) != r.Partition {
			t.Fatalf("prediction of input partition %d in output partition %d", p.Partition, r.Partition)
		}
	}
	t.Logf("%d prediction records and %d dead letters for %d events after six SIGKILLs", len(recs), len(e.ReadAll(t, in+".dlq")), n)

	// Final models equal the offline replay of each partition.
	ctx := context.Background()
	store, err := checkpoint.OpenExisting(ctx, checkpoint.Config{Brokers: e.Brokers, Topic: ckpt})
	if err != nil {
		t.Fatal(err)
	}
	input := e.ReadAll(t, in)
	var sim *share.SimResult
	if shared {
		var evs []share.Event
		var parts []int
		for _, r := range input { // ReadAll: each partition in offset order
			ev, err := codec.DecodeEvent(r.Value, codec.Limits{Dim: 4})
			evs = append(evs, share.Event{X: ev.Dense(nil, 4), Y: ev.Y, Skip: err != nil})
			parts = append(parts, r.Partition)
		}
		mm, _ := consumer.ParseModel(models[0])
		if sim, err = share.Simulate(mm.Spec, 4, share.Config{Every: 25, Lag: consumer.DefaultShareLag, Partitions: 2}, evs, func(i int) int { return parts[i] }); err != nil {
			t.Fatal(err)
		}
	}
	for p := 0; p < 2; p++ {
		var xs [][]float64
		var ys []float64
		records := 0
		for _, r := range input {
			if r.Partition != p {
				continue
			}
			records++
			ev, err := codec.DecodeEvent(r.Value, codec.Limits{Dim: 4})
			if err != nil {
				continue // dead-lettered
			}
			xs, ys = append(xs, ev.Dense(nil, 4)), append(ys, ev.Y)
		}
		cp, _, err := store.Load(ctx, checkpoint.ID{Group: group, Topic: in, Partition: p})
		if err != nil || cp == nil {
			t.Fatalf("partition %d: %v", p, err)
		}
		if cp.NextOffset != int64(records) {
			t.Fatalf("partition %d: SIGTERM's final checkpoint at %d, want %d; last run's log:\n%s", p, cp.NextOffset, records, errb.String())
		}
		pl, _ := consumer.DescribePayload(cp.Payload)
		saved := pl.Models
		for i, m := range models {
			mm, _ := consumer.ParseModel(m)
			_, l, _ := eval.Replay(mm.Spec, 4, xs, ys, nil)
			want, _ := l.MarshalBinary()
			if shared && i == 0 {
				want, _ = sim.Models[p].MarshalBinary()
			}
			if !bytes.Equal(saved[i].State, want) {
				t.Fatalf("partition %d model %s: state after SIGKILLs differs from the offline replay", p, mm.Name)
			}
		}
	}
}
