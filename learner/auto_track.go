package learner

// auto, track=true (the default) — weights that switch, and a bank that
// restarts on a detected change.
//
// Successive halving and AdaHedge on cumulative losses (auto.go) are made
// for a stationary stream: a member pruned at event 1,000 never returns,
// and the weights of members that trail by a cumulative loss gap G are
// exp(−ηG), a gap that a change at event 10⁶ takes ~G events to close.
// track adds three mechanisms (and a second linear member), all
// deterministic, bounded in cost and checkpointed.
//
// 1. Fixed Share weights (Herbster & Warmuth, "Tracking the Best Expert",
// Machine Learning 32(2), 1998, §5), in the form for a time-varying
// learning rate of Cesa-Bianchi, Gaillard, Lugosi & Stoltz ("Mirror Descent
// Meets Fixed Share (and feels no regret)", NIPS 2012): after each round's
// exponential update at AdaHedge's next rate η' = ln K/Δ, the normalised
// weights v are mixed with the uniform distribution,
//
//	v'_i = (1 − α_t)·v_i + α_t/K,  α_t = 1/(t + 1),
//
// t the events since the last restart plus halving (a prior that nothing
// switches before the first pruning: shareCount). auto keeps its weights as losses
// (w_i = exp(−η(L̃_i − min L̃))), so the share is applied to the losses the
// weights come from: L̃_i ← min L̃ − ln(v'_i/v'_max)/η'. Without the share
// (α = 0) L̃ is the cumulative loss and auto is AdaHedge exactly; with it
// no member's weight falls below α_t/K of the leader's at the rate it is
// shared at, so a trailing member that becomes the best takes the weight
// after a loss gap of about ln(Kt)/η instead of its whole cumulative gap
// (the tracking regret of Fixed Share: about ln(K) + ln(T)·(1 + switches)
// over η, in place of AdaHedge's bound against one fixed member; with a
// decreasing α_t it needs no known horizon or number of switches, the
// "decreasing switching rate" of Koolen & de Rooij, "Universal Codes From
// Switching Strategies", IEEE Trans. IT 59(11), 2013). The losses pruning
// compares stay the plain cumulative ones: Fixed Share only moves weight
// between survivors.
//
// 2. Restart on a detected change (what ADWIN-based learners do, Bifet &
// Gavaldà, "Learning from Time-Changing Data with Adaptive Windowing",
// SDM 2007, §4). ADWIN (learner/drift, δ = 0.002) watches auto's own
// normalised loss: (clip(p̂) − y)²/4 for classification,
// (clip(p̂) − y)²/(hi − lo)² (at most 1) for regression. When it cuts its
// window and the recent part's mean loss is the higher (an increase: a
// decrease means auto is learning), and the bank is at its steady size
// (pruning has reached keep members, so no restart is in progress), auto
// restarts:
//   - the survivors stay, with their models (a false alarm costs little:
//     they keep leading);
//   - fresh members (new state, the same configurations) join them: one
//     per survivor, and the σ grid's two neighbours (2^±1/per_octave) of the
//     best kernel survivor at its η, if on the grid — this is how a
//     configuration pruned long ago comes back: at most keep + 2 new ones;
//   - every member's loss, the Fixed Share losses and AdaHedge's Δ restart
//     at 0 (follow the leader since the change), and successive halving
//     runs again from the restart: at restart + halving, + 2·halving, ...
//     until keep members are left.
// A second ADWIN watches the inputs: s(x) = mean_j min(((x_j − rm_j)/rs_j)², 9)/9
// against the reference statistics of item 3 (in [0, 1]); a cut of its
// window either way (the inputs moved, spread or gathered) is a shift, and
// triggers the same restart (the fresh members are then re-standardised
// to the new inputs, item 3). A shift that changes nothing costs one
// restart: the survivors keep leading and the fresh members are pruned.
// Fresh members matter because the models themselves adapt slowly deep
// in a stream: AdaGrad's steps (the linear member, softmax heads) and
// FOGD's weights carry the whole past; a fresh member learns the new
// concept at the speed auto learned the first one. The detector's window
// restarts with the bank.
//
// The linear members. With track the bank starts with two linear members
// (the squared-hinge one and online logistic regression: autoLinearLoss),
// both O(d); pruning halves the others and keeps the better linear member
// (by loss), which is never dropped after that. A restart adds both linear
// configurations fresh, and the next pruning keeps the best linear member
// again, old or fresh.
//
// Cost: between restarts, as without track plus one more O(d) linear
// member, O(K) exp and log for the share, O(d) for the input statistic and
// the transforms of item 3. During a restart the bank holds at most
// 2·keep + 2 kernel members (6 at the defaults) and 3 linear ones for
// halving events, then 3 and 1, then keep and 1; a restart cannot begin
// before the previous one has been pruned back, so over any stretch the
// kernel members average at most (6 + 3)/2 = 4.5 while restarts follow one
// another back to back, and keep between them. The detectors cost ~30 ns
// per event each (learner/drift).
//
// 3. Fresh members re-standardised. The self-tuning wrapper's
// standardisation (selftune.go) and σ̂ are frozen after its warm-up, and
// every member shares them; re-standardising everyone would break the
// members that store examples or weights in the old scale. So only the
// fresh members of a restart get new scales, and only when the inputs
// shifted (the input detector fired within 2·halving events before the
// restart, or fires while the fresh members are young; otherwise they read
// the inputs as the survivors do): auto keeps the running mean
// and variance of its input over the first halving events (the
// reference, rm and rs) and, after each restart, over the first halving
// events since it; the fresh members see u_j = rm_j + (x_j − m_j)·rs_j/s_j
// (the factor clipped to [1/64, 64]), which follows the running statistics
// m, s while they form and then stays fixed. After a shift of the features
// (a sensor recalibrated: x → 4x + 3 in TestAutoTrackRestandardisesFreshMembers)
// the fresh members see inputs distributed as the first ones were, at the
// same σ grid; the survivors keep their own. A coordinate whose shift or
// factor is within the noise of halving events' statistics is left as it
// is (setScale), so a sparse input stays sparse. Cost: O(d) per event
// for halving events after each restart, and O(d) per event for each
// generation of re-standardised survivors (usually one).
//
// Reported: Changes (restarts) and Alarms (rises of the loss and shifts of
// the inputs the detectors reported, acted on or not), through
// learner.ChangeCount for metrics and logs.

