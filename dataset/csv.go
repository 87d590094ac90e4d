package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// csvLayout is what the header (or first row) of a CSV file determines.
type csvLayout struct {
	path     string
	delim    byte // 0: runs of blanks
	nfields  int
	label    int      // field index of the label
	features []int    // field indices of the features, in file order
	header   []string // all column names; nil without a header
}

// colName describes field j for messages: `7 "Jitter(Abs)"` or `7`.
func (l *csvLayout) colName(j int) string {
	if l.header != nil {
		return strconv.Itoa(j) + " " + clip([]byte(l.header[j]))
	}
	return strconv.Itoa(j)
}

func (l *csvLayout) featureNames() []string {
	if l.header == nil {
		return nil
	}
	names := make([]string, len(l.features))
	for k, j := range l.features {
		names[k] = l.header[j]
	}
	return names
}

// classDict gives CSV labels that are class names (a column of "yes" and
// "no", or "true" and "false") numbers: each name its index in order of
// first appearance in the file, except that "false" is 0 and "true" 1
// (any case) when they are the only names (fix). So a binary column's first
// name is the smaller value, which Dataset.BinaryLabels makes −1, as okstream
// run's label mapping makes a partition's first string −1 (and true +1). A
// column mixing numbers and names is refused.
type classDict struct {
	names []string
	index map[string]int
	nums  bool // a number was seen
}

func (c *classDict) parse(b []byte) (float64, string) {
	v, msg := parseNum(b)
	switch {
	case msg == "":
		if c != nil {
			if len(c.names) > 0 {
				return 0, "number " + clip(b) + " among class names (" + clip([]byte(c.names[0])) + ", ...)"
			}
			c.nums = true
		}
		return v, ""
	case c == nil || len(b) == 0 || (len(b) == 1 && b[0] == '?') || !strings.HasPrefix(msg, "bad number"):
		return 0, msg
	case c.nums:
		return 0, "class name " + clip(b) + " among numbers"
	}
	if k, ok := c.index[string(b)]; ok {
		return float64(k), ""
	}
	if c.index == nil {
		c.index = map[string]int{}
	}
	c.index[string(b)] = len(c.names)
	c.names = append(c.names, string(b))
	return float64(len(c.names) - 1), ""
}

// fix renumbers true/false columns (false 0, true 1) and returns the class
// names by number (nil for a numeric column).
func (c *classDict) fix(y []float64) []string {
	if c == nil {
		return nil
	}
	if len(c.names) == 2 && strings.EqualFold(c.names[0], "true") && strings.EqualFold(c.names[1], "false") {
		for i := range y {
			y[i] = 1 - y[i]
		}
		c.names[0], c.names[1] = c.names[1], c.names[0]
	}
	return c.names
}

func (l *csvLayout) labelName() string {
	if l.header == nil {
		return ""
	}
	return l.header[l.label]
}

// named reports whether the row that parseRow refused (fields, as it split
// them) has a feature cell that makes the file a named one (isNamedCell),
// with every other cell of the row well formed: Load then reads the file
// as named features. Only Load's numeric pass asks (Reader refuses such
// a row).
func (l *csvLayout) named(fields [][]byte) bool {
	if len(fields) != l.nfields {
		return false
	}
	for _, j := range l.features {
		if isNamedCell(fields[j]) {
			return true
		}
	}
	return false
}

