package codec

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// om is a msgpack map with keys in the given order: key, value, key, value...
// Keys and values are encoded with the msgpack library's Encode, except that
// nested om and raw values are handled here.
type om []any

// raw is spliced into the output as it is.
type raw []byte

// f32 is encoded as a msgpack float32.
type f32 float32

func encodeTo(t testing.TB, buf *bytes.Buffer, enc *msgpack.Encoder, v any) {
	t.Helper()
	var err error
	switch v := v.(type) {
	case om:
		if len(v)%2 != 0 {
			t.Fatalf("om with odd length %d", len(v))
		}
		err = enc.EncodeMapLen(len(v) / 2)
		for _, x := range v {
			encodeTo(t, buf, enc, x)
		}
	case raw:
		buf.Write(v)
	case f32:
		err = enc.EncodeFloat32(float32(v))
	case []any:
		err = enc.EncodeArrayLen(len(v))
		for _, x := range v {
			encodeTo(t, buf, enc, x)
		}
	default:
		err = enc.Encode(v)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// mp encodes v (typically an om) to msgpack.
func mp(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	encodeTo(t, &buf, enc, v)
	return buf.Bytes()
}

func cat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

// eventsEqual compares events field by field, floats by their bits (so -0 and
// 0 differ), and nil and empty slices as different.
func eventsEqual(a, b *Event) bool {
	if a.Version != b.Version || a.ID != b.ID || a.HasTS != b.HasTS || a.TS != b.TS ||
		a.Key != b.Key || a.Ref != b.Ref || a.HasY != b.HasY || math.Float64bits(a.Y) != math.Float64bits(b.Y) {
		return false
	}
	if (a.X == nil) != (b.X == nil) || (a.XI == nil) != (b.XI == nil) || (a.XV == nil) != (b.XV == nil) {
		return false
	}
	return floatsEqual(a.X, b.X) && floatsEqual(a.XV, b.XV) && slicesEqual(a.XI, b.XI)
}

func floatsEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

func slicesEqual[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// randomEvent returns a valid event with features of dimension dim.
func randomEvent(rng *rand.Rand, dim int) Event {
	ev := Event{Version: 1}
	if rng.IntN(2) == 0 {
		ev.ID = randomString(rng)
	}
	if rng.IntN(2) == 0 {
		ev.TS, ev.HasTS = rng.Int64()>>rng.IntN(64)*int64(1-2*rng.IntN(2)), true
	}
	if rng.IntN(2) == 0 {
		ev.Key = randomString(rng)
	}
	if rng.IntN(2) == 0 {
		ev.Y, ev.HasY = randomFloat(rng), true
	}
	if rng.IntN(2) == 0 {
		ev.X = make([]float64, dim)
		for i := range ev.X {
			ev.X[i] = randomFloat(rng)
		}
		return ev
	}
	for j := 0; j < dim; j++ {
		if rng.IntN(3) == 0 || (j == dim-1 && len(ev.XI) == 0) {
			ev.XI = append(ev.XI, uint32(j))
			ev.XV = append(ev.XV, randomFloat(rng))
		}
	}
	return ev
}

// randomEventV2 returns a valid version 2 event: a feedback event a third of
// the time, otherwise an event with features of dimension dim.
func randomEventV2(rng *rand.Rand, dim int) Event {
	if rng.IntN(3) > 0 {
		ev := randomEvent(rng, dim)
		ev.Version = 2
		return ev
	}
	ev := Event{Version: 2, Ref: randomString(rng), Y: randomFloat(rng), HasY: true}
	if rng.IntN(2) == 0 {
		ev.ID = randomString(rng)
	}
	if rng.IntN(2) == 0 {
		ev.TS, ev.HasTS = rng.Int64()>>rng.IntN(64)*int64(1-2*rng.IntN(2)), true
	}
	if rng.IntN(2) == 0 {
		ev.Key = randomString(rng)
	}
	return ev
}

func randomFloat(rng *rand.Rand) float64 {
	switch rng.IntN(4) {
	case 0:
		return float64(rng.IntN(201) - 100) // integral values
	case 1:
		return math.Float64frombits(rng.Uint64() &^ (0x7ff << 52)) // tiny/subnormal, either sign
	}
	return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10))
}

func randomString(rng *rand.Rand) string {
	n := []int{1, 5, 31, 32, 255, 256, 70000}[rng.IntN(7)]
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	if rng.IntN(2) == 0 {
		for i := range b {
			b[i] = 'a' + b[i]%26
		}
	}
	return string(b)
}