import (
	"fmt"
	"math"
	"slices"

	"okstream/learner/drift"
	"okstream/learner/state"
)

// autoTrack is auto's tracking state (track=true).
type autoTrack struct {
	tl      []float64 // Fixed Share losses per member (the weights' losses)
	origin  uint64    // updates at the last restart (0: none yet)
	halving uint64    // the pruning period n0
	changes int64     // restarts
	alarms  int64     // changes detected, acted on or not: rises of the loss, shifts of the inputs
	shifts  int64     // of which shifts of the inputs (fdet)
	// lastShift is the update count at the last shift of the inputs (0:
	// none).
	lastShift uint64
	det       *drift.ADWIN // on auto's normalised loss
	fdet      *drift.ADWIN // on the input statistic (featuresShifted); nil without re-standardisation (dimension 0)
	maxBank   int          // the most members the bank can hold (restore bound)

	// Re-standardisation of fresh members (autoScale below), over auto's
	// input of dimension d.
	km, kv []float64 // (d) the running mean and variance of the inputs since the last restart (or the start), over at most halving of them
	rm, rs []float64 // (d) the reference mean and scale: the first halving inputs'; nil before
	gen    []int     // per member: its input transform, 0 the identity
	// featuresShifted's cache (derived from rm, rs; not in the state):
	// 1/rs (0 where rs = 0), the statistic's sum at x = 0 and the count of
	// coordinates it is over.
	zinv  []float64
	zbase float64
	zn    int
	tx    []autoScale
}

