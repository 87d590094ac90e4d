package learner

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"okstream/learner/state"
)

// Shared FORKS configurations: small sketches (INIT after one or two sync
// points, update rounds every few sync points), and the code paths that
// draw randomness at update rounds (max_stored replacement, landmarks
// replace, rsvd) or change the ONS (λ > 0, sqrt schedule, literal).
var forksShareSpecs = []string{
	"forks:" + strings.Replace(forksContractBase, "rho=300", "rho=400", 1) + ",shared=true",
	"forks:" + strings.Replace(forksContractBase, "rho=300", "rho=400", 1) + ",shared=true,c=0",
	"forks:sigma=1,budget=10,sm=4,k=3,rho=150,shared=true,lambda=0.01,ons_eta_schedule=sqrt",
	"forks:sigma=1,budget=10,sp=10,sm=4,k=3,blocks=2,rho=100,max_stored=24,landmarks=replace,warm=lsq,shared=true",
	"forks:sigma=1,budget=10,sm=4,k=3,rho=120,decomp=rsvd,loss=square,shared=true",
}

// shareRun drives P copies through the strict schedule of Sharer on a
// stream split round-robin: epochs of S events per copy, then every copy
// publishes its delta and merges the deltas of epoch e − L (Own for its
// own), in partition order. hook, if not nil, is called after every event
// of every copy (with the copy's index and the event's stream index) and
// may replace the copy (e.g. by a restored one). It returns every score
// in stream order.
type shareRun struct {
	spec    string
	P, S, L int
	hook    func(p, i int, ls []Learner)
	// merge, if set, is called before copy p's merge of ds; the function it
	// returns (if not nil) after it.
	merge func(p int, l Learner, ds []SharedDelta) func()
}

func (r shareRun) run(t testing.TB, xs [][]float64, ys []float64) (scores []float64, ls []Learner) {
	t.Helper()
	ls = make([]Learner, r.P)
	for p := range ls {
		l, err := New(r.spec, len(xs[0]))
		if err != nil {
			t.Fatal(err)
		}
		ls[p] = l
	}
	scores = make([]float64, len(xs))
	var deltas [][][]byte
	for e := 0; (e+1)*r.S*r.P <= len(xs); e++ {
		row := make([][]byte, r.P)
		for p := range r.P {
			for j := range r.S {
				i := (e*r.S+j)*r.P + p
				scores[i] = ls[p].Learn(xs[i], ys[i])
				if r.hook != nil {
					r.hook(p, i, ls)
				}
			}
			d, err := ls[p].(Sharer).ShareDelta()
			if err != nil {
				t.Fatal(err)
			}
			row[p] = d
		}
		deltas = append(deltas, row)
		for p := range r.P {
			var ds []SharedDelta
			if e >= r.L {
				for q := range r.P {
					ds = append(ds, SharedDelta{Partition: q, Epoch: int64(e - r.L), Own: q == p, Data: deltas[e-r.L][q]})
				}
			}
			var after func()
			if r.merge != nil {
				after = r.merge(p, ls[p], ds)
			}
			if err := ls[p].(Sharer).ShareMerge(ds); err != nil {
				t.Fatalf("epoch %d, copy %d: %v", e, p, err)
			}
			if after != nil {
				after()
			}
		}
	}
	return scores, ls
}

// The mixed Stage-2 merge (ShareMix's sums over every delta, less the own
// ones: ShareMerge and ShareApply) agrees with summing the other
// partitions' statistics directly (mergeStage2, the path of deltas with
// late Stage-1 entries) to rounding: the ONS weights and curvature after
// every such merge of a 3-copy run, within 1e-9 relative.
func TestForksShareMixMatchesDirectSum(t *testing.T) {
	for _, spec := range forksShareSpecs {
		t.Run(spec, func(t *testing.T) {
			xs, ys := stream(taskOf(t, spec), 2400, 5, 17)
			checked := 0
			r := shareRun{spec: spec, P: 3, S: 20, L: 1}
			r.merge = func(p int, l Learner, ds []SharedDelta) func() {
				f := l.(*FORKS)
				if !f.sk.ready || len(ds) == 0 {
					return nil
				}
				st, _ := f.MarshalBinary()
				ref, _ := New(spec, 5)
				if err := ref.UnmarshalBinary(st); err != nil {
					t.Fatal(err)
				}
				rf := ref.(*FORKS)
				fds, err := rf.decodeDeltas(ds, false)
				if err != nil {
					t.Fatal(err)
				}
				if rf.mixStage2(fds, nil) == nil {
					return nil // late Stage-1 entries: both take mergeStage2
				}
				if err := rf.mergeStage2(fds); err != nil {
					t.Fatal(err)
				}
				return func() {
					checked++
					requireMixClose(t, p, "v", f.ons.v, rf.ons.v, 1e-9)
					requireMixClose(t, p, "A", f.sh.aSnap, rf.sh.aSnap, 1e-9)
				}
			}
			r.run(t, xs, ys)
			if checked < 10 {
				t.Fatalf("only %d Stage-2 merges compared", checked)
			}
			t.Logf("%d Stage-2 merges compared", checked)
		})
	}
}

