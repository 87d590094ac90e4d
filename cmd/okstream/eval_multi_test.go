package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"okstream/dataset"
	"okstream/learner"
	"okstream/learner/rng"
)

// multiJSON is the part of okstream eval --json a multi-class test reads.
type multiJSON struct {
	N       int      `json:"n"`
	Task    string   `json:"task"`
	Classes []string `json:"classes"`
	Models  []struct {
		Mean      float64                        `json:"mean"`
		Measures  map[string]map[string]*float64 `json:"measures"`
		PerClass  []map[string]*float64          `json:"per_class_accuracy_pct"`
		Confusion [][]uint64                     `json:"confusion"`
	} `json:"models"`
	Baseline struct {
		Label    string                         `json:"label"`
		Measures map[string]map[string]*float64 `json:"measures"`
	} `json:"baseline"`
	LinearBaseline *struct {
		Label    string                         `json:"label"`
		Measures map[string]map[string]*float64 `json:"measures"`
	} `json:"linear_baseline"`
	Test *struct {
		N      int `json:"n"`
		Models []struct {
			Measures map[string]map[string]*float64 `json:"measures"`
			PerClass []map[string]*float64          `json:"per_class_accuracy_pct"`
			Curve    []struct {
				T int `json:"t"`
			} `json:"curve"`
		} `json:"models"`
		Baseline struct {
			Measures map[string]map[string]*float64 `json:"measures"`
		} `json:"baseline"`
		LinearBaseline *struct {
			Measures map[string]map[string]*float64 `json:"measures"`
		} `json:"linear_baseline"`
	} `json:"test"`
}

