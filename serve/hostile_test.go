package serve

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"okstream/consumer"
)

// endless is a body of n bytes: '[' then copies of one event, comma
// separated (never closed); it counts what was read.
type endless struct {
	n, read int
	unit    []byte
	pos     int
}

func (e *endless) Read(p []byte) (int, error) {
	if e.read >= e.n {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && e.read < e.n {
		if e.read == 0 {
			p[k] = '['
		} else {
			p[k] = e.unit[e.pos]
			e.pos = (e.pos + 1) % len(e.unit)
		}
		k++
		e.read++
	}
	return k, nil
}

// Hostile requests get 4xx answers with a JSON error, never a panic, and
// the memory a request takes is bounded by the body limit: a 100 MB body
// is read no further than the limit (+ the reader's last chunk) and
// allocates a few times the limit at most; a msgpack array that declares
// 4 billion events allocates nothing for them.
func TestServeHostileInputs(t *testing.T) {
	_, cfg, cps := trained(t, 2, 200)
	const limit = 64 << 10
	tokens := [][]byte{[]byte("0123456789abcdef0123456789abcdef")}
	srv := serverOf(t, Options{MaxBodyBytes: limit, MaxBatch: 50, Tokens: tokens}, cps, cfg.Input)
	h := srv.Handler()
	auth := []string{"Authorization", "Bearer " + string(tokens[0])}
	good := events(3, 4, "g", false)
	one := eventJSON(t, &good[0])
	deep := append(bytes.Repeat([]byte{0x91}, 1<<15), 0xc0)
	cases := []struct {
		name, ct, query string
		body            []byte
		code            int
		want            string
		noAuth          bool
	}{
		{"no token", "", "", jsonBatch(t, good), 401, "bearer token", true},
		{"too many events", "", "", jsonBatch(t, events(51, 1, "x", false)), 413, "more than 50 events", false},
		{"too many msgpack events", "application/msgpack", "", []byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0x80}, 413, "more than 50 events", false},
		{"malformed JSON", "", "", []byte(`[{"v":1,"x":[1,2,3,4,5]},`), 400, "malformed json", false},
		{"JSON not an array", "", "", []byte(`{"x":[1]}`), 400, "events", false},
		{"JSON trailing bytes", "", "", append(jsonBatch(t, good), " x"...), 400, "after the batch", false},
		{"JSON event not an object", "", "", []byte(`[1]`), 400, `"event":0`, false},
		{"JSON bad event", "", "", []byte(`[` + string(one) + `,{"v":1,"x":[1,2,3,4,5],"y":"nan"}]`), 400, `"event":1`, false},
		{"malformed msgpack", "application/msgpack", "", []byte{0x92, 0x80}, 400, "declares 2 events in 1 bytes", false},
		{"msgpack not a msgpack type", "application/msgpack", "", []byte{0x91, 0xc1}, 400, "not a msgpack type", false},
		{"msgpack nesting", "application/msgpack", "", append([]byte{0x91}, deep...), 400, `"event":0`, false},
		{"msgpack string past the end", "application/msgpack", "", []byte{0x91, 0xdb, 0xff, 0xff, 0xff, 0xff, 'a'}, 400, "bytes in", false},
		{"wrong dimension", "", "", []byte(`[{"v":1,"key":"k","x":[1,2,3]}]`), 400, "dimension", false},
		{"non-finite value", "", "", []byte(`[{"v":1,"x":[1,2,3,4,1e999]}]`), 400, `"event":0`, false},
		{"beyond the value limit", "", "", []byte(`[{"v":1,"x":[1,2,3,4,1e300]}]`), 400, `"reason"`, false},
		{"feedback event", "", "", []byte(`[{"v":2,"key":"k","ref":"a","y":1}]`), 400, "feedback", false},
		{"named features on dense models", "", "", []byte(`[{"v":3,"key":"k","f":{"a":1}}]`), 400, "named", false},
		{"unknown model", "", "?model=nope", jsonBatch(t, good), 404, `unknown model \"nope\"`, false},
		{"bad partition", "", "?partition=x", jsonBatch(t, good), 400, "partition", false},
		{"absent partition", "", "?partition=7", jsonBatch(t, good), 404, "no model of partition 7", false},
		{"keyless event", "", "", []byte(`[{"v":1,"x":[1,2,3,4,5]}]`), 400, "no key", false},
		{"content type", "text/plain", "", jsonBatch(t, good), 415, "application/json", false},
		{"body too large", "", "", append([]byte("["), bytes.Repeat(append(one, ','), limit/len(one)+1)...), 413, "over 65536 bytes", false},
	}
	for _, c := range cases {
		hdr := auth
		if c.noAuth {
			hdr = nil
		}
		code, out := post(t, h, c.ct, c.query, bytes.NewReader(c.body), hdr...)
		var e map[string]any
		if code != c.code || json.Unmarshal(out, &e) != nil || e["error"] == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%s: %d %s, want %d with %q", c.name, code, out, c.code, c.want)
		}
	}
	if code, out := get(t, h, "/v1/predict"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d %s", code, out)
	}
	if code, out := post(t, h, "", "", bytes.NewReader(jsonBatch(t, good)), auth...); code != http.StatusOK {
		t.Errorf("good batch: %d %s", code, out)
	}

	// Bounded memory: a 100 MB body.
	body := &endless{n: 100 << 20, unit: append(one, ',')}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	code, out := post(t, h, "", "", body, auth...)
	runtime.ReadMemStats(&m1)
	if code != http.StatusRequestEntityTooLarge {
		t.Fatalf("100 MB body: %d %s", code, out)
	}
	if body.read > 2*limit {
		t.Errorf("the server read %d bytes of a body over its limit of %d", body.read, limit)
	}
	if d := m1.TotalAlloc - m0.TotalAlloc; d > 16*limit {
		t.Errorf("a 100 MB body allocated %d bytes (limit %d)", d, limit)
	}
	// A msgpack array declaring 2³² − 1 events, under a batch limit that
	// would allow them: refused for the bytes it lacks, nothing allocated
	// for them.
	big, _ := New(Options{MaxBatch: 1 << 40})
	for p, m := range srv.snap.Load().models {
		if m != nil {
			mm := *m
			mm.Partition = p
			big.Set(&mm)
		}
	}
	runtime.ReadMemStats(&m0)
	code, out = post(t, big.Handler(), "application/msgpack", "", bytes.NewReader([]byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0x80, 0x80}))
	runtime.ReadMemStats(&m1)
	if code != http.StatusBadRequest || !strings.Contains(string(out), "declares 4294967295 events") {
		t.Errorf("declared 2³² − 1 events: %d %s", code, out)
	}
	if d := m1.TotalAlloc - m0.TotalAlloc; d > 1<<20 {
		t.Errorf("a batch declaring 2³² − 1 events allocated %d bytes", d)
	}
}

