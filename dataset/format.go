package dataset

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Format is a file format.
type Format int

// Formats. FormatAuto detects the format as the package documentation says.
const (
	FormatAuto Format = iota
	FormatLIBSVM
	FormatCSV
	// FormatJSONL is JSON lines: one event per line in the runtime's
	// schema (codec.Decoder.DecodeEventJSON). Load only.
	FormatJSONL
)

// String returns "auto", "libsvm", "csv" or "jsonl".
func (f Format) String() string {
	switch f {
	case FormatAuto:
		return "auto"
	case FormatLIBSVM:
		return "libsvm"
	case FormatCSV:
		return "csv"
	case FormatJSONL:
		return "jsonl"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// HeaderMode says whether a CSV file has a header row.
type HeaderMode int

// Header modes. HeaderAuto decides as the package documentation says.
const (
	HeaderAuto HeaderMode = iota
	HeaderYes
	HeaderNo
)

// Options says how to read a file. The zero value reads a LIBSVM file with
// its dimension inferred; a CSV file needs at least Label.
type Options struct {
	// Format is the file format; FormatAuto (the default) detects it.
	// ClassNames lets Load take a CSV label column of class names ("yes"
	// and "no", "true" and "false") as class numbers (Dataset.Classes);
	// without it a label must be a number. Open's Reader takes numbers only.
	ClassNames bool

	Format Format

	// Dim is the feature dimension of a LIBSVM file: 0 infers it (Load: the
	// largest index; Open: a first pass over the file). If it is set, an
	// index above Dim is an error; for a CSV file, a set Dim must equal the
	// number of feature columns.
	Dim int

	// Header says whether a CSV file has a header row (default: detect).
	Header HeaderMode
	// Label is the CSV label column: an index ("0" the first column, "-1"
	// the last, negative counts from the end) or a header name. Required.
	Label string
	// Drop lists CSV columns (indices or header names) that are neither
	// label nor feature.
	Drop []string
	// Comma is the CSV field delimiter; 0 detects it (',', ';', tab, or runs
	// of blanks); ' ' means runs of blanks.
	Comma rune

	// Named reads a CSV file as named features (Dataset.Named) even when
	// every cell is a number; Load does so anyway for a file with a string
	// or missing feature cell. See "Named features" in the package
	// documentation. For a named file, Dim is the encoder's dimension (0:
	// NamedDim), not the number of columns.
	Named bool
	// MaxValuesPerName is the named encoder's cap on the indicator
	// coordinates of one name's string values (features.Config; 0: its
	// default, 64).
	MaxValuesPerName int

	// Limits on what a file can make the readers allocate (see "Limits" in
	// the package documentation). 0 means the default; negative is an error.

	// MaxDim bounds the dimension when Dim is 0: a LIBSVM feature index
	// above it, or a CSV row with more than MaxDim feature columns, is an
	// error that says to give Dim. Default DefaultMaxDim. A set Dim replaces
	// it (the caller has said how wide the rows are).
	MaxDim int
	// MaxLine bounds the length of a line in bytes. Default DefaultMaxLine.
	MaxLine int
	// MaxDenseBytes bounds the memory of the dense rows: Load refuses a file
	// whose rows × Dim × 8 bytes exceed it (at the first line that crosses
	// it, before allocating the rows), Open a Dim whose single row does.
	// Default DefaultMaxDenseBytes.
	MaxDenseBytes int64
}

// Default limits (Options.MaxDim, MaxLine, MaxDenseBytes).
const (
	// DefaultMaxDim is the largest inferred dimension: 2^20 features, 8 MiB
	// per dense row.
	DefaultMaxDim = 1 << 20
	// DefaultMaxLine is the longest line: 16 MiB (the shared datasets' are
	// under 1 KiB; a dense row of DefaultMaxDim features fits).
	DefaultMaxLine = 16 << 20
	// DefaultMaxDenseBytes bounds a Load's dense rows: 2 GiB (the largest
	// shared dataset, w7a, takes 59 MB).
	DefaultMaxDenseBytes = 2 << 30
	// MaxIndex is the largest LIBSVM feature index and Options.Dim
	// accepted in any case (indices are stored as int32).
	MaxIndex = math.MaxInt32
)

// limits are Options' limits with the defaults applied.
type limits struct {
	dim        int   // Options.Dim, or 0
	maxDim     int   // the bound on the dimension: Dim if set, else MaxDim
	maxLine    int   // bytes
	denseBytes int64 // bytes
}

// limits checks the Dim and limit fields of o and applies the defaults.
func (o Options) limits(path string) (limits, error) {
	switch {
	case o.Dim < 0:
		return limits{}, fmt.Errorf("dataset: %s: negative Options.Dim %d", path, o.Dim)
	case o.Dim > MaxIndex:
		return limits{}, fmt.Errorf("dataset: %s: Options.Dim %d is above the largest dimension %d", path, o.Dim, MaxIndex)
	case o.MaxDim < 0 || o.MaxLine < 0 || o.MaxDenseBytes < 0:
		return limits{}, fmt.Errorf("dataset: %s: negative limit (MaxDim %d, MaxLine %d, MaxDenseBytes %d)", path, o.MaxDim, o.MaxLine, o.MaxDenseBytes)
	}
	l := limits{dim: o.Dim, maxDim: o.MaxDim, maxLine: o.MaxLine, denseBytes: o.MaxDenseBytes}
	if l.maxDim == 0 {
		l.maxDim = DefaultMaxDim
	}
	l.maxDim = min(l.maxDim, MaxIndex)
	if o.Dim > 0 {
		l.maxDim = o.Dim
	}
	if l.maxLine == 0 {
		l.maxLine = DefaultMaxLine
	}
	if l.denseBytes == 0 {
		l.denseBytes = DefaultMaxDenseBytes
	}
	return l, nil
}

// checkDense returns an error if rows rows of dim float64s exceed the
// MaxDenseBytes limit. line is the line that added the last row (0: none)
// and maxAt the line of the largest feature index when the dimension was
// inferred (0: Dim was given or the format is CSV).
func (l limits) checkDense(path string, rows, dim, line, maxAt int) error {
	need := int64(rows) * int64(dim) * 8
	if need <= l.denseBytes {
		return nil
	}
	msg := fmt.Sprintf("%d rows × %d features take %s as dense float64 rows, above the limit of %s (Options.MaxDenseBytes, okstream --max-dense-mib)",
		rows, dim, fmtBytes(need), fmtBytes(l.denseBytes))
	if maxAt > 0 {
		msg += fmt.Sprintf("; the dimension %d was inferred from the feature index at line %d: if that index is a mistake, give the real dimension (okstream --dim, Options.Dim) so that it is reported, else raise the limit or read fewer rows", dim, maxAt)
	} else {
		msg += "; raise the limit or read fewer rows"
	}
	return &ParseError{File: path, Line: line, Msg: msg}
}

// fmtBytes formats n bytes in binary units ("16 GiB", "8.5 MiB", "512 B").
func fmtBytes(n int64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	v, u := float64(n)/1024, 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return strings.TrimSuffix(strconv.FormatFloat(v, 'f', 1, 64), ".0") + " " + units[u:u+1] + "iB"
}

// clip returns b quoted for an error message, shortened to its first 40
// bytes (then "..." and its length), so that a message stays small
// whatever the line holds.
func clip(b []byte) string {
	const n = 40
	if len(b) <= n {
		return strconv.Quote(string(b))
	}
	return strconv.Quote(string(b[:n])) + "... (" + strconv.Itoa(len(b)) + " bytes)"
}

// ParseError reports malformed input at a line of a file.
type ParseError struct {
	File   string // the path as given to Open or Load
	Line   int    // 1-based; 0 when the problem is not on one line
	Column string // CSV only: `7 "Jitter(Abs)"` (0-based index, then the header name if any)
	Msg    string
}

// Error returns "file:line: msg" or "file:line: column C: msg".
func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Column != "" {
		b.WriteString("column ")
		b.WriteString(e.Column)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// DetectFormat returns the format FormatAuto chooses for path: by extension,
// else by sniffing the first lines (see the package documentation).
func DetectFormat(path string) (Format, error) {
	return detectFormat(path, fileOpener(path), DefaultMaxLine)
}

func detectFormat(path string, open opener, maxLine int) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv", ".tsv", ".data":
		return FormatCSV, nil
	case ".libsvm", ".svm", ".svmlight":
		return FormatLIBSVM, nil
	case ".jsonl", ".ndjson":
		return FormatJSONL, nil
	case ".arff":
		return 0, fmt.Errorf("dataset: %s: ARFF is not read directly; use the CSV derived from it", path)
	}
	return sniff(path, open, maxLine)
}

// sniffLines bounds how many data lines sniffing looks at.
const sniffLines = 1000

func sniff(path string, open opener, maxLine int) (Format, error) {
	src, err := openSource(path, open, maxLine)
	if err != nil {
		return 0, err
	}
	defer src.close()
	for n := 0; n < sniffLines; {
		line, ok := src.next()
		if !ok {
			break
		}
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		n++
		if sniffJSON(t) {
			return FormatJSONL, nil
		}
		switch libsvmShape(t) {
		case shapeSparse:
			return FormatLIBSVM, nil
		case shapeOther:
			return FormatCSV, nil
		}
	}
	if err := src.err(); err != nil {
		return 0, err
	}
	return FormatLIBSVM, nil
}

type shape int

const (
	shapeLabelOnly shape = iota // a single number
	shapeSparse                 // a number, then index:value tokens
	shapeOther
)

func libsvmShape(line []byte) shape {
	if i := bytes.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	// The parser's blanks, not bytes.Fields' (which also splits at '\n'
	// and Unicode spaces), so that the sniffer sees the parser's tokens.
	toks := bytes.FieldsFunc(line, func(r rune) bool { return r < 0x80 && isSpace(byte(r)) })
	if len(toks) == 0 {
		return shapeLabelOnly
	}
	if _, err := strconv.ParseFloat(string(toks[0]), 64); err != nil {
		return shapeOther
	}
	if len(toks) == 1 {
		return shapeLabelOnly
	}
	for _, t := range toks[1:] {
		k := bytes.IndexByte(t, ':')
		if k <= 0 {
			return shapeOther
		}
		if string(t[:k]) == "qid" {
			continue
		}
		for _, c := range t[:k] {
			if c < '0' || c > '9' {
				return shapeOther
			}
		}
	}
	return shapeSparse
}

// An opener opens the bytes of a file. The readers take one (rather than
// calling os.Open) so that tests and fuzz targets read from memory through
// exactly the code that reads files.
type opener func() (io.ReadCloser, error)

func fileOpener(path string) opener {
	return func() (io.ReadCloser, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("dataset: %w", err)
		}
		return f, nil
	}
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// lineSource yields the lines of a file without their terminators: every
// trailing '\r' is removed, and a UTF-8 byte-order mark on line 1 is dropped.
// Its buffer grows to at most maxLine bytes; a longer line ends the file
// with a *ParseError (see err).
type lineSource struct {
	path    string
	rc      io.ReadCloser // nil once closed
	sc      *bufio.Scanner
	line    int // number of the line last returned
	maxLine int
}

func openSource(path string, open opener, maxLine int) (*lineSource, error) {
	rc, err := open()
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(rc)
	// The buffer starts small so that a small file costs little; it grows
	// (doubling) up to maxLine.
	sc.Buffer(make([]byte, min(4<<10, maxLine)), maxLine)
	return &lineSource{path: path, rc: rc, sc: sc, maxLine: maxLine}, nil
}

// next returns the next line, valid until the following call, and false at
// the end of the file or on an error (see err).
func (s *lineSource) next() ([]byte, bool) {
	if !s.sc.Scan() {
		return nil, false
	}
	s.line++
	b := s.sc.Bytes()
	if s.line == 1 {
		b = bytes.TrimPrefix(b, bom)
	}
	for len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b, true
}

func (s *lineSource) err() error {
	err := s.sc.Err()
	if err == nil {
		return nil
	}
	if errors.Is(err, bufio.ErrTooLong) {
		return &ParseError{File: s.path, Line: s.line + 1,
			Msg: fmt.Sprintf("line longer than %s (Options.MaxLine; the limit keeps a file from sizing the reader's buffer)", fmtBytes(int64(s.maxLine)))}
	}
	return fmt.Errorf("dataset: reading %s: %w", s.path, err)
}

func (s *lineSource) close() error {
	if s.rc == nil {
		return nil
	}
	err := s.rc.Close()
	s.rc = nil
	return err
}

func isBlank(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\v', '\f':
		default:
			return false
		}
	}
	return true
}

