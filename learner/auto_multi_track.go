package learner

// Multi-class auto, track=true (the default) — Fixed Share weights and a
// bank that restarts on a detected change, as binary auto (auto_track.go,
// whose file comment has the references and the argument); what differs
// for the multi-class bank:
//
//   - Fixed Share (fixedShare) runs on AdaHedge's weights over the
//     members' clipped log losses ℓ_i = −ln max(p_i(c), ε); the mixture and
//     AdaHedge's Δ (on the mixture's own gap, auto_multi.go) are unchanged,
//     the weights come from the shared losses. Successive halving still
//     compares the plain losses since the last restart.
//   - The detector (ADWIN, δ = 0.002) watches the mixture's clipped log loss
//     normalised to [0, 1]: −ln max(p̂(c), ε) / ln(1/ε), ε = autoMultiEps
//     (a class never seen before counts 1). On an increase while the bank
//     is at its steady size (no halving scheduled), auto restarts.
//   - Restart: the survivors stay with their models; fresh FOGD members
//     join them, on the shared map (newMember): one per distinct
//     configuration among the FOGD survivors, and the two σ neighbours
//     (σ·2^±1, same η and view) of the FOGD survivor of least loss; and one
//     fresh linear member (it is cheap: O(K·d)). The old linear member
//     stays: linear members are never halved, but at the end of a
//     restart's schedule (the halving that brings the FOGD members to
//     keep) only the linear member of least loss since the restart is
//     kept, so the steady bank is keep FOGD members + 1 linear as without
//     track, and the regret bound holds against the better linear model
//     since the restart. If a restart would leave nothing to halve (keep
//     at least the FOGD members it builds), no fresh linear member is added.
//   - Classes: a fresh member is grown to the K classes auto has seen
//     (softmaxHead.grow: zero weights for each, so it predicts the uniform
//     distribution over K until it learns): a member with fewer classes
//     than auto would return a shorter distribution than the mixture reads.
//   - Losses, Fixed Share losses, Δ restart at 0; halving runs again at
//     restart + halving, + 2·halving, ...; the detector's window restarts.
//
// Bank bound: at most 2·keep + 4 members (keep FOGD survivors + 1 linear,
// keep fresh + 2 neighbours + 1 fresh linear), restore-checked (maxBank).
// Per event without a restart in progress: as track=false plus O(N) exp
// and log (the share) and ~30 ns (ADWIN). Nothing is allocated per event;
// a restart allocates O(bank) once.
//
// track=false keeps the canonical spec and the state layout of multi-class
// auto before tracking existed (autoTrackParam).

import (
	"fmt"
	"math"
	"slices"
)

// newAutoMultiTrack is newAutoTrack with multi-class auto's bank bound.
func newAutoMultiTrack(members, keep int, halving uint64) *autoTrack {
	tr := newAutoTrack(members, keep, 0, halving) // dimension 0: no re-standardised members (auto_track.go item 3)
	tr.maxBank = max(members, 2*keep+4)
	return tr
}

// weighLoss is the loss the weights come from: the cumulative loss, or
// with track the Fixed Share loss.
func (a *AutoMulti) weighLoss() []float64 {
	if a.tr != nil {
		return a.tr.tl
	}
	return a.loss
}

// share applies the Fixed Share step after the round's losses a.l and the
// updated Δ.
func (a *AutoMulti) share() {
	tr := a.tr
	for _, i := range a.alive {
		tr.tl[i] += a.l[i]
	}
	fixedShare(tr.tl, a.w, a.alive, adaHedgeRate(len(a.alive), a.delta, math.Inf(1)), tr.shareCount(a.updates))
}

// detect feeds the mixture's normalised loss (mixLoss/ln(1/ε), in [0, 1])
// to ADWIN and restarts the bank on an increase when it is at its steady
// size.
func (a *AutoMulti) detect(mixLoss float64) {
	tr := a.tr
	l := math.Min(1, math.Max(0, mixLoss/-math.Log(autoMultiEps)))
	if !lossRose(tr.det, l) {
		return
	}
	tr.alarms++
	if a.next != 0 {
		return // the bank is still being halved (at the start or after a restart)
	}
	a.restart()
}

