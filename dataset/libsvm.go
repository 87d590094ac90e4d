package dataset

import (
	"fmt"
)

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// parseLIBSVMLine parses one LIBSVM line, appending its 1-based indices and
// values to idx and val. The indices are bounded by lim.maxDim (Options.Dim
// if set, else MaxDim), checked digit by digit so that no index overflows.
// ok is false for a blank or comment-only line; msg is non-empty for a
// malformed line. Messages quote at most 40 bytes of the line (clip).
func parseLIBSVMLine(line []byte, lim limits, idx []int32, val []float64) (y float64, idxOut []int32, valOut []float64, ok bool, msg string) {
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
			return 0, idxOut, valOut, true, fmt.Sprintf("line starts with %s: missing label", clip(tok))
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
			return 0, idxOut, valOut, true, fmt.Sprintf("token %s is not index:value", clip(tok))
		}
		key := tok[:colon]
		if string(key) == "qid" {
			if !first {
				return 0, idxOut, valOut, true, fmt.Sprintf("%s: qid must directly follow the label", clip(tok))
			}
			continue
		}
		j := 0
		for _, c := range key {
			if c < '0' || c > '9' {
				j = -1
				break
			}
			if j <= lim.maxDim { // lim.maxDim <= MaxIndex, so j*10+9 cannot overflow
				j = j*10 + int(c-'0')
			}
		}
		switch {
		case j < 0 || len(key) == 0:
			return 0, idxOut, valOut, true, fmt.Sprintf("token %s: feature index %s is not a positive integer", clip(tok), clip(key))
		case j > lim.maxDim && lim.dim > 0:
			return 0, idxOut, valOut, true, fmt.Sprintf("feature index %s exceeds the dimension %d", digits(key), lim.dim)
		case j > lim.maxDim:
			return 0, idxOut, valOut, true, fmt.Sprintf("feature index %s is above the limit %d on an inferred dimension (Options.MaxDim); if the file really has that many features, give the dimension (okstream --dim, Options.Dim)", digits(key), lim.maxDim)
		case j == 0:
			return 0, idxOut, valOut, true, fmt.Sprintf("token %s: feature index 0 (indices start at 1)", clip(tok))
		case j <= prev:
			return 0, idxOut, valOut, true, fmt.Sprintf("feature index %d after %d (indices must increase)", j, prev)
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

// digits returns the decimal digits key (an index above a limit) for a
// message: as they are if short, else shortened.
func digits(key []byte) string {
	if len(key) <= 20 {
		return string(key)
	}
	return string(key[:20]) + "... (" + fmt.Sprint(len(key)) + " digits)"
}

// libsvmDim makes a complete pass over a LIBSVM file and returns its largest
// feature index, or the first ParseError. Indices are bounded by lim (lim.dim
// is 0 here, so by MaxDim).
func libsvmDim(path string, open opener, lim limits) (int, error) {
	src, err := openSource(path, open, lim.maxLine)
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
		_, idx, val, ok, msg = parseLIBSVMLine(line, lim, idx[:0], val[:0])
		if msg != "" {
			return 0, &ParseError{File: path, Line: src.line, Msg: msg}
		}
		if ok && len(idx) > 0 {
			dim = max(dim, int(idx[len(idx)-1]))
		}
	}
	return dim, src.err()
}
