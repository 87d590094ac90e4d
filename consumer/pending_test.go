package consumer

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"okstream/codec"
	"okstream/learner/state"
)

func testImpression(id, key string, ts int64, dim int) *impression {
	return &impression{id: id, key: key, ts: ts, hasTS: true, x: make([]float64, dim), scores: []float64{0.5}, updates: []uint64{1}}
}

// The byte limit evicts oldest first; an entry above it alone is refused;
// the accounted bytes follow every add, take and eviction.
func TestPendingByteLimit(t *testing.T) {
	const dim = 100
	one := testImpression("imp-0", "k", 0, dim).cost() // 256 + 5 + 1 + 800 + 16
	if one != 1078 {
		t.Fatalf("cost %d, want 1078", one)
	}
	p := newPending(pendingLimits{max: 1000, maxBytes: 3 * one}, dim)
	for i := 0; i < 3; i++ {
		if r := p.add(testImpression("imp-"+string(rune('0'+i)), "k", 0, dim)); r != (addResult{}) {
			t.Fatalf("add %d: %+v", i, r)
		}
	}
	if p.bytes != 3*one {
		t.Fatalf("bytes %d, want %d", p.bytes, 3*one)
	}
	if r := p.add(testImpression("imp-3", "k", 0, dim)); r.bytes != 1 || p.len() != 3 {
		t.Fatalf("byte eviction: %+v, len %d", r, p.len())
	}
	if im, _ := p.take("imp-0", "k"); im != nil {
		t.Fatal("the oldest entry survived the byte limit")
	}
	// An id of 1 MiB: cost above the limit alone, refused, nothing evicted.
	if r := p.add(testImpression(strings.Repeat("i", 1<<20), "k", 0, dim)); !r.tooLarge || p.len() != 3 {
		t.Fatalf("huge id: %+v, len %d", r, p.len())
	}
	if im, _ := p.take("imp-1", "k"); im == nil || p.bytes != 2*one {
		t.Fatalf("take: %v, bytes %d", im, p.bytes)
	}
	// 100,000 impressions with 1 KiB ids stay within the byte limit.
	p = newPending(pendingLimits{max: 100000, maxBytes: 8 << 20}, dim)
	id := strings.Repeat("x", 1024)
	for i := 0; i < 100000; i++ {
		p.add(testImpression(id+string(rune(i)), "k", 0, dim))
	}
	if p.bytes > 8<<20 || p.len() == 0 {
		t.Fatalf("%d entries, %d bytes, limit %d", p.len(), p.bytes, 8<<20)
	}
}

// One event with a far-future timestamp does not move the watermark, so
// it evicts nothing; nor does one at the start of the partition; a real
// advance of event time (a majority of recent events) does evict.
func TestPendingWatermarkIgnoresOutlier(t *testing.T) {
	const hour = 3600_000
	const t0 = int64(1_700_000_000_000)
	far := t0 + 50*365*24*hour
	p := newPending(pendingLimits{max: 100, maxAge: hour}, 1)
	if n := p.observe(far); n != 0 { // the partition's first event is the outlier
		t.Fatal("evicted from an empty buffer")
	}
	for i := 0; i < 10; i++ {
		p.observe(t0 + int64(i))
		p.add(testImpression("a"+string(rune('0'+i)), "", t0+int64(i), 1))
	}
	if n := p.observe(far); n != 0 || p.len() != 10 {
		t.Fatalf("one far-future ts evicted %d of 10 pending impressions", n)
	}
	if n := p.observe(far + 1); n != 0 || p.len() != 10 {
		t.Fatalf("two far-future ts evicted %d", n)
	}
	if wm := p.watermark(); wm > t0+hour {
		t.Fatalf("watermark %d moved by outliers", wm)
	}
	// Event time really advances: 8 of the last 15 events are 2 h later.
	evicted := 0
	for i := 0; i < 8; i++ {
		evicted += p.observe(t0 + 2*hour)
	}
	if evicted != 10 || p.len() != 0 {
		t.Fatalf("real advance evicted %d, %d left", evicted, p.len())
	}
}

// A reused id cannot redirect feedback: the first impression wins, and a
// feedback event with another key does not resolve it.
func TestPendingIDsAndKeys(t *testing.T) {
	p := newPending(pendingLimits{max: 10}, 1)
	victim := testImpression("id-1", "alice", 0, 1)
	p.add(victim)
	if r := p.add(testImpression("id-1", "mallory", 0, 1)); !r.duplicate || p.len() != 1 {
		t.Fatalf("duplicate id: %+v", r)
	}
	if im, mismatch := p.take("id-1", "mallory"); im != victim || !mismatch || p.len() != 1 {
		t.Fatalf("feedback with another key: %v %v, len %d", im, mismatch, p.len())
	}
	if im, mismatch := p.take("id-1", "alice"); im != victim || mismatch || p.len() != 0 {
		t.Fatal("feedback with the impression's key did not resolve it")
	}
	p.add(testImpression("id-2", "", 0, 1)) // no key: any feedback matches
	if im, mismatch := p.take("id-2", "bob"); im == nil || mismatch {
		t.Fatal("keyless impression")
	}
	if im, mismatch := p.take("id-3", "bob"); im != nil || mismatch {
		t.Fatal("unknown id")
	}
}

