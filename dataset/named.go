package dataset

// Files read as named features (issue 39): a CSV file with string cells or
// missing cells, and JSON lines of runtime events. See "Named features" in
// the package documentation.

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"okstream/codec"
	"okstream/features"
)

// Named holds the rows of a file read as named features: each row's fields
// (names from the CSV header, or the events' "f"), in file order. The
// models' vectors are not a property of the file: a features.Encoder
// (NewEncoder) gives them, and its state depends on the order in which the
// rows are presented, so an evaluation encodes each presented sequence with
// a fresh encoder, as the runtime encodes a stream (package eval does).
type Named struct {
	// Records[i] are row i's fields (shared between Datasets like X).
	Records [][]codec.Field
	// Config is the encoder's configuration: Config.Dim is Dataset.Dim.
	Config features.Config
}

// NewEncoder returns a fresh encoder of n's configuration.
func (n *Named) NewEncoder() *features.Encoder { return features.New(n.Config) }

// missingCells are the CSV cells (compared without regard to case) that are
// a missing value in a named CSV file, beside the empty cell: "?" (UCI),
// "NA" and "N/A" (R, spreadsheets), "NaN" (NumPy, pandas), "null" (SQL,
// JSON) and "None" (Python). A cell that reads as NaN or ±Inf is missing
// too (the runtime dead-letters a non-finite number; a file cell is taken
// as the absence of a value instead, so that no row is refused).
var missingCells = []string{"?", "na", "n/a", "nan", "null", "none"}

// isMissingCell reports whether a CSV cell is a missing value.
func isMissingCell(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	if len(b) > 4 {
		return false
	}
	for _, m := range missingCells {
		if len(b) == len(m) && strings.EqualFold(string(b), m) {
			return true
		}
	}
	return false
}

// isNamedCell reports whether a feature cell that the numeric reader
// refuses makes the file a named one: a missing cell or a text that is not
// a number (a categorical value). Out-of-range numbers are text too.
func isNamedCell(b []byte) bool {
	if isMissingCell(b) {
		return true
	}
	_, msg := parseNum(b)
	return msg != ""
}

// errNeedNamed is loadCSV's signal that the file has a string or missing
// feature cell, so Load reads it again as named features.
var errNeedNamed = errors.New("dataset: named CSV")

// fieldSize is the memory of one codec.Field, for the MaxDenseBytes limit.
const fieldSize = int64(unsafe.Sizeof(codec.Field{}))

// cellField makes the field of one CSV cell. intern maps the column's
// string values to one copy each.
func cellField(name string, b []byte, intern map[string]string) codec.Field {
	if isMissingCell(b) {
		return codec.Field{Name: name, Kind: codec.FieldMissing}
	}
	if v, err := strconv.ParseFloat(string(b), 64); err == nil || isRange(err) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return codec.Field{Name: name, Kind: codec.FieldMissing}
		}
		return codec.Field{Name: name, Kind: codec.FieldNumber, Num: v}
	}
	s, ok := intern[string(b)]
	if !ok {
		s = string(b)
		intern[s] = s
	}
	return codec.Field{Name: name, Kind: codec.FieldString, Str: s}
}

func isRange(err error) bool {
	var ne *strconv.NumError
	return errors.As(err, &ne) && ne.Err == strconv.ErrRange
}

