package share

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"okstream/learner"
	"okstream/learner/rng"
)

func TestNextCountsEpochs(t *testing.T) {
	c := Config{Every: 3, Lag: 1, Partitions: 2}
	s := NewState(2)
	var got []int64
	for range 10 {
		if b, e := s.Next(c); b {
			got = append(got, e)
		}
	}
	if want := []int64{0, 1, 2}; !slices.Equal(got, want) || s.Count != 10 {
		t.Fatalf("boundaries %v (count %d), want %v (count 10)", got, s.Count, want)
	}
}

func TestDueOrder(t *testing.T) {
	got := Due([]int64{-1, 2, 0}, []int64{1, 2, 2})
	want := []Ref{{0, 0}, {0, 1}, {2, 1}, {2, 2}}
	if !slices.Equal(got, want) {
		t.Fatalf("Due = %v, want %v", got, want)
	}
}

func TestPlanAndWaitFor(t *testing.T) {
	c := Config{Every: 10, Lag: 1, Partitions: 3}
	have := map[Ref]bool{{0, 0}: true, {0, 1}: true, {1, 0}: true, {2, 0}: true, {2, 1}: true, {2, 3}: true}
	avail := func(q int, ep int64) bool { return have[Ref{q, ep}] }
	old := []int64{0, 0, 0}
	// Boundary 2: the strict target is epoch 1 of everyone; partition 1's
	// is missing.
	if w := c.WaitFor(2, old, avail); !slices.Equal(w, []int{1}) {
		t.Fatalf("WaitFor = %v, want [1]", w)
	}
	next, strict := c.Plan(2, old, avail)
	if strict || !slices.Equal(next, []int64{1, 0, 1}) {
		t.Fatalf("Plan = %v strict %v, want [1 0 1] false", next, strict)
	}
	if st := c.Staleness(2, next); st != 1 {
		t.Fatalf("staleness %d, want 1", st)
	}
	// Boundary 3: partition 1 was skipped, so it is behind: not waited
	// for, and not merged before a rejoin boundary even once its deltas
	// are there; 2 has a gap at epoch 2 and is waited for.
	if w := c.WaitFor(3, next, avail); !slices.Equal(w, []int{0, 2}) {
		t.Fatalf("WaitFor = %v, want [0 2]", w)
	}
	have[Ref{1, 1}], have[Ref{1, 2}], have[Ref{0, 2}], have[Ref{2, 2}] = true, true, true, true
	if w := c.WaitFor(3, next, avail); len(w) != 0 {
		t.Fatalf("WaitFor = %v, want none", w)
	}
	next2, def := c.Plan(3, next, avail)
	if !def || !slices.Equal(next2, []int64{2, 0, 2}) {
		t.Fatalf("Plan = %v default %v, want [2 0 2] true (partition 1 stays behind until boundary %d)", next2, def, RejoinEvery)
	}
	if d, ok := c.Default(3, next); !ok || !slices.Equal(d, next2) {
		t.Fatalf("Default = %v %v, want %v true", d, ok, next2)
	}
	// The rejoin boundary K: partition 1 is merged as far as it has
	// arrived (epoch 4 of 7), and the frontier is recorded.
	K := int64(RejoinEvery)
	old = []int64{K - 2, 0, K - 2}
	have = map[Ref]bool{{0, K - 1}: true, {2, K - 1}: true, {1, 1}: true, {1, 2}: true, {1, 3}: true, {1, 4}: true, {1, 6}: true}
	next3, def := c.Plan(K, old, avail)
	if def || !slices.Equal(next3, []int64{K - 1, 4, K - 1}) {
		t.Fatalf("Plan at the rejoin boundary = %v default %v, want [%d 4 %d] false", next3, def, K-1, K-1)
	}
	if _, ok := c.Default(K, old); ok {
		t.Fatal("Default at a rejoin boundary with a partition behind: ok, want no default (recorded)")
	}
	// A rejoin boundary records the frontier even when the partition behind
	// has caught up completely (a replay might not have its deltas yet).
	for ep := int64(5); ep < K; ep++ {
		have[Ref{1, ep}] = true
	}
	if next4, def := c.Plan(K, old, avail); def || !slices.Equal(next4, []int64{K - 1, K - 1, K - 1}) {
		t.Fatalf("Plan at the rejoin boundary, caught up = %v default %v, want [%d %d %d] false", next4, def, K-1, K-1, K-1)
	}
	// Before epoch L nothing is due.
	if n, s := c.Plan(0, NewState(3).Frontier, avail); !s || !slices.Equal(n, []int64{-1, -1, -1}) {
		t.Fatalf("Plan at boundary 0 = %v %v", n, s)
	}
}