// The buffer round-trips (keys, watermark window, accounted bytes), and a
// payload version 2 buffer (no keys, no window) still decodes.
func TestPendingEncoding(t *testing.T) {
	p := newPending(pendingLimits{max: 10, maxAge: 1000}, 2)
	for i := int64(0); i < 20; i++ {
		p.observe(100 * i)
	}
	p.add(testImpression("a", "ka", 1900, 2))
	p.add(testImpression("b", "", 1950, 2))
	e := state.NewEncoder(0)
	p.encode(e)
	d := state.NewDecoder(e.Bytes())
	q := p.decode(d, 3, []string{"m"}, []string{"m"})
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
	if q.len() != 2 || q.bytes != p.bytes || q.window != p.window || q.nts != p.nts || q.next != p.next || q.watermark() != p.watermark() {
		t.Fatalf("round trip: %+v vs %+v", q, p)
	}
	if im, mismatch := q.take("a", "other"); !mismatch || im.key != "ka" {
		t.Fatal("key lost")
	}

	// Version 2 layout: id, offset, hasTS, ts, x, scores, updates.
	e = state.NewEncoder(0)
	e.U32(1)
	e.String("old")
	e.I64(7)
	e.Bool(true)
	e.I64(1900)
	e.F64s([]float64{1, 2})
	e.F64s([]float64{0.25})
	e.U32(1)
	e.U64(3)
	d = state.NewDecoder(e.Bytes())
	q = p.decode(d, 2, []string{"m"}, []string{"m"})
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
	im, mismatch := q.take("old", "anyone")
	if im == nil || mismatch || im.offset != 7 || im.scores[0] != 0.25 || q.nts != 0 {
		t.Fatalf("version 2 entry: %+v", im)
	}

	// A forged window is refused, not used.
	e = state.NewEncoder(0)
	e.U32(0)
	e.U32(16)
	e.U32(0)
	d = state.NewDecoder(e.Bytes())
	p.decode(d, 3, nil, nil)
	if d.Err() == nil {
		t.Fatal("a window of 16 timestamps was accepted")
	}
}

// The guarded score path allocates nothing per event (as before the guard).
func TestScoreAllocs(t *testing.T) {
	ms, err := newModelSet(testModels, testDim, pendingLimits{})
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{0.1, 0.2, 0.3, 0.4, 0.5}
	out := make([]codec.ModelScore, 0, len(testModels))
	for i := 0; i < 200; i++ { // past NOGD's switch to its primal form
		out = ms.score(x, 1, true, out[:0], nil)
	}
	if a := testing.AllocsPerRun(100, func() { out = ms.score(x, 1, true, out[:0], nil) }); a != 0 {
		t.Fatalf("%v allocations per event", a)
	}
}

func BenchmarkPendingObserve(b *testing.B) {
	p := newPending(pendingLimits{max: 1000, maxAge: 3600_000}, 1)
	for i := 0; i < b.N; i++ {
		p.observe(int64(i))
	}
}

// The limits' defaults, "off" values and refusals.
func TestLimitConfig(t *testing.T) {
	c := Config{}
	c.defaults()
	if c.MaxAbsValue != 1e9 || c.MaxIDBytes != 1024 || c.FeedbackBufferBytes != 0 {
		t.Fatalf("defaults without feedback: %v %v %v", c.MaxAbsValue, c.MaxIDBytes, c.FeedbackBufferBytes)
	}
	c = Config{FeedbackBuffer: 10, MaxAbsValue: -1, MaxIDBytes: -1}
	c.defaults()
	if lim := c.eventLimits(); c.FeedbackBufferBytes != 64<<20 || lim.MaxAbsValue != -1 || lim.MaxIDBytes != -1 {
		t.Fatalf("feedback defaults / off: %+v %v", lim, c.FeedbackBufferBytes)
	}
	if _, err := codec.DecodeEvent(mustEvent(t, codec.Event{Version: 1, ID: string(make([]byte, 5000)), X: []float64{1e308}}), c.eventLimits()); err != nil {
		t.Fatalf("limits off, yet %v", err)
	}
	c = Config{MaxAbsValue: 0.5, FeedbackBufferBytes: -1}
	err := c.Validate()
	for _, want := range []string{"max abs value 0.5", "feedback buffer bytes -1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("validation error %v does not mention %q", err, want)
		}
	}
}

// The accounted bytes bound the buffer's real memory: filled far past its
// byte limit (evicting all the while), the live heap it holds stays within
// 1.25 × the limit, measured with the runtime's memory statistics, for
// small and large dimensions and ids up to the default 1 KiB limit.
// (Measured: 0.85–1.07 × the accounted bytes.)
func TestPendingByteLimitBoundsHeap(t *testing.T) {
	const limit = 16 << 20
	for _, c := range []struct{ dim, idLen int }{{1, 8}, {5, 36}, {100, 36}, {5, 1024}} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		p := newPending(pendingLimits{max: 1 << 30, maxBytes: limit}, c.dim)
		pre := strings.Repeat("i", c.idLen-8)
		evicted := 0
		for i := 0; evicted < 20000; i++ {
			im := &impression{id: fmt.Sprintf("%s%08d", pre, i), key: "user-12", x: make([]float64, c.dim), scores: make([]float64, 2), updates: make([]uint64, 2)}
			evicted += p.add(im).bytes
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		if p.bytes > limit || heap > limit*5/4 {
			t.Errorf("dim %d, ids of %d bytes: %d entries, %d accounted bytes, %d bytes of heap; limit %d", c.dim, c.idLen, p.len(), p.bytes, heap, limit)
		}
		runtime.KeepAlive(p)
	}
}
