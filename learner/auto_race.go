package learner

// auto, track=true — a race between the halvings: members clearly behind
// the leader are dropped before the next halving point.
//
// Successive halving (auto.go; Karnin, Koren & Somekh, "Almost Optimal
// Exploration in Multi-Armed Bandits", ICML 2013; Jamieson & Talwalkar,
// "Non-stochastic Best Arm Identification and Hyperparameter
// Optimization", AISTATS 2016) gives every round the same budget, so the
// whole bank (22 members) runs for the first halving events, however far
// behind some members already are: on cod-rna the worst members' loss is
// 2–3× the leader's by event 250. Racing (Maron & Moore, "Hoeffding
// Races", NIPS 1993; with variance-aware bounds, Mnih, Szepesvári &
// Audibert, "Empirical Bernstein Stopping", ICML 2008) drops an arm as
// soon as a confidence bound says it is worse than the best. auto does
// both: the halving schedule and sizes stay, and between the halvings,
// every halving/8 events (at least 1) since the start or the last restart
// while the bank is being pruned, a member i is dropped when
//
//	L_i − L_j > sqrt(2·V_ij·λ) + (2/3)·S·λ,  V_ij = Σ_s (ℓ_i,s − ℓ_j,s)²,
//	λ = ln(K²·c(c+1)/δ),  δ = 0.05,
//
// j the leader (least cumulative loss L), K the members raced, c the
// check's number since the start or the restart, S the loss range (4 for
// classification, where ℓ = (clip(f) − y)² ∈ [0, 4]; (hi − lo)² of the
// labels seen for regression), and the sums over the events since the
// start or the restart. The margin is Freedman's inequality (Freedman,
// "On Tail Probabilities for Martingales", Ann. Probab. 3(1), 1975) in
// its supermartingale form: if member i were on average not worse than j
// at every event (E[ℓ_i − ℓ_j | past] ≤ 0), the differences, at most S,
// sum to at least a with probability at most exp(−a²/(2(W + S·a/3))), W
// the sum of their conditional second moments; the margin is that a at
// probability e^−λ with W replaced by the realised V_ij (the
// empirical-Bernstein substitution of the racing literature), and λ a
// union bound over the K² (member, leader) pairs and the checks
// (Σ 1/(c(c+1)) = 1): such a member is dropped with probability about δ
// or less. The losses of
// learning members are not independent draws, so this is a heuristic
// guarantee, as in every use of racing for model selection; its effect is
// bounded by the schedule: a halving keeps the same number of members as
// without the race (N, then ⌈N/2⌉, ...: the nominal sizes, never fewer
// than keep), so a member the race dropped is one the halving would very
// likely have dropped too, and the race only removes it sooner. When the
// race leaves keep members the bank costs what it costs at steady state;
// pruning still ends at the next halving point (only then can a change
// restart the bank: restarts stay at least halving events apart).
//
// Which members race: the kernel members (the σ × η grid, and for
// regression the kernel ridge ones); the linear members are never dropped
// by the race (pruning keeps the best of them, auto_track.go). By default
// only for base=fogd, and only with track=true (the default): a race ranks
// members by their past, which predicts their future only when their
// model does not change regime. FOGD members (and the kernel ridge ones)
// run online gradient descent (or ridge) in a feature space fixed from
// the first event. The budgeted bases change regime when their budget
// fills (NOGD's kernel OGD becomes a Nyström model after B events, FORKS
// leaves its buffer phase): measured on cod-rna, racing auto:base=forks
// dropped a slow starter that halving would have kept and made 5.75 %
// mistakes against 5.51 % (10 permutations). race=true races them anyway,
// race=false turns the race off (absent, the canonical spec is
// unchanged); track=false is the bank of before, bit for bit.
//
// Cost: the pair sums V, O(K²) per event while the bank is being pruned
// (231 for the default 21 kernel members, against their 21 O(D) steps),
// nothing after.
//
// State: V (n(n−1)/2 floats for a bank of n members) is written after the
// members' states while the bank is being pruned, and an empty V after
// that (V is then unused until a restart resets it); a state without it (written before the race existed)
// restores with V_ij = S·(L_i + L_j), an upper bound ((a − b)² ≤
// S·max(a, b) for a, b ∈ [0, S]), so that the race is only more cautious
// until the next restart.

import (
	"math"

	"okstream/learner/state"
)

// autoRaceDelta is δ of the race's margin.
const autoRaceDelta = 0.05

// raceStep is the distance between checks: halving/8, at least 1.
func (a *Auto) raceStep() uint64 { return max(a.tr.halving/8, 1) }

// raceObserve adds the round's squared loss differences (a.f, over the
// raced survivors) to V. O(K²), only while the bank is being pruned.
func (a *Auto) raceObserve() {
	r := a.racing[:0] // the raced survivors, increasing
	for _, i := range a.alive {
		if a.raced(i) {
			r = append(r, i)
		}
	}
	a.racing = r
	for x, i := range r {
		fi := a.f[i]
		for _, j := range r[x+1:] {
			d := fi - a.f[j]
			a.q[pairIndex(i, j)] += float64(d * d)
		}
	}
}

