package learner

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"okstream/learner/state"
)

// The Sharer contract, for every contract spec whose learner implements it:
// ShareDelta is deterministic and does not change predictions; a model
// restored mid-period (its sync snapshot is in the state) gives the same
// deltas and merges as the original; a delta that does not decode, or of
// another spec, is refused with the model unchanged; Learn allocates
// nothing after a merge; a Mixer's ShareApply(ShareMix) equals ShareMerge.
func TestSharerContract(t *testing.T) {
	n := 0
	for _, spec := range contractSpecs {
		if l, _ := New(spec, 5); l != nil {
			s, ok := l.(Sharer)
			if !ok {
				continue
			}
			if _, err := s.ShareDelta(); err != nil {
				continue // a configuration that cannot share (e.g. linear classification)
			}
		}
		n++
		t.Run(spec, func(t *testing.T) {
			xs, ys := stream(taskOf(t, spec), 600, 5, 4)
			mk := func() (Learner, Sharer) { l, _ := New(spec, 5); return l, l.(Sharer) }
			a, as := mk()
			o, os := mk() // another partition's copy
			var deltas [][]byte
			for period := 0; period < 4; period++ {
				for i := 100 * period; i < 100*period+100; i++ {
					if i%2 == 0 {
						a.Learn(xs[i], ys[i])
					} else {
						o.Learn(xs[i], ys[i])
					}
				}
				// Mid-period: a restored copy must continue identically.
				st, _ := a.MarshalBinary()
				b, bs := mk()
				if err := b.UnmarshalBinary(st); err != nil {
					t.Fatal(err)
				}
				p0 := a.Predict(xs[0])
				da, err := as.ShareDelta()
				if err != nil {
					t.Fatal(err)
				}
				db, _ := bs.ShareDelta()
				da2, _ := as.ShareDelta()
				if !bytes.Equal(da, db) || !bytes.Equal(da, da2) {
					t.Fatalf("period %d: ShareDelta differs after a restore or a second call", period)
				}
				if math.Float64bits(a.Predict(xs[0])) != math.Float64bits(p0) {
					t.Fatalf("period %d: ShareDelta changed a prediction", period)
				}
				do, _ := os.ShareDelta()
				deltas = append(deltas, do)
				in := []SharedDelta{{Partition: 0, Epoch: int64(period), Own: true, Data: da}, {Partition: 1, Epoch: int64(period), Data: do}}
				if err := as.ShareMerge(in); err != nil {
					t.Fatal(err)
				}
				// A Mixer's restored copy merges through ShareApply with
				// the term another copy computed: the same bits.
				if mx, ok := bs.(Mixer); ok {
					m, err := os.(Mixer).ShareMix(in)
					if err != nil {
						t.Fatal(err)
					}
					if err := mx.ShareApply(in, m); err != nil {
						t.Fatal(err)
					}
				} else if err := bs.ShareMerge(in); err != nil {
					t.Fatal(err)
				}
				if err := os.ShareMerge([]SharedDelta{{Partition: 0, Epoch: int64(period), Data: da}, {Partition: 1, Epoch: int64(period), Own: true, Data: do}}); err != nil {
					t.Fatal(err)
				}
				sa, _ := a.MarshalBinary()
				sb, _ := b.MarshalBinary()
				if !bytes.Equal(sa, sb) {
					t.Fatalf("period %d: merged states differ between the original and the restored copy", period)
				}
			}
			// After a merge, a delta covers only what was learnt since.
			if d, _ := as.ShareDelta(); bytes.Equal(d, deltas[0]) {
				t.Fatal("the delta after a merge equals an old one")
			}
			// Refusals leave the model unchanged.
			before, _ := a.MarshalBinary()
			other, _ := New(spec, 6) // another dimension
			od, _ := other.(Sharer).ShareDelta()
			for i, bad := range [][]byte{nil, {1, 2, 3}, deltas[0][:len(deltas[0])-1], od} {
				err := as.ShareMerge([]SharedDelta{{Partition: 1, Data: deltas[1]}, {Partition: 2, Data: bad}})
				if !errors.Is(err, state.ErrCorrupt) {
					t.Fatalf("bad delta %d: err %v, want one wrapping ErrCorrupt", i, err)
				}
				if after, _ := a.MarshalBinary(); !bytes.Equal(before, after) {
					t.Fatalf("bad delta %d: a refused merge changed the model", i)
				}
			}
			if allocs := testing.AllocsPerRun(50, func() { a.Learn(xs[1], ys[1]) }); allocs != 0 {
				t.Fatalf("Learn allocates %v times after a merge", allocs)
			}
		})
	}
	if n == 0 {
		t.Fatal("no contract spec implements Sharer")
	}
	t.Logf("%d specs checked", n)
}

