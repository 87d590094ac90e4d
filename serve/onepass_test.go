package serve

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"okstream/codec"
)

// checkOnePass: when decodeJSONBatch accepts a body, splitJSON accepts it
// too, with as many events, and each span decodes (DecodeEventJSON) to the
// event decodeJSONBatch handed to fn; when splitJSON accepts a body whose
// every span decodes and which holds at most max events, decodeJSONBatch
// accepts it (the one pass is taken whenever it can be).
func checkOnePass(t testing.TB, body []byte, max int, lim codec.Limits) {
	t.Helper()
	var got [][]byte
	var ev codec.Event
	n, ok := decodeJSONBatch(body, max, codec.NewDecoder(lim), &ev, func(i int) bool {
		if i != len(got) {
			t.Fatalf("%.200q: fn(%d) after %d events", body, i, len(got))
		}
		enc, err := codec.AppendEvent(nil, &ev)
		if err != nil {
			t.Fatalf("%.200q: event %d: %v", body, i, err)
		}
		got = append(got, enc)
		return true
	})
	spans, err := splitJSON(body, max, nil)
	allDecode := err == nil
	dec := codec.NewDecoder(lim)
	for i, sp := range spans {
		if err != nil {
			break
		}
		var want codec.Event
		if derr := dec.DecodeEventJSON(body[sp[0]:sp[1]], &want); derr != nil {
			allDecode = false
			if ok {
				t.Fatalf("%.200q: one pass accepted event %d, DecodeEventJSON refuses it: %v", body, i, derr)
			}
			break
		}
		if ok {
			enc, _ := codec.AppendEvent(nil, &want)
			if !bytes.Equal(enc, got[i]) {
				t.Fatalf("%.200q: event %d differs", body, i)
			}
		}
	}
	if ok && (err != nil || n != len(spans) || n != len(got)) {
		t.Fatalf("%.200q: one pass accepted %d events (fn saw %d), splitJSON %d, %v", body, n, len(got), len(spans), err)
	}
	if !ok && allDecode {
		t.Fatalf("%.200q: one pass refused a batch splitJSON and DecodeEventJSON accept", body)
	}
}

// TestOnePassMatchesSplit runs checkOnePass on batches of varied events
// (strings holding brackets, quotes and escapes; whitespace; the wrapped
// form) and on many damaged copies of them, with and without limits.
func TestOnePassMatchesSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 3))
	evs := benchEvents(6, 3, true)
	evs[1].ID = `a "quoted" [id] {x}\ end`
	evs[2].Key = "k\u00e9\n\t}"
	var bodies [][]byte
	for _, sep := range []string{",", " ,\n", "\t,"} {
		var b bytes.Buffer
		b.WriteString("[ ")
		for i := range evs {
			if i > 0 {
				b.WriteString(sep)
			}
			b.Write(eventJSON(t, &evs[i]))
		}
		b.WriteString(" ]\n")
		bodies = append(bodies, b.Bytes(), []byte(fmt.Sprintf(`{ "events" : %s}`, b.Bytes())))
	}
	bodies = append(bodies, []byte("[]"), []byte(`{"events":[]}`), []byte(`[{"v":1,"x":[1e999]}]`), []byte(`[{"v":1,"x":[1]} {"v":1}]`))
	lims := []codec.Limits{{}, {MaxBytes: 200}, {MaxBytes: 700}}
	const special = "{}[]\",:\\ \nae1.-0"
	for _, body := range bodies {
		for _, lim := range lims {
			for _, max := range []int{1, 3, 6, 100} {
				checkOnePass(t, body, max, lim)
			}
		}
		for k := 0; k < 3000; k++ {
			m := append([]byte(nil), body...)
			switch rng.IntN(4) {
			case 0:
				m[rng.IntN(len(m))] = special[rng.IntN(len(special))]
			case 1:
				m = m[:rng.IntN(len(m))]
			case 2:
				p := rng.IntN(len(m))
				m = append(m[:p], m[p+1:]...)
			default:
				p := rng.IntN(len(m) + 1)
				m = append(m[:p], append([]byte{special[rng.IntN(len(special))]}, m[p:]...)...)
			}
			checkOnePass(t, m, 1+rng.IntN(8), lims[rng.IntN(len(lims))])
		}
	}
}

// FuzzOnePass: checkOnePass on any body, with small limits.
func FuzzOnePass(f *testing.F) {
	f.Add([]byte(`[{"v":1,"x":[1,2]},{"v":1,"x":[3,4]}]`), uint8(3), uint16(0))
	f.Add([]byte(`{"events":[{"v":1,"key":"a\"]","x":[1]}]}`), uint8(1), uint16(30))
	f.Add([]byte(`[{"v":1,"x":[0.12345678901234567]} , {"v":2,"xi":[1],"xv":[2]}]`), uint8(8), uint16(40))
	f.Fuzz(func(t *testing.T, body []byte, max uint8, maxBytes uint16) {
		checkOnePass(t, body, 1+int(max%16), codec.Limits{MaxBytes: int(maxBytes)})
	})
}
