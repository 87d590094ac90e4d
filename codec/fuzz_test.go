package codec

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// FuzzDecodeEvent checks that DecodeEvent never panics, that every error is a
// *Error with a known Reason, and that a decoded event encodes and decodes
// back to an equal event (and to canonical bytes that are a fixed point).
// Run with: go test -run xxx -fuzz FuzzDecodeEvent -fuzztime 60s ./codec/
func FuzzDecodeEvent(f *testing.F) {
	for _, tc := range goldenEvents {
		f.Add(unhex(f, tc.hex), 0)
	}
	f.Add(unhex(f, goldPyInts), 7)
	f.Add(unhex(f, goldPyFloat32), 3)
	for _, tc := range reasonCases(f) {
		if len(tc.in) < 4096 {
			f.Add(tc.in, tc.lim.Dim)
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 8; i++ {
		ev := randomEvent(rng, 1+rng.IntN(12))
		if len(ev.ID) > 300 || len(ev.Key) > 300 {
			continue
		}
		b, _ := AppendEvent(nil, &ev)
		f.Add(b, 0)
	}
	known := map[Reason]bool{}
	for _, r := range Reasons() {
		known[r] = true
	}
	f.Fuzz(func(t *testing.T, b []byte, dim int) {
		dim %= 1 << 16
		lim := Limits{Dim: dim, MaxFeatures: 1 << 12}
		d := NewDecoder(lim)
		var ev Event
		err := d.DecodeEvent(b, &ev)
		if err != nil {
			if r := ReasonOf(err); !known[r] {
				t.Fatalf("error %v has unknown reason %q", err, r)
			}
			return
		}
		enc, err := AppendEvent(nil, &ev)
		if err != nil {
			t.Fatalf("decoded event %+v does not encode: %v", ev, err)
		}
		var ev2 Event
		if err := d.DecodeEvent(enc, &ev2); err != nil {
			t.Fatalf("re-encoded %x does not decode: %v", enc, err)
		}
		if !eventsEqual(&ev, &ev2) {
			t.Fatalf("round trip\n got %+v\nwant %+v", ev2, ev)
		}
		enc2, _ := AppendEvent(nil, &ev2)
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("canonical bytes are not a fixed point:\n%x\n%x", enc, enc2)
		}
		// Decoding again into the same (now populated) Event gives the same result.
		if err := d.DecodeEvent(b, &ev2); err != nil || !eventsEqual(&ev, &ev2) {
			t.Fatalf("decoding into a reused Event differs: %v", err)
		}
		if lim.Dim > 0 {
			_ = ev.Dense(nil, lim.Dim) // must not panic for an event decoded with Dim
		}
	})
}

// FuzzDecodePrediction checks that DecodePrediction never panics and that a
// decoded prediction re-encodes to bytes that decode to the same prediction.
func FuzzDecodePrediction(f *testing.F) {
	for _, tc := range goldenPredictions {
		f.Add(unhex(f, tc.hex))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodePrediction(b)
		if err != nil {
			if ReasonOf(err) == "" {
				t.Fatalf("error %v is not a *Error", err)
			}
			return
		}
		enc := AppendPrediction(nil, &p)
		p2, err := DecodePrediction(enc)
		if err != nil {
			t.Fatalf("re-encoded %x does not decode: %v", enc, err)
		}
		if !bytes.Equal(enc, AppendPrediction(nil, &p2)) {
			t.Fatalf("canonical bytes are not a fixed point")
		}
	})
}
