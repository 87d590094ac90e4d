package codec

import (
	"sync"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
)

// appendWriter is an io.Writer and io.ByteWriter that appends to a slice; it
// never fails, so the msgpack Encoder writing to it never fails either.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

func (w *appendWriter) WriteByte(c byte) error {
	w.b = append(w.b, c)
	return nil
}

// writer encodes with the msgpack library's Encoder onto an appendWriter.
// Every method uses the smallest msgpack form for lengths and integers (as the
// msgpack spec recommends and Python's msgpack does) and float64 for floats,
// so the bytes are a pure function of the values written. Errors from the
// Encoder are discarded because appendWriter cannot fail.
type writer struct {
	w   appendWriter
	enc *msgpack.Encoder
}

var writerPool = sync.Pool{New: func() any {
	w := new(writer)
	w.enc = msgpack.NewEncoder(&w.w)
	return w
}}

func getWriter(dst []byte) *writer {
	w := writerPool.Get().(*writer)
	w.w.b = dst
	return w
}

// finish returns the bytes written and puts w back in the pool.
func (w *writer) finish() []byte {
	b := w.w.b
	w.w.b = nil
	writerPool.Put(w)
	return b
}

func (w *writer) mapLen(n int)    { _ = w.enc.EncodeMapLen(n) }
func (w *writer) arrayLen(n int)  { _ = w.enc.EncodeArrayLen(n) }
func (w *writer) int(v int64)     { _ = w.enc.EncodeInt(v) }
func (w *writer) uint(v uint64)   { _ = w.enc.EncodeUint(v) }
func (w *writer) float(v float64) { _ = w.enc.EncodeFloat64(v) }
func (w *writer) key(k string)    { _ = w.enc.EncodeString(k) }
func (w *writer) floats(v []float64) {
	w.arrayLen(len(v))
	for _, f := range v {
		w.float(f)
	}
}

// text writes s as a msgpack str if it is valid UTF-8 and as bin otherwise,
// so that every consumer (Python's msgpack decodes str as UTF-8 and fails on
// anything else) can read it. The decoder accepts both.
func (w *writer) text(s string) {
	if utf8.ValidString(s) {
		_ = w.enc.EncodeString(s)
		return
	}
	_ = w.enc.EncodeBytesLen(len(s))
	w.w.b = append(w.w.b, s...)
}
