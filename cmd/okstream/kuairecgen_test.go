package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"okstream/codec"
	"okstream/dataset/kuairec"
	"okstream/internal/kafkatest"
)

// TestKuaiRecGenCommand generates a small sample, checks the summary and
// the marker, reads it back, and refuses to write over real data.
func TestKuaiRecGenCommand(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"kuairec-gen", "--out", dir, "--users", "8", "--videos", "30", "--seed", "3", "--quiet"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
	}
	s := out.String()
	if !strings.Contains(s, "SYNTHETIC") || !strings.Contains(s, "small_matrix.csv: ") || !strings.Contains(s, "P(watch_ratio > 0.75)") {
		t.Fatalf("summary: %s", s)
	}
	d, err := kuairec.Locate(dir)
	if err != nil || !d.Synthetic {
		t.Fatalf("Locate: %+v %v", d, err)
	}
	marker, err := os.ReadFile(filepath.Join(dir, kuairec.ArchiveDir, kuairec.SyntheticMarker))
	if err != nil || !strings.Contains(string(marker), "okstream kuairec-gen --out "+dir+" --users 8 --videos 30 --seed 3 --quiet") {
		t.Fatalf("marker: %s %v", marker, err)
	}
	// Regenerating a synthetic folder is fine; a folder with KuaiRec files
	// but no marker (real data) is refused.
	if code := run([]string{"kuairec-gen", "--out", dir, "--users", "8", "--videos", "30", "--quiet"}, &out, &errb); code != 0 {
		t.Fatalf("regenerate: exit %d: %s", code, errb.String())
	}
	real := t.TempDir()
	os.WriteFile(filepath.Join(real, kuairec.SmallMatrixFile), []byte("user_id\n"), 0o644)
	errb.Reset()
	if code := run([]string{"kuairec-gen", "--out", real, "--users", "2", "--videos", "2"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "real data") {
		t.Fatalf("over real data: exit %d: %s", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"kuairec-gen", "--users", "2"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--out is required") {
		t.Fatalf("no --out: exit %d: %s", code, errb.String())
	}
}

// TestCommittedSampleCommand: the command line in testdata's README
// reproduces the committed sample byte for byte.
func TestCommittedSampleCommand(t *testing.T) {
	readme, err := os.ReadFile("../../testdata/kuairec-synthetic/README.md")
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "okstream kuairec-gen ") {
			line = strings.TrimSpace(l)
			break
		}
	}
	args := strings.Fields(line)[1:]
	dir := t.TempDir()
	for i := 1; i < len(args); i++ {
		if args[i-1] == "--out" {
			args[i] = dir
		}
	}
	var out, errb bytes.Buffer
	if code := run(append(args, "--quiet"), &out, &errb); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errb.String())
	}
	for _, name := range kuairec.Files {
		a, err := os.ReadFile(filepath.Join("../../testdata/kuairec-synthetic", kuairec.ArchiveDir, "data", name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, kuairec.ArchiveDir, "data", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the README's command does not reproduce the committed file", name)
		}
	}
}

// TestReplayKuaiRecCommand replays the committed synthetic sample with
// replay --source kuairec in labelled and feedback mode and checks the
// records and the summary's synthetic label.
func TestReplayKuaiRecCommand(t *testing.T) {
	e := kafkatest.New(t)
	brokers := strings.Join(e.Brokers, ",")
	for _, c := range []struct {
		name string
		args []string
		n    int
	}{
		{"labelled", []string{"--source", "kuairec", "--data", "../../testdata/kuairec-synthetic", "--limit", "300"}, 300},
		{"feedback", []string{"--data", "kuairec:../../testdata/kuairec-synthetic", "--feedback", "--limit", "300", "--speedup", "1e9", "--sparse"}, 600},
	} {
		t.Run(c.name, func(t *testing.T) {
			topic := e.Name("cli-kuairec-" + c.name)
			var out, errb bytes.Buffer
			args := append([]string{"replay", "--brokers", brokers, "--topic", topic, "--create-topic", "--partitions", "3", "--quiet"}, c.args...)
			if code := run(args, &out, &errb); code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
			}
			t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
			if s := out.String(); !strings.Contains(s, "replayed "+strconv.Itoa(c.n)+" events") || !strings.Contains(s, "SYNTHETIC") ||
				!strings.Contains(s, "kuairec-v1 (d=86)") || !strings.Contains(errb.String(), "retention.ms=-1") {
				t.Fatalf("summary: %s / %s", s, errb.String())
			}
			recs := e.ReadAll(t, topic)
			if len(recs) != c.n {
				t.Fatalf("%d records", len(recs))
			}
			imps := map[string]bool{}
			for _, r := range recs {
				ev, err := codec.DecodeEvent(r.Value, codec.Limits{Dim: 86})
				if err != nil {
					t.Fatal(err)
				}
				if string(r.Key) != ev.Key || r.Time.UnixMilli() != ev.TS || !strings.HasPrefix(ev.ID, ev.Key+"-") {
					t.Fatalf("record %q: key %q time %d", ev.ID, r.Key, r.Time.UnixMilli())
				}
				switch {
				case ev.IsFeedback():
					if !imps[ev.Ref] || !ev.HasY {
						t.Fatalf("feedback %q before its impression", ev.Ref)
					}
				case c.name == "feedback":
					if ev.HasY || ev.XI == nil {
						t.Fatalf("impression %q: y %v, sparse %v", ev.ID, ev.HasY, ev.XI != nil)
					}
					imps[ev.ID] = true
				default:
					if !ev.HasY || len(ev.X) != 86 {
						t.Fatalf("labelled event %q", ev.ID)
					}
				}
			}
		})
	}
	var out, errb bytes.Buffer
	if code := run([]string{"replay", "--data", "german", "--speedup", "10", "--brokers", brokers, "--topic", "x"}, &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), "--speedup applies to KuaiRec replays only") {
		t.Fatalf("--speedup on a dataset replay: exit %d: %s", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"replay", "--source", "kuairec", "--data", "../../testdata/kuairec-synthetic", "--keys", "random", "--brokers", brokers, "--topic", "x"}, &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), "--keys does not apply") {
		t.Fatalf("--keys on a KuaiRec replay: exit %d: %s", code, errb.String())
	}
}
