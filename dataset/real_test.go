package dataset

import (
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// sharedDatasets returns ../shared/datasets relative to the repository root
// (the directory holding go.mod), as a path relative to the test's working
// directory (../../shared/datasets from dataset/), or skips the test.
func sharedDatasets(tb testing.TB) string {
	tb.Helper()
	wd, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			tb.Fatalf("no go.mod above %s", wd)
		}
		root = parent
	}
	dir := filepath.Join(root, "..", "shared", "datasets")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		tb.Skip("../shared/datasets not found; these tests need the shared datasets beside the repository")
	}
	if rel, err := filepath.Rel(wd, dir); err == nil {
		dir = rel
	}
	return dir
}

func loadShared(tb testing.TB, rel string) *Dataset {
	tb.Helper()
	path := filepath.Join(sharedDatasets(tb), rel)
	opts, ok := Preset(path)
	if !ok {
		tb.Fatalf("no preset for %s", rel)
	}
	d, err := Load(path, opts)
	if err != nil {
		tb.Fatalf("Load(%s): %v", rel, err)
	}
	return d
}

// realFiles lists every data file in ../shared/datasets with the counts its
// README / SOURCE.md states. labels is nil for regression files.
var realFiles = []struct {
	rel    string
	format Format // what FormatAuto must detect
	rows   int
	dim    int
	labels map[float64]int
	target string // CSV label column name, for regression files
	first  []float64
	firstY float64
}{
	{rel: "german.numer/german.numer", format: FormatLIBSVM, rows: 1000, dim: 24, labels: map[float64]int{-1: 700, 1: 300}},
	{rel: "german.numer/german.numer_scale", format: FormatLIBSVM, rows: 1000, dim: 24, labels: map[float64]int{-1: 700, 1: 300}},
	{rel: "svmguide3/svmguide3.csv", format: FormatCSV, rows: 1243, dim: 21, labels: map[float64]int{-1: 947, 1: 296}},
	{rel: "svmguide3/svmguide3.libsvm", format: FormatLIBSVM, rows: 1243, dim: 21, labels: map[float64]int{-1: 947, 1: 296}},
	{rel: "svmguide3/svmguide3.t.csv", format: FormatCSV, rows: 41, dim: 21, labels: map[float64]int{1: 41}},
	{rel: "svmguide3/svmguide3.t.libsvm", format: FormatLIBSVM, rows: 41, dim: 21, labels: map[float64]int{1: 41}},
	{rel: "spambase/spambase.data", format: FormatCSV, rows: 4601, dim: 57, labels: map[float64]int{0: 2788, 1: 1813}},
	{rel: "cod-rna/cod-rna.train.csv", format: FormatCSV, rows: 59535, dim: 8, labels: map[float64]int{-1: 39690, 1: 19845},
		first: []float64{-766, 128, 0.140625, 0.304688, 0.234375, 0.140625, 0.304688, 0.234375}, firstY: -1},
	{rel: "cod-rna/cod-rna.libsvm", format: FormatLIBSVM, rows: 59535, dim: 8, labels: map[float64]int{-1: 39690, 1: 19845}},
	{rel: "w7a/w7a", format: FormatLIBSVM, rows: 24692, dim: 300, labels: map[float64]int{-1: 23952, 1: 740}},
	{rel: "w7a/w7a.t", format: FormatLIBSVM, rows: 25057, dim: 300, labels: map[float64]int{-1: 24318, 1: 739}},
	{rel: "parkinsons/parkinsons_updrs.data", format: FormatCSV, rows: 5875, dim: 16, target: "total_UPDRS",
		first: []float64{0.00662, 3.38e-5, 0.00401, 0.00317, 0.01204, 0.02565, 0.23, 0.01438, 0.01309, 0.01662, 0.04314, 0.01429, 21.64, 0.41888, 0.54842, 0.16006}, firstY: 34.398},
	{rel: "elevators/elevators.csv", format: FormatCSV, rows: 16599, dim: 18, target: "Goal"},
	{rel: "ailerons/ailerons.csv", format: FormatCSV, rows: 13750, dim: 40, target: "goal"},
	{rel: "bank32nh/bank32nh.csv", format: FormatCSV, rows: 8192, dim: 32, target: "rej"},
	{rel: "cpusmall/cpu_small.csv", format: FormatCSV, rows: 8192, dim: 12, target: "usr",
		first: []float64{6, 2, 1036, 103, 114, 1, 1, 172076, 355965, 2, 6527, 1851864}, firstY: 90},
	{rel: "casp/CASP.csv", format: FormatCSV, rows: 45730, dim: 9, target: "RMSD",
		first: []float64{13558.3, 4305.35, 0.31754, 162.173, 1872790.507, 215.359, 4287.87, 102, 27.0302}, firstY: 17.284},
}