// Routing without the partition count: a keyed event is answered by a
// model file's one model, refused (503) by a live or replica server that
// does not know the input's partition count yet (a key could belong to a
// partition it does not hold), and routed by murmur2 once it knows it
// (503 naming a partition it does not hold).
func TestServeRoutingNeedsThePartitionCount(t *testing.T) {
	sc, err := consumer.NewScorer(consumer.ResetPayload())
	if err != nil {
		t.Fatal(err)
	}
	keyed := []byte(`[{"v":1,"key":"user-3","x":[1]}]`)
	for _, c := range []struct {
		source string
		parts  int
		code   int
	}{{SourceFile, 0, 400}, {SourceLive, 0, 503}, {SourceReplica, 0, 503}, {SourceLive, 1, 400}, {SourceLive, 4, 503}} {
		srv, _ := New(Options{})
		srv.Set(&Model{Scorer: sc, Partition: 0, Source: c.source})
		if c.parts > 0 {
			srv.SetPartitions(c.parts)
		}
		code, out := post(t, srv.Handler(), "", "", bytes.NewReader(keyed))
		// user-3 is partition 3 of 4 by murmur2, which this server lacks;
		// an event that reaches the model (of no models, dimension 0) is
		// refused by it: 400 naming the dimension.
		if code != c.code || (code == 400) != strings.Contains(string(out), "dimension is 0") {
			t.Errorf("%s, %d partitions: %d %s, want %d", c.source, c.parts, code, out, c.code)
		}
	}
}
