package dataset

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Fuzz targets for the dataset readers. Run one with
//
//	go test -run '^$' -fuzz '^FuzzReadCSV$' -fuzztime 1000000x -parallel 1 ./dataset/
//
// (docs/fuzzing.md). Their seed corpora are the cases below plus the files
// under testdata/fuzz/<target>/ (regressions found by fuzzing).

// fuzzLimits are small limits, so that every input is cheap to read and a
// limit is easy for the fuzzer to reach.
var fuzzLimits = Options{MaxDim: 64, MaxLine: 4096, MaxDenseBytes: 1 << 20}

// memOpener reads data as a file's contents.
func memOpener(data []byte) opener {
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
}

// maxMsg bounds an error message, whatever the input: messages quote
// clipped text only (at most 40 bytes, 162 characters once quoted), and at
// most 50 column names.
const maxMsg = 12 << 10

// addSharedSeeds adds the first lines of the shared datasets of the given
// format (if ../shared is present), so that the corpus starts from real rows.
func addSharedSeeds(f *testing.F, names ...string) {
	for _, name := range names {
		path, _, err := Resolve(name)
		if err != nil {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		lines := bytes.SplitAfter(b, []byte("\n"))
		f.Add(bytes.Join(lines[:min(len(lines), 4)], nil), byte(0))
	}
}

var libsvmSeeds = []string{
	"+1 1:0.5 3:-1 # comment\n-1 2:1e-3\n",
	"1 qid:3 1:1 2:2\n",
	"1 2147483647:1\n",
	"1 1048576:1\n",
	"2\n3.5 4:0\r\n\n# only a comment\n",
	"\xEF\xBB\xBF1 1:1\n",
	"1 3:1 2:1\n",
	"1 0:1\n",
	"1 1:nan\n",
	"1 1:1e400\n",
	"1:1 2:2\n",
	"1 1:1 qid:2\n",
	"1 1:\n",
	"1 a:1\n",
	"1 1:1#c\n-1\t2:2\v3:3\f\n",
	"1 00000000000000000000000000000001:1\n",
}

// FuzzLIBSVMLine checks parseLIBSVMLine on one line: it never panics; a
// parsed row has strictly increasing indices in [1, bound] and finite
// values; an error message stays short; and the format sniffer agrees
// with the parser on every line the parser accepts.
func FuzzLIBSVMLine(f *testing.F) {
	for _, s := range libsvmSeeds {
		for _, line := range strings.Split(s, "\n") {
			f.Add([]byte(line), 0)
			f.Add([]byte(line), 3)
		}
	}
	f.Fuzz(func(t *testing.T, line []byte, dim int) {
		o := fuzzLimits
		o.Dim = max(0, dim%100)
		lim, err := o.limits("f")
		if err != nil {
			t.Fatal(err)
		}
		y, idx, val, ok, msg := parseLIBSVMLine(line, lim, nil, nil)
		if msg != "" {
			if len(msg) > maxMsg {
				t.Fatalf("message of %d bytes", len(msg))
			}
			return
		}
		if !ok {
			if len(idx) != 0 || !isBlank(cutComment(line)) {
				t.Fatalf("line %q skipped as blank", line)
			}
			return
		}
		if len(idx) != len(val) || math.IsNaN(y) || math.IsInf(y, 0) {
			t.Fatalf("y %v, %d indices, %d values", y, len(idx), len(val))
		}
		for k, j := range idx {
			if j < 1 || int(j) > lim.maxDim || k > 0 && j <= idx[k-1] {
				t.Fatalf("indices %v (bound %d)", idx, lim.maxDim)
			}
			if math.IsNaN(val[k]) || math.IsInf(val[k], 0) {
				t.Fatalf("value %v", val[k])
			}
		}
		want := shapeSparse
		if len(idx) == 0 && !bytes.Contains(cutComment(line), []byte("qid:")) {
			want = shapeLabelOnly
		}
		if got := libsvmShape(bytes.TrimSpace(line)); got != want {
			t.Fatalf("sniffer says %d for %q, which parses with %d features", got, line, len(idx))
		}
	})
}

func cutComment(line []byte) []byte {
	if i := bytes.IndexByte(line, '#'); i >= 0 {
		return line[:i]
	}
	return line
}

// FuzzCSVLine checks splitFields under every delimiter: it never panics,
// stops at maxFields+1 fields, and without quotes agrees with a plain split.
func FuzzCSVLine(f *testing.F) {
	for _, s := range []string{
		`1,2,3`, ` 1 , "a,b" ,3`, `"a""b",2`, `"unterminated,1`, `"a"x,1`, "1;2;3", "1\t2\t 3",
		"1  2\t3", `"q" 2`, `1,,?`, "", ",", `""`, "a,b,c,d,e,f,g,h,i,j",
	} {
		f.Add([]byte(s), byte(0))
		f.Add([]byte(s), byte(','))
	}
	f.Fuzz(func(t *testing.T, line []byte, d byte) {
		delim := []byte{0, ',', ';', '\t'}[d%4]
		const maxFields = 8
		fields, err := splitFields(line, delim, nil, maxFields)
		if errors.Is(err, errTooManyFields) {
			if len(fields) != maxFields+1 {
				t.Fatalf("stopped at %d fields", len(fields))
			}
			return
		}
		if err != nil {
			return
		}
		if len(fields) > maxFields {
			t.Fatalf("%d fields, max %d", len(fields), maxFields)
		}
		if delim == 0 || bytes.IndexByte(line, '"') >= 0 {
			return
		}
		blanks := " \r\t" // splitFields trims these around a field, tab unless it is the delimiter
		if delim == '\t' {
			blanks = " \r"
		}
		var want [][]byte
		for _, p := range bytes.Split(line, []byte{delim}) {
			want = append(want, bytes.Trim(p, blanks))
		}
		if !slices.EqualFunc(fields, want, bytes.Equal) {
			t.Fatalf("split %q at %q: %q, want %q", line, delim, fields, want)
		}
		_ = detectDelim(line)
		classify(fields)
	})
}

// readBoth reads data named name through Load and through Open + Next with
// opts, both from memory, and checks that they agree: Load succeeds exactly
// when streaming does, with the same rows, and a Load error is a
// *ParseError at the line where streaming stops (the dense bound, which
// only Load applies to all rows, aside).
func readBoth(t *testing.T, name string, data []byte, opts Options) {
	d, loadErr := load(name, memOpener(data), opts)
	var rows []Example
	r, streamErr := open(name, memOpener(data), opts)
	if streamErr == nil {
		for {
			ex, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				streamErr = err
				break
			}
			rows = append(rows, ex)
		}
		r.Close()
	}
	for _, err := range []error{loadErr, streamErr} {
		if err != nil && len(err.Error()) > maxMsg {
			t.Fatalf("message of %d bytes: %.200s", len(err.Error()), err)
		}
	}
	if streamErr != nil && strings.Contains(streamErr.Error(), "read whole (Load), not streamed") {
		// A file the named or JSON-lines reader takes: streaming refuses it
		// by design, whatever Load makes of it (checked by FuzzReadNamed).
		return
	}
	if loadErr != nil {
		if strings.Contains(loadErr.Error(), "Options.MaxDenseBytes") {
			return
		}
		var le, se *ParseError
		if !errors.As(loadErr, &le) {
			if strings.Contains(loadErr.Error(), "label column") || strings.Contains(loadErr.Error(), "Drop") {
				return // option errors
			}
			t.Fatalf("Load: %v (%T), not a *ParseError", loadErr, loadErr)
		}
		if le.Line == 0 && streamErr != nil {
			// A header-level refusal of the named reader (names that are
			// duplicate or too long, which only named features need to
			// be), where streaming refused the file too, later.
			return
		}
		if !errors.As(streamErr, &se) {
			t.Fatalf("Load: %v\nstream: %v", loadErr, streamErr)
		}
		if se.Line != le.Line && !namedCellError(se) {
			t.Fatalf("Load: %v\nstream: %v", loadErr, streamErr)
		}
		return
	}
	if d.Named != nil { // a string or missing cell: Load reads it named, the Reader refuses it
		var se *ParseError
		if streamErr == nil || (!errors.As(streamErr, &se) && !strings.Contains(streamErr.Error(), "named")) {
			t.Fatalf("named Load, stream: %v", streamErr)
		}
		checkNamed(t, d)
		return
	}
	if streamErr != nil {
		t.Fatalf("Load succeeded, stream: %v", streamErr)
	}
	if d.Dim > max(opts.MaxDim, opts.Dim) || d.Len() != len(rows) || r.Dim() != d.Dim {
		t.Fatalf("Load: %d rows × %d, stream: %d rows × %d", d.Len(), d.Dim, len(rows), r.Dim())
	}
	for i, ex := range rows {
		if !slices.Equal(ex.X, d.X[i]) || ex.Y != d.Y[i] {
			t.Fatalf("row %d: Load %v %v, stream %v %v", i, d.Y[i], d.X[i], ex.Y, ex.X)
		}
		for _, v := range ex.X {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("row %d: %v", i, ex.X)
			}
		}
	}
}