// Plan against Default and the rules it states, on random frontiers and
// arrivals: a frontier Plan calls default is Default's, a partition behind
// moves only at rejoin boundaries (whatever has arrived), no partition moves
// back or past e−L, and a boundary with a partition behind is default
// except at rejoin boundaries.
func TestPlanDefaultProperties(t *testing.T) {
	src := rand.New(rand.NewPCG(5, 6))
	for it := range 20000 {
		c := Config{Every: 1, Lag: int64(src.IntN(3)), Partitions: 1 + src.IntN(5)}
		e := int64(src.IntN(40))
		tgt := max(e-c.Lag, -1)
		old := make([]int64, c.Partitions)
		for q := range old {
			old[q] = max(tgt-int64(src.IntN(6)), -1)
		}
		have := map[Ref]bool{}
		for q := range old {
			for ep := old[q] + 1; ep <= tgt; ep++ {
				if src.IntN(4) > 0 {
					have[Ref{q, ep}] = true
				}
			}
		}
		avail := func(q int, ep int64) bool { return have[Ref{q, ep}] }
		next, def := c.Plan(e, old, avail)
		d, ok := c.Default(e, old)
		rejoin := e%RejoinEvery == 0
		anyBehind := false
		for q := range old {
			behind := c.Behind(e, old, q)
			anyBehind = anyBehind || behind
			if next[q] < old[q] || next[q] > tgt {
				t.Fatalf("it %d: partition %d moved from %d to %d (target %d)", it, q, old[q], next[q], tgt)
			}
			if behind && !rejoin && next[q] != old[q] {
				t.Fatalf("it %d: partition %d behind moved at boundary %d, not a rejoin boundary", it, q, e)
			}
			for ep := old[q] + 1; ep <= next[q]; ep++ {
				if !have[Ref{q, ep}] {
					t.Fatalf("it %d: partition %d merged up to %d without its delta of %d", it, q, next[q], ep)
				}
			}
		}
		if ok != !(rejoin && anyBehind) {
			t.Fatalf("it %d: Default ok %v at boundary %d (rejoin %v, behind %v)", it, ok, e, rejoin, anyBehind)
		}
		if def && (!ok || !slices.Equal(next, d)) {
			t.Fatalf("it %d: Plan says default for %v, Default is %v %v", it, next, d, ok)
		}
		if !def && ok && slices.Equal(next, d) {
			t.Fatalf("it %d: Plan records %v, which is the default", it, next)
		}
	}
}

func TestRecordRoundTrip(t *testing.T) {
	for _, r := range []*Record{
		{Kind: KindDelta, Partition: 3, Epoch: 7, Partitions: 4, Offset: 99, Deltas: []ModelDelta{{"a", []byte{1, 2}}, {"b", nil}}},
		{Kind: KindDecision, Partition: 0, Epoch: 1, Partitions: 2, Offset: 5, Frontier: []int64{0, -1}},
	} {
		b := r.Encode()
		got, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Encode(), b) {
			t.Fatalf("round trip changed %+v into %+v", r, got)
		}
		for i := range b { // every truncation is refused
			if _, err := Decode(b[:i]); !errors.Is(err, ErrRecord) {
				t.Fatalf("truncated at %d: %v", i, err)
			}
		}
	}
	if k := Key("g/in", KindDecision, 2, 13, 5); k != "g/in/2/x/3" {
		t.Fatalf("Key = %q", k)
	}
}

// blobs is a stream of two Gaussian blobs labelled ±1.
func blobs(n int, seed uint64) []Event {
	src := rng.New(seed)
	ev := make([]Event, n)
	for i := range ev {
		y := 1.0
		if src.Float64() < 0.5 {
			y = -1
		}
		x := []float64{y + 2*src.Float64() - 1, -y + 2*src.Float64() - 1}
		ev[i] = Event{X: x, Y: y}
	}
	return ev
}