// parseRow parses one data row into x (len(l.features)) and returns the
// label. fields is scratch space, returned for reuse. classes, if not nil,
// takes labels that are not numbers as class names (classDict); nil refuses
// them.
func (l *csvLayout) parseRow(line []byte, lineNo int, x []float64, fields [][]byte, classes *classDict) (y float64, _ [][]byte, err error) {
	fields, e := splitFields(line, l.delim, fields[:0], l.nfields+1)
	if e == errTooManyFields {
		return 0, fields, &ParseError{File: l.path, Line: lineNo, Msg: fmt.Sprintf("more than %d fields, want %d", l.nfields+1, l.nfields)}
	}
	if e != nil {
		return 0, fields, &ParseError{File: l.path, Line: lineNo, Msg: e.Error()}
	}
	if len(fields) != l.nfields {
		return 0, fields, &ParseError{File: l.path, Line: lineNo,
			Msg: fmt.Sprintf("%d fields, want %d", len(fields), l.nfields)}
	}
	y, msg := classes.parse(fields[l.label])
	if msg != "" {
		return 0, fields, &ParseError{File: l.path, Line: lineNo, Column: l.colName(l.label), Msg: "label: " + msg}
	}
	for k, j := range l.features {
		v, msg := parseNum(fields[j])
		if msg != "" {
			return 0, fields, &ParseError{File: l.path, Line: lineNo, Column: l.colName(j), Msg: msg}
		}
		x[k] = v
	}
	return y, fields, nil
}

// splitFields splits line at delim (0: runs of blanks), trimming blanks
// around each field and removing the quotes of quoted fields. The fields
// alias line unless a quoted field contains an escaped quote. It stops with
// errTooManyFields after maxFields fields, so that dst stays bounded.
func splitFields(line []byte, delim byte, dst [][]byte, maxFields int) ([][]byte, error) {
	n := len(line)
	start := len(dst)
	// Reserve room for every field the line can have, up to maxFields+1,
	// at once: growing by append would allocate several times the final size.
	est := n/2 + 1
	if delim != 0 {
		est = bytes.Count(line, []byte{delim}) + 1
	}
	dst = slices.Grow(dst, min(est, maxFields+1))
	blank := func(c byte) bool { return c == ' ' || (c == '\t' && delim != '\t') || c == '\r' }
	i := 0
	if delim == 0 {
		for {
			for i < n && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
				i++
			}
			if i == n {
				return dst, nil
			}
			if line[i] == '"' {
				f, end, err := quoted(line, i)
				if err != nil {
					return dst, err
				}
				if end < n && line[end] != ' ' && line[end] != '\t' && line[end] != '\r' {
					return dst, fmt.Errorf("text after the closing quote of field %d", len(dst))
				}
				dst = append(dst, f)
				i = end
			} else {
				s := i
				for i < n && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' {
					i++
				}
				dst = append(dst, line[s:i])
			}
			if len(dst)-start > maxFields {
				return dst, errTooManyFields
			}
		}
	}
	for {
		for i < n && blank(line[i]) {
			i++
		}
		if i < n && line[i] == '"' {
			f, end, err := quoted(line, i)
			if err != nil {
				return dst, err
			}
			for end < n && blank(line[end]) {
				end++
			}
			if end < n && line[end] != delim {
				return dst, fmt.Errorf("text after the closing quote of field %d", len(dst))
			}
			dst = append(dst, f)
			i = end
		} else {
			s := i
			for i < n && line[i] != delim {
				i++
			}
			e := i
			for e > s && blank(line[e-1]) {
				e--
			}
			dst = append(dst, line[s:e])
		}
		if len(dst)-start > maxFields {
			return dst, errTooManyFields
		}
		if i == n {
			return dst, nil
		}
		i++ // the delimiter
	}
}

// errTooManyFields is splitFields' error for a row with more fields than
// its caller allows.
var errTooManyFields = errors.New("too many fields")

// quoted reads the quoted field starting at line[i] == '"' and returns its
// content and the index just past the closing quote.
func quoted(line []byte, i int) (field []byte, end int, err error) {
	s := i + 1
	escaped := false
	for j := s; j < len(line); j++ {
		if line[j] != '"' {
			continue
		}
		if j+1 < len(line) && line[j+1] == '"' {
			escaped = true
			j++
			continue
		}
		f := line[s:j]
		if escaped {
			f = bytes.ReplaceAll(f, []byte(`""`), []byte(`"`))
		}
		return f, j + 1, nil
	}
	return nil, 0, errors.New("unterminated quoted field (quoted fields cannot span lines)")
}