// loadNamedCSV reads a CSV file as named records: the header's names (or
// the column indices, without a header), numbers as numbers, missing cells
// (isMissingCell) as missing, any other text as a categorical value.
func (d *Dataset) loadNamedCSV(src *lineSource, opts Options, lim limits) error {
	o := opts
	o.Dim = 0 // the encoder's dimension, not the number of columns
	lay, line, lineNo, err := setupCSV(src, o, lim)
	if err != nil {
		return err
	}
	names := lay.featureNames()
	seen := make(map[string]int, len(names))
	for k, n := range names {
		if j, dup := seen[n]; dup {
			return &ParseError{File: lay.path, Column: lay.colName(lay.features[k]), Msg: fmt.Sprintf("feature name %s is also column %d's: named features need distinct names (drop one, Options.Drop)", clip([]byte(n)), lay.features[j])}
		}
		seen[n] = k
		if len(n) > codec.DefaultMaxNameBytes {
			return &ParseError{File: lay.path, Column: lay.colName(lay.features[k]), Msg: fmt.Sprintf("feature name longer than %d bytes (the runtime dead-letters it: name_too_long)", codec.DefaultMaxNameBytes)}
		}
	}
	if names == nil {
		names = make([]string, len(lay.features))
		for k, j := range lay.features {
			names[k] = strconv.Itoa(j)
		}
	}
	interns := make([]map[string]string, len(names))
	for k := range interns {
		interns[k] = map[string]string{}
	}
	var (
		recs    [][]codec.Field
		ys      []float64
		fields  [][]byte
		classes *classDict
	)
	if opts.ClassNames {
		classes = &classDict{}
	}
	for {
		if line == nil {
			b, ok := src.next()
			if !ok {
				break
			}
			if isBlank(b) || isComment(b) {
				continue
			}
			line, lineNo = b, src.line
		}
		var e error
		fields, e = splitFields(line, lay.delim, fields[:0], lay.nfields+1)
		switch {
		case e == errTooManyFields:
			return &ParseError{File: lay.path, Line: lineNo, Msg: fmt.Sprintf("more than %d fields, want %d", lay.nfields+1, lay.nfields)}
		case e != nil:
			return &ParseError{File: lay.path, Line: lineNo, Msg: e.Error()}
		case len(fields) != lay.nfields:
			return &ParseError{File: lay.path, Line: lineNo, Msg: fmt.Sprintf("%d fields, want %d", len(fields), lay.nfields)}
		}
		y, msg := classes.parse(fields[lay.label])
		if msg != "" {
			return &ParseError{File: lay.path, Line: lineNo, Column: lay.colName(lay.label), Msg: "label: " + msg}
		}
		rec := make([]codec.Field, len(lay.features))
		for k, j := range lay.features {
			rec[k] = cellField(names[k], fields[j], interns[k])
			if rec[k].Kind == codec.FieldString && len(rec[k].Str) > codec.DefaultMaxNameBytes {
				return &ParseError{File: lay.path, Line: lineNo, Column: lay.colName(j), Msg: fmt.Sprintf("categorical value %s longer than %d bytes (the runtime dead-letters it: name_too_long)", clip(fields[j]), codec.DefaultMaxNameBytes)}
			}
		}
		recs = append(recs, rec)
		ys = append(ys, y)
		if need := int64(len(recs)) * int64(len(rec)) * fieldSize; need > lim.denseBytes {
			return &ParseError{File: lay.path, Line: lineNo, Msg: fmt.Sprintf("%d rows of %d named fields take %s, above the limit of %s (Options.MaxDenseBytes, okstream --max-dense-mib)",
				len(recs), len(rec), fmtBytes(need), fmtBytes(lim.denseBytes))}
		}
		line = nil
	}
	if err := src.err(); err != nil {
		return err
	}
	d.Y = ys
	d.Classes = classes.fix(d.Y)
	d.FeatureNames = names
	d.LabelName = lay.labelName()
	return d.finishNamed(recs, opts, lim, src.path)
}

// finishNamed sets d's dimension, encoder configuration and rows (the
// records encoded in file order by one fresh encoder).
func (d *Dataset) finishNamed(recs [][]codec.Field, opts Options, lim limits, path string) error {
	if len(recs) == 0 {
		return &ParseError{File: path, Msg: "no data rows"}
	}
	if opts.MaxValuesPerName < 0 {
		return fmt.Errorf("dataset: %s: negative Options.MaxValuesPerName %d", path, opts.MaxValuesPerName)
	}
	dim := opts.Dim
	if dim == 0 {
		dim = NamedDim(recs, opts.MaxValuesPerName)
	}
	dim = min(dim, features.MaxDim)
	if opts.Dim == 0 && dim > lim.maxDim {
		return &ParseError{File: path, Msg: fmt.Sprintf("the named features need %d coordinates, above the limit of %d (Options.MaxDim); give the dimension (okstream --dim, Options.Dim)", dim, lim.maxDim)}
	}
	cfg := features.Config{Dim: dim, MaxValuesPerName: opts.MaxValuesPerName}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("dataset: %s: %w", path, err)
	}
	if err := lim.checkDense(path, len(recs), dim, 0, 0); err != nil {
		return err
	}
	enc := features.New(cfg)
	back := make([]float64, len(recs)*dim)
	d.X = make([][]float64, len(recs))
	for i, r := range recs {
		row := back[i*dim : (i+1)*dim : (i+1)*dim]
		enc.Encode(r, row) // MissingImpute never fails
		d.X[i] = row
	}
	d.Dim = dim
	d.Named = &Named{Records: recs, Config: cfg}
	return nil
}

