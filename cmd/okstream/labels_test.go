package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeCSV writes n rows "a,b,y" with y = label(i, a, b).
func writeCSV(t *testing.T, n int, label func(i int, a, b float64) string) string {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("a,b,y\n")
	for i := 0; i < n; i++ {
		a, b := float64(i%17)/17-0.5, float64((i*7)%13)/13-0.5
		fmt.Fprintf(&sb, "%g,%g,%s\n", a, b, label(i, a, b))
	}
	path := filepath.Join(t.TempDir(), "data.csv")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Bare auto in eval learns what the labels say: regression (MSE, with
// loss=square) on real-valued labels, which it used to refuse, and
// classification on 0/1 labels.
func TestEvalBareAutoFollowsLabels(t *testing.T) {
	reg := writeCSV(t, 300, func(_ int, a, b float64) string { return fmt.Sprint(2*a - b + 0.125) })
	bin := writeCSV(t, 300, func(_ int, a, b float64) string {
		if a*a+b*b < 0.1 {
			return "1"
		}
		return "0"
	})
	for _, c := range []struct {
		name, data, model, want string
	}{
		{"regression", reg, "auto", "loss=square"},
		{"regression, base given", reg, "auto:base=fogd", "loss=square"},
		{"binary 0/1", bin, "auto", "mistake %"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run([]string{"eval", "--data", c.data, "--label", "y", "--runs", "1", "--quiet", "--model", c.model}, &out, &errb)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if !strings.Contains(out.String(), c.want) {
				t.Fatalf("output lacks %q:\n%s", c.want, out.String())
			}
			if c.want == "loss=square" && strings.Contains(out.String(), "mistake") {
				t.Fatalf("regression reported as classification:\n%s", out.String())
			}
		})
	}
	// A model that classifies refuses real-valued labels, naming what to do.
	var out, errb bytes.Buffer
	if code := run([]string{"eval", "--data", reg, "--label", "y", "--runs", "1", "--quiet", "--model", "fogd:budget=10"}, &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), "--model auto:loss=square") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}

// run's --task and --positive reach the pipeline configuration, and a bad
// --task is refused there.
func TestRunTaskFlags(t *testing.T) {
	var f runFlags
	fs := newFlagSet("run", "", "", &bytes.Buffer{})
	f.register(fs)
	if err := fs.Parse([]string{"--task", "regression", "--positive", "click"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := f.pipelineConfig(nil)
	if err != nil || cfg.Task != "regression" || cfg.Positive != "click" || len(cfg.Models) != 1 || cfg.Models[0].Spec != "auto:base=fogd" {
		t.Fatalf("config %+v, %v", cfg, err)
	}
	cfg.Brokers, cfg.Input, cfg.Dim = []string{"localhost:1"}, "in", 3
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "drop --positive") {
		t.Fatalf("--positive with --task regression: %v", err)
	}
	cfg.Positive = ""
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg.Task = "ranking"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "use binary, regression or auto") {
		t.Fatalf("--task ranking: %v", err)
	}
	cfg.Task, cfg.Models[0].Spec = "regression", "fogd:budget=10"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "is binary but --task regression") {
		t.Fatalf("classifier with --task regression: %v", err)
	}
}

// okstream eval reads a CSV label column of ±1, 0/1, true/false or two
// class names alike — the first name in the file is -1, true and the
// second name +1, as okstream run maps a partition's labels — and gives
// identical results (the learning curves and per-run scores, not only the
// means); --positive names a class.
func TestEvalLabelEncodingsAgree(t *testing.T) {
	evalJSON := func(name string, data string, extra ...string) string {
		var out, errb bytes.Buffer
		args := append([]string{"eval", "--data", data, "--label", "y", "--runs", "2", "--quiet", "--json", "--model", "auto", "--model", "fogd:budget=10"}, extra...)
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errb.String())
		}
		var res struct {
			Task   string
			Models []struct {
				Curve  any
				Mean   float64
				PerRun any `json:"per_run"`
			}
		}
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		if res.Task != "classification" {
			t.Fatalf("%s: task %q", name, res.Task)
		}
		b, _ := json.Marshal(res)
		return string(b)
	}
	// firstPositive: whether the file's first row is of the positive class.
	for _, firstPositive := range []bool{true, false} {
		class := func(i int, a, b float64) bool { return (a*a+b*b < 0.1) != (i == 0 && firstPositive) }
		encodings := []struct {
			name     string
			pos, neg string
			extra    []string
		}{
			{"pm1", "1", "-1", nil},
			{"01", "1", "0", nil},
			{"bool", "true", "false", nil},
			{"bool upper", "TRUE", "FALSE", nil},
			{"names, positive given", "ham", "spam", []string{"--positive", "ham"}},
		}
		if !firstPositive { // the first name in the file is -1
			encodings = append(encodings, struct {
				name     string
				pos, neg string
				extra    []string
			}{"names", "spam", "ham", nil})
		}
		ref := ""
		for _, enc := range encodings {
			data := writeCSV(t, 250, func(i int, a, b float64) string {
				if class(i, a, b) {
					return enc.pos
				}
				return enc.neg
			})
			got := evalJSON(enc.name, data, enc.extra...)
			if ref == "" {
				ref = got
			} else if got != ref {
				t.Fatalf("%s (first row positive %v): results differ from those with labels ±1:\n%s\n%s", enc.name, firstPositive, got, ref)
			}
		}
	}
	// Class names are not regression targets, and --positive must name one.
	names := writeCSV(t, 20, func(i int, _, _ float64) string { return []string{"a", "b", "c"}[i%3] })
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "auto:loss=square"}, "class names (a, b, c), not regression targets"},
		{[]string{"--model", "fogd", "--positive", "d"}, `--positive "d" is not one of the classes a, b, c`},
	} {
		var out, errb bytes.Buffer
		if code := run(append([]string{"eval", "--data", names, "--label", "y", "--runs", "1", "--quiet"}, c.args...), &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Fatalf("%v: exit %d: %s", c.args, code, errb.String())
		}
	}
}