// TestFOGDMixOwn checks what mix=own merges against mix=mean on the same
// two copies, in terms of the deltas' decoded (8-bit) values D_a, D_o:
// with mean, w_a ← w_a − D_a + (D_a + D_o)/2; with own, w_a ← w_a + D_o/2.
// It also checks the codes against the weights they encode (within half a
// quantisation step).
func TestFOGDMixOwn(t *testing.T) {
	xs, ys := stream(Classification, 200, 4, 9)
	for _, mix := range []string{"mean", "own"} {
		mk := func() *FOGD { l, _ := New("fogd:sigma=1,budget=10,mix="+mix, 4); return l.(*FOGD) }
		a, o := mk(), mk()
		for i := range xs {
			if i%2 == 0 {
				a.Learn(xs[i], ys[i])
			} else {
				o.Learn(xs[i], ys[i])
			}
		}
		wa, wo := slices.Clone(a.w), slices.Clone(o.w)
		da, _ := a.ShareDelta()
		do, _ := o.ShareDelta()
		in := []SharedDelta{{Partition: 0, Own: true, Data: da}, {Partition: 1, Data: do}}
		qa, err := decodeQ8(&a.base, in[0], len(wa))
		if err != nil {
			t.Fatal(err)
		}
		qo, _ := decodeQ8(&a.base, in[1], len(wa))
		if err := a.ShareMerge(in); err != nil {
			t.Fatal(err)
		}
		moved := 0.0
		for j := range wa {
			Da, Do := state.Dequant8(qa.codes[j], qa.scale), state.Dequant8(qo.codes[j], qo.scale)
			if math.Abs(Do-wo[j]) > qo.scale/2*(1+1e-12) || math.Abs(Da-wa[j]) > qa.scale/2*(1+1e-12) {
				t.Fatalf("mix=%s: code %d decodes to %v / %v for weights %v / %v (scales %v / %v)", mix, j, Da, Do, wa[j], wo[j], qa.scale, qo.scale)
			}
			want := wa[j] - Da + (Da+Do)/2
			if mix == "own" {
				want = wa[j] + Do/2
			}
			if d := math.Abs(a.w[j] - want); d > 1e-12*(1+math.Abs(want)) {
				t.Fatalf("mix=%s: w[%d] = %v after the merge, want %v", mix, j, a.w[j], want)
			}
			moved += math.Abs(wo[j])
		}
		if moved == 0 {
			t.Fatal("the other copy learnt nothing: the test cannot tell the modes apart")
		}
	}
}

