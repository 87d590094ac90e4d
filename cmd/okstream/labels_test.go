package main

import (
	"bytes"
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