// autoScale is the input transform of the members a restart added:
// u = x ⊙ mul + add, which maps inputs of the mean km and scale √kv seen
// since the restart to the reference mean rm and scale rs (per
// coordinate). The newest transform follows the running statistics for
// the first halving inputs after its restart, then stays fixed.
type autoScale struct {
	mul, add []float64 // (d)
	u        []float64 // (d) scratch: this event's u
	done     bool      // u holds this event's input
	identity bool      // mul = 1 and add = 0: u is x
	fit      bool      // follows the running statistics (the inputs shifted); else stays the identity
}

// autoScaleMax bounds a coordinate's re-standardising factor (and its
// inverse): a coordinate whose spread collapsed (a sensor stuck at one
// value) is not blown up.
const autoScaleMax = 64

// autoTrackParam reads track (default true). track=false is auto as before
// tracking existed, with the same canonical spec, so that its states stay
// readable.
func autoTrackParam(p *Params) bool {
	v := p.Bool("track", true)
	if !v {
		delete(p.resolved, "track")
		p.local["track"] = "false"
	}
	return v
}

func newAutoTrack(members, keep, dim int, halving uint64) *autoTrack {
	det, err := drift.NewADWIN(drift.ADWINConfig{})
	if err != nil {
		panic(err) // the defaults are valid
	}
	tr := &autoTrack{tl: make([]float64, members), halving: halving, det: det, maxBank: max(members, 2*keep+4),
		km: make([]float64, dim), kv: make([]float64, dim), gen: make([]int, members)}
	if dim > 0 {
		tr.fdet, _ = drift.NewADWIN(drift.ADWINConfig{})
	}
	return tr
}

// newEvent marks the transforms' inputs stale (a new x). Nil-safe.
func (tr *autoTrack) newEvent() {
	if tr == nil {
		return
	}
	for g := range tr.tx {
		tr.tx[g].done = false
	}
}

// input returns member i's input for x: x itself, or x re-standardised
// by the member's transform (computed once per event and transform).
// Nil-safe.
func (tr *autoTrack) input(x []float64, i int) []float64 {
	if tr == nil || tr.gen[i] == 0 {
		return x
	}
	t := &tr.tx[tr.gen[i]-1]
	if t.identity {
		return x
	}
	if !t.done {
		for j, v := range x {
			t.u[j] = float64(v*t.mul[j]) + t.add[j]
		}
		t.done = true
	}
	return t.u
}

// observe updates the running statistics with x, after the members learnt
// it (Welford's update, products rounded explicitly so that the bits are
// the same on every platform), for the first halving inputs since the
// last restart (or the start): at the start they become the reference;
// after a restart the newest transform follows them. k is x's count since
// the restart.
func (tr *autoTrack) observe(x []float64, k uint64) {
	h := max(tr.halving, 2)
	if k > h {
		return
	}
	rho := 1 / float64(k)
	for j, v := range x {
		d := v - tr.km[j]
		tr.km[j] += float64(rho * d)
		tr.kv[j] = float64((1 - rho) * (tr.kv[j] + float64(rho*float64(d*d))))
	}
	switch {
	case tr.rs == nil && k == h:
		tr.rm = append([]float64(nil), tr.km...)
		tr.rs = make([]float64, len(tr.kv))
		for j, v := range tr.kv {
			tr.rs[j] = math.Sqrt(v)
		}
	case tr.rs != nil && len(tr.tx) > 0 && tr.origin > 0 && tr.tx[len(tr.tx)-1].fit:
		tr.setScale(&tr.tx[len(tr.tx)-1])
	}
}