// requireMixClose fails unless got (copy p's merge through the mix) is
// want (the direct sum) within tol relative to want's largest magnitude.
func requireMixClose(t *testing.T, p int, what string, got, want []float64, tol float64) {
	t.Helper()
	scale := 0.0
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol*max(scale, 1e-300) {
			t.Fatalf("copy %d: %s[%d] = %v mixed, %v summed directly", p, what, i, got[i], want[i])
		}
	}
}

// Every copy has the same basis after every sync point (INIT on the same
// merged buffer, the same update rounds), the run crosses INIT and several
// update rounds, and sharing learns: at the contract configuration, 3
// shared copies make fewer than 40 % mistakes (the trivial predictor: 50 %).
func TestForksShareSameBasis(t *testing.T) {
	for si, spec := range forksShareSpecs {
		t.Run(spec, func(t *testing.T) {
			task := taskOf(t, spec)
			xs, ys := stream(task, 3600, 5, 31)
			const P = 3
			checked := 0
			scores, ls := shareRun{spec: spec, P: P, S: 40, L: 1}.run(t, xs, ys)
			f0 := ls[0].(*FORKS)
			if !f0.sk.ready || f0.sk.nUpd < 2 {
				t.Fatalf("ready %v, %d update rounds: the spec does not exercise INIT and updates", f0.sk.ready, f0.sk.nUpd)
			}
			for p := 1; p < P; p++ {
				f := ls[p].(*FORKS)
				if f.sh.basis != f0.sh.basis || !slices.Equal(f.sk.z, f0.sk.z) || !slices.Equal(f.sk.landmarks, f0.sk.landmarks) ||
					f.sk.nUpd != f0.sk.nUpd || f.sh.global != f0.sh.global {
					t.Fatalf("copy %d's basis differs from copy 0's", p)
				}
				checked++
			}
			if checked != P-1 {
				t.Fatal("not checked")
			}
			if si < 2 { // the contract configurations (the tiny ones do not learn this stream)
				if rate := mistakeRate(scores, ys); rate > 0.4 {
					t.Fatalf("3 shared copies make %.1f %% mistakes on the contract stream", 100*rate)
				}
			}
		})
	}
}

// The basis is identical after every sync point, not only at the end.
func TestForksShareSameBasisEverySync(t *testing.T) {
	spec := forksShareSpecs[0]
	xs, ys := stream(Classification, 3000, 5, 32)
	const P, S = 4, 30
	r := shareRun{spec: spec, P: P, S: S, L: 2}
	syncs := 0
	r.hook = func(p, i int, ls []Learner) {
		// The first event of partition 0's epoch: every copy has merged.
		if p != 0 || (i/P)%S != 0 || i == 0 {
			return
		}
		f0 := ls[0].(*FORKS)
		for q := 1; q < P; q++ {
			f := ls[q].(*FORKS)
			if f.sk.ready != f0.sk.ready || (f0.sk.ready && (f.sh.basis != f0.sh.basis || !slices.Equal(f.sk.z, f0.sk.z))) {
				t.Fatalf("event %d: copy %d's basis differs", i, q)
			}
		}
		syncs++
	}
	r.run(t, xs, ys)
	if syncs < 20 {
		t.Fatalf("%d sync points checked", syncs)
	}
}

// A copy marshalled at any point of a sync period — Stage 1 with pending
// entries, right after INIT, in Stage 2 between sync points, right after an
// update round — and restored into a fresh learner continues
// bit-identically: the same scores, deltas and final states as the
// uninterrupted run. Both lags.
func TestForksShareRestoreMidPeriod(t *testing.T) {
	for _, spec := range forksShareSpecs {
		testShareRestoreMidPeriod(t, spec, func(t *testing.T, l Learner) {
			if f := l.(*FORKS); !f.sk.ready || f.sk.nUpd == 0 {
				t.Fatalf("ready %v, %d updates: the cuts do not cover Stage 2 and update rounds", f.sk.ready, f.sk.nUpd)
			}
		})
	}
}

