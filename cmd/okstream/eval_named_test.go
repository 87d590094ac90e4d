package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// okstream eval reads a CSV with text and empty cells as named features,
// --format jsonl reads the same rows as JSON lines events with the same
// result, and --test reads a held-out file the way the training file was
// read even when its own cells are all numbers.
func TestEvalNamedFiles(t *testing.T) {
	dir := t.TempDir()
	var csv, jsonl, test strings.Builder
	csv.WriteString("amount,country,label\n")
	test.WriteString("amount,country,label\n")
	countries := []string{"FR", "DE", "US"}
	for i := 0; i < 400; i++ {
		a := float64(i%37) / 37
		c := countries[i%3]
		y := 0
		if a > 0.5 || c == "DE" {
			y = 1
		}
		amount := fmt.Sprint(a)
		if i%11 == 0 {
			amount = "" // missing
		}
		fmt.Fprintf(&csv, "%s,%s,%d\n", amount, c, y)
		if amount == "" {
			fmt.Fprintf(&jsonl, `{"v": 3, "f": {"amount": null, "country": %q}, "y": %d}`+"\n", c, y)
		} else {
			fmt.Fprintf(&jsonl, `{"v": 3, "f": {"amount": %s, "country": %q}, "y": %d}`+"\n", amount, c, y)
		}
		if i < 50 {
			fmt.Fprintf(&test, "%v,%d,%d\n", a, i%3, y) // all numbers: read as named because the training file is
		}
	}
	paths := map[string]string{"csv": filepath.Join(dir, "d.csv"), "jsonl": filepath.Join(dir, "d.jsonl"), "test": filepath.Join(dir, "t.csv")}
	for k, b := range map[string]*strings.Builder{"csv": &csv, "jsonl": &jsonl, "test": &test} {
		if err := os.WriteFile(paths[k], []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	eval := func(args ...string) string {
		var out, errb bytes.Buffer
		if code := run(append([]string{"eval", "--quiet", "--runs", "2", "--model", "linear"}, args...), &out, &errb); code != 0 {
			t.Fatalf("eval %v: exit %d: %s", args, code, errb.String())
		}
		return out.String()
	}
	a := eval("--data", paths["csv"], "--label", "label")
	b := eval("--data", paths["jsonl"], "--format", "jsonl")
	row := func(s string) string {
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "linear ") {
				return strings.Join(strings.Fields(l)[:6], " ") // mistake rate ± std, log loss, Brier, ECE (not the timings)
			}
		}
		t.Fatalf("no linear row in\n%s", s)
		return ""
	}
	if row(a) != row(b) {
		t.Fatalf("CSV and JSON lines differ:\n%s\n%s", a, b)
	}
	if out := eval("--data", paths["csv"], "--label", "label", "--test", paths["test"]); !strings.Contains(out, "test set t.csv: n=50") {
		t.Fatalf("--test on a named file:\n%s", out)
	}
}

// okstream demo --data on a CSV with text and empty cells runs a named-
// feature stream end to end: replayed as named events, encoded by the
// runtime, killed and recovered, and bit-identical to an offline replay.
func TestDemoNamedFile(t *testing.T) {
	if testing.Short() {
		t.Skip("demo end to end in -short mode")
	}
	path := filepath.Join(t.TempDir(), "named.csv")
	var b strings.Builder
	b.WriteString("amount,country,device,age,label\n")
	countries, devices := []string{"FR", "DE", "US", "IT"}, []string{"ios", "android", "web"}
	for i := 0; i < 2000; i++ {
		a := float64((i*37)%100) / 100
		c, d := countries[(i*7)%4], devices[(i*5)%3]
		age := fmt.Sprint(18 + (i*13)%60)
		if i%10 == 3 {
			age = ""
		}
		y := 0
		if (a > 0.6) != (c == "DE" || c == "IT") {
			y = 1
		}
		fmt.Fprintf(&b, "%v,%s,%s,%s,%d\n", a, c, d, age, y)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := runDemo([]string{"--data", path, "--label", "label", "--events", "0", "--partitions", "2"}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "prediction records: 2000 for 2000 events") ||
		!strings.Contains(out.String(), "exact recovery: every partition's final models are bit-identical") {
		t.Fatalf("demo exited %d:\n%s\n%s", code, out.String(), errb.String())
	}
}