// detectDelim returns the most frequent of ',', ';' and tab outside quotes
// in line (ties in that order), or 0 (runs of blanks) if none occurs.
func detectDelim(line []byte) byte {
	var counts [3]int
	in := false
	for _, c := range line {
		switch {
		case c == '"':
			in = !in
		case in:
		case c == ',':
			counts[0]++
		case c == ';':
			counts[1]++
		case c == '\t':
			counts[2]++
		}
	}
	best, delim := 0, byte(0)
	for k, d := range []byte{',', ';', '\t'} {
		if counts[k] > best {
			best, delim = counts[k], d
		}
	}
	return delim
}

// classify counts the numeric and the text fields of a row; empty and "?"
// fields count as neither.
func classify(fields [][]byte) (numbers, texts int, firstText int) {
	firstText = -1
	for j, f := range fields {
		if len(f) == 0 || (len(f) == 1 && f[0] == '?') {
			continue
		}
		if _, err := strconv.ParseFloat(string(f), 64); err == nil {
			numbers++
		} else {
			texts++
			if firstText < 0 {
				firstText = j
			}
		}
	}
	return numbers, texts, firstText
}

// setupCSV reads a CSV file's header (if any) and first data row, and
// resolves the label and dropped columns. It returns the first data row
// (copied; nil if there is none) and its line number.
//
// A row may have at most lim.maxDim feature columns (plus the label and the
// dropped columns), so that a long line of delimiters cannot size the
// per-row slices.
func setupCSV(src *lineSource, opts Options, lim limits) (*csvLayout, []byte, int, error) {
	path := src.path
	perr := func(line int, format string, a ...any) error {
		return &ParseError{File: path, Line: line, Msg: fmt.Sprintf(format, a...)}
	}
	lay := &csvLayout{path: path}
	switch {
	case opts.Comma == 0:
	case opts.Comma == ' ':
	case opts.Comma > 0 && opts.Comma < 128 && opts.Comma != '"' && opts.Comma != '\n' && opts.Comma != '\r' && opts.Comma != '#':
		lay.delim = byte(opts.Comma)
	default:
		return nil, nil, 0, fmt.Errorf("dataset: %s: unusable CSV delimiter %q", path, opts.Comma)
	}

	// The first non-blank line, if it starts with '#', may be a header.
	var hashLine []byte
	hashLineNo := 0
	var first []byte // first row that is not a '#' line
	firstNo := 0
	for {
		line, ok := src.next()
		if !ok {
			break
		}
		if isBlank(line) {
			continue
		}
		if isComment(line) {
			if hashLine == nil && firstNo == 0 && hashLineNo == 0 {
				t := bytes.TrimSpace(line)
				hashLine = bytes.TrimSpace(append([]byte(nil), t[1:]...))
				hashLineNo = src.line
			}
			continue
		}
		first = append([]byte(nil), line...)
		firstNo = src.line
		break
	}
	if err := src.err(); err != nil {
		return nil, nil, 0, err
	}
	if first == nil && hashLine == nil {
		if opts.Label == "" {
			return nil, nil, 0, fmt.Errorf("dataset: %s: label column not set", path)
		}
		// An empty file: no columns to resolve against.
		return nil, nil, 0, perr(0, "no data rows and no header: cannot resolve the label column")
	}
	if opts.Comma == 0 {
		if first != nil {
			lay.delim = detectDelim(first)
		} else {
			lay.delim = detectDelim(hashLine)
		}
	}
	var firstFields, hashFields [][]byte
	var err error
	maxFields := lim.maxDim + 1 + len(opts.Drop)
	if first != nil {
		firstFields, err = splitFields(first, lay.delim, nil, maxFields)
		if err == errTooManyFields {
			return nil, nil, 0, perr(firstNo, "more than %d fields: above the limit of %d feature columns (Options.MaxDim); to read a wider file, give its number of feature columns as the dimension (okstream --dim, Options.Dim)", maxFields, lim.maxDim)
		}
		if err != nil {
			return nil, nil, 0, perr(firstNo, "%v", err)
		}
	}
	if hashLine != nil {
		if hashFields, err = splitFields(hashLine, lay.delim, nil, maxFields); err != nil {
			hashFields = nil // then it is only a comment
		}
	}
	hashOK := hashLine != nil && (first == nil || len(hashFields) == len(firstFields))
	var header [][]byte
	switch opts.Header {
	case HeaderNo:
	case HeaderYes:
		if hashOK {
			header = hashFields
		} else if first != nil {
			header, first, firstFields = firstFields, nil, nil
		}
	case HeaderAuto:
		if num, _, _ := classify(hashFields); hashOK && num == 0 && len(hashFields) > 0 {
			header = hashFields
			break
		}
		if first == nil {
			break
		}
		num, txt, j := classify(firstFields)
		switch {
		case txt > 0 && num == 0:
			header, first, firstFields = firstFields, nil, nil
		case txt > 0:
			return nil, nil, 0, perr(firstNo,
				"cannot tell whether this is a header or data: it mixes numbers and text (field %d is %s); set Options.Header",
				j, clip(firstFields[j]))
		}
	default:
		return nil, nil, 0, fmt.Errorf("dataset: %s: unknown HeaderMode %d", path, opts.Header)
	}
	if header != nil {
		lay.header = make([]string, len(header))
		for j, h := range header {
			lay.header[j] = string(h)
		}
		lay.nfields = len(header)
	} else {
		lay.nfields = len(firstFields)
	}

	if strings.TrimSpace(opts.Label) == "" {
		return nil, nil, 0, fmt.Errorf("dataset: %s: label column not set: set Options.Label to a column index (\"0\" first, \"-1\" last) or a header name (Preset knows the shared datasets)", path)
	}
	if lay.label, err = lay.resolve(opts.Label); err != nil {
		return nil, nil, 0, fmt.Errorf("dataset: %s: label column: %w", path, err)
	}
	dropped := make([]bool, lay.nfields)
	for _, d := range opts.Drop {
		j, err := lay.resolve(d)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("dataset: %s: Drop: %w", path, err)
		}
		if j == lay.label {
			return nil, nil, 0, fmt.Errorf("dataset: %s: Drop: column %s is the label column", path, lay.colName(j))
		}
		dropped[j] = true
	}
	for j := range lay.nfields {
		if j != lay.label && !dropped[j] {
			lay.features = append(lay.features, j)
		}
	}
	if opts.Dim != 0 && opts.Dim != len(lay.features) {
		return nil, nil, 0, fmt.Errorf("dataset: %s: Options.Dim is %d but the file has %d feature columns", path, opts.Dim, len(lay.features))
	}
	return lay, first, firstNo, nil
}