// testShareRestoreMidPeriod runs 3 shared copies of spec (S = 40, L = 1
// and 2) uninterrupted and, for each cut point, with copy 1 marshalled and
// restored into a fresh learner after that event; scores and final states
// must be bit-identical. covered checks, on the final copy 1, that the
// run crossed the phases the cuts are meant to cover.
func testShareRestoreMidPeriod(t *testing.T, spec string, covered func(*testing.T, Learner)) {
	for _, L := range []int{1, 2} {
		t.Run(fmt.Sprintf("%s/L=%d", spec, L), func(t *testing.T) {
			xs, ys := stream(taskOf(t, spec), 2400, 5, 33)
			const P, S = 3, 40
			want, wls := shareRun{spec: spec, P: P, S: S, L: L}.run(t, xs, ys)
			// Cut points (stream index of the event after which copy 1 is
			// restored): phase 1, mid-period; around the first sync points;
			// deep in phase 2.
			for _, cut := range []int{7, S*P + 1, 2*S*P + 4, 3*S*P + P + 1, 1000, 1601, 2000} {
				if cut%P != 1 {
					cut += (1 - cut%P + P) % P
				}
				r := shareRun{spec: spec, P: P, S: S, L: L}
				r.hook = func(p, i int, ls []Learner) {
					if i != cut {
						return
					}
					st, err := ls[p].MarshalBinary()
					if err != nil {
						t.Fatal(err)
					}
					nl, _ := New(spec, 5)
					if err := nl.UnmarshalBinary(st); err != nil {
						t.Fatalf("cut %d: %v", cut, err)
					}
					if st2, _ := nl.MarshalBinary(); !bytes.Equal(st, st2) {
						t.Fatalf("cut %d: the restored state re-marshals differently", cut)
					}
					ls[p] = nl
				}
				got, gls := r.run(t, xs, ys)
				for i := range want {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("cut %d: score of event %d differs after the restore", cut, i)
					}
				}
				for p := range P {
					a, _ := wls[p].MarshalBinary()
					b, _ := gls[p].MarshalBinary()
					if !bytes.Equal(a, b) {
						t.Fatalf("cut %d: final state of copy %d differs", cut, p)
					}
				}
			}
			covered(t, wls[1])
		})
	}
}

// Hostile deltas are refused with state.ErrCorrupt and leave the model
// unchanged: every truncation, flipped header bytes, another spec or
// dimension, an unknown kind, non-finite values, a negative curvature, an
// Own delta that is not this copy's pending learning.
func TestForksShareRejectsBadDeltas(t *testing.T) {
	spec := forksShareSpecs[0]
	xs, ys := stream(Classification, 2200, 5, 34)
	for _, stage2 := range []bool{false, true} {
		// Two copies; stop copy 0 mid-period, with deltas of copy 1 to merge.
		// Stage 1: no sync yet, so the own delta is all the pending learning.
		r := shareRun{spec: spec, P: 2, S: 50, L: 1}
		n := 0
		ls := []Learner{mustNew(t, spec, 5), mustNew(t, spec, 5)}
		if stage2 {
			n = 1000
			_, ls = r.run(t, xs[:n*2], ys[:n*2])
		}
		a, b := ls[0].(*FORKS), ls[1].(*FORKS)
		if a.sk.ready != stage2 {
			t.Fatalf("stage 2 %v expected, ready %v", stage2, a.sk.ready)
		}
		for i := 2 * n; i < 2*n+60; i += 2 {
			a.Learn(xs[i], ys[i])
			b.Learn(xs[i+1], ys[i+1])
		}
		good, err := b.ShareDelta()
		if err != nil {
			t.Fatal(err)
		}
		own, _ := a.ShareDelta()
		before, _ := a.MarshalBinary()
		refuse := refuser(t, a, fmt.Sprintf("stage 2 %v", stage2), good)
		refuse("trailing byte", SharedDelta{Partition: 1, Data: append(slices.Clone(good), 0)})
		for _, off := range []int{0, 5, 8} {
			bad := slices.Clone(good)
			bad[off] ^= 0x5a
			refuse(fmt.Sprintf("header byte %d flipped", off), SharedDelta{Partition: 1, Data: bad})
		}
		other, _ := New(strings.Replace(spec, "sigma=1.2", "sigma=1.3", 1), 5)
		od, _ := other.(Sharer).ShareDelta()
		refuse("another spec", SharedDelta{Partition: 1, Data: od})
		other, _ = New(spec, 4)
		od, _ = other.(Sharer).ShareDelta()
		refuse("another dimension", SharedDelta{Partition: 1, Data: od})
		refuse("a state, not a delta", SharedDelta{Partition: 1, Data: before})
		// Kind byte: right after the header.
		hdr := len(good) - len(bodyOf(t, a, good))
		bad := slices.Clone(good)
		bad[hdr] = 7
		refuse("unknown kind", SharedDelta{Partition: 1, Data: bad})
		// A NaN in the last float (a candidate example or a coefficient).
		bad = slices.Clone(good)
		copy(bad[len(bad)-8:], []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f})
		refuse("NaN", SharedDelta{Partition: 1, Data: bad})
		if stage2 {
			// The first curvature increment ΔA_00 made negative.
			fd, err := a.decodeDelta(good, make([]float64, 1000))
			if err != nil {
				t.Fatal(err)
			}
			fd.dA[0] = -1
			refuse("negative curvature", SharedDelta{Partition: 1, Data: encodeForksDelta(a, fd)})
		} else {
			// An Own delta that is not the pending learning (copy 1's).
			refuse("foreign Own delta", SharedDelta{Partition: 0, Own: true, Data: good})
		}
		// One good and one bad delta: nothing is applied.
		refuse("good then bad", SharedDelta{Partition: 0, Own: true, Data: own}, SharedDelta{Partition: 1, Data: good[:len(good)-1]})
		if err := a.ShareMerge([]SharedDelta{{Partition: 0, Own: true, Data: own}, {Partition: 1, Data: good}}); err != nil {
			t.Fatalf("stage 2 %v: the good deltas are refused: %v", stage2, err)
		}
	}
}