func TestLoadRealFiles(t *testing.T) {
	dir := sharedDatasets(t)
	for _, f := range realFiles {
		t.Run(f.rel, func(t *testing.T) {
			path := filepath.Join(dir, f.rel)
			if got, err := DetectFormat(path); err != nil || got != f.format {
				t.Errorf("DetectFormat = %v, %v; want %v", got, err, f.format)
			}
			d := loadShared(t, f.rel)
			if d.Len() != f.rows || len(d.X) != f.rows || d.Dim != f.dim {
				t.Fatalf("got %d rows (%d in X) × %d, want %d × %d", d.Len(), len(d.X), d.Dim, f.rows, f.dim)
			}
			for i, row := range d.X {
				if len(row) != d.Dim {
					t.Fatalf("row %d has %d features", i, len(row))
				}
			}
			if f.labels != nil {
				got := d.LabelCounts()
				if len(got) != len(f.labels) {
					t.Errorf("label counts %v, want %v", got, f.labels)
				}
				for y, n := range f.labels {
					if got[y] != n {
						t.Errorf("label %g: %d rows, want %d", y, got[y], n)
					}
				}
			} else {
				if d.LabelName != f.target {
					t.Errorf("label column %q, want %q", d.LabelName, f.target)
				}
				if len(d.FeatureNames) != f.dim {
					t.Errorf("%d feature names for %d features", len(d.FeatureNames), f.dim)
				}
			}
			if f.first != nil {
				if d.Y[0] != f.firstY {
					t.Errorf("first label %v, want %v", d.Y[0], f.firstY)
				}
				for j, v := range f.first {
					if d.X[0][j] != v {
						t.Errorf("first row feature %d = %v, want %v", j, d.X[0][j], v)
					}
				}
			}
			t.Log(d.Summary())
		})
	}
}

func TestRealFileDetails(t *testing.T) {
	// w7a: 288,148 non-zeros, all of them 1 (binary keyword features).
	w := loadShared(t, "w7a/w7a")
	nnz, empty := 0, 0
	for _, row := range w.X {
		k := 0
		for _, v := range row {
			if v != 0 {
				if v != 1 {
					t.Fatalf("w7a value %v, want 1", v)
				}
				k++
			}
		}
		nnz += k
		if k == 0 {
			empty++
		}
	}
	if nnz != 288148 {
		t.Errorf("w7a: %d non-zeros, want 288148", nnz)
	}
	if empty == 0 {
		t.Error("w7a: expected rows without features")
	}

	// parkinsons: the preset keeps the 16 voice measures and predicts total_UPDRS.
	p := loadShared(t, "parkinsons/parkinsons_updrs.data")
	if p.FeatureNames[0] != "Jitter(%)" || p.FeatureNames[15] != "PPE" {
		t.Errorf("parkinsons features %v", p.FeatureNames)
	}
	// CASP's "# " header with quoted names.
	c := loadShared(t, "casp/CASP.csv")
	if c.FeatureNames[0] != "F1" || c.FeatureNames[8] != "F9" {
		t.Errorf("CASP features %v", c.FeatureNames)
	}
	lo, hi := c.Y[0], c.Y[0]
	for _, y := range c.Y {
		lo, hi = math.Min(lo, y), math.Max(hi, y)
	}
	if lo != 0 || hi != 20.999 {
		t.Errorf("CASP RMSD range [%v, %v], want [0, 20.999]", lo, hi)
	}
	// svmguide3: E-notation values and feature 21 non-zero in 62 rows.
	s := loadShared(t, "svmguide3/svmguide3.csv")
	if s.X[0][2] != 7.168048e-05 {
		t.Errorf("svmguide3 row 1 feature 3 = %v", s.X[0][2])
	}
	n21 := 0
	for _, row := range s.X {
		if row[20] != 0 {
			n21++
		}
	}
	if n21 != 62 {
		t.Errorf("svmguide3: feature 21 non-zero in %d rows, want 62", n21)
	}
	// cod-rna: 58 rows have f1 = 0.
	cr := loadShared(t, "cod-rna/cod-rna.train.csv")
	z := 0
	for _, row := range cr.X {
		if row[0] == 0 {
			z++
		}
	}
	if z != 58 {
		t.Errorf("cod-rna: %d rows with f1 = 0, want 58", z)
	}
}

// The CSV and LIBSVM renderings of svmguide3 and cod-rna are the same matrices.
func TestCSVEqualsLIBSVM(t *testing.T) {
	for _, pair := range [][2]string{
		{"svmguide3/svmguide3.csv", "svmguide3/svmguide3.libsvm"},
		{"svmguide3/svmguide3.t.csv", "svmguide3/svmguide3.t.libsvm"},
		{"cod-rna/cod-rna.train.csv", "cod-rna/cod-rna.libsvm"},
	} {
		a, b := loadShared(t, pair[0]), loadShared(t, pair[1])
		if a.Len() != b.Len() || a.Dim != b.Dim {
			t.Fatalf("%s: %d×%d vs %d×%d", pair[0], a.Len(), a.Dim, b.Len(), b.Dim)
		}
		for i := range a.X {
			if a.Y[i] != b.Y[i] {
				t.Fatalf("%s row %d: label %v vs %v", pair[0], i, a.Y[i], b.Y[i])
			}
			for j := range a.X[i] {
				if a.X[i][j] != b.X[i][j] {
					t.Fatalf("%s row %d feature %d: %v vs %v", pair[0], i, j, a.X[i][j], b.X[i][j])
				}
			}
		}
	}
}

