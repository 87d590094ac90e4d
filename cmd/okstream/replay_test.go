package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"okstream/codec"
	"okstream/internal/kafkatest"
	"okstream/producer"
)

// writeReplayCSV writes a small CSV file with a user column, three
// features and a {0,1} label, and returns its path.
func writeReplayCSV(t *testing.T, rows int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("user,f1,f2,f3,label\n")
	for i := range rows {
		fmt.Fprintf(&b, "%d,%d,%g,%g,%d\n", 100+i%7, i, float64(i%5)/4, -float64(i)/3, i%2)
	}
	path := filepath.Join(t.TempDir(), "clicks.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReplayCommand(t *testing.T) {
	e := kafkatest.New(t)
	path := writeReplayCSV(t, 50)
	brokers := strings.Join(e.Brokers, ",")

	t.Run("json", func(t *testing.T) {
		// --event-format json: the same events as JSON objects (what okstream
		// run --input-format json reads), equal to the msgpack replay's.
		var recs [2][]kafkatest.Record
		for i, format := range []string{"msgpack", "json"} {
			topic := e.Name("fmt-" + format)
			var out, errb bytes.Buffer
			if code := run([]string{"replay", "--data", path, "--label", "label", "--drop", "user", "--seed", "3",
				"--event-format", format, "--brokers", brokers, "--topic", topic, "--create-topic", "--quiet"}, &out, &errb); code != 0 {
				t.Fatalf("%s: exit %d: %s", format, code, errb.String())
			}
			recs[i] = e.ReadAll(t, topic)
		}
		if len(recs[0]) != 50 || len(recs[1]) != 50 {
			t.Fatalf("%d and %d records", len(recs[0]), len(recs[1]))
		}
		dec := codec.NewDecoder(codec.Limits{Dim: 3})
		for i := range recs[0] {
			if !codec.IsJSONRecord(recs[1][i].Value) {
				t.Fatalf("record %d is not JSON: %q", i, recs[1][i].Value)
			}
			var a, b codec.Event
			if err := dec.DecodeEvent(recs[0][i].Value, &a); err != nil {
				t.Fatal(err)
			}
			if err := dec.DecodeEventJSON(recs[1][i].Value, &b); err != nil {
				t.Fatal(err)
			}
			a.TS, b.TS = 0, 0 // the send time (--ts now)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("record %d: msgpack %+v, JSON %+v", i, a, b)
			}
		}
	})

	t.Run("column-keys", func(t *testing.T) {
		topic := e.Name("cli")
		var out, errb bytes.Buffer
		code := run([]string{"replay", "--data", path, "--label", "label", "--drop", "user",
			"--keys", "column", "--key-column", "user", "--scale", "minmax11", "--permute", "--seed", "3",
			"--brokers", brokers, "--topic", topic, "--create-topic", "--partitions", "3"}, &out, &errb)
		if code != 0 {
			t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
		}
		t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
		if s := out.String(); !strings.Contains(s, "replayed 50 events") || !strings.Contains(s, "events/s") ||
			!strings.Contains(s, "MB") || !strings.Contains(s, "to topic "+topic) {
			t.Fatalf("summary: %q", s)
		}
		if !strings.Contains(errb.String(), "created topic "+topic+" with 3 partitions") {
			t.Fatalf("stderr: %q", errb.String())
		}
		recs := e.ReadAll(t, topic)
		if len(recs) != 50 {
			t.Fatalf("%d records in the topic, want 50", len(recs))
		}
		for _, r := range recs {
			ev, err := codec.DecodeEvent(r.Value, codec.Limits{Dim: 3})
			if err != nil {
				t.Fatal(err)
			}
			_, rowText, _ := strings.Cut(ev.ID, "-")
			row, _ := strconv.Atoi(rowText)
			if want := strconv.Itoa(100 + row%7); ev.Key != want || string(r.Key) != want {
				t.Fatalf("row %d: key %q, want the user column %q", row, ev.Key, want)
			}
			if r.Partition != producer.Partition(ev.Key, 3) {
				t.Fatalf("key %q on partition %d", ev.Key, r.Partition)
			}
			if !ev.HasY || ev.Y != float64(2*(row%2)-1) {
				t.Fatalf("row %d: y = %v, want %d", row, ev.Y, 2*(row%2)-1)
			}
			for _, v := range ev.X {
				if v < -1 || v > 1 {
					t.Fatalf("row %d: feature %v outside [-1, 1] after --scale minmax11", row, v)
				}
			}
		}
	})

	t.Run("loop-limit-sparse", func(t *testing.T) {
		topic := e.Name("cli-loop")
		e.CreateTopic(t, topic, 2, nil)
		var out, errb bytes.Buffer
		code := run([]string{"replay", "--data", path, "--label", "-1", "--loop", "--limit", "120", "--sparse",
			"--label-fraction", "0.5", "--keys", "random", "--key-space", "9", "--quiet",
			"--brokers", brokers, "--topic", topic}, &out, &errb)
		if code != 0 {
			t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
		}
		if !strings.Contains(out.String(), "replayed 120 events") || !strings.Contains(out.String(), "passes 2.40 over 50 rows") {
			t.Fatalf("summary: %q", out.String())
		}
		if errb.Len() != 0 {
			t.Fatalf("--quiet, but stderr has %q", errb.String())
		}
		recs := e.ReadAll(t, topic)
		labelled := 0
		for _, r := range recs {
			ev, err := codec.DecodeEvent(r.Value, codec.Limits{Dim: 4})
			if err != nil || ev.X != nil {
				t.Fatalf("not a sparse event (%v)", err)
			}
			if ev.HasY {
				labelled++
			}
		}
		if len(recs) != 120 || labelled == 0 || labelled == 120 {
			t.Fatalf("%d records, %d labelled", len(recs), labelled)
		}
	})

	t.Run("ts-column", func(t *testing.T) {
		// Event times in seconds from a column, recent enough for a real
		// broker's retention.
		now := time.Now().Unix()
		var b strings.Builder
		b.WriteString("time,f1,label\n")
		for i := range 10 {
			fmt.Fprintf(&b, "%d,%d,%d\n", now+int64(i), i, 2*(i%2)-1)
		}
		csvPath := filepath.Join(t.TempDir(), "timed.csv")
		if err := os.WriteFile(csvPath, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		topic := e.Name("cli-ts")
		e.CreateTopic(t, topic, 1, nil)
		var out, errb bytes.Buffer
		code := run([]string{"replay", "--data", csvPath, "--label", "label", "--drop", "time", "--ts", "column",
			"--ts-column", "time", "--ts-unit", "s", "--quiet", "--brokers", brokers, "--topic", topic}, &out, &errb)
		if code != 0 {
			t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
		}
		recs := e.ReadAll(t, topic)
		if len(recs) != 10 {
			t.Fatalf("%d records", len(recs))
		}
		for k, r := range recs {
			ev, err := codec.DecodeEvent(r.Value, codec.Limits{Dim: 1})
			if want := (now + int64(k)) * 1000; err != nil || ev.TS != want || r.Time.UnixMilli() != want {
				t.Fatalf("record %d: ts %d, record time %v, want %d (%v)", k, ev.TS, r.Time, want, err)
			}
		}
	})

	t.Run("missing-topic", func(t *testing.T) {
		var out, errb bytes.Buffer
		code := run([]string{"replay", "--data", path, "--label", "label", "--quiet",
			"--brokers", brokers, "--topic", e.Name("absent")}, &out, &errb)
		if code != 1 || !strings.Contains(errb.String(), "does not exist") || !strings.Contains(errb.String(), "--create-topic") {
			t.Fatalf("exit %d, stderr %q", code, errb.String())
		}
	})
}

func TestReplayCommandBadFlags(t *testing.T) {
	t.Setenv("OKSTREAM_BROKERS", "")
	path := writeReplayCSV(t, 5)
	base := []string{"replay", "--data", path, "--label", "label", "--topic", "t", "--brokers", "localhost:9092"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "--data", path, "--topic", "t"}, "--brokers is required (or set OKSTREAM_BROKERS)"},
		{[]string{"replay", "--data", path, "--brokers", "localhost:9092"}, "--topic is required"},
		{append(base[:len(base):len(base)], "--brokers", "localhost"), "is not host:port"},
		{append(base[:len(base):len(base)], "--keys", "bogus"), "use row, column or random"},
		{append(base[:len(base):len(base)], "--keys", "column"), "--keys column needs --key-column"},
		{append(base[:len(base):len(base)], "--key-column", "user"), "add --keys column"},
		{append(base[:len(base):len(base)], "--label-fraction", "2"), "between 0 and 1"},
		{append(base[:len(base):len(base)], "--no-labels", "--label-fraction", "0.5"), "contradict"},
		{append(base[:len(base):len(base)], "--rate", "-5"), "--rate -5"},
		{append(base[:len(base):len(base)], "--partitions", "3"), "add --create-topic"},
		{append(base[:len(base):len(base)], "--batch-size", "0"), "--batch-size 0"},
		{append(base[:len(base):len(base)], "--event-format", "avro"), "use msgpack or json"},
		{append(base[:len(base):len(base)], "--task", "ranking"), "use classification or regression"},
		{append(base[:len(base):len(base)], "--scale", "y01"), "add --task regression"},
		{append(base[:len(base):len(base)], "--ts", "column"), "--ts column needs --ts-column"},
		{append(base[:len(base):len(base)], "--keys", "column", "--key-column", "nope"), "no column named \"nope\""},
		{[]string{"replay", "--topic", "t", "--brokers", "localhost:9092"}, "--data is required"},
		{[]string{"replay", "stray", "--topic", "t"}, "unexpected argument"},
	} {
		var out, errb bytes.Buffer
		code := run(c.args, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args[1:], code, errb.String(), c.want)
		}
	}
	// Non-binary labels suggest --task regression.
	var out, errb bytes.Buffer
	code := run(append(base[:len(base):len(base)], "--label", "f1"), &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "--task regression") {
		t.Errorf("non-binary labels: exit %d, stderr %q", code, errb.String())
	}
}

func TestReplayHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"replay", "--help"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"Usage: okstream replay", "--brokers", "--key-column", "Examples:", "--create-topic --partitions 3"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

// TestReplayShufflesByDefault replays the committed class-sorted spambase
// file: by default its first 200 events mix both classes (seeded: the same
// seed gives the same order), with --keep-order they are all spam.
func TestReplayShufflesByDefault(t *testing.T) {
	e := kafkatest.New(t)
	brokers := strings.Join(e.Brokers, ",")
	data := filepath.Join("..", "..", "testdata", "spambase", "spambase.data")
	n := 0
	firstLabels := func(t *testing.T, extra ...string) (pos int, ids string) {
		t.Helper()
		n++
		topic := e.Name(fmt.Sprintf("shuffle-%d", n))
		var out, errb bytes.Buffer
		args := append([]string{"replay", "--data", data, "--scale", "minmax01", "--limit", "200", "--quiet",
			"--brokers", brokers, "--topic", topic, "--create-topic"}, extra...)
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
		}
		recs := e.ReadAll(t, topic)
		if len(recs) != 200 {
			t.Fatalf("%d records, want 200", len(recs))
		}
		var b strings.Builder
		for _, r := range recs {
			ev, err := codec.DecodeEvent(r.Value, codec.Limits{Dim: 57})
			if err != nil {
				t.Fatal(err)
			}
			if ev.Y > 0 {
				pos++
			}
			b.WriteString(ev.ID + " ")
		}
		return pos, b.String()
	}
	pos, ids := firstLabels(t)
	if pos < 40 || pos > 120 { // 1813/4601 = 39 % spam: about 79 of 200
		t.Errorf("default replay: %d spam among the first 200 events, want a shuffled mix", pos)
	}
	if _, again := firstLabels(t, "--seed", "1"); again != ids {
		t.Errorf("the same seed gave another order")
	}
	if _, other := firstLabels(t, "--seed", "2"); other == ids {
		t.Errorf("another seed gave the same order")
	}
	if pos, _ := firstLabels(t, "--keep-order"); pos != 200 {
		t.Errorf("--keep-order: %d spam among the first 200 events, want 200 (the file starts with 1813 spam rows)", pos)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"replay", "--data", data, "--keep-order", "--permute", "--brokers", brokers, "--topic", "x"}, &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), "contradict") {
		t.Errorf("--keep-order --permute: exit %d, %q", code, errb.String())
	}
}