// setScale sets t to map the running statistics to the reference. A
// coordinate's shift below 4/√h reference deviations, or factor within
// 3/√h of 1, h = halving the number of inputs the statistics are over, is
// within their noise (the mean of h inputs has a standard error of 1/√h
// deviations and their spread 1/√(2h)) and is left at 0 or 1: on a stream
// whose inputs did not move the transform is the identity with high
// probability, and a sparse input stays sparse.
func (tr *autoTrack) setScale(t *autoScale) {
	h := math.Sqrt(float64(max(tr.halving, 2)))
	shift, ratio := 4/h, 3/h
	t.identity = true
	for j := range t.mul {
		m := 1.0
		if s := math.Sqrt(tr.kv[j]); tr.rs[j] > 0 && s > 0 {
			m = math.Max(1.0/autoScaleMax, math.Min(autoScaleMax, tr.rs[j]/s))
		}
		if math.Abs(m-1) < ratio {
			m = 1
		}
		add := tr.rm[j] - float64(tr.km[j]*m)
		if math.Abs(add) < float64(shift*tr.rs[j]) {
			add = 0
		}
		t.mul[j], t.add[j] = m, add
		t.identity = t.identity && m == 1 && add == 0
	}
}

// newScale returns an identity transform for a restart's fresh members
// (observe then fits it to the inputs that follow).
func newScale(d int) autoScale {
	t := autoScale{mul: make([]float64, d), add: make([]float64, d), u: make([]float64, d)}
	for j := range t.mul {
		t.mul[j] = 1
	}
	t.identity = true
	return t
}

// share applies the Fixed Share step to the tracking losses after the
// round's losses a.f (auto.go: Learn) and the updated Δ.
func (a *Auto) share() {
	tr := a.tr
	for _, i := range a.alive {
		tr.tl[i] += a.f[i]
	}
	fixedShare(tr.tl, a.w, a.alive, adaHedgeRate(len(a.alive), a.delta, math.Inf(1)), tr.shareCount(a.updates))
}

// shareCount is the t of Fixed Share's α_t = 1/(t + 1) for the event after
// updates: the events since the last restart plus halving. The offset is
// a prior that the best member does not switch before the bank's first
// pruning, while every member is still learning fast: with α_t = 1/t from
// the first event the share flattened the early weights of the full bank
// and cost up to 0.5 points on the 1,000-event german file (auto:nogd
// 26.01 % against 25.50 % without tracking; 25.67 % with the offset).
// Long after a restart α_t is 1/t as before.
func (tr *autoTrack) shareCount(updates uint64) uint64 {
	return updates + 1 - tr.origin + tr.halving
}

// fixedShare mixes the weights exp(−η(tl_i − min tl)) of the members in
// alive with the uniform distribution at rate α = 1/(t+1) (t:
// autoTrack.shareCount), and writes the result back as losses
// (the file comment): tl_i ← min tl − ln(v'_i/v'_max)/η. At η = ∞ (follow
// the leader, Δ = 0) or with one member it does nothing. w is scratch
// (indexed like tl). Shared by auto and multi-class auto.
func fixedShare(tl, w []float64, alive []int, eta float64, t uint64) {
	k := len(alive)
	if k < 2 || math.IsInf(eta, 1) {
		return
	}
	alpha := 1 / float64(t+1)
	den := adaHedgeWeights(w, tl, alive, eta)
	lmin := math.Inf(1)
	for _, i := range alive {
		lmin = math.Min(lmin, tl[i])
	}
	u := alpha / float64(k)
	vmax := (1-alpha)/den + u // the leaders' shared weight (w = 1)
	for _, i := range alive {
		v := (1-alpha)*w[i]/den + u
		tl[i] = lmin - math.Log(v/vmax)/eta
	}
}