// bodyOf returns the part of a delta after its header.
func bodyOf(t *testing.T, l *FORKS, delta []byte) []byte {
	t.Helper()
	e := state.NewEncoder(0)
	e.Header(forksDeltaName, l.spec, l.dim)
	return delta[len(e.Bytes()):]
}

// encodeForksDelta re-encodes a decoded Stage-2 delta (for forging).
func encodeForksDelta(l *FORKS, fd forksDelta) []byte {
	e := state.NewEncoder(0)
	e.Header(forksDeltaName, l.spec, l.dim)
	e.U8(forksDeltaStage2)
	e.U64(fd.basis)
	e.Int(fd.rounds)
	e.F64s(fd.b)
	e.F64s(fd.dA)
	e.Bool(fd.cand != nil)
	if fd.cand != nil {
		e.F64s(fd.cand)
	}
	return e.Bytes()
}

// Stage-2 Learn and Predict of a shared copy do not allocate (the
// statistics are accumulated in place); ShareDelta is pure.
func TestForksShareNoAllocsAndPureDelta(t *testing.T) {
	spec := forksShareSpecs[0]
	xs, ys := stream(Classification, 2000, 5, 35)
	_, ls := shareRun{spec: spec, P: 2, S: 100, L: 1}.run(t, xs[:1600], ys[:1600])
	a := ls[0]
	if !a.(*FORKS).sk.ready {
		t.Fatal("not in Stage 2")
	}
	i := 1600
	allocs := testing.AllocsPerRun(300, func() {
		a.Learn(xs[i], ys[i])
		a.Predict(xs[i])
		i++
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per Learn+Predict of a shared copy in Stage 2", allocs)
	}
	st, _ := a.MarshalBinary()
	d1, _ := a.(Sharer).ShareDelta()
	d2, _ := a.(Sharer).ShareDelta()
	st2, _ := a.MarshalBinary()
	if !bytes.Equal(d1, d2) || !bytes.Equal(st, st2) {
		t.Fatal("ShareDelta is not pure")
	}
}

// Sharing is refused without shared=true; shared=true refuses Stage-1
// shrinkage, which does not merge.
func TestForksShareNeedsSpec(t *testing.T) {
	l, _ := New("forks:"+forksContractBase, 5)
	if _, err := l.(Sharer).ShareDelta(); err == nil {
		t.Fatal("ShareDelta without shared=true")
	}
	if err := l.(Sharer).ShareMerge(nil); err == nil {
		t.Fatal("ShareMerge without shared=true")
	}
	if _, err := New("forks:"+forksContractBase+",shared=true,stage1_lambda=0.1", 5); err == nil {
		t.Fatal("shared=true with stage1_lambda accepted")
	}
}

func mustNew(t testing.TB, spec string, dim int) Learner {
	t.Helper()
	l, err := New(spec, dim)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Carrying the ONS over an update round (shared copies) keeps the model's
// predictions: the change of basis is fitted in function space. Without
// the slab (c = 0) the scores on new points move by less than 30 % of
// their size (measured: 1–14 %) where a reset (the paper's) would make
// them all 0.
func TestForksShareTransferKeepsPredictions(t *testing.T) {
	spec := "forks:sigma=1.2,budget=30,buffer=60,sp=60,sm=30,k=10,rho=300,shared=true"
	xs, ys := stream(Classification, 4000, 5, 36)
	l := mustNew(t, spec, 5).(*FORKS)
	updates := 0
	for e := 0; (e+1)*50 <= len(xs)-20; e++ {
		for i := e * 50; i < (e+1)*50; i++ {
			l.Learn(xs[i], ys[i])
		}
		d, _ := l.ShareDelta()
		probe := xs[(e+1)*50 : (e+1)*50+20]
		var before []float64
		for _, x := range probe {
			before = append(before, l.Predict(x))
		}
		nu := l.sk.nUpd
		if err := l.ShareMerge([]SharedDelta{{Own: true, Data: d}}); err != nil {
			t.Fatal(err)
		}
		if !l.sk.ready || l.sk.nUpd == nu || nu == 0 && before[0] == 0 {
			continue
		}
		updates++
		var diff, size float64
		for i, x := range probe {
			f := l.Predict(x)
			diff += math.Abs(f - before[i])
			size += math.Abs(before[i])
		}
		t.Logf("update round %d: relative change %.3f", l.sk.nUpd, diff/size)
		if diff > 0.3*size {
			t.Fatalf("update round %d: scores moved by %.3g against a mean size of %.3g", l.sk.nUpd, diff/20, size/20)
		}
	}
	if updates < 3 {
		t.Fatalf("%d update rounds checked", updates)
	}
}

// shareFuzzSpecs are the shared configurations FuzzShareMerge targets.
var shareFuzzSpecs = []string{
	"forks:sigma=1,budget=10,sm=4,k=3,rho=150,shared=true",
	"nogd:sigma=1,budget=10,k=4,shared=true",
}

// shareFuzzTarget returns copy 0 of a 2-copy shared run of spec stopped
// after n events per copy, mid-period (Stage 1 for small n), and the
// deltas both copies would publish now.
func shareFuzzTarget(tb testing.TB, spec string, n int) (Learner, [][]byte) {
	ls := []Learner{mustNew(tb, spec, 5), mustNew(tb, spec, 5)}
	xs, ys := stream(ls[0].Info().Task, 2*n+40, 5, 51)
	if n >= 40 {
		_, ls = shareRun{spec: spec, P: 2, S: 20, L: 1}.run(tb, xs[:2*n], ys[:2*n])
	}
	for i := 2 * n; i < 2*n+40; i += 2 {
		ls[0].Learn(xs[i], ys[i])
		ls[1].Learn(xs[i+1], ys[i+1])
	}
	var ds [][]byte
	for _, l := range ls {
		d, err := l.(Sharer).ShareDelta()
		if err != nil {
			tb.Fatal(err)
		}
		ds = append(ds, d)
	}
	return ls[0], ds
}

// FuzzShareMerge feeds mutated deltas to ShareMerge: a refused delta must
// be refused with an error wrapping state.ErrCorrupt and leave the model
// unchanged; an accepted one must leave a model that marshals, restores,
// predicts and learns without panicking.
func FuzzShareMerge(f *testing.F) {
	for i, spec := range shareFuzzSpecs {
		for _, n := range []int{0, 400} {
			_, ds := shareFuzzTarget(f, spec, n)
			f.Add(uint8(2*i+min(n, 1)), ds[1])
		}
	}
	targets := map[uint8][]byte{}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		which %= uint8(2 * len(shareFuzzSpecs))
		spec := shareFuzzSpecs[which/2]
		st, ok := targets[which]
		if !ok {
			l, _ := shareFuzzTarget(t, spec, 400*int(which%2))
			st, _ = l.MarshalBinary()
			targets[which] = st
		}
		l := mustNew(t, spec, 5)
		if err := l.UnmarshalBinary(st); err != nil {
			t.Fatal(err)
		}
		err := l.(Sharer).ShareMerge([]SharedDelta{{Partition: 1, Data: data}})
		if err != nil {
			if !errors.Is(err, state.ErrCorrupt) {
				t.Fatalf("%s: error %v does not wrap ErrCorrupt", spec, err)
			}
			if after, _ := l.MarshalBinary(); !bytes.Equal(st, after) {
				t.Fatalf("%s: a refused delta changed the model", spec)
			}
			return
		}
		b, err := l.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if err := mustNew(t, spec, 5).UnmarshalBinary(b); err != nil {
			t.Fatalf("%s: the merged state does not restore: %v", spec, err)
		}
		xs, ys := stream(l.Info().Task, 20, 5, 52)
		for i := range xs {
			l.Predict(xs[i])
			l.Learn(xs[i], ys[i])
		}
		if _, err := l.(Sharer).ShareDelta(); err != nil {
			t.Fatal(err)
		}
	})
}

