package codec

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestDecodeEventJSONPrefix: an object followed by anything decodes as the
// object alone does and reports its end; an error inside it is the whole
// record's; MaxBytes bounds the object, not b.
func TestDecodeEventJSONPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(44, 2))
	tails := []string{"", ",", "]", `,{"v":1,"x":[1]}]`, " \n ,garbage", "}", "{"}
	for i := 0; i < 3000; i++ {
		var ev Event
		switch i % 3 {
		case 0:
			ev = randomEvent(rng, 1+rng.IntN(30))
		case 1:
			ev = randomEventV2(rng, 1+rng.IntN(30))
		default:
			ev = randomNamedEvent(rng, rng.IntN(10))
		}
		rec, err := AppendEventJSON(nil, &ev)
		if err != nil {
			continue // a string JSON cannot carry
		}
		if i%5 == 0 && len(rec) > 2 { // a damaged record
			rec[rng.IntN(len(rec))] = `"{}[],:\0a1.-e`[rng.IntN(14)]
		}
		var want Event
		wantErr := NewDecoder(Limits{}).DecodeEventJSON(rec, &want)
		tail := tails[rng.IntN(len(tails))]
		lead := []byte(" \n")[:rng.IntN(3)] // offsets in errors count it
		b := append(append(lead[:len(lead):len(lead)], rec...), tail...)
		var got Event
		n, err := NewDecoder(Limits{}).DecodeEventJSONPrefix(b, &got)
		switch {
		case wantErr == nil:
			if err != nil || n != len(lead)+len(rec) || !eventsEqualF(&got, &want) {
				t.Fatalf("%.200s: n %d (want %d), %v\n got %+v\nwant %+v", b, n, len(lead)+len(rec), err, got, want)
			}
		case err == nil:
			// The damage closed the object early: what was read must be a
			// valid record on its own.
			var alone Event
			if err := NewDecoder(Limits{}).DecodeEventJSON(b[:n], &alone); err != nil || !eventsEqualF(&alone, &got) {
				t.Fatalf("%.200s: prefix of %d accepted, alone %v", b, n, err)
			}
		case len(lead) == 0 && tail == "" && ReasonOf(wantErr) != ReasonTrailingBytes && err.Error() != wantErr.Error():
			// On the record alone, the same problem as the whole
			// record's, unless that was something after the object (a
			// damaged record can reach into a tail).
			t.Errorf("%.200s: error %v, whole record's %v", b, err, wantErr)
		}
	}
	// MaxBytes: the object's bytes, not b's.
	rec := []byte(`{"v":1,"x":[1.5,2.5,3.5]}`)
	b := append(append([]byte{}, rec...), bytes.Repeat([]byte(",{}"), 100)...)
	var ev Event
	if n, err := NewDecoder(Limits{MaxBytes: len(rec)}).DecodeEventJSONPrefix(b, &ev); err != nil || n != len(rec) {
		t.Fatalf("at the limit: n %d, %v", n, err)
	}
	_, err := NewDecoder(Limits{MaxBytes: len(rec) - 1}).DecodeEventJSONPrefix(b, &ev)
	if ReasonOf(err) != ReasonOversized {
		t.Fatalf("over the limit: %v", err)
	}
	if werr := NewDecoder(Limits{MaxBytes: len(rec) - 1}).DecodeEventJSON(rec, &ev); ReasonOf(werr) != ReasonOversized {
		t.Fatalf("whole record over the limit: %v", werr)
	}
	// A well-formed object over the limit with a problem inside: oversized
	// first, as the whole-record decoder says.
	bad := []byte(`{"v":1,"x":"no","pad":"` + string(bytes.Repeat([]byte("a"), 100)) + `"},{}`)
	if _, err := NewDecoder(Limits{MaxBytes: 50}).DecodeEventJSONPrefix(bad, &ev); ReasonOf(err) != ReasonOversized {
		t.Fatalf("bad and over the limit: %v", err)
	}
	// Unterminated past the limit: what the first MaxBytes show.
	if _, err := NewDecoder(Limits{MaxBytes: 20}).DecodeEventJSONPrefix(bad[:60], &ev); ReasonOf(err) == "" || ReasonOf(err) == ReasonOversized {
		t.Fatalf("unterminated over the limit: %v", err)
	}
}