// detect feeds the round's normalised loss to ADWIN and restarts the bank
// on an increase when it is at its steady size.
func (a *Auto) detect(score, y float64, x []float64) {
	tr := a.tr
	d := a.clip(score) - y
	l := d * d / 4
	if a.task == Regression {
		r := a.hi - a.lo
		l = 0
		if r > 0 {
			l = math.Min(1, d*d/(r*r))
		}
	}
	rose := lossRose(tr.det, l)
	shifted := tr.featuresShifted(x)
	if !rose && !shifted {
		return
	}
	tr.alarms++
	if shifted {
		tr.shifts++
		tr.lastShift = a.updates
		// A shift found while a restart's fresh members are young (its
		// statistics still forming): they are re-standardised from now.
		if n := len(tr.tx); n > 0 && tr.origin > 0 && a.updates-tr.origin <= max(tr.halving, 2) {
			tr.tx[n-1].fit = true
		}
	}
	if a.next != 0 {
		return // the bank is still being pruned (at the start or after a restart)
	}
	a.restart()
}

// featuresShifted feeds the input statistic s(x) = mean over the
// coordinates of min(((x_j − rm_j)/rs_j)², 9)/9 (in [0, 1]; coordinates of
// reference scale 0 left out) to the feature detector, once the reference
// exists, and reports whether it cut its window (either way: a shift of
// the inputs' location or spread, or of their share of outliers). O(d).
func (tr *autoTrack) featuresShifted(x []float64) bool {
	if tr.fdet == nil || tr.rs == nil {
		return false
	}
	if tr.zinv == nil { // the reference's inverse scales and the zero input's terms, once
		tr.zinv = make([]float64, len(tr.rs))
		tr.zbase, tr.zn = 0, 0
		for j, r := range tr.rs {
			if r > 0 {
				tr.zinv[j] = 1 / r
				z := tr.rm[j] * tr.zinv[j]
				tr.zbase += math.Min(float64(z*z), 9)
				tr.zn++
			}
		}
	}
	if tr.zn == 0 {
		return false
	}
	sum := tr.zbase // the terms of x = 0, corrected where x_j ≠ 0
	for j, v := range x {
		if v == 0 || tr.zinv[j] == 0 {
			continue
		}
		z0 := tr.rm[j] * tr.zinv[j]
		z := (v - tr.rm[j]) * tr.zinv[j]
		sum += math.Min(float64(z*z), 9) - math.Min(float64(z0*z0), 9)
	}
	return tr.fdet.Add(math.Max(0, sum) / float64(9*tr.zn))
}

// lossRose feeds the loss l to the detector and reports whether it cut
// its window with the recent part's mean the higher (an increase; a
// decrease is learning, not a change to act on). Shared by auto and
// multi-class auto.
func lossRose(det *drift.ADWIN, l float64) bool {
	before := det.Mean()
	return det.Add(l) && det.Mean() > before
}

// restart compacts the bank to its survivors, adds the fresh members and
// restarts the losses, the weights and the pruning schedule.
func (a *Auto) restart() {
	tr := a.tr
	var slots, gens []int
	var members []Learner
	var tx []autoScale // the transforms the survivors use, renumbered
	remap := map[int]int{0: 0}
	for _, i := range a.alive {
		g := tr.gen[i]
		if _, ok := remap[g]; !ok {
			tx = append(tx, tr.tx[g-1])
			remap[g] = len(tx)
		}
		slots = append(slots, a.slot[i])
		gens = append(gens, remap[g])
		members = append(members, a.members[i])
	}
	scale := newScale(len(tr.km))
	// Re-standardised only when the inputs moved: a shift detected now or
	// within the last 2·halving events (else the fresh members read the
	// inputs as the survivors do).
	scale.fit = tr.lastShift > 0 && a.updates-tr.lastShift <= 2*max(tr.halving, 2)
	tx = append(tx, scale)
	clear(tr.km)
	clear(tr.kv)
	fresh0 := len(tx)
	var fresh []int
	for _, s := range slots {
		if !slices.Contains(fresh, s) {
			fresh = append(fresh, s)
		}
	}
	// The σ neighbours of the best kernel survivor.
	best := -1
	for _, i := range a.alive {
		if a.names[a.slot[i]] != "linear" && (best < 0 || a.loss[i] < a.loss[best]) {
			best = i
		}
	}
	// Every linear configuration, cheap (the pruned one may be the better
	// one now).
	for s, name := range a.names {
		if name == "linear" && a.specs[s]["features"] == "" && !slices.Contains(fresh, s) {
			fresh = append(fresh, s)
		}
	}
	if best >= 0 {
		for _, s := range a.neighbours(a.slot[best]) {
			if !slices.Contains(fresh, s) {
				fresh = append(fresh, s)
			}
		}
	}
	for _, s := range fresh {
		m, err := a.freshMember(s)
		if err != nil {
			panic(fmt.Sprintf("auto: rebuilding member %v: %v", a.specs[s], err)) // built before with the same spec
		}
		slots = append(slots, s)
		gens = append(gens, fresh0)
		members = append(members, m)
	}
	n := len(members)
	a.slot, a.members = slots, members
	tr.gen, tr.tx = gens, tx
	a.alive = restartAlive(a.alive, n)
	a.f = make([]float64, max(n, len(a.f)))
	a.w = make([]float64, max(n, len(a.w)))
	a.delta = 0
	cand, _ := a.splitLinear()
	a.loss, a.next = tr.begin(a.updates, n, len(cand), a.keep)
	if a.q != nil {
		a.q = make([]float64, pairCount(n)) // the race restarts with the losses (auto_race.go)
	}
}

