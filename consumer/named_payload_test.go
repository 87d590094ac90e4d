package consumer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"okstream/codec"
	"okstream/features"
	"okstream/learner/rng"
)

// namedSet is a model set of namedModels with an encoder of cfg (Dim
// namedDim unless set) that has learnt n events of namedEvent (decoded
// from msgpack, as the worker does).
func namedSet(t *testing.T, cfg features.Config, n int, seed uint64) *modelSet {
	t.Helper()
	ms, err := newModelSet(namedModels, namedDim, pendingLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Dim == 0 {
		cfg.Dim = namedDim
	}
	if err := ms.setFeatures(cfg); err != nil {
		t.Fatal(err)
	}
	feed(t, ms, n, seed, 0)
	return ms
}

// feed gives ms events from..from+n of a named stream of seed (the
// worker's steps for an accepted named event).
func feed(t *testing.T, ms *modelSet, n int, seed uint64, from int) {
	t.Helper()
	src := rng.New(seed)
	dec := codec.NewDecoder(codec.Limits{Dim: namedDim})
	var ev codec.Event
	x := make([]float64, namedDim)
	for i := 0; i < from+n; i++ {
		e := namedEvent(src, i, 2*(from+n))
		if i < from {
			continue
		}
		b, err := codec.AppendEvent(nil, &e)
		if err != nil {
			t.Fatal(err)
		}
		if err := dec.DecodeEvent(b, &ev); err != nil {
			t.Fatal(err)
		}
		if r, d := ms.admit(featNamed, false); r != "" {
			t.Fatal(r, d)
		}
		y, err := ms.mapLabel(&ev)
		if err != nil {
			t.Fatal(err)
		}
		xv, err := ms.encode(ev.F, x)
		if err != nil {
			t.Fatal(err)
		}
		ms.score(xv, y, true, nil, nil)
	}
}

// The encoder is checkpointed (payload version 9) and restored exactly: a
// restored set continues bit-identically (checkpoint bytes after more
// events) to the one that was not interrupted; a restore under another
// encoder configuration is refused (ErrModelChanged, naming the flags);
// damaged encoder bytes are an error, never a panic.
func TestNamedPayloadRoundTrip(t *testing.T) {
	a := namedSet(t, features.Config{}, 300, 7)
	mid, err := a.marshal()
	if err != nil {
		t.Fatal(err)
	}
	pl, err := DescribePayload(mid)
	if err != nil || pl.FeatureKind != "named" || pl.Features == nil || pl.Features.Stats().Events != 300 {
		t.Fatalf("%+v %v", pl, err)
	}
	b, _ := newModelSet(namedModels, namedDim, pendingLimits{})
	if err := b.setFeatures(features.Config{Dim: namedDim}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.restore(mid, false); err != nil {
		t.Fatal(err)
	}
	again, _ := b.marshal()
	if !bytes.Equal(again, mid) {
		t.Fatal("the restored set marshals to other bytes")
	}
	feed(t, a, 200, 7, 300)
	feed(t, b, 200, 7, 300)
	pa, _ := a.marshal()
	pb, _ := b.marshal()
	if !bytes.Equal(pa, pb) {
		t.Fatal("the restored set diverges from the uninterrupted one")
	}

	c, _ := newModelSet(namedModels, namedDim, pendingLimits{})
	if err := c.setFeatures(features.Config{Dim: namedDim, Missing: features.MissingRefuse}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.restore(mid, true); !errors.Is(err, ErrModelChanged) || !bytes.Contains([]byte(err.Error()), []byte("--missing refuse")) {
		t.Fatalf("restore under --missing refuse: %v", err)
	}

	// Damage inside the encoder's blob (the payload's tail): every byte.
	enc, _ := pl.Features.MarshalBinary()
	at := len(mid) - len(enc)
	for i := at; i < len(mid); i++ {
		bad := append([]byte(nil), mid...)
		bad[i] ^= 0x5a
		if _, err := DescribePayload(bad); err == nil {
			if p2, _ := DescribePayload(bad); p2.Features == nil {
				t.Fatalf("byte %d: a named payload without its encoder", i)
			}
		}
	}
	for cut := at; cut < len(mid); cut += 7 {
		if _, err := DescribePayload(mid[:cut]); err == nil {
			t.Fatalf("payload cut at %d of %d decodes", cut, len(mid))
		}
	}
}

// A dense partition's payload is the version 8 layout with the version 9
// and one trailing byte (the feature kind); a version 8 payload (an older
// build's) restores as before, as a partition that has seen no named
// event.
func TestDensePayloadVersion9(t *testing.T) {
	ms, _ := newModelSet(testModels, testDim, pendingLimits{})
	src := rng.New(3)
	for i := 0; i < 200; i++ {
		ev := circleEvent(src, i, "", "")
		ms.score(ev.X, ev.Y, true, nil, nil)
	}
	ms.fkind = featDense // as the worker sets it
	v9, err := ms.marshal()
	if err != nil {
		t.Fatal(err)
	}
	if binary.LittleEndian.Uint32(v9[4:]) != 9 || v9[len(v9)-1] != featDense {
		t.Fatalf("version %d, last byte %d", binary.LittleEndian.Uint32(v9[4:]), v9[len(v9)-1])
	}
	v8 := append([]byte(nil), v9[:len(v9)-1]...)
	binary.LittleEndian.PutUint32(v8[4:], 8)
	pl, err := DescribePayload(v8)
	if err != nil || pl.FeatureKind != "" || pl.Features != nil {
		t.Fatalf("version 8: %+v %v", pl, err)
	}
	r, _ := newModelSet(testModels, testDim, pendingLimits{})
	if err := r.setFeatures(features.Config{Dim: testDim}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.restore(v8, false); err != nil {
		t.Fatal(err)
	}
	if r.fkind != featDense { // its models learnt: from dense events, the only kind before version 9
		t.Fatalf("a version 8 payload whose models learnt restores as feature kind %d, want dense", r.fkind)
	}
	got, _ := r.marshal()
	if !bytes.Equal(got, v9) {
		t.Fatal("a version 8 payload restores to other models")
	}
	// A partition of dense events refuses named ones, and the reverse.
	if reason, _ := r.admit(featNamed, false); reason != reasonFeatureKind {
		t.Fatalf("a named event in a dense partition: %q", reason)
	}
	if reason, _ := r.admit(featDense, false); reason != "" {
		t.Fatalf("a dense event in a dense partition: %q", reason)
	}
	n := namedSet(t, features.Config{}, 10, 1)
	if reason, _ := n.admit(featDense, false); reason != reasonFeatureKind {
		t.Fatalf("a dense event in a named partition: %q", reason)
	}
	if reason, _ := n.admit(featNamed, true); reason != reasonNamedFeatures {
		t.Fatalf("a named event with shared models: %q", reason)
	}
}

// The progress line's features group: the counters' increments since the
// previous line, nothing when they did not move.
func TestFeatureProgress(t *testing.T) {
	m := newMetrics(prometheus.NewRegistry())
	var prev [3]float64
	if g := m.featureProgress(&prev); g != nil {
		t.Fatalf("%v", g)
	}
	m.featuresDropped.Add(2)
	m.featuresImputed.Add(5)
	if g := fmt.Sprint(m.featureProgress(&prev)); g != "[dropped=2 folded=0 imputed=5]" {
		t.Fatal(g)
	}
	m.featuresImputed.Add(1)
	if g := fmt.Sprint(m.featureProgress(&prev)); g != "[dropped=0 folded=0 imputed=1]" {
		t.Fatal(g)
	}
}

// The worker's added steps for a named event (admit, encode) allocate
// nothing in steady state (every name and value already in the dictionary).
func TestNamedStepsDoNotAllocate(t *testing.T) {
	ms := namedSet(t, features.Config{}, 400, 7)
	src := rng.New(8)
	ev := namedEvent(src, 400, 400) // the second half's schema, as the last events
	x := make([]float64, namedDim)
	if _, err := ms.encode(ev.F, x); err != nil {
		t.Fatal(err)
	}
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector (it allocates); the plain go test counts them")
	}
	allocs := testing.AllocsPerRun(200, func() {
		if r, _ := ms.admit(featNamed, false); r != "" {
			t.Fatal(r)
		}
		if _, err := ms.encode(ev.F, x); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per named event", allocs)
	}
}