// writeClassCSV writes n rows "label,x1,x2" with a header: the class is
// the sector of the angle of (x1, x2) among len(names) equal sectors,
// named names[k]; the rows first and extra are written before and after
// them as they are.
func writeClassCSV(t *testing.T, path string, n int, seed uint64, names []string, first, extra string) {
	t.Helper()
	src := rng.New(seed)
	var b strings.Builder
	b.WriteString("label,x1,x2\n" + first)
	for i := 0; i < n; i++ {
		x1, x2 := 2*src.Float64()-1, 2*src.Float64()-1
		k := int((math.Atan2(x2, x1) + math.Pi) / (2 * math.Pi) * float64(len(names)))
		k = min(k, len(names)-1)
		fmt.Fprintf(&b, "%s,%g,%g\n", names[k], x1, x2)
	}
	b.WriteString(extra)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func runMultiJSON(t *testing.T, args ...string) multiJSON {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(append([]string{"eval", "--json", "--quiet"}, args...), &out, &errb); code != 0 {
		t.Fatalf("okstream eval %v: exit %d: %s", args, code, errb.String())
	}
	var res multiJSON
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func stat(m map[string]map[string]*float64, name string) float64 {
	if v := m[name]["mean"]; v != nil {
		return *v
	}
	return math.NaN()
}

// A CSV of three class names is multi-class with --task auto: the linear
// model and the class-prior and linear baselines are reported with log
// loss, per-class accuracy and the confusion matrix; two names stay binary,
// integers stay regression unless --task multiclass.
func TestEvalMultiClassCSV(t *testing.T) {
	dir := t.TempDir()
	three, two, ints := filepath.Join(dir, "three.csv"), filepath.Join(dir, "two.csv"), filepath.Join(dir, "ints.csv")
	writeClassCSV(t, three, 600, 1, []string{"red", "green", "blue"}, "", "")
	writeClassCSV(t, two, 300, 2, []string{"no", "yes"}, "", "")
	writeClassCSV(t, ints, 300, 3, []string{"0", "1", "2"}, "", "")

	res := runMultiJSON(t, "--data", three, "--label", "label", "--runs", "2", "--model", "linear")
	if res.Task != "multiclass" || !reflect.DeepEqual(res.Classes, []string{"blue", "green", "red"}) {
		t.Fatalf("task %q classes %v, want multiclass [blue green red]", res.Task, res.Classes)
	}
	m := res.Models[0]
	prior := stat(res.Baseline.Measures, "mistake_rate_pct")
	if res.Baseline.Label != "class prior" || res.LinearBaseline == nil || prior < 50 {
		t.Fatalf("baselines %q (%v%% mistakes), linear %v", res.Baseline.Label, prior, res.LinearBaseline)
	}
	if !(m.Mean < prior/3) || !(stat(m.Measures, "log_loss") < stat(res.Baseline.Measures, "log_loss")) {
		t.Fatalf("linear: %v%% mistakes, log loss %v; class prior %v%%, %v", m.Mean, stat(m.Measures, "log_loss"), prior, stat(res.Baseline.Measures, "log_loss"))
	}
	if len(m.PerClass) != 3 || len(m.Confusion) != 3 {
		t.Fatalf("per class %v, confusion %v", m.PerClass, m.Confusion)
	}
	var cells uint64
	right := 0.0
	for i, row := range m.Confusion {
		for j, v := range row {
			cells += v
			if i == j {
				right += float64(v)
			}
		}
	}
	// every event but each run's first (no class known yet) has a cell
	if cells != 2*600-2 || math.Abs(100-100*right/1200-m.Mean) > 1e-9 {
		t.Fatalf("confusion holds %d events (want 1198), diagonal %v for %v%% mistakes", cells, right, m.Mean)
	}
	var table, errb bytes.Buffer
	if code := run([]string{"eval", "--quiet", "--data", three, "--label", "label", "--runs", "1", "--model", "linear"}, &table, &errb); code != 0 {
		t.Fatalf("table: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"multiclass", "class prior (baseline)", "linear multinomial logistic (baseline)", "confusion", "blue"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}

	if res := runMultiJSON(t, "--data", two, "--label", "label", "--runs", "1", "--model", "linear"); res.Task != "classification" || res.LinearBaseline != nil {
		t.Fatalf("two class names: task %q", res.Task)
	}
	if res := runMultiJSON(t, "--data", ints, "--label", "label", "--runs", "1"); res.Task != "regression" {
		t.Fatalf("integer labels with --task auto: task %q, want regression", res.Task)
	}
	res = runMultiJSON(t, "--data", ints, "--label", "label", "--runs", "1", "--task", "multiclass", "--model", "linear")
	if res.Task != "multiclass" || !reflect.DeepEqual(res.Classes, []string{"0", "1", "2"}) {
		t.Fatalf("--task multiclass on integer labels: task %q, classes %v", res.Task, res.Classes)
	}
	var out bytes.Buffer
	errb.Reset()
	if code := run([]string{"eval", "--quiet", "--data", three, "--label", "label", "--task", "binary"}, &out, &errb); code != 2 {
		t.Fatalf("--task binary on three classes: exit %d", code)
	}
	errb.Reset()
	if code := run([]string{"eval", "--quiet", "--data", three, "--label", "label", "--task", "multi"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--task") {
		t.Fatalf("--task multi: exit %d, %s", code, errb.String())
	}
}

// Without --model the multi-class model is auto: it runs where auto has a
// multi-class form, and the error names the multi-class learners where it
// has none.
func TestEvalMultiClassDefaultModel(t *testing.T) {
	dir := t.TempDir()
	three := filepath.Join(dir, "three.csv")
	writeClassCSV(t, three, 300, 4, []string{"a", "b", "c"}, "", "")
	var out, errb bytes.Buffer
	code := run([]string{"eval", "--quiet", "--json", "--data", three, "--label", "label", "--runs", "1"}, &out, &errb)
	if learner.DescribeMulti("auto") == nil {
		if code != 2 || !strings.Contains(errb.String(), "multi-class learners") {
			t.Fatalf("auto without a multi-class form: exit %d, %s", code, errb.String())
		}
		t.Skip("auto has no multi-class form in this build")
	}
	if code != 0 {
		t.Fatalf("default model: exit %d: %s", code, errb.String())
	}
}

// --test: the frozen model is scored on a held-out file whose classes are
// matched to the training file's by name; a class the training file lacks
// is a mistake (accuracy 0) with probability 0.
func TestEvalMultiClassTestFile(t *testing.T) {
	dir := t.TempDir()
	train, test := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	writeClassCSV(t, train, 900, 5, []string{"red", "green", "blue"}, "red,0,-0.5\n", "") // red (angle −π/2) is class 0 in the training file
	// the test file shows its classes in another order (blue, the sector
	// of angle π/2, first: its class number 0), and has "purple"
	writeClassCSV(t, test, 300, 6, []string{"red", "green", "blue"}, "blue,0,0.5\n", "purple,0.1,0.1\npurple,0.2,0.1\n")
	res := runMultiJSON(t, "--data", train, "--label", "label", "--test", test, "--runs", "2", "--model", "linear",
		"--test-every", "300", "--scale", "minmax11", "--plot", filepath.Join(dir, "c.svg"), "--test-plot", filepath.Join(dir, "t.svg"))
	for _, f := range []string{"c.svg", "t.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() < 100 {
			t.Fatalf("plot %s: %v", f, err)
		}
	}
	if res.Test == nil || res.Test.N != 303 || res.Test.LinearBaseline == nil {
		t.Fatalf("test section %+v", res.Test)
	}
	if !reflect.DeepEqual(res.Classes, []string{"blue", "green", "red", "purple"}) {
		t.Fatalf("classes %v", res.Classes)
	}
	tm := res.Test.Models[0]
	if len(tm.Curve) != 4 || tm.Curve[0].T != 300 || tm.Curve[3].T != 901 {
		t.Fatalf("test curve %+v", tm.Curve)
	}
	if v := tm.PerClass[3]["mean"]; v == nil || *v != 0 {
		t.Fatalf("purple's test accuracy %v, want 0", v)
	}
	// the other classes' sectors are relabelled consistently (by name), so
	// the linear model is good on them: at most a few percent wrong plus
	// the 2 purple rows
	testErr := stat(tm.Measures, "mistake_rate_pct")
	prior := stat(res.Test.Baseline.Measures, "mistake_rate_pct")
	if !(testErr < 15) || !(prior > 50) {
		t.Fatalf("test mistakes %v%%, frozen class prior %v%%", testErr, prior)
	}
	// log loss: each purple row costs −log 1e-15 ≈ 34.5 nats, so > 2·34.5/302
	if ll := stat(tm.Measures, "log_loss"); !(ll > 2*34.5/303) {
		t.Fatalf("test log loss %v does not count the unseen class", ll)
	}
}

func sharedOrSkip(t *testing.T, rel string) {
	t.Helper()
	p := filepath.Join(dataset.DataRoot(), rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s not present (the shared datasets are beside the repository): %v", p, err)
	}
}

// --data letter and --data mnist are multi-class without --task: letter by
// its class names, mnist because the catalog declares it.
func TestEvalLetterAndMNIST(t *testing.T) {
	sharedOrSkip(t, "letter/letter-recognition.data")
	res := runMultiJSON(t, "--data", "letter", "--limit", "3000", "--runs", "1", "--model", "linear", "--scale", "minmax11")
	if res.Task != "multiclass" || len(res.Classes) != 26 || res.Classes[0] != "A" || res.N != 3000 {
		t.Fatalf("letter: task %q, %d classes %v, n %d", res.Task, len(res.Classes), res.Classes, res.N)
	}
	lin, prior := res.Models[0].Mean, stat(res.Baseline.Measures, "mistake_rate_pct")
	if !(lin < prior-30) {
		t.Fatalf("letter (3000 rows): linear %v%%, class prior %v%%", lin, prior)
	}
	t.Logf("letter (first 3000 rows): linear %.2f%%, class prior %.2f%%", lin, prior)

	sharedOrSkip(t, "mnist/mnist.t.libsvm")
	res = runMultiJSON(t, "--data", "mnist", "--limit", "1000", "--runs", "1", "--model", "linear", "--scale", "minmax01")
	want := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}
	if res.Task != "multiclass" || !reflect.DeepEqual(res.Classes, want) || res.N != 1000 {
		t.Fatalf("mnist: task %q, classes %v, n %d", res.Task, res.Classes, res.N)
	}
	lin, prior = res.Models[0].Mean, stat(res.Baseline.Measures, "mistake_rate_pct")
	if !(lin < prior-30) {
		t.Fatalf("mnist (1000 rows): linear %v%%, class prior %v%%", lin, prior)
	}
	t.Logf("mnist (first 1000 rows): linear %.2f%%, class prior %.2f%%", lin, prior)
}

// With --task multiclass every model runs in its multi-class form, whatever
// its binary form's task: pkawv (a regression learner as a binary spec) is
// accepted beside fogd, bogd runs one-vs-rest, and a regression-only
// learner is refused with the reason.
func TestEvalMultiClassAnyForm(t *testing.T) {
	three := filepath.Join(t.TempDir(), "three.csv")
	writeClassCSV(t, three, 300, 4, []string{"a", "b", "c"}, "", "")
	res := runMultiJSON(t, "--data", three, "--label", "label", "--runs", "1", "--task", "multiclass",
		"--model", "fogd", "--model", "pkawv:order=1", "--model", "bogd:budget=20")
	if res.Task != "multiclass" {
		t.Fatalf("task %q", res.Task)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"eval", "--quiet", "--data", three, "--label", "label", "--task", "multiclass", "--model", "kawv"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "one-vs-rest needs a binary classifier") {
		t.Fatalf("kawv: exit %d: %s", code, errb.String())
	}
}