// NamedDim is the dimension that the records need with the default
// encoder policy (features.Config with MaxValuesPerName maxValues, 0: the
// default), in any order: per name, 1 coordinate if it has a number or a
// bool, one per distinct string value up to the cap (plus "<other>" past
// it), and a missing indicator if any record has it missing or leaves it
// out (or has a string where it also has numbers). It is an upper bound on
// the coordinates a features.Encoder allocates over any permutation of the
// records, so no field is ever dropped for lack of room; at least 1.
func NamedDim(recs [][]codec.Field, maxValues int) int {
	if maxValues <= 0 {
		maxValues = features.DefaultMaxValuesPerName
	}
	type stat struct {
		num, str, miss bool
		present        int
		vals           map[string]struct{}
		over           bool
	}
	stats := map[string]*stat{}
	var order []string
	for _, r := range recs {
		for k := range r {
			f := &r[k]
			s := stats[f.Name]
			if s == nil {
				s = &stat{}
				stats[f.Name] = s
				order = append(order, f.Name)
			}
			s.present++
			switch f.Kind {
			case codec.FieldNumber, codec.FieldBool:
				s.num = true
			case codec.FieldString:
				s.str = true
				if s.over {
					break
				}
				if s.vals == nil {
					s.vals = map[string]struct{}{}
				}
				s.vals[f.Str] = struct{}{}
				if len(s.vals) > maxValues {
					s.over = true
				}
			default:
				s.miss = true
			}
		}
	}
	dim := 0
	for _, name := range order {
		s := stats[name]
		if s.num {
			dim++
		}
		dim += min(len(s.vals), maxValues)
		if s.over {
			dim++
		}
		if s.miss || s.present < len(recs) || (s.num && s.str) {
			dim++
		}
	}
	return max(dim, 1)
}

