package serve

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"

	"okstream/codec"
)

// A request's batch is an array of events, or a map whose one key "events"
// holds the array, in JSON or msgpack. splitJSON and splitMsgpack find each
// event's bytes (its span in the body) without decoding it: codec's
// decoder then decodes and validates each event as the pipeline does. They
// never recurse and never allocate from a declared size: a count the body
// could not hold, or a batch over max events, is refused before anything
// is kept for it.

var errTrailing = errors.New("bytes after the batch")

// tooMany is the 413 of a batch over max events.
func tooMany(max int) *apiError {
	return failf(http.StatusRequestEntityTooLarge, "more than %d events in one request (send smaller batches)", max)
}

// splitJSON returns the spans of the events of a JSON batch, appended to
// spans.
func splitJSON(b []byte, max int, spans [][2]int) ([][2]int, error) {
	err := walkJSON(b, func(i, start int) (int, error) {
		end, err := jsonValueEnd(b, start)
		if err != nil {
			return 0, err
		}
		if i == max {
			return 0, tooMany(max)
		}
		spans = append(spans, [2]int{start, end})
		return end, nil
	})
	return spans, err
}

// errAbandon stops decodeJSONBatch's walk without a message of its own.
var errAbandon = errors.New("abandoned")

// decodeJSONBatch decodes the events of a JSON batch in place, in one pass
// (no span finding before): each into ev with dec.DecodeEventJSONPrefix,
// then fn(i), which reports whether to go on. ok is false at the first
// problem of any kind (the batch's syntax, an event's error, more than max
// events, fn's false): the caller then serves the request through
// splitJSON and DecodeEventJSON, which find and report the problem with
// their precedence. When ok is true, splitJSON would have accepted b and
// found exactly the events decoded, in order.
func decodeJSONBatch(b []byte, max int, dec *codec.Decoder, ev *codec.Event, fn func(i int) bool) (n int, ok bool) {
	err := walkJSON(b, func(i, start int) (int, error) {
		if i == max || start >= len(b) || b[start] != '{' {
			return 0, errAbandon
		}
		m, err := dec.DecodeEventJSONPrefix(b[start:], ev)
		if err != nil || !fn(i) {
			return 0, errAbandon
		}
		n = i + 1
		return start + m, nil
	})
	return n, err == nil
}

// walkJSON checks the frame of a JSON batch (an array, or {"events": [...]},
// and nothing after it) and calls elem(i, start) for the i-th element,
// which starts at b[start] (not whitespace) and ends where elem says. Its
// first error is elem's (prefixed with the event's index) or the frame's.
func walkJSON(b []byte, elem func(i, start int) (end int, err error)) error {
	i := skipWS(b, 0)
	wrapped := false
	if i < len(b) && b[i] == '{' {
		i = skipWS(b, i+1)
		const key = `"events"`
		if len(b)-i < len(key) || string(b[i:i+len(key)]) != key {
			return errors.New(`an object must have one key, "events", holding the array of events`)
		}
		i = skipWS(b, i+len(key))
		if i >= len(b) || b[i] != ':' {
			return errors.New(`want ':' after "events"`)
		}
		i = skipWS(b, i+1)
		wrapped = true
	}
	if i >= len(b) || b[i] != '[' {
		return errors.New("want an array of events")
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		i++
	} else {
		for n := 0; ; n++ {
			end, err := elem(n, i)
			if err != nil {
				var ae *apiError
				if errors.As(err, &ae) || err == errAbandon {
					return err
				}
				return fmt.Errorf("event %d: %w", n, err)
			}
			i = skipWS(b, end)
			if i >= len(b) {
				return errors.New("unterminated array")
			}
			if b[i] == ']' {
				i++
				break
			}
			if b[i] != ',' {
				return fmt.Errorf("event %d: want ',' or ']' after it, got %q", n, b[i])
			}
			i = skipWS(b, i+1)
		}
	}
	if wrapped {
		i = skipWS(b, i)
		if i >= len(b) || b[i] != '}' {
			return errors.New(`want '}' after the "events" array (no other key)`)
		}
		i++
	}
	if skipWS(b, i) != len(b) {
		return errTrailing
	}
	return nil
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonValueEnd returns the end of the JSON value at b[i:]: an object or
// array to its matching close (by depth: a mismatched bracket is left to
// the event decoder, which parses the span), a string to its closing
// quote, a literal or number to the next delimiter.
func jsonValueEnd(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errors.New("missing value")
	}
	switch b[i] {
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			i = skipPlain(b, i)
			if i >= len(b) {
				break
			}
			switch b[i] {
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, nil
				}
			case '"':
				end, err := jsonStringEnd(b, i)
				if err != nil {
					return 0, err
				}
				i = end - 1
			}
		}
		return 0, errors.New("unterminated object or array")
	case '"':
		return jsonStringEnd(b, i)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != ']' && b[j] != '}' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return 0, fmt.Errorf("unexpected %q", b[i])
	}
	return j, nil
}

// jsonStringEnd returns the end of the string whose quote is at b[i].
func jsonStringEnd(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		j = skipStringPlain(b, j)
		if j >= len(b) {
			break
		}
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errors.New("unterminated string")
}

// Eight bytes at a time (SWAR): the scans above only stop at a few bytes,
// so they test eight of them as one uint64 for any byte of interest and
// step over the word when there is none.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// hasByte reports whether any byte of x equals c: x^(c·ones) has a zero
// byte exactly then, and (v - ones) &^ v & highs is nonzero exactly when v
// has a zero byte.
func hasByte(x uint64, c byte) bool {
	v := x ^ uint64(c)*ones
	return (v-ones)&^v&highs != 0
}

