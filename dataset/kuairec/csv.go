package kuairec

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"okstream/dataset"
)

// csvReader reads the records of a KuaiRec CSV file: comma-separated,
// '"'-quoted, one header line. It is tolerant in the ways the real files
// need (see the package documentation): a quoted field may span lines and
// hold '\r', a quote inside an unquoted field is literal (lazy quotes), a
// '\r' is a line terminator only directly before '\n', and a UTF-8
// byte-order mark on the first line is dropped. Records are returned as
// byte slices valid until the next call.
type csvReader struct {
	path   string
	f      *os.File // nil when reading from an io.Reader given by the caller
	br     *bufio.Reader
	line   int // number of the last physical line read
	start  int // line on which the last record started
	rec    []byte
	fields [][]byte
	header []string
}

const csvBufSize = 256 << 10

// Limits on what one record of a KuaiRec file can make the reader allocate.
// The real files' records are under 4 KiB and 58 columns; a longer record,
// or one with more fields, is a *dataset.ParseError naming the file and the
// line on which the record starts.
const (
	// MaxRecordBytes bounds a record's length, a quoted field spanning
	// lines included.
	MaxRecordBytes = 1 << 20
	// MaxRecordFields bounds a record's number of fields.
	MaxRecordFields = 4096
)

func openCSV(path string) (*csvReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("kuairec: %w", err)
	}
	r := newCSVReader(path, f)
	r.f = f
	return r, nil
}

func newCSVReader(name string, rd io.Reader) *csvReader {
	return &csvReader{path: name, br: bufio.NewReaderSize(rd, csvBufSize)}
}

func (r *csvReader) close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// errorf returns a *dataset.ParseError at the current record.
func (r *csvReader) errorf(col int, format string, a ...any) error {
	e := &dataset.ParseError{File: r.path, Line: r.start, Msg: fmt.Sprintf(format, a...)}
	if col >= 0 && col < len(r.header) {
		e.Column = strconv.Itoa(col) + " " + strconv.Quote(r.header[col])
	}
	return e
}

// physLine reads one physical line (without its '\n') into r.rec's tail.
// It returns false at the end of the input, and an error when r.rec would
// grow past MaxRecordBytes.
func (r *csvReader) physLine() (bool, error) {
	got := false
	for {
		b, err := r.br.ReadSlice('\n')
		if len(b) > 0 {
			got = true
			if len(r.rec)+len(b) > MaxRecordBytes+1 { // +1: the '\n' dropped below
				return false, &dataset.ParseError{File: r.path, Line: r.start,
					Msg: fmt.Sprintf("record longer than %d bytes (kuairec.MaxRecordBytes; a quoted field left open spans lines)", MaxRecordBytes)}
			}
			r.rec = append(r.rec, b...)
		}
		switch {
		case err == nil:
			r.line++
			r.rec = r.rec[:len(r.rec)-1] // drop '\n'
			return true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if got {
				r.line++
			}
			return got, nil
		default:
			return false, fmt.Errorf("kuairec: reading %s: %w", r.path, err)
		}
	}
}

// next reads the next non-empty record and splits it into r.fields. It
// returns io.EOF at the end.
func (r *csvReader) next() error {
	for {
		r.rec = r.rec[:0]
		r.start = r.line + 1
		ok, err := r.physLine()
		if err != nil {
			return err
		}
		if !ok {
			return io.EOF
		}
		r.start = r.line
		if r.line == 1 {
			r.rec = bytes.TrimPrefix(r.rec, []byte{0xEF, 0xBB, 0xBF})
		}
		// A quoted field may contain '\n': keep reading while a quote is open.
		// The quote state is carried from line to line, so that a field
		// spanning many lines is scanned once (not once per line).
		in, atStart := scanQuotes(r.rec, false, true)
		for in {
			r.rec = append(r.rec, '\n')
			from := len(r.rec) - 1
			ok, err := r.physLine()
			if err != nil {
				return err
			}
			if !ok {
				return r.errorf(-1, "unterminated quoted field at the end of the file")
			}
			in, atStart = scanQuotes(r.rec[from:], in, atStart)
		}
		if n := len(r.rec); n > 0 && r.rec[n-1] == '\r' {
			r.rec = r.rec[:n-1]
		}
		if len(r.rec) == 0 {
			continue // blank line
		}
		var ok2 bool
		if r.fields, ok2 = splitRecord(r.rec, r.fields[:0], MaxRecordFields); !ok2 {
			return r.errorf(-1, "more than %d fields (kuairec.MaxRecordFields)", MaxRecordFields)
		}
		return nil
	}
}