// One shared copy with its own deltas only (P = 1) is the plain learner
// until the plain learner's INIT (bit-identical Stage-1 scores: merging
// its own entries keeps their order), and learns at least as well
// afterwards (at most 1 point more mistakes on the contract stream; it
// differs by INIT at a sync point, the replay and the ONS carried over
// update rounds; measured: 16.2 % against 23.6 %).
func TestForksShareOneCopyIsPlain(t *testing.T) {
	base := strings.Replace(forksContractBase, "rho=300", "rho=400", 1)
	xs, ys := stream(Classification, 3000, 5, 37)
	plain := mustNew(t, "forks:"+base+",c=0", 5).(*FORKS)
	want := make([]float64, len(xs))
	initAt := -1
	for i := range xs {
		want[i] = plain.Learn(xs[i], ys[i])
		if initAt < 0 && plain.sk.ready {
			initAt = i
		}
	}
	got, _ := shareRun{spec: "forks:" + base + ",shared=true", P: 1, S: 50, L: 1}.run(t, xs, ys)
	if initAt < 10 {
		t.Fatalf("INIT at %d", initAt)
	}
	for i := 0; i < initAt; i++ {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("event %d (before INIT at %d): score %v, plain %v", i, initAt, got[i], want[i])
		}
	}
	rate := func(f []float64) float64 { return mistakeRate(f, ys) }
	if rate(got) > rate(want)+0.01 {
		t.Fatalf("shared P = 1: %.2f %% mistakes, plain %.2f %%", 100*rate(got), 100*rate(want))
	}
	t.Logf("shared P = 1: %.2f %% mistakes, plain %.2f %%", 100*rate(got), 100*rate(want))
}

