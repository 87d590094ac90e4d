package producer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"okstream/dataset"
	"okstream/internal/kafkatest"
)

// replayTo creates a topic of partitions partitions and replays ds into it.
func replayTo(t *testing.T, e *kafkatest.Env, base string, partitions int, ds *dataset.Dataset, cfg Config) (string, Stats) {
	t.Helper()
	topic := e.Name(base)
	e.CreateTopic(t, topic, partitions, nil)
	cfg.Brokers, cfg.Topic = e.Brokers, topic
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := Replay(ctx, ds, cfg)
	if err != nil {
		t.Fatalf("Replay: %v", err)
	}
	return topic, st
}

// TestReplayRoundTrip replays a synthetic dataset to a 3-partition topic in
// every key mode, dense and sparse, labelled, partly labelled and
// unlabelled, and checks every record read back.
func TestReplayRoundTrip(t *testing.T) {
	const n, dim, parts = 300, 6, 3
	ds := synth(n, dim)
	rowKeys := make([]string, n)
	for i := range rowKeys {
		rowKeys[i] = strconv.Itoa(1000 + i%17) // 17 "users"
	}
	e := kafkatest.New(t)
	cases := []struct {
		name string
		cfg  Config
	}{
		{"row-dense", Config{Keys: KeyRow}},
		{"row-sparse-permuted", Config{Keys: KeyRow, Sparse: true, Permute: true, Seed: 9}},
		{"column-dense-unlabelled", Config{Keys: KeyColumn, RowKeys: rowKeys, Unlabelled: 1}},
		{"random-sparse-partial", Config{Keys: KeyRandom, KeySpace: 20, Sparse: true, Unlabelled: 0.25, Seed: 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.IDPrefix = "r:"
			cfg.Time = TimeSynthetic
			cfg.TimeStart = time.Now().UnixMilli() // recent: a real broker's retention keeps it
			cfg.BatchSize = 64                     // several calls
			topic, st := replayTo(t, e, c.name, parts, ds, cfg)
			recs := e.ReadAll(t, topic)
			if len(recs) != n || st.Events != n || st.Sent != n {
				t.Fatalf("%d records, stats %+v; want %d", len(recs), st, n)
			}
			plan := mustPlan(t, ds, cfg)
			var sum int64
			for _, c := range st.Partitions {
				sum += c
			}
			if len(st.Partitions) != parts || sum != n {
				t.Fatalf("per-partition counts %v", st.Partitions)
			}
			seen := map[string]bool{}
			keyPart := map[string]int{}
			lastIndex := map[int]int64{}
			var labelled, bytes int64
			for _, r := range recs {
				ev := decode(t, r.Value, dim)
				bytes += int64(len(r.Key) + len(r.Value))
				if seen[ev.ID] {
					t.Fatalf("duplicate id %q", ev.ID)
				}
				seen[ev.ID] = true
				pass, row := parseID(t, ev.ID, "r:")
				// The event index: pass 0 only, so the position of row in the order.
				i := int64(-1)
				for k := range plan.Len() {
					if _, rk := plan.Row(k); rk == row {
						i = k
					}
				}
				if pass != 0 || i < 0 {
					t.Fatalf("id %q: not an event of the plan", ev.ID)
				}
				// Key: record key = event key = the plan's key, by mode.
				if string(r.Key) != ev.Key || ev.Key != plan.Key(i) {
					t.Fatalf("row %d: record key %q, event key %q, plan %q", row, r.Key, ev.Key, plan.Key(i))
				}
				switch cfg.Keys {
				case KeyRow:
					if ev.Key != strconv.Itoa(row) {
						t.Fatalf("row key %q for row %d", ev.Key, row)
					}
				case KeyColumn:
					if ev.Key != rowKeys[row] {
						t.Fatalf("column key %q for row %d", ev.Key, row)
					}
				case KeyRandom:
					if !strings.HasPrefix(ev.Key, "k-") {
						t.Fatalf("random key %q", ev.Key)
					}
				}
				// Same key ⇒ same partition, the one Partition names.
				if p, ok := keyPart[ev.Key]; ok && p != r.Partition {
					t.Fatalf("key %q on partitions %d and %d", ev.Key, p, r.Partition)
				}
				keyPart[ev.Key] = r.Partition
				if want := Partition(ev.Key, parts); r.Partition != want {
					t.Fatalf("key %q on partition %d, Partition says %d", ev.Key, r.Partition, want)
				}
				// Replay order within a partition.
				if last, ok := lastIndex[r.Partition]; ok && i <= last {
					t.Fatalf("partition %d: event %d after event %d", r.Partition, i, last)
				}
				lastIndex[r.Partition] = i
				// Features bit for bit, in the configured form.
				if cfg.Sparse != (ev.X == nil) {
					t.Fatalf("row %d: sparse=%v but X present=%v", row, cfg.Sparse, ev.X != nil)
				}
				if got := ev.Dense(nil, dim); !sameBits(got, ds.X[row]) {
					t.Fatalf("row %d: features %v, want %v", row, got, ds.X[row])
				}
				// Label as configured.
				if ev.HasY != plan.Labelled(i) {
					t.Fatalf("row %d: HasY=%v, plan says %v", row, ev.HasY, plan.Labelled(i))
				}
				if ev.HasY {
					labelled++
					if ev.Y != ds.Y[row] {
						t.Fatalf("row %d: y=%v, want %v", row, ev.Y, ds.Y[row])
					}
				}
				// Time: event ts and record time.
				if ev.TS != cfg.TimeStart+i || r.Time.UnixMilli() != ev.TS {
					t.Fatalf("row %d: ts %d, record time %v, want %d", row, ev.TS, r.Time, cfg.TimeStart+i)
				}
				// The record is exactly the plan's message.
				msg, err := plan.Message(i, time.Time{})
				if err != nil || string(msg.Value) != string(r.Value) || string(msg.Key) != string(r.Key) {
					t.Fatalf("row %d: record differs from Plan.Message (%v)", row, err)
				}
			}
			switch {
			case cfg.Unlabelled == 0 && labelled != n, cfg.Unlabelled == 1 && labelled != 0,
				cfg.Unlabelled > 0 && cfg.Unlabelled < 1 && (labelled == 0 || labelled == n):
				t.Fatalf("%d of %d events labelled with Unlabelled=%v", labelled, n, cfg.Unlabelled)
			}
			if st.Labelled != labelled || st.Bytes != bytes {
				t.Fatalf("stats say %d labelled, %d bytes; topic has %d, %d", st.Labelled, st.Bytes, labelled, bytes)
			}
		})
	}
}

