package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
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
	const n = 6000
	e.Produce(t, in, events(n, 4, 7)...)
	group, ckpt := e.Name("g"), e.Name("ckpt")
	models := []string{"champion=fogd:sigma=1,budget=20", "challenger=nogd:sigma=1,budget=30"}
	args := []string{"run", "--brokers", strings.Join(e.Brokers, ","), "--input", in, "--dim", "4", "--group", group,
		"--checkpoint-topic", ckpt, "--model", models[0], "--model", models[1], "--metrics-addr", "",
		"--checkpoint-every", "300", "--batch-size", "100", "--session-timeout", "2s", "--heartbeat-interval", "200ms", "--rebalance-timeout", "4s", "--log-level", "info"}
	start := func() (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "OKSTREAM_TEST_AS_MAIN=1")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, &errb
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
	for _, killAt := range []int{1500, 3500} {
		cmd, errb := start()
		waitFor("predictions", func() bool { return distinct() >= killAt }, errb)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	cmd, errb := start()
	waitFor("all predictions", func() bool { return distinct() == n }, errb)
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
			t.Fatalf("partition %d: SIGTERM's final checkpoint at %d, want %d", p, cp.NextOffset, len(xs))
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