// neighbours returns the slots of the σ grid points next to slot s (the
// same η, σ·2^±1/per_octave), those that exist.
func (a *Auto) neighbours(s int) []int {
	return sigmaNeighbours(a.specs, s, a.sigmaStep(), func(j int) bool { return a.names[j] != "linear" })
}

// sigmaNeighbours returns the configurations j ≠ s among specs, eligible,
// with the same eta whose σ is within step octaves of configuration s's
// (and not equal to it). Shared by auto and multi-class auto.
func sigmaNeighbours(specs []map[string]string, s int, step float64, eligible func(j int) bool) []int {
	sig, _ := ParseNumber(specs[s]["sigma"])
	var out []int
	for j, kv := range specs {
		if j == s || !eligible(j) || kv["eta"] != specs[s]["eta"] {
			continue
		}
		o, _ := ParseNumber(kv["sigma"])
		if o > 0 && sig > 0 {
			if r := math.Abs(math.Log2(o / sig)); r > 0 && r <= step+1e-9 {
				out = append(out, j)
			}
		}
	}
	return out
}

// splitLinear returns the survivors that pruning halves and the plain
// linear members (learner linear on auto's input, not the kernel ridge
// members), which it does not (prune).
func (a *Auto) splitLinear() (cand, lin []int) {
	for _, i := range a.alive {
		if s := a.slot[i]; a.names[s] == "linear" && a.specs[s]["features"] == "" {
			lin = append(lin, i)
		} else {
			cand = append(cand, i)
		}
	}
	return cand, lin
}

// freshCopier is a learner that makes a fresh learner of its own
// configuration more cheaply than a build (FOGD: without drawing its random
// features again).
type freshCopier interface {
	freshCopy() Learner
}

// freshMember returns a member of configuration s that has learnt nothing:
// a fresh copy of a survivor of that configuration when it can make one,
// else a new build (the same bits either way: TestAutoFreshCopy).
func (a *Auto) freshMember(s int) (Learner, error) {
	for _, i := range a.alive {
		if a.slot[i] != s {
			continue
		}
		if c, ok := a.members[i].(freshCopier); ok {
			return c.freshCopy(), nil
		}
	}
	return newPlain(a.names[s], a.specs[s], a.dim)
}

// restartAlive rebuilds alive as every member 0..n−1 (a restart's bank).
func restartAlive(alive []int, n int) []int {
	alive = alive[:0]
	for i := range n {
		alive = append(alive, i)
	}
	return alive
}