// pairIndex is the position of the pair i < j in V: j(j−1)/2 + i.
func pairIndex(i, j int) int {
	if i > j {
		i, j = j, i
	}
	return j*(j-1)/2 + i
}

// pairCount is the size of V for a bank of n members.
func pairCount(n int) int { return n * (n - 1) / 2 }

// raced reports whether member i takes part in the race (not a plain
// linear member).
func (a *Auto) raced(i int) bool {
	s := a.slot[i]
	return a.names[s] != "linear" || a.specs[s]["features"] != ""
}

// lossRange is S, the range of a member's loss.
func (a *Auto) lossRange() float64 {
	if a.task == Regression {
		r := a.hi - a.lo
		return r * r
	}
	return 4
}

// race runs a check when one is due (every raceStep events since the
// origin while pruning goes on, not at a halving point), dropping the
// members clearly behind the leader, never below keep.
func (a *Auto) race() {
	origin := a.tr.origin
	k := a.updates - origin
	step := a.raceStep()
	if a.next == 0 || k%step != 0 || a.updates == a.next {
		return
	}
	cand, _ := a.splitLinear()
	if len(cand) <= a.keep {
		return
	}
	j := cand[0]
	for _, i := range cand {
		if a.loss[i] < a.loss[j] {
			j = i
		}
	}
	c := float64(k / step)
	K := float64(len(cand))
	lambda := math.Log(K * K * c * (c + 1) / autoRaceDelta)
	S := a.lossRange()
	type cut struct {
		i   int
		gap float64
	}
	var cuts []cut // rare: a few per check, O(log T) checks per restart
	for _, i := range cand {
		if i == j {
			continue
		}
		gap := a.loss[i] - a.loss[j]
		if gap > math.Sqrt(2*a.q[pairIndex(i, j)]*lambda)+2.0/3*S*lambda {
			cuts = append(cuts, cut{i, gap})
		}
	}
	if len(cuts) == 0 {
		return
	}
	// The farthest behind first, never below keep.
	for n := len(cand); n > a.keep && len(cuts) > 0; n-- {
		f := 0
		for x := range cuts {
			if cuts[x].gap > cuts[f].gap || (cuts[x].gap == cuts[f].gap && cuts[x].i > cuts[f].i) {
				f = x
			}
		}
		a.drop(cuts[f].i)
		cuts = append(cuts[:f], cuts[f+1:]...)
	}
	// Pruning still ends at a halving point (prune), not here: restarts
	// stay at least halving events apart, and the alarms that follow one
	// change fall inside its pruning as before.
}

// drop removes member i from the survivors.
func (a *Auto) drop(i int) {
	a.members[i] = nil
	for x, v := range a.alive {
		if v == i {
			a.alive = append(a.alive[:x], a.alive[x+1:]...)
			return
		}
	}
}

// nominalKeep is how many raced members the next halving keeps: the
// sizes of successive halving without the race, N, max(keep, ⌈N/2⌉), ...,
// from the N raced members of the bank at its start (or restart), one
// step per halving done.
func (a *Auto) nominalKeep() int {
	n := 0
	for i := range a.slot {
		if a.raced(i) {
			n++
		}
	}
	origin := a.tr.origin
	for span := a.next - origin; span >= a.tr.halving && a.tr.halving > 0; span /= 2 {
		n = max(a.keep, (n+1)/2)
	}
	return n
}

// decodeRace reads V for the bank of the loss sums loss (one per member):
// all its pairs while pruning goes on, empty after it (zeros returned);
// from a state written before the race (nothing left to read) it returns
// the bound V_ij = S·(L_i + L_j) with S from the label range [lo, hi]. d
// fails on a bad V or one of the wrong length.
func (a *Auto) decodeRace(d *state.Decoder, loss []float64, lo, hi float64, pruning bool) []float64 {
	if d.Remaining() == 0 {
		S := 4.0
		if a.task == Regression {
			S = (hi - lo) * (hi - lo)
		}
		q := make([]float64, pairCount(len(loss)))
		for j := range loss {
			for i := range j {
				q[pairIndex(i, j)] = math.Min(S*(loss[i]+loss[j]), math.MaxFloat64) // (finite: a state's values are)
			}
		}
		return q
	}
	q := d.F64s(nil)
	if d.Err() != nil {
		return nil
	}
	switch {
	case !pruning && len(q) == 0:
		return make([]float64, pairCount(len(loss)))
	case !pruning || len(q) != pairCount(len(loss)):
		d.Fail("race variation of %d pairs for %d members (pruning %v)", len(q), len(loss), pruning)
		return nil
	}
	for _, v := range q {
		if !(v >= 0) || math.IsInf(v, 0) {
			d.Fail("bad race variation %v", v)
			return nil
		}
	}
	return q
}