// TestReplayDeterministic replays the same config twice and compares the
// (key, value) sequences per partition byte for byte.
func TestReplayDeterministic(t *testing.T) {
	ds := synth(400, 5)
	cfg := Config{Keys: KeyRandom, KeySpace: 50, Sparse: true, Permute: true, Seed: 11, Unlabelled: 0.5,
		Loop: true, Limit: 1000, Time: TimeNone, BatchSize: 100}
	e := kafkatest.New(t)
	seqs := make([]map[int][]string, 2)
	for run := range seqs {
		topic, st := replayTo(t, e, "det"+strconv.Itoa(run), 3, ds, cfg)
		if st.Events != 1000 {
			t.Fatalf("run %d: %d events", run, st.Events)
		}
		seqs[run] = map[int][]string{}
		for _, r := range e.ReadAll(t, topic) {
			seqs[run][r.Partition] = append(seqs[run][r.Partition], string(r.Key)+"\x00"+string(r.Value))
		}
	}
	for p := range 3 {
		if len(seqs[0][p]) == 0 || !slices.Equal(seqs[0][p], seqs[1][p]) {
			t.Fatalf("partition %d differs between runs (%d vs %d records)", p, len(seqs[0][p]), len(seqs[1][p]))
		}
	}
}

// TestReplayLoopLimit loops 2.5 times over the data and stops at exactly
// Limit events, with a new permutation per pass and unique ids.
func TestReplayLoopLimit(t *testing.T) {
	const n = 40
	ds := synth(n, 3)
	e := kafkatest.New(t)
	var mu sync.Mutex
	acked := map[int64][2]int64{}
	cfg := Config{Loop: true, Limit: 100, Permute: true, Seed: 2, BatchSize: 7, Time: TimeNone,
		OnAck: func(i int64, partition int, offset int64) {
			mu.Lock()
			acked[i] = [2]int64{int64(partition), offset}
			mu.Unlock()
		}}
	topic, st := replayTo(t, e, "loop", 2, ds, cfg)
	recs := e.ReadAll(t, topic)
	if st.Events != 100 || len(recs) != 100 || len(acked) != 100 {
		t.Fatalf("stats %d events, topic %d records, %d acks; want 100", st.Events, len(recs), len(acked))
	}
	plan := mustPlan(t, ds, cfg)
	order := map[int][]int{} // pass → rows in offset order (one partition's share)
	for _, r := range recs {
		ev := decode(t, r.Value, 3)
		pass, row := parseID(t, ev.ID, "")
		order[pass] = append(order[pass], row)
	}
	if len(order[0]) != n || len(order[1]) != n || len(order[2]) != 20 {
		t.Fatalf("events per pass: %d, %d, %d; want 40, 40, 20", len(order[0]), len(order[1]), len(order[2]))
	}
	// OnAck names where each event landed: its record carries the plan's bytes.
	byPos := map[[2]int64][]byte{}
	for _, r := range recs {
		byPos[[2]int64{int64(r.Partition), r.Offset}] = r.Value
	}
	for i, pos := range acked {
		msg, _ := plan.Message(i, time.Time{})
		if string(byPos[pos]) != string(msg.Value) {
			t.Fatalf("OnAck put event %d at %v, which holds another record", i, pos)
		}
	}
}