// TestFOGDShareErrorFeedback checks that quantising the deltas loses
// nothing, only delays it: copy A learns, copy B never does and only
// merges, for many sync periods. B then holds (1/2) Σ of what A sent, and
// what A sent plus A's unsent residual is everything A learnt: 2·w_B +
// res_A = Σ A's steps. Without the residual carried to the next delta
// (error feedback), the quantisation errors of every period would be lost
// to B and the identity fails.
func TestFOGDShareErrorFeedback(t *testing.T) {
	xs, ys := stream(Classification, 2000, 4, 11)
	mk := func() *FOGD { l, _ := New("fogd:sigma=1,budget=10", 4); return l.(*FOGD) }
	a, b := mk(), mk()
	learnt := make([]float64, len(a.w))
	var prevA, prevB []byte
	for period := 0; period < 100; period++ {
		for i := 20 * period; i < 20*period+20; i++ {
			a.Learn(xs[i], ys[i])
		}
		for j := range learnt { // A's steps since its last sync
			learnt[j] += a.w[j]
			if a.sh.shared {
				learnt[j] -= a.sh.snap[j]
			}
		}
		da, _ := a.ShareDelta()
		db, _ := b.ShareDelta()
		var inA, inB []SharedDelta // lag 1: the previous period's deltas
		if prevA != nil {
			inA = []SharedDelta{{Partition: 0, Own: true, Data: prevA}, {Partition: 1, Data: prevB}}
			inB = []SharedDelta{{Partition: 0, Data: prevA}, {Partition: 1, Own: true, Data: prevB}}
		}
		if err := a.ShareMerge(inA); err != nil {
			t.Fatal(err)
		}
		if err := b.ShareMerge(inB); err != nil {
			t.Fatal(err)
		}
		prevA, prevB = da, db
	}
	// The last deltas are not merged yet: B lacks them, A holds them in w.
	last, _ := decodeQ8(&a.base, SharedDelta{Data: prevA}, len(a.w))
	worst := 0.0
	for j := range learnt {
		sent := 2*b.w[j] + state.Dequant8(last.codes[j], last.scale)
		got := sent + a.sh.res[j]
		worst = max(worst, math.Abs(got-learnt[j])/(1+math.Abs(learnt[j])))
	}
	if worst > 1e-9 {
		t.Fatalf("2·w_B + last delta + res_A differs from A's steps by %.3g (relative): quantisation lost what A learnt", worst)
	}
	if slices.Max(a.sh.res) == 0 && slices.Min(a.sh.res) == 0 {
		t.Fatal("no residual: the test does not exercise the quantisation")
	}
}

// TestPKAWVShareExact checks that PKAWV-Taylor's sharing is exact: two
// copies that each learn every other event of a stream and merge their
// deltas at every sync point (lag 0, both copies) predict, after the last
// merge, what one model that learnt the whole stream predicts (to 1e-9
// relative: the statistics are summed in another order and the factor is
// computed afresh). λ is added once: a copy that counted it per partition
// would be off by λ on the diagonal. It also checks that a delta that
// makes λI + S not positive definite is refused with the model unchanged,
// and that basis=nystrom refuses to share.
func TestPKAWVShareExact(t *testing.T) {
	const d, n, periods = 4, 1200, 6
	xs, ys := pkawvData(n, d, 41, 1)
	probes, _ := pkawvData(60, d, 42, 1.1)
	for _, spec := range []string{"pkawv:order=3,lambda=0.5", "pkawv:order=2,variant=ridge,sigma=0.7,lambda=2"} {
		single := pkawvNew(t, spec, d)
		a, o := pkawvNew(t, spec, d), pkawvNew(t, spec, d)
		as, os := a.(Sharer), o.(Sharer)
		for p := range periods {
			for i := p * n / periods; i < (p+1)*n/periods; i++ {
				single.Learn(xs[i], ys[i])
				if i%2 == 0 {
					a.Learn(xs[i], ys[i])
				} else {
					o.Learn(xs[i], ys[i])
				}
			}
			da, err := as.ShareDelta()
			if err != nil {
				t.Fatal(err)
			}
			do, _ := os.ShareDelta()
			if err := as.ShareMerge([]SharedDelta{{Partition: 0, Epoch: int64(p), Own: true, Data: da}, {Partition: 1, Epoch: int64(p), Data: do}}); err != nil {
				t.Fatal(err)
			}
			if err := os.ShareMerge([]SharedDelta{{Partition: 0, Epoch: int64(p), Data: da}, {Partition: 1, Epoch: int64(p), Own: true, Data: do}}); err != nil {
				t.Fatal(err)
			}
		}
		worst, spread := 0.0, 0.0
		for _, x := range probes {
			want := single.Predict(x)
			worst = max(worst, relDiff(a.Predict(x), want), relDiff(o.Predict(x), want))
			spread = max(spread, math.Abs(want-single.Predict(probes[0])))
		}
		if worst > 1e-9 {
			t.Errorf("%s: shared copies predict %.3g (relative) away from the model of the whole stream", spec, worst)
		}
		if spread == 0 {
			t.Fatalf("%s: constant predictions: the test cannot tell", spec)
		}
		// Each copy still counts only its own events.
		if a.Info().Updates != n/2 {
			t.Errorf("%s: %d updates after sharing, want the own %d", spec, a.Info().Updates, n/2)
		}

		// A non-finite delta (a corrupt peer) is refused, the copy unchanged.
		bad := o.(*PKAWV)
		bad.st[0] = math.NaN()
		db, _ := os.ShareDelta()
		before, _ := a.MarshalBinary()
		if err := as.ShareMerge([]SharedDelta{{Partition: 1, Data: db}}); !errors.Is(err, state.ErrCorrupt) {
			t.Errorf("%s: a NaN delta merged: err %v", spec, err)
		}
		if after, _ := a.MarshalBinary(); !bytes.Equal(before, after) {
			t.Errorf("%s: a refused merge changed the copy", spec)
		}
	}

	ny := pkawvNew(t, "pkawv:basis=nystrom,max_points=20", d).(Sharer)
	if _, err := ny.ShareDelta(); err == nil || !strings.Contains(err.Error(), "not additive") {
		t.Errorf("Nyström ShareDelta: %v", err)
	}
	if err := ny.ShareMerge(nil); err == nil || !strings.Contains(err.Error(), "not additive") {
		t.Errorf("Nyström ShareMerge: %v", err)
	}
}