// scanQuotes continues a scan for quoted fields over seg, from the state
// (inside a quoted field; at the start of a field) at its beginning, and
// returns the state at its end. A record ends inside a quoted field if
// scanQuotes(rec, false, true) returns in.
func scanQuotes(seg []byte, in, atStart bool) (bool, bool) {
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case in && c == '"':
			if i+1 < len(seg) && seg[i+1] == '"' {
				i++
				continue
			}
			in = false
		case !in && c == '"' && atStart:
			in = true
		}
		atStart = !in && c == ','
	}
	return in, atStart
}

// splitRecord splits rec at commas outside quotes. A field that starts with
// '"' is quoted: its content runs to the matching quote ("" is an escaped
// quote); anything between that quote and the next comma is kept literally
// (lazy quotes). Quoted fields are unescaped in place. ok is false (and
// the split stops) when rec has more than maxFields fields.
func splitRecord(rec []byte, dst [][]byte, maxFields int) (_ [][]byte, ok bool) {
	i, n := 0, len(rec)
	start := len(dst)
	for {
		if len(dst)-start >= maxFields {
			return dst, false
		}
		if i < n && rec[i] == '"' {
			// Quoted: unescape into rec[i:] as we go.
			w := i
			j := i + 1
			for j < n {
				if rec[j] == '"' {
					if j+1 < n && rec[j+1] == '"' {
						rec[w] = '"'
						w++
						j += 2
						continue
					}
					j++
					break
				}
				rec[w] = rec[j]
				w++
				j++
			}
			// Lazy: text after the closing quote up to the comma.
			for j < n && rec[j] != ',' {
				rec[w] = rec[j]
				w++
				j++
			}
			dst = append(dst, rec[i:w])
			i = j
		} else {
			s := i
			for i < n && rec[i] != ',' {
				i++
			}
			dst = append(dst, rec[s:i])
		}
		if i >= n {
			return dst, true
		}
		i++ // the comma
		if i == n {
			if len(dst)-start >= maxFields {
				return dst, false
			}
			return append(dst, rec[n:]), true
		}
	}
}

// readHeader reads the header line and maps the columns want (in the
// canonical order) to their positions in the file. Columns may come in any
// order and extra columns are ignored; a missing column is an error.
func (r *csvReader) readHeader(want []string) ([]int, error) {
	if err := r.next(); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &dataset.ParseError{File: r.path, Msg: "empty file: no header line"}
		}
		return nil, err
	}
	r.header = make([]string, len(r.fields))
	pos := make(map[string]int, len(r.fields))
	for j, f := range r.fields {
		h := strings.TrimSpace(string(f))
		r.header[j] = h
		if _, dup := pos[h]; !dup {
			pos[h] = j
		}
	}
	idx := make([]int, len(want))
	var missing []string
	for k, w := range want {
		j, ok := pos[w]
		if !ok {
			missing = append(missing, w)
		}
		idx[k] = j
	}
	if missing != nil {
		return nil, &dataset.ParseError{File: r.path, Line: r.start,
			Msg: fmt.Sprintf("header lacks column(s) %s; this file has %s (want the KuaiRec 2.0 columns %s)",
				strings.Join(missing, ", "), strings.Join(r.header, ","), strings.Join(want, ","))}
	}
	return idx, nil
}

// record returns the fields of the current record in canonical order.
func (r *csvReader) record(idx []int, dst [][]byte) ([][]byte, error) {
	if len(r.fields) != len(r.header) {
		return dst, r.errorf(-1, "%d fields, want %d (as in the header)", len(r.fields), len(r.header))
	}
	dst = dst[:0]
	for _, j := range idx {
		dst = append(dst, r.fields[j])
	}
	return dst, nil
}