// sigmaStep is the grid's σ step in octaves (1/per_octave).
func (a *Auto) sigmaStep() float64 {
	step := math.Inf(1)
	for j, kv := range a.specs {
		if a.names[j] == "linear" || j == 0 {
			continue
		}
		s0, _ := ParseNumber(a.specs[0]["sigma"])
		s1, _ := ParseNumber(kv["sigma"])
		if s0 > 0 && s1 > 0 && s0 != s1 {
			step = math.Min(step, math.Abs(math.Log2(s1/s0)))
		}
	}
	return step
}

// encode writes the tracking state (after the member slots).
func (tr *autoTrack) encode(e *state.Encoder) error {
	e.F64s(tr.tl)
	e.U64(tr.origin)
	e.I64(tr.changes)
	e.I64(tr.alarms)
	if err := encodeDetector(e, tr.det); err != nil {
		return err
	}
	e.F64s(tr.km)
	e.F64s(tr.kv)
	e.Bool(tr.rs != nil)
	if tr.rs != nil {
		e.F64s(tr.rm)
		e.F64s(tr.rs)
	}
	e.Ints(tr.gen)
	e.Int(len(tr.tx))
	for _, t := range tr.tx {
		e.F64s(t.mul)
		e.F64s(t.add)
		e.Bool(t.fit)
	}
	if tr.fdet != nil {
		e.I64(tr.shifts)
		e.U64(tr.lastShift)
		return encodeDetector(e, tr.fdet)
	}
	return nil
}

// encodeDetector appends a detector's state as a blob.
func encodeDetector(e *state.Encoder, det *drift.ADWIN) error {
	b, err := det.MarshalBinary()
	if err != nil {
		return err
	}
	e.Blob(b)
	return nil
}

// decodeBank reads the member configurations of a tracking bank (each an
// index into nspecs configurations, at most maxBank of them) and the
// tracking state for inputs of dimension dim; nil and d failed on a bad
// one. Shared by auto and multi-class auto.
func (tr *autoTrack) decodeBank(d *state.Decoder, nspecs, dim int, updates uint64) (slot []int, restored *autoTrack) {
	slot = d.Ints(nil)
	if d.Err() == nil && (len(slot) == 0 || len(slot) > tr.maxBank) {
		d.Fail("bank of %d members (at most %d)", len(slot), tr.maxBank)
	}
	for _, s := range slot {
		if d.Err() == nil && (s < 0 || s >= nspecs) {
			d.Fail("member configuration %d of %d", s, nspecs)
		}
	}
	if d.Err() != nil {
		return nil, nil
	}
	return slot, tr.decode(d, len(slot), dim, updates)
}

// begin starts the tracking state of a restarted bank of n members at
// updates: Fixed Share losses at 0, the restart's origin and count, the
// loss detector's window emptied. It returns the fresh loss sums and the
// next pruning point (0 when prunable members are at most keep).
func (tr *autoTrack) begin(updates uint64, n, prunable, keep int) (loss []float64, next uint64) {
	tr.tl = make([]float64, n)
	tr.origin = updates
	tr.changes++
	tr.det.Reset()
	if prunable > keep {
		next = updates + tr.halving
	}
	return make([]float64, n), next // restarts only: O(bank) per change
}