// resolve turns a column reference (index, negative index or header name)
// into a field index.
func (l *csvLayout) resolve(ref string) (int, error) {
	ref = strings.TrimSpace(ref)
	if j, err := strconv.Atoi(ref); err == nil {
		if j < 0 {
			j += l.nfields
		}
		if j < 0 || j >= l.nfields {
			return 0, fmt.Errorf("column %s out of range: the file has %d columns", ref, l.nfields)
		}
		return j, nil
	}
	if l.header == nil {
		return 0, fmt.Errorf("column %q given by name, but the file has no header", ref)
	}
	found := -1
	for j, h := range l.header {
		if h == ref {
			if found >= 0 {
				return 0, fmt.Errorf("column name %q occurs twice (columns %d and %d); use an index", ref, found, j)
			}
			found = j
		}
	}
	if found < 0 {
		return 0, fmt.Errorf("no column named %q; the columns are %s", ref, quoteList(l.header))
	}
	return found, nil
}

// quoteList quotes the names for a message: at most the first 50, each
// clipped, then the count of the rest.
func quoteList(names []string) string {
	const most = 50
	q := make([]string, 0, min(len(names), most)+1)
	for _, s := range names[:min(len(names), most)] {
		q = append(q, clip([]byte(s)))
	}
	if len(names) > most {
		q = append(q, "... ("+strconv.Itoa(len(names)-most)+" more)")
	}
	return strings.Join(q, ", ")
}
