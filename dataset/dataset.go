package dataset

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"okstream/codec"
)

// Dataset is a whole file in memory.
//
// Rows may be shared between Datasets: Permuted and Subset return Datasets
// whose X holds the same row slices as the original, so writing into a row
// of one changes the others. ScaleFeatures never writes into existing rows
// (it allocates new ones); Y is never shared.
type Dataset struct {
	Name         string      // base name of the file
	Path         string      // path as given to Load
	X            [][]float64 // rows, each of length Dim (LIBSVM: missing indices are 0)
	Y            []float64   // labels as parsed
	Dim          int
	FeatureNames []string // CSV header names of the feature columns; nil for LIBSVM or no header
	LabelName    string   // CSV header name of the label column, or ""
	// Classes are the class names of a CSV label column of names (Y is
	// then each row's class number: see classDict); nil for numbers.
	Classes []string
	// Named is set for a file read as named features (a CSV file with
	// string or missing cells, named JSON lines): the rows' fields and the
	// encoder configuration. X is then the records encoded in file order by
	// one fresh encoder; an evaluation that presents the rows in another
	// order encodes them again in that order (Named.NewEncoder).
	Named *Named
}

// Load reads a whole file. See the package documentation for the formats and
// the options; LIBSVM's dimension is opts.Dim if set, else the largest index
// (at most opts.MaxDim). A file whose dense rows would take more than
// opts.MaxDenseBytes is refused with a *ParseError at the line that crosses
// the limit, before the rows are allocated.
func Load(path string, opts Options) (*Dataset, error) {
	return load(path, fileOpener(path), opts)
}