// TestReplayCancel cancels an endless replay and checks that Replay returns
// promptly with ctx's error and stats that match the topic.
func TestReplayCancel(t *testing.T) {
	ds := synth(50, 4)
	e := kafkatest.New(t)
	topic := e.Name("cancel")
	e.CreateTopic(t, topic, 3, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	cfg := Config{Brokers: e.Brokers, Topic: topic, Loop: true, BatchSize: 100,
		OnAck: func(i int64, _ int, _ int64) {
			if i >= 500 {
				once.Do(cancel)
			}
		}}
	done := make(chan struct{})
	var st Stats
	var err error
	go func() {
		st, err = Replay(ctx, ds, cfg)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Replay did not return within a minute of the cancellation")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	recs := e.ReadAll(t, topic)
	if st.Events < 500 || st.Events != st.Sent || int64(len(recs)) != st.Events {
		t.Fatalf("stats %+v, topic holds %d records", st, len(recs))
	}
}

func TestReplayPacedFakeClock(t *testing.T) {
	ds := synth(100, 3)
	e := kafkatest.New(t)
	clk := newFakeClock()
	start := clk.Now()
	cfg := Config{Loop: true, Limit: 2000, Rate: 500, Time: TimeNow}
	cfg.clock = clk
	topic, st := replayTo(t, e, "paced", 1, ds, cfg)
	// 500 events/s → 5 events per call, one call per 10 ms; the first call
	// leaves at once, so 400 calls take 3.99 s of (fake) time.
	if st.Events != 2000 || st.Elapsed != 3990*time.Millisecond {
		t.Fatalf("stats %+v, want 2000 events in 3.99 s", st)
	}
	if len(clk.sleeps) != 399 {
		t.Fatalf("%d sleeps, want 399", len(clk.sleeps))
	}
	for _, d := range clk.sleeps {
		if d != 10*time.Millisecond {
			t.Fatalf("slept %v, want 10ms", d)
		}
	}
	// TimeNow stamps come from the clock: event i at floor(i/5)×10 ms.
	for k, r := range e.ReadAll(t, topic) {
		ev := decode(t, r.Value, 3)
		if want := start.Add(time.Duration(k/5) * 10 * time.Millisecond).UnixMilli(); ev.TS != want || r.Time.UnixMilli() != want {
			t.Fatalf("record %d: ts %d, record time %v, want %d", k, ev.TS, r.Time, want)
		}
	}
}

func TestReplayMissingTopic(t *testing.T) {
	e := kafkatest.New(t)
	_, err := Replay(context.Background(), synth(5, 2), Config{Brokers: e.Brokers, Topic: e.Name("absent")})
	t.Log(err)
	if err == nil || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "create") {
		t.Fatalf("err = %v, want one saying the topic does not exist and how to create it", err)
	}
}

func TestReplayTooLargeEvent(t *testing.T) {
	e := kafkatest.New(t)
	topic := e.Name("small")
	e.CreateTopic(t, topic, 1, map[string]string{"max.message.bytes": "2000"})
	_, err := Replay(context.Background(), synth(5, 400), Config{Brokers: e.Brokers, Topic: topic})
	t.Log(err)
	if err == nil || !strings.Contains(err.Error(), "max.message.bytes") {
		t.Fatalf("err = %v, want one naming max.message.bytes", err)
	}
}

func TestEnsureTopic(t *testing.T) {
	e := kafkatest.New(t)
	topic := e.Name("ensure")
	ctx := context.Background()
	n, created, err := EnsureTopic(ctx, e.Brokers, topic, 4)
	if err != nil || !created || n != 4 {
		t.Fatalf("first EnsureTopic: %d partitions, created %v, %v", n, created, err)
	}
	n, created, err = EnsureTopic(ctx, e.Brokers, topic, 2)
	if err != nil || created || n != 4 {
		t.Fatalf("second EnsureTopic: %d partitions, created %v, %v; want the existing 4", n, created, err)
	}
	if _, _, err := EnsureTopic(ctx, e.Brokers, topic, 0); err == nil {
		t.Fatal("0 partitions accepted")
	}
}

func TestColumnKeys(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.csv")
	csv := "user,f1,f2,label\n17,0.5,1,1\n3,0.25,0,-1\n# comment\n\n17,1.5,2,1\n42.5,2,3,-1\n"
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := dataset.Options{Label: "label", Drop: []string{"user"}}
	ds, err := dataset.Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{"user", "0"} {
		o := opts
		if col == "0" {
			o.Drop = []string{"0"}
		}
		keys, err := ColumnKeys(path, o, col)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"17", "3", "17", "42.5"}; !slices.Equal(keys, want) || len(keys) != ds.Len() {
			t.Fatalf("keys %v, want %v", keys, want)
		}
	}
	if _, err := ColumnKeys(path, dataset.Options{Label: "label", Drop: []string{"0"}}, "user"); err == nil || !strings.Contains(err.Error(), "same way") {
		t.Fatalf("index in drop, name as key: %v", err)
	}
	if _, err := ColumnKeys(path, opts, "nope"); err == nil || !strings.Contains(err.Error(), "no column named") {
		t.Fatalf("unknown column: %v", err)
	}
}

// TestReplayWriteError makes the broker refuse batches (BatchBytes above the
// topic's limit) and checks that the error is a *WriteError saying what to do.
func TestReplayWriteError(t *testing.T) {
	e := kafkatest.New(t)
	topic := e.Name("refused")
	e.CreateTopic(t, topic, 1, map[string]string{"max.message.bytes": "5000"})
	cfg := Config{Brokers: e.Brokers, Topic: topic, BatchBytes: 1 << 20, Loop: true, Limit: 2000}
	st, err := Replay(context.Background(), synth(100, 8), cfg)
	t.Log(err)
	var we *WriteError
	if !errors.As(err, &we) || !strings.Contains(err.Error(), "max.message.bytes") {
		t.Fatalf("err = %v, want a *WriteError naming max.message.bytes", err)
	}
	if st.Events >= 2000 {
		t.Fatalf("stats %+v: everything acknowledged despite the error", st)
	}
}