// loadJSONL reads JSON lines: one event per line in the runtime's schema
// (codec.Decoder.DecodeEventJSON): dense "x", sparse "xi"/"xv", or named
// "f" (with "v": 3), and a label "y" on every line. Named events make a
// named dataset (Dataset.Named); dense and sparse ones a numeric one, whose
// dimension is Options.Dim or the longest "x" / largest index + 1. A file
// mixes neither the two kinds nor holds feedback events.
func (d *Dataset) loadJSONL(src *lineSource, opts Options, lim limits) error {
	dec := codec.NewDecoder(codec.Limits{MaxFeatures: lim.maxDim, MaxBytes: lim.maxLine})
	var (
		recs    [][]codec.Field // named
		xs      [][]float64     // dense
		xis     [][]uint32      // sparse
		xvs     [][]float64
		ys      []float64
		classes *classDict
		named   = -1 // unknown; 0 numeric; 1 named
		dim     int
		dimAt   int
		cells   int64
	)
	if opts.ClassNames {
		classes = &classDict{}
	}
	for {
		line, ok := src.next()
		if !ok {
			break
		}
		if isBlank(line) || isComment(line) {
			continue
		}
		perr := func(format string, a ...any) error {
			return &ParseError{File: src.path, Line: src.line, Msg: fmt.Sprintf(format, a...)}
		}
		var ev codec.Event
		if err := dec.DecodeEventJSON(line, &ev); err != nil {
			return perr("%v", err)
		}
		switch {
		case ev.IsFeedback():
			return perr("a feedback event (ref %s): a file holds labelled events", clip([]byte(ev.Ref)))
		case !ev.HasY:
			return perr(`no label "y": a file holds labelled events`)
		}
		var y float64
		var msg string
		switch {
		case ev.YKind == codec.LabelString && classes == nil:
			msg = "class name " + clip([]byte(ev.YStr)) + " (class names need Options.ClassNames)"
		case ev.YKind == codec.LabelString:
			y, msg = classes.parseName(ev.YStr)
		default:
			y, msg = ev.Y, classes.number()
		}
		if msg != "" {
			return perr("label: %s", msg)
		}
		isNamed := 0
		if ev.Named() {
			isNamed = 1
		}
		if named >= 0 && named != isNamed {
			return perr("named features (\"f\") and dense or sparse ones (\"x\", \"xi\") in one file")
		}
		named = isNamed
		switch {
		case ev.Named():
			recs = append(recs, slices.Clone(ev.F))
			cells += int64(len(ev.F)) * fieldSize
		case ev.X != nil:
			xs, xis, xvs = append(xs, slices.Clone(ev.X)), append(xis, nil), append(xvs, nil)
			if len(ev.X) > dim {
				dim, dimAt = len(ev.X), src.line
			}
			cells += int64(len(ev.X)) * 8
		default:
			xs, xis, xvs = append(xs, nil), append(xis, slices.Clone(ev.XI)), append(xvs, slices.Clone(ev.XV))
			if n := len(ev.XI); n > 0 && int(ev.XI[n-1])+1 > dim {
				dim, dimAt = int(ev.XI[n-1])+1, src.line
			}
			cells += int64(len(ev.XI)) * 12
		}
		ys = append(ys, y)
		if cells > lim.denseBytes {
			return perr("the events take more than %s (Options.MaxDenseBytes, okstream --max-dense-mib)", fmtBytes(lim.denseBytes))
		}
	}
	if err := src.err(); err != nil {
		return err
	}
	d.Y = ys
	d.Classes = classes.fix(d.Y)
	if named == 1 {
		return d.finishNamed(recs, opts, lim, src.path)
	}
	if len(ys) == 0 {
		return &ParseError{File: src.path, Msg: "no events"}
	}
	if opts.Dim > 0 {
		if dim > opts.Dim {
			return &ParseError{File: src.path, Line: dimAt, Msg: fmt.Sprintf("an event has %d features (or index %d), above Options.Dim %d", dim, dim-1, opts.Dim)}
		}
		dim = opts.Dim
	}
	if dim > lim.maxDim {
		return &ParseError{File: src.path, Line: dimAt, Msg: fmt.Sprintf("dimension %d is above the limit of %d (Options.MaxDim); give the dimension (okstream --dim, Options.Dim)", dim, lim.maxDim)}
	}
	dim = max(dim, 1)
	if err := lim.checkDense(src.path, len(ys), dim, 0, dimAt); err != nil {
		return err
	}
	back := make([]float64, len(ys)*dim)
	d.X = make([][]float64, len(ys))
	for i := range ys {
		row := back[i*dim : (i+1)*dim : (i+1)*dim]
		if xs[i] != nil {
			if len(xs[i]) != dim {
				return &ParseError{File: src.path, Msg: fmt.Sprintf("event %d has %d dense features, others %d", i+1, len(xs[i]), dim)}
			}
			copy(row, xs[i])
		} else {
			for k, j := range xis[i] {
				row[j] = xvs[i][k]
			}
		}
		d.X[i] = row
	}
	d.Dim = dim
	return nil
}

// parseName is classDict.parse for a label that is a string in the record
// (JSON lines): always a class name, even if it reads as a number, as the
// runtime's label mapping takes a string label.
func (c *classDict) parseName(s string) (float64, string) {
	if c.nums {
		return 0, "class name " + clip([]byte(s)) + " among numbers"
	}
	if k, ok := c.index[s]; ok {
		return float64(k), ""
	}
	if c.index == nil {
		c.index = map[string]int{}
	}
	c.index[s] = len(c.names)
	c.names = append(c.names, s)
	return float64(len(c.names) - 1), ""
}

// number records a numeric label: "" or the message for a number among
// class names.
func (c *classDict) number() string {
	if c == nil {
		return ""
	}
	if len(c.names) > 0 {
		return "number among class names (" + clip([]byte(c.names[0])) + ", ...)"
	}
	c.nums = true
	return ""
}

// sniffJSON reports whether a sniffed line is a JSON object.
func sniffJSON(t []byte) bool { return len(t) > 0 && t[0] == '{' && bytes.HasSuffix(t, []byte{'}'}) }