// mistakeRate is the fraction of scores whose sign is not the label's (a
// score of 0 is a mistake).
func mistakeRate(scores, ys []float64) float64 {
	m := 0
	for i, f := range scores {
		if f*ys[i] <= 0 {
			m++
		}
	}
	return float64(m) / float64(len(scores))
}

// refuser returns a check that merging ds into a is refused with
// ErrCorrupt and leaves a unchanged (what prefixes the messages), after
// checking that every truncation of the good delta is refused.
func refuser(t *testing.T, a Learner, what string, good []byte) func(string, ...SharedDelta) {
	before, _ := a.MarshalBinary()
	refuse := func(how string, ds ...SharedDelta) {
		t.Helper()
		err := a.(Sharer).ShareMerge(ds)
		if err == nil || !errors.Is(err, state.ErrCorrupt) {
			t.Fatalf("%s, %s: error %v, want ErrCorrupt", what, how, err)
		}
		if after, _ := a.MarshalBinary(); !bytes.Equal(before, after) {
			t.Fatalf("%s, %s: a refused merge changed the model", what, how)
		}
	}
	for cut := 0; cut < len(good); cut += max(1, len(good)/97) {
		refuse(fmt.Sprintf("truncated at %d", cut), SharedDelta{Partition: 1, Data: good[:cut]})
	}
	return refuse
}