// german.numer_scale is svm-scale's [−1,1] scaling of german.numer, printed
// with 6 significant digits: an oracle for ScaleFeatures.
func TestGermanScaleOracle(t *testing.T) {
	raw := loadShared(t, "german.numer/german.numer")
	want := loadShared(t, "german.numer/german.numer_scale")
	orig := raw.Clone()
	s := raw.ScaleFeatures(-1, 1)
	worst := 0.0
	for i := range raw.X {
		if raw.Y[i] != want.Y[i] {
			t.Fatalf("row %d: label %v vs %v", i, raw.Y[i], want.Y[i])
		}
		for j := range raw.X[i] {
			worst = math.Max(worst, math.Abs(raw.X[i][j]-want.X[i][j]))
		}
	}
	if worst > 1e-6 {
		t.Errorf("max |ScaleFeatures(german.numer) − german.numer_scale| = %g, want ≤ 1e-6", worst)
	}
	t.Logf("max deviation from german.numer_scale: %.3g", worst)
	// The fitted scaler applied to an original row reproduces the scaled row.
	x := append([]float64(nil), orig.X[0]...)
	s.Apply(x)
	for j := range x {
		if x[j] != raw.X[0][j] {
			t.Fatalf("Apply differs from ScaleFeatures at feature %d", j)
		}
	}
}

// Streaming yields exactly the rows Load gives, for every real file, with
// the dimension inferred by a first pass when Dim is not given.
func TestReaderMatchesLoad(t *testing.T) {
	dir := sharedDatasets(t)
	for _, f := range realFiles {
		t.Run(f.rel, func(t *testing.T) {
			path := filepath.Join(dir, f.rel)
			opts, _ := Preset(path)
			d, err := Load(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			opts.Dim = 0 // LIBSVM: exercise Open's first pass
			opts.Format = FormatAuto
			r, err := Open(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Dim() != d.Dim {
				t.Fatalf("Reader.Dim %d, Load %d", r.Dim(), d.Dim)
			}
			if len(r.FeatureNames()) != len(d.FeatureNames) || r.LabelName() != d.LabelName {
				t.Fatalf("names differ: %v %q vs %v %q", r.FeatureNames(), r.LabelName(), d.FeatureNames, d.LabelName)
			}
			prev := 0
			for i := 0; ; i++ {
				ex, err := r.Next()
				if err == io.EOF {
					if i != d.Len() {
						t.Fatalf("Reader gave %d rows, Load %d", i, d.Len())
					}
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if i >= d.Len() {
					t.Fatalf("Reader gave more rows than Load (%d)", d.Len())
				}
				if ex.Line <= prev {
					t.Fatalf("line numbers not increasing: %d after %d", ex.Line, prev)
				}
				prev = ex.Line
				if ex.Y != d.Y[i] || len(ex.X) != d.Dim {
					t.Fatalf("row %d: y %v vs %v, %d features", i, ex.Y, d.Y[i], len(ex.X))
				}
				for j := range ex.X {
					if ex.X[j] != d.X[i][j] {
						t.Fatalf("row %d feature %d: %v vs %v", i, j, ex.X[j], d.X[i][j])
					}
				}
			}
			if _, err := r.Next(); err != io.EOF {
				t.Fatalf("Next after EOF: %v", err)
			}
		})
	}
}

func TestBinaryLabelsReal(t *testing.T) {
	// spambase {0,1} → {−1,+1}: 1,813 spam become +1.
	d := loadShared(t, "spambase/spambase.data")
	if err := d.BinaryLabels(nil); err != nil {
		t.Fatal(err)
	}
	if c := d.LabelCounts(); c[1] != 1813 || c[-1] != 2788 || len(c) != 2 {
		t.Errorf("spambase ±1 counts %v", c)
	}
	// svmguide3.t has only +1 labels: kept.
	d = loadShared(t, "svmguide3/svmguide3.t.csv")
	if err := d.BinaryLabels(nil); err != nil {
		t.Fatal(err)
	}
	// cpusmall's usr is a regression target: an error naming the values.
	d = loadShared(t, "cpusmall/cpu_small.csv")
	err := d.BinaryLabels(nil)
	if err == nil {
		t.Fatal("BinaryLabels on cpusmall: no error")
	}
	t.Log(err)
	var pe *ParseError
	if errors.As(err, &pe) {
		t.Error("a label error is not a ParseError")
	}
}
