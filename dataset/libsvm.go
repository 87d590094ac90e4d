package dataset

import (
	"fmt"
	"math"
)

// maxIndex is the largest LIBSVM feature index accepted.
const maxIndex = math.MaxInt32

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// parseLIBSVMLine parses one LIBSVM line, appending its 1-based indices and
// values to idx and val. dim > 0 bounds the indices. ok is false for a blank
// or comment-only line; msg is non-empty for a malformed line.
func parseLIBSVMLine(line []byte, dim int, idx []int32, val []float64) (y float64, idxOut []int32, valOut []float64, ok bool, msg string) {
	idxOut, valOut = idx, val
	i, n := 0, len(line)
	next := func() []byte { // the next token, or nil at the end / a comment
		for i < n && isSpace(line[i]) {
			i++
		}
		if i == n || line[i] == '#' {
			return nil
		}
		s := i
		for i < n && !isSpace(line[i]) && line[i] != '#' {
			i++
		}
		return line[s:i]
	}
	tok := next()
	if tok == nil {
		return 0, idxOut, valOut, false, ""
	}
	for _, c := range tok {
		if c == ':' {
			return 0, idxOut, valOut, true, fmt.Sprintf("line starts with %q: missing label", tok)
		}
	}
	y, msg = parseNum(tok)
	if msg != "" {
		return 0, idxOut, valOut, true, "label: " + msg
	}
	prev := 0
	for first := true; ; first = false {
		tok = next()
		if tok == nil {
			return y, idxOut, valOut, true, ""
		}
		colon := -1
		for k, c := range tok {
			if c == ':' {
				colon = k
				break
			}
		}
		if colon < 0 {
			return 0, idxOut, valOut, true, fmt.Sprintf("token %q is not index:value", tok)
		}
		key := tok[:colon]
		if string(key) == "qid" {
			if !first {
				return 0, idxOut, valOut, true, fmt.Sprintf("%q: qid must directly follow the label", tok)
			}
			continue
		}
		j := 0
		for _, c := range key {
			if c < '0' || c > '9' {
				j = -1
				break
			}
			j = j*10 + int(c-'0')
			if j > maxIndex {
				return 0, idxOut, valOut, true, fmt.Sprintf("feature index %q too large", key)
			}
		}
		switch {
		case j < 0 || len(key) == 0:
			return 0, idxOut, valOut, true, fmt.Sprintf("token %q: feature index %q is not a positive integer", tok, key)
		case j == 0:
			return 0, idxOut, valOut, true, fmt.Sprintf("token %q: feature index 0 (indices start at 1)", tok)
		case j <= prev:
			return 0, idxOut, valOut, true, fmt.Sprintf("feature index %d after %d (indices must increase)", j, prev)
		case dim > 0 && j > dim:
			return 0, idxOut, valOut, true, fmt.Sprintf("feature index %d exceeds the dimension %d", j, dim)
		}
		v, m := parseNum(tok[colon+1:])
		if m != "" {
			return 0, idxOut, valOut, true, fmt.Sprintf("feature %d: %s", j, m)
		}
		prev = j
		idxOut = append(idxOut, int32(j))
		valOut = append(valOut, v)
	}
}

// libsvmDim makes a complete pass over a LIBSVM file and returns its largest
// feature index, or the first ParseError.
func libsvmDim(path string) (int, error) {
	src, err := openSource(path)
	if err != nil {
		return 0, err
	}
	defer src.close()
	var idx []int32
	var val []float64
	dim := 0
	for {
		line, more := src.next()
		if !more {
			break
		}
		var ok bool
		var msg string
		_, idx, val, ok, msg = parseLIBSVMLine(line, 0, idx[:0], val[:0])
		if msg != "" {
			return 0, &ParseError{File: path, Line: src.line, Msg: msg}
		}
		if ok && len(idx) > 0 {
			dim = max(dim, int(idx[len(idx)-1]))
		}
	}
	return dim, src.err()
}