// Field parsers. col is the canonical column index for messages; the
// reader maps it back to the file's column.

// parseInt parses an integer field; a float text with an integral value
// ("20200705.0") is accepted, since pandas writes integer columns with
// missing values as floats.
func parseInt(b []byte) (int64, bool, string) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return 0, false, ""
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err == nil {
		return v, true, ""
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false, fmt.Sprintf("bad integer %q", b)
	}
	return int64(f), true, ""
}

// parseFloat parses a float field; empty (and "nan") is NaN.
func parseFloat(b []byte) (float64, string) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return math.NaN(), ""
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0, fmt.Sprintf("bad number %q", b)
	}
	return v, ""
}

// isFloatText reports whether a numeric field is written in float style
// ("3.0", "1e-05", "nan") rather than as an integer.
func isFloatText(b []byte) bool {
	return bytes.ContainsAny(b, ".eEnN")
}

// Writing.

// appendField appends s with minimal CSV quoting: quoted (and its quotes
// doubled) if it contains a comma, a quote, '\n' or '\r' — what Python's
// csv module (and so pandas' to_csv) does.
func appendField(b []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\n\r") {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// AppendPyFloat appends v as Python's repr (and pandas' to_csv) writes a
// float64: the shortest text that reads back as v, in fixed notation with
// at least one decimal ("3.0", "0.722103", "1593898068.378") when the
// decimal exponent is in [-4, 16), else in exponent notation with at least
// two exponent digits ("1e-05", "1.5e+16"); NaN is empty (pandas' default
// na_rep), infinities are "inf" and "-inf".
func AppendPyFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return b
	case math.IsInf(v, 1):
		return append(b, "inf"...)
	case math.IsInf(v, -1):
		return append(b, "-inf"...)
	case v == 0:
		if math.Signbit(v) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], v, 'e', -1, 64)
	k := bytes.IndexByte(e, 'e')
	exp, _ := strconv.Atoi(string(e[k+1:]))
	if exp < -4 || exp >= 16 {
		return append(b, e...)
	}
	start := len(b)
	b = strconv.AppendFloat(b, v, 'f', -1, 64)
	if bytes.IndexByte(b[start:], '.') < 0 {
		b = append(b, ".0"...)
	}
	return b
}

// appendNum appends a numeric column value: empty for NaN, float style
// (AppendPyFloat) if float is set, else an integer (v must be integral).
func appendNum(b []byte, v float64, float bool) []byte {
	switch {
	case math.IsNaN(v):
		return b
	case float:
		return AppendPyFloat(b, v)
	}
	return strconv.AppendInt(b, int64(v), 10)
}

// appendIntList appends a Python list of ints, "[27, 9]" (space after each
// comma, as str(list) writes it) or "[27,9]" (without), CSV-quoted if it
// has more than one element.
func appendIntList(b []byte, v []int, space bool) []byte {
	var tmp []byte
	tmp = append(tmp, '[')
	for i, x := range v {
		if i > 0 {
			tmp = append(tmp, ',')
			if space {
				tmp = append(tmp, ' ')
			}
		}
		tmp = strconv.AppendInt(tmp, int64(x), 10)
	}
	tmp = append(tmp, ']')
	return appendField(b, string(tmp))
}

// parseIntList parses "[27, 9]", "[27,9]", "[8]" or "[]" (blanks anywhere
// between the tokens). space reports whether a blank follows a comma, for
// re-emitting the same text.
func parseIntList(b []byte) (v []int, space bool, msg string) {
	s := strings.TrimSpace(string(b))
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, false, fmt.Sprintf("bad list %q: want a Python list of integers such as [27, 9]", b)
	}
	body := strings.TrimSpace(s[1 : len(s)-1])
	if body == "" {
		return []int{}, false, ""
	}
	parts := strings.Split(body, ",")
	v = make([]int, len(parts))
	for i, p := range parts {
		if i > 0 && strings.HasPrefix(p, " ") {
			space = true
		}
		x, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, false, fmt.Sprintf("bad list %q: element %q is not an integer", b, strings.TrimSpace(p))
		}
		v[i] = x
	}
	return v, space, ""
}