// oneLinear returns alive (a subset of member indices) with only the
// linear member of least loss among its linear members (ties: the lower
// index, the older member).
func (a *AutoMulti) oneLinear(alive []int) []int {
	best := -1
	for _, i := range alive {
		if a.names[a.slot[i]] == "linear" && (best < 0 || a.loss[i] < a.loss[best]) {
			best = i
		}
	}
	out := alive[:0]
	for _, i := range alive {
		if a.names[a.slot[i]] != "linear" || i == best {
			out = append(out, i)
		} else {
			a.members[i], a.q[i] = nil, nil
		}
	}
	return out
}

// restart compacts the bank to its survivors, adds the fresh members and
// restarts the losses, the weights and the halving schedule.
func (a *AutoMulti) restart() {
	tr := a.tr
	var slots []int
	var members []Multi
	best := -1 // the FOGD survivor of least loss
	for _, i := range a.alive {
		slots = append(slots, a.slot[i])
		members = append(members, a.members[i])
		if a.fogdOn[a.slot[i]] && (best < 0 || a.loss[i] < a.loss[best]) {
			best = i
		}
	}
	var fresh []int
	for _, s := range slots {
		if a.fogdOn[s] && !slices.Contains(fresh, s) {
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
	nf := len(fresh)
	for _, s := range slots {
		if a.fogdOn[s] {
			nf++
		}
	}
	if nf > a.keep { // a schedule to run: a fresh linear member competes with the old one
		for _, s := range slots {
			if !a.fogdOn[s] {
				fresh = append(fresh, s)
				break
			}
		}
	}
	for _, s := range fresh {
		m, err := a.newMember(a.names[s], a.specs[s])
		if err != nil {
			panic(fmt.Sprintf("learner auto: rebuilding member %v: %v", a.specs[s], err)) // built before with the same spec
		}
		switch f := m.(type) {
		case *FOGDMulti:
			f.head.grow(a.k)
		case *LinearMulti:
			f.head.grow(a.k)
			a.scaleLinear(f)
		}
		slots = append(slots, s)
		members = append(members, m)
	}
	n := len(members)
	a.slot, a.members = slots, members
	a.alive = restartAlive(a.alive, n)
	tr.gen = make([]int, n) // every member reads the inputs as they are
	a.q = make([][]float64, n)
	a.w = make([]float64, max(n, len(a.w)))
	a.l = make([]float64, max(n, len(a.l)))
	a.delta = 0
	a.loss, a.next = tr.begin(a.updates, n, nf, a.keep)
}

// neighbours returns the configurations of the FOGD members at σ·2^±1 with
// the same η and view as configuration s (those on the grid).
func (a *AutoMulti) neighbours(s int) []int {
	return sigmaNeighbours(a.specs, s, 1, func(j int) bool { return a.fogdOn[j] && a.views[j] == a.views[s] })
}

// validTrackBank checks a restored bank against what restarts and halving
// can produce: at most two linear survivors, and one once the schedule
// has ended (next = 0).
func validTrackBank(slot, alive []int, names []string, next uint64, tr *autoTrack) bool {
	lin := 0
	for _, i := range alive {
		if names[slot[i]] == "linear" {
			lin++
		}
	}
	if lin > 2 || (next == 0 && lin > 1) {
		return false
	}
	return next == 0 || next > tr.origin
}

// Changes is the number of changes auto acted on (restarts of its bank),
// and Alarms the increases of its loss the detector reported; both 0
// without track.
func (a *AutoMulti) Changes() (changes, alarms int64) {
	if a.tr == nil {
		return 0, 0
	}
	return a.tr.changes, a.tr.alarms
}

// MultiChangeCount reports the changes m acted on and the alarms its
// detector raised (multi-class auto with track, also inside the
// self-tuning wrapper), and whether m detects changes at all.
func MultiChangeCount(m Multi) (changes, alarms int64, ok bool) {
	if s, isS := m.(*selfTunedMulti); isS {
		if in, isIn := s.t.inner.(*multiAsLearner); isIn {
			m = in.m
		}
	}
	return changesOf(m)
}
