package dataset

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
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
)

// String returns "auto", "libsvm" or "csv".
func (f Format) String() string {
	switch f {
	case FormatAuto:
		return "auto"
	case FormatLIBSVM:
		return "libsvm"
	case FormatCSV:
		return "csv"
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
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv", ".tsv", ".data":
		return FormatCSV, nil
	case ".libsvm", ".svm", ".svmlight":
		return FormatLIBSVM, nil
	case ".arff":
		return 0, fmt.Errorf("dataset: %s: ARFF is not read directly; use the CSV derived from it", path)
	}
	return sniff(path)
}

// sniffLines bounds how many data lines sniffing looks at.
const sniffLines = 1000

func sniff(path string) (Format, error) {
	src, err := openSource(path)
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
	toks := bytes.Fields(line)
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

// maxLine is the longest line the readers accept.
const maxLine = 256 << 20

var bom = []byte{0xEF, 0xBB, 0xBF}

// lineSource yields the lines of a file without their terminators: every
// trailing '\r' is removed, and a UTF-8 byte-order mark on line 1 is dropped.
type lineSource struct {
	path string
	f    *os.File
	sc   *bufio.Scanner
	line int // number of the line last returned
}

func openSource(path string) (*lineSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	return &lineSource{path: path, f: f, sc: sc}, nil
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
		return &ParseError{File: s.path, Line: s.line + 1, Msg: "line longer than 256 MiB"}
	}
	return fmt.Errorf("dataset: reading %s: %w", s.path, err)
}

func (s *lineSource) close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
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
			return 0, fmt.Sprintf("number %q out of float64 range", b)
		}
		return 0, fmt.Sprintf("bad number %q", b)
	}
	if v-v != 0 { // NaN or ±Inf
		return 0, fmt.Sprintf("not a finite number %q", b)
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
}