// BenchmarkForksShareMerge: one Stage-2 sync point of 16 partitions at the
// paper's k = 10 (decode 16 deltas, A += Σ ΔA, Cholesky inverse, v);
// ShareDelta alone in the sub-benchmark "delta".
func BenchmarkForksShareMerge(b *testing.B) {
	spec := "forks:sigma=1.2,budget=100,k=10,rho=1000000,shared=true"
	const P = 16
	xs, ys := stream(Classification, 40*P*20, 5, 61)
	_, ls := shareRun{spec: spec, P: P, S: 40, L: 1}.run(b, xs, ys)
	if !ls[0].(*FORKS).sk.ready {
		b.Fatal("not in Stage 2")
	}
	ds := make([]SharedDelta, P)
	for q := range P {
		d, _ := ls[q].(Sharer).ShareDelta()
		ds[q] = SharedDelta{Partition: q, Own: q == 0, Data: d}
	}
	st, _ := ls[0].MarshalBinary()
	b.Run("merge", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			_ = ls[0].UnmarshalBinary(st)
			b.StartTimer()
			if err := ls[0].(Sharer).ShareMerge(ds); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("delta", func(b *testing.B) {
		for b.Loop() {
			_, _ = ls[1].(Sharer).ShareDelta()
		}
	})
}

// A shared copy whose own view of the buffer fills before a sync point has
// merged B̃ entries builds a local basis and predicts with it (as an
// independent FORKS would) until the shared INIT, which carries its ONS
// into the shared basis; a copy restored in the local phase continues
// bit-identically.
func TestForksShareLocalBasis(t *testing.T) {
	spec := "forks:sigma=1,budget=10,sm=4,k=3,rho=150,shared=true"
	xs, ys := stream(Classification, 1200, 5, 38)
	const P, S = 2, 200
	sawLocal, sawShared := false, false
	cut := -1
	r := shareRun{spec: spec, P: P, S: S, L: 1}
	r.hook = func(p, i int, ls []Learner) {
		f := ls[p].(*FORKS)
		if f.loc != nil {
			if f.sk.ready {
				t.Fatal("a local basis after the shared INIT")
			}
			sawLocal = true
			if cut < 0 && p == 1 {
				cut = i
			}
		}
		if f.sk.ready {
			sawShared = true
		}
	}
	want, wls := r.run(t, xs, ys)
	if !sawLocal || !sawShared {
		t.Fatalf("local basis %v, shared INIT %v: the run does not cover the phases", sawLocal, sawShared)
	}
	// Restore copy 1 at the first event of its local phase.
	r.hook = func(p, i int, ls []Learner) {
		if i != cut {
			return
		}
		st, _ := ls[p].MarshalBinary()
		nl := mustNew(t, spec, 5)
		if err := nl.UnmarshalBinary(st); err != nil {
			t.Fatal(err)
		}
		if nl.(*FORKS).loc == nil {
			t.Fatal("the restored copy has no local basis")
		}
		ls[p] = nl
	}
	got, gls := r.run(t, xs, ys)
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("event %d differs after a restore in the local phase", i)
		}
	}
	for p := range P {
		a, _ := wls[p].MarshalBinary()
		b, _ := gls[p].MarshalBinary()
		if !bytes.Equal(a, b) {
			t.Fatalf("final state of copy %d differs", p)
		}
	}
}

// resetForksCache empties the basis cache (forks_basiscache.go) and its
// hit count.
func resetForksCache() {
	forksCache.mu.Lock()
	defer forksCache.mu.Unlock()
	forksCache.upd, forksCache.xfer, forksCache.init = boundedMap[forksUpdKey, *sketchState]{}, boundedMap[forksXferKey, forksXfer]{}, boundedMap[forksInitKey, forksInit]{}
	forksCache.nogd = boundedMap[nogdMapKey, nogdMap]{}
	forksCache.nogdProj = boundedMap[nogdProjKey, []float64]{}
	forksCache.hits = 0
}

// The basis cache changes nothing: with it and without it, every shared
// configuration (update rounds with TISVD and rsvd, max_stored replacement,
// landmark replacement, transfers) gives the same scores and the same final
// state of every copy, byte for byte, and with it the copies after the
// first take their update rounds and transfers from the cache.
func TestForksBasisCacheExact(t *testing.T) {
	for _, spec := range forksShareSpecs {
		t.Run(spec, func(t *testing.T) {
			testBasisCacheExact(t, spec, func(t *testing.T, ls []Learner) {
				if l := ls[0].(*FORKS); l.sk.nUpd < 2 {
					t.Fatalf("%d update rounds: the spec does not exercise them", l.sk.nUpd)
				}
			}, nil)
		})
	}
}