// isComment reports whether b's first non-blank byte is '#'.
func isComment(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\v', '\f':
			continue
		case '#':
			return true
		}
		return false
	}
	return false
}

// parseNum parses one value; msg is empty on success.
func parseNum(b []byte) (v float64, msg string) {
	switch {
	case len(b) == 0:
		return 0, "empty value (missing)"
	case len(b) == 1 && b[0] == '?':
		return 0, `missing value "?"`
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return 0, "number " + clip(b) + " out of float64 range"
		}
		return 0, "bad number " + clip(b)
	}
	if v-v != 0 { // NaN or ±Inf
		return 0, "not a finite number " + clip(b)
	}
	return v, ""
}

// Preset returns the options that read one of the shared datasets
// (../shared/datasets) correctly, chosen by the file's base name: the label
// column of each CSV file, parkinsons' 16 voice features with total_UPDRS as
// the target, and the documented dimension of each LIBSVM file (so that
// streaming needs no first pass and test files get the training dimension).
// ok is false for an unknown name.
func Preset(path string) (opts Options, ok bool) {
	p, ok := presets[filepath.Base(path)]
	if ok {
		p.Drop = append([]string(nil), p.Drop...)
	}
	return p, ok
}

var presets = map[string]Options{
	"german.numer":       {Format: FormatLIBSVM, Dim: 24},
	"german.numer_scale": {Format: FormatLIBSVM, Dim: 24},
	"svmguide3.csv":      {Format: FormatCSV, Header: HeaderNo, Label: "0"},
	"svmguide3.t.csv":    {Format: FormatCSV, Header: HeaderNo, Label: "0"},
	"svmguide3.libsvm":   {Format: FormatLIBSVM, Dim: 21},
	"svmguide3.t.libsvm": {Format: FormatLIBSVM, Dim: 21},
	"spambase.data":      {Format: FormatCSV, Header: HeaderNo, Label: "-1"},
	"cod-rna.train.csv":  {Format: FormatCSV, Header: HeaderNo, Label: "0"},
	"cod-rna.libsvm":     {Format: FormatLIBSVM, Dim: 8},
	"cod-rna":            {Format: FormatLIBSVM, Dim: 8},
	"cod-rna.t":          {Format: FormatLIBSVM, Dim: 8},
	"w7a":                {Format: FormatLIBSVM, Dim: 300},
	"w7a.t":              {Format: FormatLIBSVM, Dim: 300},
	"parkinsons_updrs.data": {Format: FormatCSV, Header: HeaderYes, Label: "total_UPDRS",
		Drop: []string{"subject#", "age", "sex", "test_time", "motor_UPDRS"}},
	"elevators.csv": {Format: FormatCSV, Header: HeaderYes, Label: "Goal"},
	"ailerons.csv":  {Format: FormatCSV, Header: HeaderYes, Label: "goal"},
	"bank32nh.csv":  {Format: FormatCSV, Header: HeaderYes, Label: "rej"},
	"cpu_small.csv": {Format: FormatCSV, Header: HeaderYes, Label: "usr"},
	"CASP.csv":      {Format: FormatCSV, Header: HeaderYes, Label: "RMSD"},
	// multi-class (DeclaredTask)
	"letter-recognition.data": {Format: FormatCSV, Header: HeaderNo, Label: "0"},
	"mnist.t.libsvm":          {Format: FormatLIBSVM, Dim: 784},
}