// skipPlain returns the first index from i whose 8-byte word holds a
// bracket or a quote, or whose word runs past b; the caller goes on byte
// by byte from there. ORing 0x20 into every byte maps '[' and ']' onto
// '{' and '}'.
func skipPlain(b []byte, i int) int {
	for len(b)-i >= 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if hasByte(x|0x20*ones, '{') || hasByte(x|0x20*ones, '}') || hasByte(x, '"') {
			break
		}
		i += 8
	}
	return i
}

// skipStringPlain is skipPlain inside a string: it stops at a word holding
// a quote or a backslash.
func skipStringPlain(b []byte, i int) int {
	for len(b)-i >= 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if hasByte(x, '"') || hasByte(x, '\\') {
			break
		}
		i += 8
	}
	return i
}

// splitMsgpack returns the spans of the events of a msgpack batch,
// appended to spans.
func splitMsgpack(b []byte, max int, spans [][2]int) ([][2]int, error) {
	i := 0
	c, n, i, err := mpHeader(b, i)
	if err != nil {
		return spans, err
	}
	if c == mpMap {
		if n != 1 {
			return spans, errors.New(`a map must have one key, "events", holding the array of events`)
		}
		var k, klen int
		if k, klen, i, err = mpHeader(b, i); err != nil {
			return spans, err
		}
		if k != mpStr || string(b[i:i+klen]) != "events" {
			return spans, errors.New(`a map must have one key, "events", holding the array of events`)
		}
		if c, n, i, err = mpHeader(b, i+klen); err != nil {
			return spans, err
		}
	}
	if c != mpArray {
		return spans, errors.New("want an array of events")
	}
	if n > max {
		return spans, tooMany(max)
	}
	if n > len(b)-i {
		return spans, fmt.Errorf("the array declares %d events in %d bytes", n, len(b)-i)
	}
	for range n {
		end, err := mpValueEnd(b, i)
		if err != nil {
			return spans, fmt.Errorf("event %d: %w", len(spans), err)
		}
		spans = append(spans, [2]int{i, end})
		i = end
	}
	if i != len(b) {
		return spans, errTrailing
	}
	return spans, nil
}

// Kinds of msgpack headers (mpHeader).
const (
	mpScalar = iota // nil, bool, a number: no payload beyond the header
	mpStr           // str, bin, ext: n payload bytes
	mpArray         // n values
	mpMap           // n pairs
)

// mpHeader reads the header at b[i]: its kind, its count (payload bytes,
// values or pairs) and the index after it. The count of a str, bin or ext
// is checked against the bytes left.
func mpHeader(b []byte, i int) (kind, n, next int, err error) {
	if i >= len(b) {
		return 0, 0, 0, errors.New("truncated")
	}
	c := b[i]
	i++
	be := func(size int) (int, error) {
		if len(b)-i < size {
			return 0, errors.New("truncated")
		}
		v := 0
		for _, x := range b[i : i+size] {
			v = v<<8 | int(x)
		}
		i += size
		if v < 0 { // 8 bytes over MaxInt
			return 0, errors.New("count out of range")
		}
		return v, nil
	}
	payload := func(n int, err error) (int, int, int, error) {
		if err != nil {
			return 0, 0, 0, err
		}
		if n > len(b)-i {
			return 0, 0, 0, fmt.Errorf("a value of %d bytes in %d", n, len(b)-i)
		}
		return mpStr, n, i, nil
	}
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		return mpScalar, 0, i, nil
	case c&0xf0 == 0x80:
		return mpMap, int(c & 0x0f), i, nil
	case c&0xf0 == 0x90:
		return mpArray, int(c & 0x0f), i, nil
	case c&0xe0 == 0xa0:
		return payload(int(c&0x1f), nil)
	}
	switch c {
	case 0xcc, 0xd0: // uint8, int8
		return payload(1, nil)
	case 0xcd, 0xd1:
		return payload(2, nil)
	case 0xca, 0xce, 0xd2:
		return payload(4, nil)
	case 0xcb, 0xcf, 0xd3:
		return payload(8, nil)
	case 0xc4, 0xd9: // bin8, str8
		return payload(be(1))
	case 0xc5, 0xda:
		return payload(be(2))
	case 0xc6, 0xdb:
		return payload(be(4))
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext: type byte + 1..16
		return payload(1+1<<(c-0xd4), nil)
	case 0xc7, 0xc8, 0xc9: // ext 8/16/32: type byte + n
		n, err := be(1 << (c - 0xc7))
		return payload(n+1, err)
	case 0xdc, 0xdd:
		n, err := be(2 << (c - 0xdc))
		return mpArray, n, i, err
	case 0xde, 0xdf:
		n, err := be(2 << (c - 0xde))
		return mpMap, n, i, err
	}
	return 0, 0, 0, fmt.Errorf("byte %#x is not a msgpack type", c)
}

// mpValueEnd returns the end of the msgpack value at b[i:], iteratively:
// pending counts the values still to skip, and a count the bytes left
// cannot hold (every value takes a byte) is refused at once.
func mpValueEnd(b []byte, i int) (int, error) {
	pending := 1
	for pending > 0 {
		kind, n, next, err := mpHeader(b, i)
		if err != nil {
			return 0, err
		}
		pending--
		i = next
		switch kind {
		case mpStr:
			i += n
		case mpArray:
			pending += n
		case mpMap:
			pending += 2 * n
		}
		if pending > len(b)-i {
			return 0, fmt.Errorf("declares %d more values in %d bytes", pending, len(b)-i)
		}
	}
	return i, nil
}
