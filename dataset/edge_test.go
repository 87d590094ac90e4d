package dataset

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustLoad(t *testing.T, path string, opts Options) *Dataset {
	t.Helper()
	d, err := Load(path, opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return d
}

func checkData(t *testing.T, d *Dataset, x [][]float64, y []float64) {
	t.Helper()
	if d.Len() != len(y) || !reflect.DeepEqual(d.Y, y) {
		t.Errorf("Y = %v, want %v", d.Y, y)
	}
	if len(d.X) != len(x) {
		t.Fatalf("%d rows, want %d", len(d.X), len(x))
	}
	for i := range x {
		if !reflect.DeepEqual(d.X[i], x[i]) {
			t.Errorf("row %d = %v, want %v", i, d.X[i], x[i])
		}
	}
	// The streaming reader must agree with Load.
	opts := Options{Format: FormatAuto}
	if d.LabelName != "" || strings.HasSuffix(d.Path, ".csv") {
		return // CSV cases check the reader separately
	}
	r, err := Open(d.Path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer r.Close()
	for i := 0; ; i++ {
		ex, err := r.Next()
		if err == io.EOF {
			if i != len(y) {
				t.Errorf("Reader: %d rows, want %d", i, len(y))
			}
			return
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if i >= len(y) || ex.Y != y[i] || !reflect.DeepEqual(ex.X, d.X[i]) {
			t.Fatalf("Reader row %d = %v %v", i, ex.Y, ex.X)
		}
	}
}

// wantParseError checks that err is a *ParseError at file:line whose text
// contains each of parts.
func wantParseError(t *testing.T, err error, path string, line int, parts ...string) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T), want a *ParseError", err, err)
	}
	if pe.File != path || pe.Line != line {
		t.Errorf("error at %s:%d, want %s:%d (%v)", pe.File, pe.Line, path, line, err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}

func TestLIBSVMEdgeCases(t *testing.T) {
	content := "+1 1:0.5 3:2\r\n" + // CRLF
		"-1\n" + // no features
		"\n" + // blank
		"# a comment line\r\n" +
		"1.0 2:1e-3 13:0.0 # trailing comment\r\r\n" + // explicit zero, double CR
		"2 qid:7 1:-1\n" + // qid ignored
		"-1.0 \t 1:1\t2:2   " // tabs, trailing blanks, no final newline
	path := writeFile(t, "edge", content)
	d := mustLoad(t, path, Options{})
	if d.Dim != 13 {
		t.Fatalf("Dim = %d, want 13 (largest index)", d.Dim)
	}
	row := func(kv map[int]float64) []float64 {
		x := make([]float64, 13)
		for j, v := range kv {
			x[j-1] = v
		}
		return x
	}
	checkData(t, d, [][]float64{
		row(map[int]float64{1: 0.5, 3: 2}),
		row(nil),
		row(map[int]float64{2: 1e-3}),
		row(map[int]float64{1: -1}),
		row(map[int]float64{1: 1, 2: 2}),
	}, []float64{1, -1, 1, 2, -1})
	if d.FeatureNames != nil || d.LabelName != "" {
		t.Errorf("LIBSVM names %v %q", d.FeatureNames, d.LabelName)
	}

	// A given Dim pads the rows.
	if d := mustLoad(t, path, Options{Dim: 20}); d.Dim != 20 || len(d.X[0]) != 20 {
		t.Errorf("Dim 20: got %d", d.Dim)
	}
	// Streaming with the first pass and with a given Dim.
	for _, dim := range []int{0, 13, 20} {
		r, err := Open(path, Options{Dim: dim})
		if err != nil {
			t.Fatal(err)
		}
		want := max(dim, 13)
		lines := []int{}
		for {
			ex, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ex.X) != want {
				t.Fatalf("Dim %d: row of %d", dim, len(ex.X))
			}
			lines = append(lines, ex.Line)
		}
		r.Close()
		if !reflect.DeepEqual(lines, []int{1, 2, 5, 6, 7}) {
			t.Errorf("line numbers %v", lines)
		}
	}
}

func TestLIBSVMErrors(t *testing.T) {
	cases := []struct {
		name, content string
		opts          Options
		line          int
		parts         []string
	}{
		{"unsorted", "1 1:1\n-1 2:1 5:1 3:1\n", Options{}, 2, []string{"feature index 3 after 5 (indices must increase)"}},
		{"duplicate", "1 1:1\n\n-1 2:1 2:1\n", Options{}, 3, []string{"feature index 2 after 2"}},
		{"zero index", "1 0:1\n", Options{}, 1, []string{"index 0"}},
		{"negative index", "1 -1:1\n", Options{}, 1, []string{`"-1"`}},
		{"bad value", "1 1:1\r\n-1 1:abc\r\n", Options{}, 2, []string{"feature 1", `bad number "abc"`}},
		{"missing value", "1 1:\n", Options{}, 1, []string{"empty value"}},
		{"nan value", "1 1:NaN\n", Options{}, 1, []string{"not a finite number"}},
		{"bad label", "x 1:1\n", Options{Format: FormatLIBSVM}, 1, []string{"label", `"x"`}},
		{"no label", "1:1 2:1\n", Options{Format: FormatLIBSVM}, 1, []string{"missing label"}},
		{"no colon", "1 1:1\n1 2\n", Options{Format: FormatLIBSVM}, 2, []string{`"2" is not index:value`}},
		{"late qid", "1 1:1 qid:3\n", Options{}, 1, []string{"qid must directly follow the label"}},
		{"beyond Dim", "1 1:1\n1 4:1\n", Options{Dim: 3}, 2, []string{"feature index 4 exceeds the dimension 3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, "bad.svm", c.content)
			_, err := Load(path, c.opts)
			wantParseError(t, err, path, c.line, c.parts...)
			// Open fails in its first pass (Dim 0) or Next fails at the same line.
			r, err := Open(path, c.opts)
			if err == nil {
				for err == nil {
					_, err = r.Next()
				}
				r.Close()
			}
			wantParseError(t, err, path, c.line, c.parts...)
		})
	}
	// The message format of the brief.
	e := &ParseError{File: "german.numer", Line: 17, Msg: "feature index 3 after 5 (indices must increase)"}
	if got := e.Error(); got != "german.numer:17: feature index 3 after 5 (indices must increase)" {
		t.Errorf("Error() = %q", got)
	}
}

// After a ParseError the Reader continues with the next line.
func TestReaderResumesAfterParseError(t *testing.T) {
	path := writeFile(t, "r.svm", "1 1:1\n-1 1:x\n1 2:3\n")
	r, err := Open(path, Options{Dim: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ys []float64
	var errs int
	for {
		ex, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			errs++
			continue
		}
		ys = append(ys, ex.Y)
	}
	if errs != 1 || !reflect.DeepEqual(ys, []float64{1, 1}) {
		t.Errorf("errors %d, labels %v", errs, ys)
	}
}

func TestCSVEdgeCases(t *testing.T) {
	// Header by name, quoted fields (with a delimiter and an escaped quote in
	// a name), CRLF, blank line, comment, no final newline, Drop by name and
	// by index, E-notation.
	content := "\xEF\xBB\xBFid,\"a,b\",\"say \"\"hi\"\"\",c,target\r\n" +
		"1, 1.5 ,\"2\",3E-05,10\r\n" +
		"\n" +
		"# comment\n" +
		"2,-1,\"4.5\",7.0e+002,-20"
	path := writeFile(t, "edge.csv", content)
	d := mustLoad(t, path, Options{Label: "target", Drop: []string{"id"}})
	checkData(t, d, [][]float64{{1.5, 2, 3e-5}, {-1, 4.5, 700}}, []float64{10, -20})
	if !reflect.DeepEqual(d.FeatureNames, []string{"a,b", `say "hi"`, "c"}) || d.LabelName != "target" {
		t.Errorf("names %q, label %q", d.FeatureNames, d.LabelName)
	}
	d = mustLoad(t, path, Options{Label: "-1", Drop: []string{"0", "c"}})
	checkData(t, d, [][]float64{{1.5, 2}, {-1, 4.5}}, []float64{10, -20})

	// The streaming reader gives the same, with line numbers.
	r, err := Open(path, Options{Label: "target", Drop: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for {
		ex, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, ex.Line)
	}
	r.Close()
	if !reflect.DeepEqual(lines, []int{2, 5}) || r.Dim() != 3 || r.LabelName() != "target" {
		t.Errorf("reader lines %v dim %d", lines, r.Dim())
	}

	// No header, label first, ", " separated (cod-rna), labels +1/-1/1.0/2.
	path = writeFile(t, "plain.csv", "+1, 1, 2\n-1, 3, 4\n1.0, 5, 6\n2, 7, 8\n")
	d = mustLoad(t, path, Options{Label: "0"})
	checkData(t, d, [][]float64{{1, 2}, {3, 4}, {5, 6}, {7, 8}}, []float64{1, -1, 1, 2})
	if d.FeatureNames != nil {
		t.Errorf("no header but names %v", d.FeatureNames)
	}

	// CASP-style "# " header with quoted names; ';' and tab and blank delimiters.
	for name, content := range map[string]string{
		"hash.csv":  "# \"y\",\"f1\",\"f2\"\n1,2,3\n4,5,6\n",
		"semi.csv":  "y;f1;f2\n1;2;3\n4;5;6\n",
		"tab.csv":   "y\tf1\tf2\n1\t2\t3\n4\t5\t6\n",
		"blank.txt": "y  f1 f2\n1 2   3\n 4 5 6 \n",
	} {
		path := writeFile(t, name, content)
		d := mustLoad(t, path, Options{Format: FormatCSV, Label: "y"})
		checkData(t, d, [][]float64{{2, 3}, {5, 6}}, []float64{1, 4})
		if !reflect.DeepEqual(d.FeatureNames, []string{"f1", "f2"}) {
			t.Errorf("%s: names %v", name, d.FeatureNames)
		}
	}
	// A '#' line that does not fit as a header is a comment.
	path = writeFile(t, "c.csv", "# produced by hand\n1,2,3\n")
	d = mustLoad(t, path, Options{Label: "-1"})
	checkData(t, d, [][]float64{{1, 2}}, []float64{3})
	// HeaderNo keeps a numeric-looking first row; HeaderYes takes it as header.
	path = writeFile(t, "n.csv", "0,1,2\n5,6,7\n")
	checkData(t, mustLoad(t, path, Options{Label: "0", Header: HeaderNo}), [][]float64{{1, 2}, {6, 7}}, []float64{0, 5})
	d = mustLoad(t, path, Options{Label: "0", Header: HeaderYes})
	checkData(t, d, [][]float64{{6, 7}}, []float64{5})
	if !reflect.DeepEqual(d.FeatureNames, []string{"1", "2"}) {
		t.Errorf("HeaderYes names %v", d.FeatureNames)
	}
	// An explicit delimiter.
	path = writeFile(t, "p.csv", "1|2|3\n")
	checkData(t, mustLoad(t, path, Options{Label: "1", Comma: '|'}), [][]float64{{1, 3}}, []float64{2})
}

func TestCSVErrors(t *testing.T) {
	cases := []struct {
		name, content string
		opts          Options
		line          int
		parts         []string
		named         bool // Load reads it as named features (Dataset.Named); only Open refuses it
	}{
		{"bad number", "a,b,y\n1,2,3\n1,x1,3\n", Options{Label: "y"}, 3, []string{`column 1 "b"`, `bad number "x1"`}, true},
		{"missing ?", "1,2,3\n1,?,3\n", Options{Label: "-1"}, 2, []string{"column 1:", `missing value "?"`}, true},
		{"empty field", "1,2,3\r\n1,,3\r\n", Options{Label: "-1"}, 2, []string{"column 1:", "empty value"}, true},
		{"bad label", "a,y\n1,abc\n", Options{Label: "y"}, 2, []string{`column 1 "y"`, "label", `"abc"`}, false},
		{"inf", "1,2\n1,inf\n", Options{Label: "0"}, 2, []string{"not a finite number"}, true},
		{"field count", "1,2,3\n1,2\n", Options{Label: "0"}, 2, []string{"2 fields, want 3"}, false},
		{"trailing comma", "a,b\n1,2,\n", Options{Label: "a"}, 2, []string{"3 fields, want 2"}, false},
		{"unterminated quote", "1,2\n1,\"2\n", Options{Label: "0"}, 2, []string{"unterminated"}, false},
		{"after quote", "1,2\n1,\"2\"x\n", Options{Label: "0"}, 2, []string{"after the closing quote"}, false},
		{"ambiguous header", "1,abc,3\n1,2,3\n", Options{Label: "0"}, 1, []string{"cannot tell", `"abc"`}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, "bad.csv", c.content)
			d, err := Load(path, c.opts)
			if c.named {
				if err != nil || d.Named == nil {
					t.Fatalf("Load: %v, named %v; want a named dataset", err, d != nil && d.Named != nil)
				}
			} else {
				wantParseError(t, err, path, c.line, c.parts...)
			}
			r, err := Open(path, c.opts)
			if err == nil {
				for err == nil {
					_, err = r.Next()
				}
				r.Close()
			}
			wantParseError(t, err, path, c.line, c.parts...)
		})
	}

	// Option errors: plain errors that name the file and the problem.
	path := writeFile(t, "h.csv", "a,b,y\n1,2,3\n")
	for _, c := range []struct {
		opts Options
		msg  string
	}{
		{Options{}, "label column not set"},
		{Options{Label: "z"}, `no column named "z"`},
		{Options{Label: "3"}, "out of range"},
		{Options{Label: "-4"}, "out of range"},
		{Options{Label: "y", Drop: []string{"y"}}, "is the label column"},
		{Options{Label: "y", Drop: []string{"q"}}, `no column named "q"`},
		{Options{Label: "y", Dim: 5}, "Dim is 5"},
		{Options{Label: "y", Comma: '"'}, "delimiter"},
		{Options{Label: "y", Format: Format(9)}, "unknown Format"},
		{Options{Label: "y", Dim: -1}, "negative"},
	} {
		_, err := Load(path, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), path) {
			t.Errorf("%+v: error %v, want one mentioning %q and the file", c.opts, err, c.msg)
		}
	}
	path = writeFile(t, "noheader.csv", "1,2,3\n")
	if _, err := Load(path, Options{Label: "y"}); err == nil || !strings.Contains(err.Error(), "no header") {
		t.Errorf("label by name without header: %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "absent.csv"), Options{Label: "0"}); err == nil {
		t.Error("missing file: no error")
	}
	if _, err := DetectFormat("x.arff"); err == nil {
		t.Error("ARFF: no error")
	}
}

func TestDetectFormat(t *testing.T) {
	for _, c := range []struct {
		name, content string
		want          Format
	}{
		{"a.csv", "1 1:1\n", FormatCSV},                     // the extension wins
		{"a.libsvm", "1,2,3\n", FormatLIBSVM},               // the extension wins
		{"a.data", "1,2\n", FormatCSV},                      //
		{"a.t", "# c\n\n-1 \n-1\r\n+1 3:1\n", FormatLIBSVM}, // label-only lines then a sparse line
		{"a", "-1\n1\n", FormatLIBSVM},                      // only labels
		{"a.txt", "1,2,3\n", FormatCSV},                     //
		{"a.txt", "1 2 3\n", FormatCSV},                     // dense, blank-separated
		{"a.txt", "y x\n1 2\n", FormatCSV},                  // header
		{"b", "1 qid:2 1:1\n", FormatLIBSVM},                //
		{"empty", "", FormatLIBSVM},                         //
	} {
		got, err := DetectFormat(writeFile(t, c.name, c.content))
		if err != nil || got != c.want {
			t.Errorf("%s %q: %v, %v; want %v", c.name, c.content, got, err, c.want)
		}
	}
	if d := mustLoad(t, writeFile(t, "e", ""), Options{}); d.Len() != 0 || d.Dim != 0 {
		t.Errorf("empty file: %d × %d", d.Len(), d.Dim)
	}
}

func TestHeaderAutoOnRealFiles(t *testing.T) {
	dir := sharedDatasets(t)
	for _, rel := range []string{"casp/CASP.csv", "elevators/elevators.csv", "parkinsons/parkinsons_updrs.data", "spambase/spambase.data"} {
		path := filepath.Join(dir, rel)
		opts, _ := Preset(path)
		want := mustLoad(t, path, opts)
		opts.Header = HeaderAuto
		opts.Format = FormatAuto
		got := mustLoad(t, path, opts)
		if !reflect.DeepEqual(got.Y, want.Y) || !reflect.DeepEqual(got.X, want.X) || !reflect.DeepEqual(got.FeatureNames, want.FeatureNames) {
			t.Errorf("%s: HeaderAuto differs from the preset", rel)
		}
	}
}
