package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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

// --test on a binary file whose labels are class names (yes/no): the test
// file's names are matched to the training file's by name, whatever order
// the test file shows them in, and a class the training file lacks is
// refused with its name.
func TestEvalTestClassNames(t *testing.T) {
	dir := t.TempDir()
	var train, test, bad strings.Builder
	train.WriteString("a,b,label\n")
	test.WriteString("a,b,label\n")
	bad.WriteString("a,b,label\n0.3,0.1,maybe\n0.5,0.2,no\n")
	for i := 0; i < 300; i++ {
		a, b := float64(i%17)/17, float64(i%5)/5
		y := "no"
		if a+b > 0.9 {
			y = "yes"
		}
		fmt.Fprintf(&train, "%v,%v,%s\n", a, b, y)
	}
	for i := 0; i < 60; i++ { // "yes" first: the test file's own order is the reverse
		a, b := float64(16-i%17)/17, float64(4-i%5)/5
		y := "no"
		if a+b > 0.9 {
			y = "yes"
		}
		fmt.Fprintf(&test, "%v,%v,%s\n", a, b, y)
	}
	paths := map[string]string{}
	for k, sb := range map[string]*strings.Builder{"train": &train, "test": &test, "bad": &bad} {
		paths[k] = filepath.Join(dir, k+".csv")
		if err := os.WriteFile(paths[k], []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"eval", "--quiet", "--runs", "1", "--model", "linear", "--data", paths["train"], "--label", "label", "--test", paths["test"]}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var testRow string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "linear ") {
			testRow = l // the last linear row is the test set's
		}
	}
	f := strings.Fields(testRow)
	if len(f) < 2 {
		t.Fatalf("no test row in\n%s", out.String())
	}
	if m, err := strconv.ParseFloat(f[1], 64); err != nil || m > 30 {
		t.Fatalf("test mistake rate %q: the classes were not matched by name\n%s", f[1], out.String())
	}
	errb.Reset()
	if code := run([]string{"eval", "--quiet", "--runs", "1", "--model", "linear", "--data", paths["train"], "--label", "label", "--test", paths["bad"]}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `has class "maybe"`) {
		t.Fatalf("an unknown test class: exit %d: %s", code, errb.String())
	}
}