// decode reads a tracking state for a bank of n members of input
// dimension dim into a copy of tr (nil and d failed on a bad one); tr is
// unchanged.
func (tr *autoTrack) decode(d *state.Decoder, n, dim int, updates uint64) *autoTrack {
	tl := d.F64sN(nil, n)
	origin := d.U64()
	changes, alarms := d.I64(), d.I64()
	blob := d.Blob()
	km, kv := d.F64sN(nil, dim), d.F64sN(nil, dim)
	var rm, rs []float64
	if d.Bool() {
		rm, rs = d.F64sN(nil, dim), d.F64sN(nil, dim)
	}
	gen := d.Ints(nil)
	ntx := d.IntIn(0, n, "transforms")
	if d.Err() != nil {
		return nil
	}
	if len(gen) != n {
		d.Fail("%d transform indices for %d members", len(gen), n)
		return nil
	}
	var tx []autoScale
	for range ntx {
		if !d.Need(2*dim, 8, "transform") {
			return nil
		}
		t := autoScale{mul: d.F64sN(nil, dim), add: d.F64sN(nil, dim), u: make([]float64, dim)}
		t.fit = d.Bool()
		if d.Err() != nil {
			return nil
		}
		for j, m := range t.mul {
			if !(m >= 1.0/autoScaleMax && m <= autoScaleMax) || math.IsNaN(t.add[j]) || math.IsInf(t.add[j], 0) {
				d.Fail("bad input transform")
				return nil
			}
		}
		t.identity = true
		for j, m := range t.mul {
			t.identity = t.identity && m == 1 && t.add[j] == 0
		}
		tx = append(tx, t)
	}
	var shifts int64
	var lastShift uint64
	var fdet *drift.ADWIN
	if tr.fdet != nil {
		shifts = d.I64()
		lastShift = d.U64()
		fblob := d.Blob()
		if d.Err() != nil {
			return nil
		}
		fdet, _ = drift.NewADWIN(drift.ADWINConfig{})
		if err := fdet.UnmarshalBinary(fblob); err != nil {
			d.Fail("feature change detector: %v", err)
			return nil
		}
	}
	for _, g := range gen {
		if g < 0 || g > ntx {
			d.Fail("transform %d of %d", g, ntx)
			return nil
		}
	}
	for _, l := range tl {
		if math.IsNaN(l) || math.IsInf(l, 0) {
			d.Fail("bad tracking loss %v", l)
			return nil
		}
	}
	finite := func(v []float64, nonneg bool) bool {
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) || (nonneg && x < 0) {
				return false
			}
		}
		return true
	}
	if !finite(km, false) || !finite(kv, true) || !finite(rm, false) || !finite(rs, true) {
		d.Fail("bad input statistics")
		return nil
	}
	if dim > 0 && ((rs != nil) != (updates >= max(tr.halving, 2)) || (changes > 0 && rs == nil)) {
		d.Fail("reference statistics after %d inputs", updates)
		return nil
	}
	if origin > updates || changes < 0 || alarms < changes || shifts < 0 || shifts > alarms || lastShift > updates || (shifts == 0) != (lastShift == 0) {
		d.Fail("bad tracking counters (origin %d of %d updates, %d changes, %d alarms)", origin, updates, changes, alarms)
		return nil
	}
	det, _ := drift.NewADWIN(drift.ADWINConfig{})
	if err := det.UnmarshalBinary(blob); err != nil {
		d.Fail("change detector: %v", err)
		return nil
	}
	return &autoTrack{tl: tl, origin: origin, halving: tr.halving, changes: changes, alarms: alarms, det: det, maxBank: tr.maxBank,
		km: km, kv: kv, rm: rm, rs: rs, gen: gen, tx: tx, fdet: fdet, shifts: shifts, lastShift: lastShift}
}

// Changes is the number of changes auto acted on (restarts of its bank),
// and Alarms the increases of its loss the detector reported; both 0
// without track.
func (a *Auto) Changes() (changes, alarms int64) {
	if a.tr == nil {
		return 0, 0
	}
	return a.tr.changes, a.tr.alarms
}

// changeCounter is a learner that detects and counts changes in its stream.
type changeCounter interface {
	Changes() (changes, alarms int64)
}

// ChangeCount reports the changes l acted on and the alarms its detector
// raised (auto with track; through the self-tuning wrapper), and whether l
// detects changes at all.
func ChangeCount(l Learner) (changes, alarms int64, ok bool) {
	if t, isT := l.(*selfTuned); isT {
		l = t.inner
	}
	return changesOf(l)
}

// changesOf is v's Changes if v is a changeCounter (ok false otherwise).
func changesOf(v any) (changes, alarms int64, ok bool) {
	c, ok := v.(changeCounter)
	if !ok {
		return 0, 0, false
	}
	changes, alarms = c.Changes()
	return changes, alarms, true
}