const simSpec = "fogd:sigma=2,budget=20,eta=0.05"

// With one partition, sharing changes nothing: the only delta is the own
// one, which is already in the model.
func TestSimulateOnePartitionIsIndependent(t *testing.T) {
	ev := blobs(1000, 1)
	a, err := Simulate(simSpec, 2, Config{Partitions: 1}, ev, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Simulate(simSpec, 2, Config{Every: 64, Lag: 1, Partitions: 1}, ev, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Mistakes[0] != b.Mistakes[0] || a.SqErr[0] != b.SqErr[0] {
		t.Fatalf("P = 1: independent %d mistakes (SqErr %v), shared %d (%v)", a.Mistakes[0], a.SqErr[0], b.Mistakes[0], b.SqErr[0])
	}
	if b.Merges != 1000/64 {
		t.Fatalf("%d merges, want %d", b.Merges, 1000/64)
	}
}

// Every partition merges every other partition's deltas up to the lag, and
// the simulation is deterministic.
func TestSimulateSharesAndIsDeterministic(t *testing.T) {
	ev := blobs(4000, 2)
	c := Config{Every: 50, Lag: 1, Partitions: 4}
	a, err := Simulate(simSpec, 2, c, ev, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Simulate(simSpec, 2, c, ev, nil)
	if err != nil {
		t.Fatal(err)
	}
	for p := range a.Models {
		sa, _ := a.Models[p].MarshalBinary()
		sb, _ := b.Models[p].MarshalBinary()
		if !bytes.Equal(sa, sb) {
			t.Fatalf("partition %d: two simulations differ", p)
		}
		if want := []int64{18, 18, 18, 18}; !slices.Equal(a.States[p].Frontier, want) {
			t.Fatalf("partition %d frontier %v, want %v (1000 events = 20 epochs, lag 1)", p, a.States[p].Frontier, want)
		}
	}
	if len(a.Decisions) != 0 {
		t.Fatalf("round robin left the strict schedule: %+v", a.Decisions)
	}
	ind, err := Simulate(simSpec, 2, Config{Partitions: 4}, ev, nil)
	if err != nil {
		t.Fatal(err)
	}
	for p := range a.Models { // the shared models differ from independent ones
		sa, _ := a.Models[p].MarshalBinary()
		si, _ := ind.Models[p].MarshalBinary()
		if bytes.Equal(sa, si) {
			t.Fatalf("partition %d: the shared model equals the independent one", p)
		}
	}
}

// A partition whose stream ends early is skipped, with a Decision, and its
// deltas are all merged by the others.
func TestSimulateSkipsAFinishedPartition(t *testing.T) {
	ev := blobs(3000, 3)
	assign := func(i int) int {
		if i%3 == 2 && i < 600 {
			return 1
		}
		return 0
	}
	r, err := Simulate(simSpec, 2, Config{Every: 50, Lag: 1, Partitions: 2}, ev, assign)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Decisions) == 0 {
		t.Fatal("no decision although partition 1 ended early")
	}
	if got := r.States[0].Frontier[1]; got != 3 { // 200 events: epochs 0..3
		t.Fatalf("partition 0 merged partition 1 up to epoch %d, want 3", got)
	}
	var _ learner.Sharer = r.Models[0].(learner.Sharer)
}

func TestSameHeader(t *testing.T) {
	r := &Record{Kind: KindDelta, Partition: 3, Epoch: 7, Partitions: 4, Deltas: []ModelDelta{{"a", []byte{1}}}}
	b := r.Encode()
	if !SameHeader(r, b) {
		t.Fatal("a record's own bytes do not match its header")
	}
	for _, o := range []*Record{{Kind: KindDecision, Partition: 3, Epoch: 7}, {Kind: KindDelta, Partition: 2, Epoch: 7}, {Kind: KindDelta, Partition: 3, Epoch: 8}} {
		if SameHeader(o, b) {
			t.Fatalf("%+v matches the header of %+v", o, r)
		}
	}
	if SameHeader(r, b[:20]) {
		t.Fatal("a truncated record matches")
	}
}