// testBasisCacheExact runs 4 shared copies of spec with the basis cache
// and without it, and requires the same scores and final states byte for
// byte, and that the cache served something. check sees the copies of the
// run without the cache (the spec must exercise what the cache keeps),
// cached (if not nil) the cache after the run with it.
func testBasisCacheExact(t *testing.T, spec string, check func(*testing.T, []Learner), cached func(*testing.T)) {
	defer func(off bool) { forksCacheOff = off; resetForksCache() }(forksCacheOff)
	task := taskOf(t, spec)
	xs, ys := stream(task, 3600, 5, 31)
	run := func(off bool) ([]float64, [][]byte, int) {
		forksCacheOff = off
		resetForksCache()
		scores, ls := shareRun{spec: spec, P: 4, S: 40, L: 1}.run(t, xs, ys)
		states := make([][]byte, len(ls))
		for p, l := range ls {
			b, err := l.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			states[p] = b
		}
		if off {
			check(t, ls)
		}
		return scores, states, forksCache.hits
	}
	s0, st0, _ := run(true)
	s1, st1, hits := run(false)
	if hits == 0 {
		t.Fatal("the cache served nothing")
	}
	if cached != nil {
		cached(t)
	}
	for i := range s0 {
		if math.Float64bits(s0[i]) != math.Float64bits(s1[i]) {
			t.Fatalf("score %d: %v with the cache, %v without", i, s1[i], s0[i])
		}
	}
	for p := range st0 {
		if !bytes.Equal(st0[p], st1[p]) {
			t.Fatalf("copy %d's final state differs with the cache", p)
		}
	}
}

// Copies of two runs in concurrent goroutines share the basis cache (as a
// consumer's workers do) and end in the same states as each other; run it
// with -race.
func TestForksBasisCacheConcurrent(t *testing.T) {
	defer resetForksCache()
	resetForksCache()
	spec := forksShareSpecs[0]
	xs, ys := stream(taskOf(t, spec), 2400, 5, 41)
	states := make([][][]byte, 2)
	done := make(chan struct{}, 2)
	for r := range states {
		go func() {
			defer func() { done <- struct{}{} }()
			_, ls := shareRun{spec: spec, P: 3, S: 40, L: 1}.run(t, xs, ys)
			for _, l := range ls {
				b, err := l.MarshalBinary()
				if err != nil {
					t.Error(err)
					return
				}
				states[r] = append(states[r], b)
			}
		}()
	}
	<-done
	<-done
	if len(states[0]) != 3 || len(states[1]) != 3 {
		t.Fatal("a run failed")
	}
	for p := range states[0] {
		if !bytes.Equal(states[0][p], states[1][p]) {
			t.Fatalf("copy %d: the concurrent runs' states differ", p)
		}
	}
}

// cacheDo is single flight: copies that look a key up while another copy
// computes it wait for that result instead of computing it again (the
// copies of a process reach their sync points together, so without the
// wait every one of them computed every transfer), and a computation that
// panics releases the waiters, which then compute for themselves.
func TestForksBasisCacheSingleFlight(t *testing.T) {
	defer resetForksCache()
	resetForksCache()
	var b boundedMap[int, int]
	var computed atomic.Int32
	release := make(chan struct{})
	first := make(chan int)
	go func() {
		v, _ := cacheDo(&b, 7, func() int { computed.Add(1); <-release; return 42 })
		first <- v
	}()
	for { // wait until the first copy holds the key
		forksCache.mu.Lock()
		_, held := b.m[7]
		forksCache.mu.Unlock()
		if held {
			break
		}
		runtime.Gosched()
	}
	const waiters = 8
	var wg sync.WaitGroup
	var arrived atomic.Int32
	hits := make([]bool, waiters)
	vals := make([]int, waiters)
	for i := range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			arrived.Add(1)
			vals[i], hits[i] = cacheDo(&b, 7, func() int { computed.Add(1); return -1 })
		}()
	}
	for arrived.Load() < waiters {
		runtime.Gosched()
	}
	time.Sleep(20 * time.Millisecond) // let them reach the wait (not an assertion on time)
	close(release)
	if v := <-first; v != 42 {
		t.Fatalf("first copy got %d", v)
	}
	wg.Wait()
	if n := computed.Load(); n != 1 {
		t.Errorf("computed %d times, want once", n)
	}
	for i := range waiters {
		if vals[i] != 42 || !hits[i] {
			t.Errorf("waiter %d: %d (hit %v), want 42 from the cache", i, vals[i], hits[i])
		}
	}

	// A panicking computation: the waiter computes its own result.
	var c boundedMap[int, int]
	held := make(chan struct{})
	boom := make(chan struct{})
	go func() {
		defer func() { _ = recover() }()
		cacheDo(&c, 1, func() int { close(held); <-boom; panic("boom") })
	}()
	<-held
	got := make(chan int)
	go func() {
		v, hit := cacheDo(&c, 1, func() int { return 5 })
		if hit {
			v = -v
		}
		got <- v
	}()
	time.Sleep(20 * time.Millisecond)
	close(boom)
	if v := <-got; v != 5 {
		t.Errorf("after a panic: %d, want the waiter's own 5", v)
	}
}