func load(path string, open opener, opts Options) (*Dataset, error) {
	format, lim, err := resolveFormat(path, open, opts)
	if err != nil {
		return nil, err
	}
	src, err := openSource(path, open, lim.maxLine)
	if err != nil {
		return nil, err
	}
	defer src.close()
	d := &Dataset{Name: filepath.Base(path), Path: path}
	switch {
	case format == FormatLIBSVM:
		err = d.loadLIBSVM(src, lim)
	case format == FormatJSONL:
		err = d.loadJSONL(src, opts, lim)
	case opts.Named:
		err = d.loadNamedCSV(src, opts, lim)
	default:
		err = d.loadCSV(src, opts, lim)
		if err == errNeedNamed { // a string or missing feature cell: read again, named
			src.close()
			if src, err = openSource(path, open, lim.maxLine); err != nil {
				return nil, err
			}
			defer src.close()
			d = &Dataset{Name: filepath.Base(path), Path: path}
			err = d.loadNamedCSV(src, opts, lim)
		}
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

func (d *Dataset) loadLIBSVM(src *lineSource, lim limits) error {
	var (
		idx      []int32   // scratch for one line
		val      []float64 // scratch for one line
		idxs     chunks[int32]
		vals     chunks[float64]
		nnz      chunks[int32] // entries per row
		ys       chunks[float64]
		maxJ     int
		maxAt    int // line of maxJ
		rowCount int
	)
	for {
		line, more := src.next()
		if !more {
			break
		}
		var y float64
		var ok bool
		var msg string
		y, idx, val, ok, msg = parseLIBSVMLine(line, lim, idx[:0], val[:0])
		if msg != "" {
			return &ParseError{File: src.path, Line: src.line, Msg: msg}
		}
		if !ok {
			continue
		}
		if len(idx) > 0 && int(idx[len(idx)-1]) > maxJ {
			maxJ, maxAt = int(idx[len(idx)-1]), src.line
		}
		idxs.add(idx...)
		vals.add(val...)
		nnz.add(int32(len(idx)))
		ys.add(y)
		rowCount++
		// Refuse as soon as the dense rows cannot fit, not after reading
		// the rest of the file.
		var err error
		if lim.dim > 0 {
			err = lim.checkDense(src.path, rowCount, lim.dim, src.line, 0)
		} else {
			err = lim.checkDense(src.path, rowCount, maxJ, src.line, maxAt)
		}
		if err != nil {
			return err
		}
	}
	if err := src.err(); err != nil {
		return err
	}
	dim := lim.dim
	if dim == 0 {
		dim = maxJ
	}
	n := rowCount
	back := make([]float64, n*dim)
	d.X = make([][]float64, n)
	ic, vc := cursor[int32]{c: &idxs}, cursor[float64]{c: &vals}
	for i, k := range nnz.flatten() {
		row := back[i*dim : (i+1)*dim : (i+1)*dim]
		ri, rv := ic.next(int(k)), vc.next(int(k))
		for k, j := range ri {
			row[j-1] = rv[k]
		}
		d.X[i] = row
	}
	d.Y = ys.flatten()
	d.Dim = dim
	return nil
}

func (d *Dataset) loadCSV(src *lineSource, opts Options, lim limits) error {
	// A set Dim is checked against the columns after the rows are read:
	// for a named file (errNeedNamed) it is the encoder's dimension.
	o := opts
	o.Dim = 0
	lay, line, lineNo, err := setupCSV(src, o, lim)
	if err != nil {
		return err
	}
	var dimErr error
	if opts.Dim != 0 && opts.Dim != len(lay.features) {
		dimErr = fmt.Errorf("dataset: %s: Options.Dim is %d but the file has %d feature columns", src.path, opts.Dim, len(lay.features))
	}
	dim := len(lay.features)
	var (
		rows    chunks[float64]
		ys      chunks[float64]
		fields  [][]byte
		classes *classDict // nil: numbers only
	)
	if opts.ClassNames {
		classes = &classDict{}
	}
	x := make([]float64, dim)
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
		var y float64
		if y, fields, err = lay.parseRow(line, lineNo, x, fields, classes); err != nil {
			if lay.named(fields) {
				return errNeedNamed
			}
			return err
		}
		rows.add(x...)
		ys.add(y)
		if err := lim.checkDense(src.path, ys.n, dim, lineNo, 0); err != nil {
			return err
		}
		line = nil
	}
	if err := src.err(); err != nil {
		return err
	}
	if dimErr != nil {
		return dimErr
	}
	d.Y = ys.flatten()
	d.Classes = classes.fix(d.Y)
	d.X = make([][]float64, len(d.Y))
	rc := cursor[float64]{c: &rows}
	for i := range d.X {
		d.X[i] = rc.next(dim)
	}
	d.Dim = dim
	d.FeatureNames = lay.featureNames()
	d.LabelName = lay.labelName()
	return nil
}

// Len returns the number of rows.
func (d *Dataset) Len() int { return len(d.Y) }

// Subset returns the rows idx, in that order (repeats allowed). The rows are
// shared with d; Y is copied. It panics if an index is out of range.
func (d *Dataset) Subset(idx []int) *Dataset {
	s := *d
	s.X = make([][]float64, len(idx))
	s.Y = make([]float64, len(idx))
	for k, i := range idx {
		s.X[k] = d.X[i]
		s.Y[k] = d.Y[i]
	}
	if d.Named != nil {
		n := *d.Named
		n.Records = make([][]codec.Field, len(idx))
		for k, i := range idx {
			n.Records[k] = d.Named.Records[i]
		}
		s.Named = &n
	}
	return &s
}

// Permuted returns d with its rows in the order perm (row k of the result is
// row perm[k] of d). The rows are shared with d, not copied; Y is copied.
// It panics if perm is not a permutation of 0..Len()-1.
func (d *Dataset) Permuted(perm []int) *Dataset {
	if len(perm) != d.Len() {
		panic(fmt.Sprintf("dataset: Permuted: permutation of length %d for %d rows", len(perm), d.Len()))
	}
	seen := make([]bool, len(perm))
	for _, i := range perm {
		if i < 0 || i >= len(perm) || seen[i] {
			panic(fmt.Sprintf("dataset: Permuted: not a permutation (index %d)", i))
		}
		seen[i] = true
	}
	return d.Subset(perm)
}

// Clone returns a deep copy of d (rows in one new contiguous allocation).
func (d *Dataset) Clone() *Dataset {
	c := *d
	c.X = copyRows(d.X, d.Dim)
	c.Y = slices.Clone(d.Y)
	c.FeatureNames = slices.Clone(d.FeatureNames)
	if d.Named != nil {
		n := *d.Named
		n.Records = make([][]codec.Field, len(d.Named.Records))
		for i, r := range d.Named.Records {
			n.Records[i] = slices.Clone(r)
		}
		c.Named = &n
	}
	return &c
}

func copyRows(x [][]float64, dim int) [][]float64 {
	back := make([]float64, len(x)*dim)
	out := make([][]float64, len(x))
	for i, r := range x {
		row := back[i*dim : (i+1)*dim : (i+1)*dim]
		copy(row, r)
		out[i] = row
	}
	return out
}

// LabelCounts returns how many rows have each label value.
func (d *Dataset) LabelCounts() map[float64]int {
	c := make(map[float64]int)
	for _, y := range d.Y {
		c[y]++
	}
	return c
}

// distinct returns the sorted distinct labels.
func (d *Dataset) distinct() []float64 {
	c := d.LabelCounts()
	v := make([]float64, 0, len(c))
	for y := range c {
		v = append(v, y)
	}
	slices.Sort(v)
	return v
}

// ErrNotBinary is wrapped by BinaryLabels' error for labels that are not
// binary.
var ErrNotBinary = errors.New("labels are not binary")

// BinaryLabels maps Y to −1/+1 for binary classification, in place.
//
// With positive == nil: labels that are all −1 or +1 are kept (also when
// only one of the two occurs, as in svmguide3.t); exactly two distinct
// values become −1 (the smaller) and +1 (the larger), so {0,1} and {1,2}
// map to {−1,+1}; anything else is an error listing the values found.
// With positive != nil: rows whose label equals *positive become +1, all
// others −1 (one-vs-rest); it is an error if no row has that label.
// On error Y is unchanged.
func (d *Dataset) BinaryLabels(positive *float64) error {
	vals := d.distinct()
	if positive != nil {
		p := *positive
		if !slices.Contains(vals, p) {
			return fmt.Errorf("dataset: %s: positive label %s does not occur; the labels are %s", d.Name, fmtNum(p), fmtList(vals))
		}
		for i, y := range d.Y {
			d.Y[i] = sign(y == p)
		}
		return nil
	}
	pm := true
	for _, v := range vals {
		pm = pm && (v == -1 || v == 1)
	}
	switch {
	case pm:
		return nil
	case len(vals) == 2:
		for i, y := range d.Y {
			d.Y[i] = sign(y == vals[1])
		}
		return nil
	}
	list := fmtList(vals)
	if len(vals) > 10 {
		list = fmtList(vals[:10]) + ", ... (" + strconv.Itoa(len(vals)) + " distinct)"
	}
	return fmt.Errorf("dataset: %s: %w: found %s; pass the positive label (one-vs-rest) or treat the data as regression", d.Name, ErrNotBinary, list)
}

func sign(b bool) float64 {
	if b {
		return 1
	}
	return -1
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func fmtList(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmtNum(x)
	}
	return "{" + strings.Join(s, ", ") + "}"
}

// Summary describes d in one line: rows, dimension, and the label counts
// (at most 10 distinct integer labels) or the target's range and mean.
func (d *Dataset) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d rows × %d features", d.Name, d.Len(), d.Dim)
	if d.Len() == 0 {
		return b.String()
	}
	vals := d.distinct()
	integral := true
	for _, v := range vals {
		integral = integral && v == math.Trunc(v)
	}
	if integral && len(vals) <= 10 {
		c := d.LabelCounts()
		b.WriteString(", labels ")
		for k, v := range vals {
			if k > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s: %d", fmtNum(v), c[v])
		}
		return b.String()
	}
	sum := 0.0
	for _, y := range d.Y {
		sum += y
	}
	name := d.LabelName
	if name == "" {
		name = "target"
	}
	fmt.Fprintf(&b, ", %s in [%.6g, %.6g], mean %.6g", name, vals[0], vals[len(vals)-1], sum/float64(d.Len()))
	return b.String()
}
