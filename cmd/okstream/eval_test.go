package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"okstream/dataset"
	"okstream/learner/rng"
)

// evalJSON is the part of okstream eval --json the tests read.
type evalJSON struct {
	Passes int `json:"passes"`
	Models []struct {
		Mean     float64                        `json:"mean"`
		Measures map[string]map[string]*float64 `json:"measures"`
	} `json:"models"`
	Baseline struct {
		Label    string                         `json:"label"`
		Measures map[string]map[string]*float64 `json:"measures"`
	} `json:"baseline"`
	Test *struct {
		N           int `json:"n"`
		TrainEvents int `json:"train_events"`
		Models      []struct {
			Measures map[string]map[string]*float64 `json:"measures"`
			Curve    []struct {
				T int `json:"t"`
			} `json:"curve"`
		} `json:"models"`
		Baseline struct {
			Measures map[string]map[string]*float64 `json:"measures"`
		} `json:"baseline"`
	} `json:"test"`
}

func mean(m map[string]map[string]*float64, name string) float64 {
	if v := m[name]["mean"]; v != nil {
		return *v
	}
	return -1
}

// writeLIBSVM writes n rows of a linearly separable problem with labels
// 0/1 (label 1 iff x1 + x2 > 0.2), using feature indices 1..dim (the last
// index only on the first row, so a test file written with dim−1 has a
// smaller inferred dimension, as a9a.t does).
func writeLIBSVM(t *testing.T, path string, n, dim int, seed uint64, extra string) {
	src := rng.New(seed)
	var b strings.Builder
	for i := 0; i < n; i++ {
		x1, x2 := 2*src.Float64()-1, 2*src.Float64()-1
		y := 0
		if x1+x2 > 0.2 {
			y = 1
		}
		fmt.Fprintf(&b, "%d 1:%g 2:%g", y, x1, x2)
		if i == 0 {
			fmt.Fprintf(&b, " %d:0.5", dim)
		}
		b.WriteString("\n")
	}
	b.WriteString(extra)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// okstream eval --test: the training file's dimension, label mapping and
// scaling are applied to the test file; the frozen model's test error,
// its curve and the frozen prior are reported; a test label the training
// file does not have is refused.
func TestEvalTestFile(t *testing.T) {
	dir := t.TempDir()
	train, test, bad := filepath.Join(dir, "train.libsvm"), filepath.Join(dir, "test.libsvm"), filepath.Join(dir, "bad.libsvm")
	writeLIBSVM(t, train, 600, 5, 1, "")
	writeLIBSVM(t, test, 300, 4, 2, "")
	writeLIBSVM(t, bad, 50, 4, 3, "2 1:0.1 2:0.1\n")
	var out, errb bytes.Buffer
	args := []string{"eval", "--data", train, "--format", "libsvm", "--test", test, "--scale", "minmax11", "--runs", "2", "--passes", "2",
		"--test-every", "500", "--model", "linear", "--json", "--quiet", "--test-plot", filepath.Join(dir, "t.svg")}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var res evalJSON
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Test == nil || res.Test.N != 300 || res.Test.TrainEvents != 1200 || res.Passes != 2 {
		t.Fatalf("test section %+v, passes %d", res.Test, res.Passes)
	}
	m := res.Test.Models[0]
	if len(m.Curve) != 3 || m.Curve[0].T != 500 || m.Curve[2].T != 1200 {
		t.Fatalf("test curve %+v, want t = 500, 1000, 1200", m.Curve)
	}
	// a linearly separable problem: the frozen linear model is far better
	// than the training prior (about 40 % mistakes) on the test file
	testErr, prior := mean(m.Measures, "mistake_rate_pct"), mean(res.Test.Baseline.Measures, "mistake_rate_pct")
	if testErr < 0 || testErr > 10 || prior < 25 {
		t.Fatalf("test mistake rate %v%%, frozen prior %v%%", testErr, prior)
	}
	if auc := mean(m.Measures, "auc"); auc < 0.97 {
		t.Fatalf("test AUC %v", auc)
	}
	if st, err := os.Stat(filepath.Join(dir, "t.svg")); err != nil || st.Size() < 100 {
		t.Fatalf("test plot: %v", err)
	}
	out.Reset()
	errb.Reset()
	args[6] = bad
	if code := run(args, &out, &errb); code != 2 || !strings.Contains(errb.String(), "row 51 has label 2") {
		t.Fatalf("a test label outside the training labels: exit %d, %s", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"eval", "--data", train, "--model", "linear", "--test-every", "5"}, &out, &errb); code != 2 {
		t.Fatalf("--test-every without --test: exit %d", code)
	}
}

// a9a → a9a.t (the test file's largest index is 122 of the training file's
// 123): trained on the first 4,000 rows, the frozen online linear model
// beats the training prior on the whole test file. Skipped without the
// shared datasets, and with -short.
func TestEvalA9ATestFile(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads the 16,281-row a9a.t")
	}
	trainPath := filepath.Join(dataset.DataRoot(), "a9a", "a9a")
	testPath := trainPath + ".t"
	for _, p := range []string{trainPath, testPath} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s not present (the shared datasets are beside the repository): %v", p, err)
		}
	}
	var out, errb bytes.Buffer
	args := []string{"eval", "--data", trainPath, "--test", testPath, "--limit", "4000", "--runs", "1", "--model", "linear", "--json", "--quiet"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var res evalJSON
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Test == nil || res.Test.N != 16281 {
		t.Fatalf("test section %+v", res.Test)
	}
	testErr, prior := mean(res.Test.Models[0].Measures, "mistake_rate_pct"), mean(res.Test.Baseline.Measures, "mistake_rate_pct")
	// the class prior of a9a.t: 3,846 of 16,281 are +1 (23.6 %)
	if prior < 23.5 || prior > 23.7 || testErr < 0 || testErr > 20 {
		t.Fatalf("a9a.t: linear %v%%, frozen prior %v%%", testErr, prior)
	}
	t.Logf("a9a (first 4000 rows) → a9a.t: linear %.2f%%, class prior %.2f%%", testErr, prior)
}
