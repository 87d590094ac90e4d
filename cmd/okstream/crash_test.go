package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
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
)

// A real crash: the okstream process is killed with SIGKILL (no final
// checkpoint, no LeaveGroup) twice while it works, restarted each time, and
// finally stopped with SIGTERM (which must drain and checkpoint). Every input
// offset has a prediction, re-emitted predictions are byte-identical, and
// the final models are bit-identical to an offline replay of each partition.
func TestSIGKILLRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess crash test in -short mode")
	}
	e := kafkatest.New(t)
	in := e.Name("events")
	e.CreateTopic(t, in, 2, nil)
	const n = 20000
	e.Produce(t, in, events(n, 4, 7)...)
	group, ckpt := e.Name("g"), e.Name("ckpt")
	models := []string{"champion=fogd:sigma=1,budget=20", "challenger=nogd:sigma=1,budget=30"}
	args := []string{"run", "--brokers", strings.Join(e.Brokers, ","), "--input", in, "--dim", "4", "--group", group,
		"--checkpoint-topic", ckpt, "--model", models[0], "--model", models[1],
		"--checkpoint-every", "300", "--batch-size", "100", "--session-timeout", "2s", "--heartbeat-interval", "200ms", "--rebalance-timeout", "4s", "--log-level", "info"}
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
	distinct := func() int {
		recs, _ := kafkatest.ReadAll(context.Background(), e.Client, in+".predictions")
		seen := map[[2]int64]bool{}
		for _, r := range recs {
			p, err := codec.DecodePrediction(r.Value)
			if err == nil {
				seen[[2]int64{int64(p.Partition), p.Offset}] = true
			}
		}
		return len(seen)
	}
	waitFor := func(what string, cond func() bool, errb *bytes.Buffer) {
		deadline := time.Now().Add(90 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; stderr:\n%s", what, errb.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, killAt := range []float64{3000, 6000} { // predictions written by each process before its SIGKILL
		cmd, errb := start()
		waitFor("predictions", func() bool { return metric("okstream_predictions_total") >= killAt }, errb)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
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

	// Re-emitted predictions are byte-identical to the first copies.
	recs := e.ReadAll(t, in+".predictions")
	first := map[[2]int64][]byte{}
	for _, r := range recs {
		p, _ := codec.DecodePrediction(r.Value)
		k := [2]int64{int64(p.Partition), p.Offset}
		if prev, ok := first[k]; ok && !bytes.Equal(prev, r.Value) {
			t.Fatalf("re-emitted prediction %v differs", k)
		}
		first[k] = r.Value
	}
	t.Logf("%d prediction records for %d events after two SIGKILLs", len(recs), n)

	// Final models equal the offline replay of each partition.
	ctx := context.Background()
	store, err := checkpoint.OpenExisting(ctx, checkpoint.Config{Brokers: e.Brokers, Topic: ckpt})
	if err != nil {
		t.Fatal(err)
	}
	input := e.ReadAll(t, in)
	for p := 0; p < 2; p++ {
		var xs [][]float64
		var ys []float64
		for _, r := range input {
			if r.Partition != p {
				continue
			}
			ev, _ := codec.DecodeEvent(r.Value, codec.Limits{Dim: 4})
			xs, ys = append(xs, ev.Dense(nil, 4)), append(ys, ev.Y)
		}
		cp, _, err := store.Load(ctx, checkpoint.ID{Group: group, Topic: in, Partition: p})
		if err != nil || cp == nil {
			t.Fatalf("partition %d: %v", p, err)
		}
		if cp.NextOffset != int64(len(xs)) {
			t.Fatalf("partition %d: SIGTERM's final checkpoint at %d, want %d; last run's log:\n%s", p, cp.NextOffset, len(xs), errb.String())
		}
		pl, _ := consumer.DescribePayload(cp.Payload)
		saved := pl.Models
		for i, m := range models {
			mm, _ := consumer.ParseModel(m)
			_, l, _ := eval.Replay(mm.Spec, 4, xs, ys, nil)
			want, _ := l.MarshalBinary()
			if !bytes.Equal(saved[i].State, want) {
				t.Fatalf("partition %d model %s: state after SIGKILLs differs from the offline replay", p, mm.Name)
			}
		}
	}
}
