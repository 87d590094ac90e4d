package dataset

import (
	"errors"
	"fmt"
	"io"
)

// Example is one row of a file.
type Example struct {
	X    []float64 // dense features, len Dim(); freshly allocated, owned by the caller
	Y    float64   // the label as parsed
	Line int       // 1-based line number in the file
}

// Reader streams the rows of a file in order, one at a time, in memory that
// does not grow with the file. It is not safe for concurrent use.
type Reader struct {
	src    *lineSource
	format Format
	dim    int
	lim    limits

	// LIBSVM scratch.
	idx []int32
	val []float64

	// CSV.
	lay         *csvLayout
	fields      [][]byte
	pending     []byte // first data row, read by Open
	pendingLine int

	err error // sticky I/O error
}

// Open opens path for streaming. For a LIBSVM file with opts.Dim == 0 it
// first reads the whole file once to find the dimension (and fails on the
// first malformed line, or on an index above opts.MaxDim); for a CSV file it
// reads the header and checks the options against it. Every Example then
// allocates one row of Dim float64s; Open refuses a Dim whose single row
// exceeds opts.MaxDenseBytes. Call Close when done.
func Open(path string, opts Options) (*Reader, error) {
	return open(path, fileOpener(path), opts)
}

func open(path string, op opener, opts Options) (*Reader, error) {
	format, lim, err := resolveFormat(path, op, opts)
	if err != nil {
		return nil, err
	}
	if format == FormatJSONL || opts.Named {
		return nil, fmt.Errorf("dataset: %s: named features and JSON lines are read whole (Load), not streamed", path)
	}
	r := &Reader{format: format, lim: lim}
	switch format {
	case FormatLIBSVM:
		r.dim = opts.Dim
		if r.dim == 0 {
			if r.dim, err = libsvmDim(path, op, lim); err != nil {
				return nil, err
			}
		}
		if err := lim.checkDense(path, 1, r.dim, 0, 0); err != nil {
			return nil, err
		}
		if r.src, err = openSource(path, op, lim.maxLine); err != nil {
			return nil, err
		}
	case FormatCSV:
		if r.src, err = openSource(path, op, lim.maxLine); err != nil {
			return nil, err
		}
		r.lay, r.pending, r.pendingLine, err = setupCSV(r.src, opts, lim)
		if err != nil {
			r.src.close()
			return nil, err
		}
		r.dim = len(r.lay.features)
	}
	return r, nil
}

// resolveFormat checks opts and returns the file's format and the limits.
func resolveFormat(path string, open opener, opts Options) (Format, limits, error) {
	lim, err := opts.limits(path)
	if err != nil {
		return 0, lim, err
	}
	switch opts.Format {
	case FormatAuto:
		f, err := detectFormat(path, open, lim.maxLine)
		return f, lim, err
	case FormatLIBSVM, FormatCSV, FormatJSONL:
		return opts.Format, lim, nil
	}
	return 0, lim, fmt.Errorf("dataset: %s: unknown Format %d", path, opts.Format)
}

// Format returns the file's format (never FormatAuto).
func (r *Reader) Format() Format { return r.format }

// Dim returns the number of features of every Example.
func (r *Reader) Dim() int { return r.dim }

// FeatureNames returns the CSV header names of the feature columns, in
// order, or nil (LIBSVM, or CSV without a header).
func (r *Reader) FeatureNames() []string {
	if r.lay == nil {
		return nil
	}
	return r.lay.featureNames()
}

// LabelName returns the CSV header name of the label column, or "".
func (r *Reader) LabelName() string {
	if r.lay == nil {
		return ""
	}
	return r.lay.labelName()
}

// Next returns the next row, or io.EOF after the last one. A malformed line
// gives a *ParseError; Next may be called again to continue with the line
// after it. Any other error is final and is returned again by later calls.
func (r *Reader) Next() (Example, error) {
	if r.err != nil {
		return Example{}, r.err
	}
	if r.src == nil || r.src.rc == nil {
		return Example{}, errors.New("dataset: Next on a closed Reader")
	}
	if r.format == FormatCSV {
		return r.nextCSV()
	}
	for {
		line, ok := r.src.next()
		if !ok {
			return Example{}, r.end()
		}
		var y float64
		var msg string
		y, r.idx, r.val, ok, msg = parseLIBSVMLine(line, limits{dim: r.dim, maxDim: r.dim}, r.idx[:0], r.val[:0])
		if msg != "" {
			return Example{}, &ParseError{File: r.src.path, Line: r.src.line, Msg: msg}
		}
		if !ok {
			continue
		}
		x := make([]float64, r.dim)
		for k, j := range r.idx {
			x[j-1] = r.val[k]
		}
		return Example{X: x, Y: y, Line: r.src.line}, nil
	}
}

func (r *Reader) nextCSV() (Example, error) {
	line, lineNo := r.pending, r.pendingLine
	r.pending = nil
	for line == nil {
		b, ok := r.src.next()
		if !ok {
			return Example{}, r.end()
		}
		if isBlank(b) || isComment(b) {
			continue
		}
		line, lineNo = b, r.src.line
	}
	x := make([]float64, r.dim)
	var y float64
	var err error
	y, r.fields, err = r.lay.parseRow(line, lineNo, x, r.fields, nil)
	if err != nil {
		return Example{}, err
	}
	return Example{X: x, Y: y, Line: lineNo}, nil
}

func (r *Reader) end() error {
	if err := r.src.err(); err != nil {
		r.err = err
		return err
	}
	return io.EOF
}

// Close closes the file.
func (r *Reader) Close() error {
	if r.src == nil {
		return nil
	}
	return r.src.close()
}
