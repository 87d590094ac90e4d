package serve

import (
	"bytes"
	"net/http"
	"testing"

	"okstream/consumer"
)

// FuzzSplit: the batch splitters never panic on any body, and the spans
// they return are ordered, disjoint and inside the body, at most max of
// them; the handler answers any body with 200 or a 4xx, never a panic.
func FuzzSplit(f *testing.F) {
	f.Add([]byte(`[{"v":1,"x":[1,2]},{"v":1,"x":[3,4]}]`), true)
	f.Add([]byte(`{"events":[{"v":1,"key":"a\"]","x":[1]}]}`), true)
	f.Add([]byte{0x92, 0x81, 0xa1, 'v', 0x01, 0x81, 0xa1, 'v', 0x01}, false)
	f.Add([]byte{0x81, 0xa6, 'e', 'v', 'e', 'n', 't', 's', 0x91, 0x80}, false)
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff}, false)
	srv, err := New(Options{MaxBatch: 8})
	if err != nil {
		f.Fatal(err)
	}
	sc, err := consumer.NewScorer(consumer.ResetPayload()) // no models: every event decodes, routes and answers
	if err != nil {
		f.Fatal(err)
	}
	srv.Set(&Model{Scorer: sc, Source: SourceFile})
	h := srv.Handler()
	f.Fuzz(func(t *testing.T, body []byte, isJSON bool) {
		const max = 8
		split := splitMsgpack
		if isJSON {
			split = splitJSON
		}
		spans, _ := split(body, max, nil)
		if len(spans) > max {
			t.Fatalf("%d spans, max %d", len(spans), max)
		}
		prev := 0
		for _, sp := range spans {
			if sp[0] < prev || sp[1] < sp[0] || sp[1] > len(body) {
				t.Fatalf("span %v after %d in %d bytes", sp, prev, len(body))
			}
			prev = sp[1]
		}
		ct := "application/msgpack"
		if isJSON {
			ct = "application/json"
		}
		code, out := post(t, h, ct, "", bytes.NewReader(body))
		if code != http.StatusOK && (code < 400 || code >= 500) {
			t.Fatalf("status %d: %s", code, out)
		}
	})
}