// FuzzReadLIBSVM reads a whole LIBSVM file (format given, and detected from
// a name without extension) through Load and the streaming Reader, with the
// dimension inferred or given.
func FuzzReadLIBSVM(f *testing.F) {
	for _, s := range libsvmSeeds {
		f.Add([]byte(s), byte(0))
		f.Add([]byte(s), byte(5))
	}
	addSharedSeeds(f, "german", "w7a")
	f.Fuzz(func(t *testing.T, data []byte, mode byte) {
		o := fuzzLimits
		o.Format = FormatLIBSVM
		o.Dim = int(mode % 16)
		readBoth(t, "f.libsvm", data, o)
		o.Format = FormatAuto
		readBoth(t, "f", data, o)
	})
}

// FuzzReadCSV reads a whole CSV file through Load and the streaming Reader,
// with the header mode, label column and delimiter chosen by mode.
func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{
		"a,b,y\n1,2,3\n4,5,6\n",
		"# \"y\",\"a\"\n1,2\n",
		"1;2;3\n4;5;6\n",
		"y x1 x2\n1 2 3\n",
		"a,b\n1,2,3\n",
		"a,b\n1,?\n",
		"a,b\n1,\"2\"\n1,\"x\"\"\"\n",
		"1,a\n",
		"\xEF\xBB\xBFa,b\r\n1,2\r\n",
		"a,a\n1,2\n",
		"a,b\n1,1e999\n",
		"",
	} {
		f.Add([]byte(s), byte(0))
		f.Add([]byte(s), byte(7))
	}
	addSharedSeeds(f, "svmguide3", "parkinsons", "casp", "cod-rna")
	f.Fuzz(func(t *testing.T, data []byte, mode byte) {
		o := fuzzLimits
		o.Format = FormatCSV
		o.Header = HeaderMode(mode % 3)
		o.Label = []string{"0", "-1", "1", "y", "a"}[int(mode/3)%5]
		if mode&0x80 != 0 {
			o.Comma = ','
		}
		if mode&0x40 != 0 {
			o.Drop = []string{"b"}
		}
		readBoth(t, "f.csv", data, o)
		if mode&0x20 != 0 {
			o.Format = FormatAuto
			readBoth(t, "f", data, o)
		}
	})
}

// The committed corpora must be readable as seeds: a corrupt file under
// testdata/fuzz would make the fuzz targets fail before fuzzing.
func TestFuzzCorporaPresent(t *testing.T) {
	for _, target := range []string{"FuzzLIBSVMLine", "FuzzCSVLine", "FuzzReadLIBSVM", "FuzzReadCSV"} {
		dir := filepath.Join("testdata", "fuzz", target)
		ents, err := os.ReadDir(dir)
		if err != nil || len(ents) == 0 {
			t.Errorf("%s: no committed seed corpus (%v)", dir, err)
		}
	}
}

// namedCellError reports whether the Reader refused a feature cell that
// makes Load read the file as named features (where Load may then fail
// elsewhere, e.g. on a name or a value the named reader refuses).
func namedCellError(e *ParseError) bool {
	for _, m := range []string{"bad number", "missing value", "empty value", "not a finite number", "out of float64 range"} {
		if strings.Contains(e.Msg, m) && !strings.HasPrefix(e.Msg, "label") {
			return true
		}
	}
	return false
}