// Sum-mode sharing (ridge's ΔG, Δb; PKAWV-Taylor's ΔS, Δb) merges as
// v − Σ_own d + Σ_all d, with Σ_all shared by the copies of a process
// (Mixer): the same statistics as adding the others' deltas to v directly,
// up to rounding. Compared after every merge of a 3-copy run, within 1e-12
// relative; it fails if the own delta is not subtracted.
func TestVecShareSumMixMatchesDirectSum(t *testing.T) {
	stats := func(l Learner) ([]float64, *vecShare, *base) {
		switch m := l.(type) {
		case *Linear:
			return m.st, &m.sh, &m.base
		case *PKAWV:
			return m.st, &m.sh, &m.base
		}
		t.Fatalf("%T is not a sum-mode sharer", l)
		return nil, nil, nil
	}
	for _, spec := range []string{"linear:loss=square", "pkawv:order=2,variant=ridge,sigma=0.7,lambda=2"} {
		t.Run(spec, func(t *testing.T) {
			xs, ys := stream(Regression, 1800, 4, 23)
			checked := 0
			r := shareRun{spec: spec, P: 3, S: 20, L: 1}
			r.merge = func(p int, l Learner, ds []SharedDelta) func() {
				st, sh, b := stats(l)
				want := slices.Clone(st)
				for _, sd := range ds {
					if sd.Own {
						continue
					}
					x, err := sh.decodeSum(b, sd, len(want))
					if err != nil {
						t.Fatal(err)
					}
					for j, v := range x {
						want[j] += v
					}
				}
				return func() {
					checked++
					got, _, _ := stats(l)
					requireMixClose(t, p, "statistics", got, want, 1e-12)
				}
			}
			r.run(t, xs, ys)
			if checked < 30 {
				t.Fatalf("only %d merges compared", checked)
			}
		})
	}
}

// partitionsPresent counts distinct partitions in one pass for deltas in
// partition order and by the quadratic scan otherwise; both must agree
// with a set's count.
func TestPartitionsPresent(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		n := rng.IntN(40)
		d := make([]SharedDelta, n)
		for i := range d {
			d[i] = SharedDelta{Partition: rng.IntN(12), Epoch: int64(rng.IntN(3))}
		}
		if trial%2 == 0 {
			slices.SortFunc(d, func(a, b SharedDelta) int { return a.Partition - b.Partition })
		}
		set := map[int]bool{}
		for _, sd := range d {
			set[sd.Partition] = true
		}
		if got := partitionsPresent(d); got != len(set) {
			t.Fatalf("trial %d: %d distinct partitions counted, want %d (%v)", trial, got, len(set), d)
		}
	}
}
