package learner

// auto (multi-class) — the default multi-class model: online model
// selection over a bank of multi-class members, weighted by AdaHedge on
// their log loss.
//
// Reference: AdaHedge (de Rooij, van Erven, Grünwald & Koolen, "Follow the
// Leader If You Can, Hedge If You Must", JMLR 15, 2014, §2), as binary auto
// (auto.go), run on the members' log loss; the mixture of distributions and
// the mixability of the log loss (Vovk, "A Game of Prediction with Expert
// Advice", JCSS 56, 1998; Cesa-Bianchi & Lugosi, Prediction, Learning, and
// Games, 2006, §3.5 and §9). Notes and measurements:
// docs/algorithms/multiclass.md.
//
// Members: multi-class FOGD (fogd_multi.go) at σ = 2^i·σ̂ for
// i = −octaves..octaves (default 2: σ̂/4 … 4σ̂), σ̂ the self-tuning
// wrapper's median-heuristic width (auto is always built inside the
// wrapper, selftune_multi.go, which standardises the inputs and divides
// them by σ̂), times the head's step η ∈ {1, 3} (etas=2); with common=true
// (the wrapper's default) the same grid again on the wrapper's
// common-scale view (centred features divided by one common scale and by
// their own median-heuristic σ̂', selftune_multi.go), and one linear multi
// member on the standardised view (multinomial logistic regression: the
// `linear` baseline exactly, its step rescaled for the 1/σ̂ the wrapper
// applies: setInputWidth). Defaults: 2
// views × 5 σ × 2 η + linear = 21 members. Other keys (budget, features,
// kernel, seed, ...) are passed to every FOGD member.
//
// Deviation (not in the references): the second view. Per-feature
// standardisation is essential when features have unrelated units, and
// harmful on pixel data (mnist: a border pixel constant in the warm-up gets
// a tiny scale, and a later nonzero value dominates every distance at the
// ±10 clip): with the standardised view only, auto made 10.76 % mistakes on
// mnist (linear 11.04 %), FOGD on raw pixels at a hand-picked σ 10.48 %.
// With both views AdaHedge keeps one member of each and auto makes 9.36 %
// (log loss 0.334 vs linear's 0.430); letter 12.71 % (was 13.61 %, linear
// 27.92 %); on files of unrelated units (cod-rna, spambase, w7a, german as
// 2-class streams) within 0.05 points of the standardised view only
// (docs/algorithms/multiclass.md). Input: auto's input has views·d entries
// (the wrapper writes both views side by side); each member reads its d.
//
// One map for all FOGD members: every member has the same kernel, D and
// seed, so its frequencies are those of width 1 divided by σ = 2^i. auto
// draws that map once (newFOGDMultiOn) and computes the projection Uᵀx
// once per event and view; a member takes it times 2^−i
// (kernel.Fourier.MapProjected), exactly the bits of a member with a map
// of its own (a power-of-two factor is exact in floating point;
// TestFOGDMultiSharedMap). On mnist this made auto 3× faster (drawing
// 21 maps of d·D = 313,600 frequencies at each of the wrapper's 10 warm-up
// rebuilds was 78 % of the time): 180 µs/event with two views, against
// 292 before with one view and a map per member.
//
// Prediction: the weighted average of the members' distributions,
//
//	p̂_t(k) = Σ_i w_i p_i,t(k) / Σ_i w_i,  w_i = exp(−η_t (L_i − min_j L_j)),
//	ℓ_i,t = −ln q_i,t,  q_i,t = max(p_i,t(c_t), ε),  L_i = Σ_s<t ℓ_i,s,  ε = 1e-6,
//	η_t = ln N/Δ_{t−1}  (η = ∞, follow the leader, while Δ = 0),
//	Δ_t = Σ_s max(0, δ_s),  δ_s = −ln(Σ_i w_i q_i,s / Σ_i w_i) − m_s,
//
// with m_s = −(1/η) ln(Σ w_i e^(−η ℓ_i,s) / Σ w_i) the mix loss (auto.go's
// adaHedgeLosses) and N the number of survivors. This is AdaHedge with the
// hedge loss replaced by the loss the learner actually incurs, that of the
// mixture: binary auto mixes scores and is judged by the weighted average
// of the members' losses; a mixture of distributions under the log loss
// does better, and AdaHedge's learning rate tuned on the mixture's own gap
// finds that out.
//
// Guarantee. The log loss is unbounded; the members are judged on it
// clipped at ε (ℓ ≤ S = ln(1/ε) ≈ 13.8), and the mixture's loss −ln(p̂(c) +
// ε) is at most −ln(Σ w_i q_i / Σ w_i) (q_i ≤ p_i(c) + ε). For η ≤ 1, the
// power-mean inequality Σ w_i q_i ≥ (Σ w_i q_i^η)^(1/η) (weights
// normalised) gives δ ≤ 0: the log loss is mixable (Vovk, JCSS 1998;
// Cesa-Bianchi & Lugosi, Prediction, Learning, and Games, 2006, §3.5).
// So a positive gap needs η_t > 1, i.e. Δ_{t−1} < ln N, and each gap is at
// most S (m ≥ min_i ℓ_i), hence Δ_T ≤ ln N + S for every T. The mix losses
// telescope for a non-increasing η (de Rooij et al. 2014, Lemma 1):
// Σ m_t ≤ min_i L_i + ln N/η_T = min_i L_i + Δ_{T−1}. Together, for every
// sequence,
//
//	Σ_t −ln(p̂_t(c_t) + ε) ≤ min_i L_i + 2Δ_T ≤ min_i L_i + 2(ln N + ln(1/ε)),
//
// a regret constant in T (34 nats for N = 21), against every member that
// survives the pruning (with pruning, the rate uses ln of the current
// number of survivors, which can multiply the Δ terms by up to
// ln N/ln keep). Measured Δ at the end of letter and mnist: 2–4 nats.
// A class seen for the first time has probability 0 under every member:
// every ℓ is ln(1/ε), the gap is 0 and the weights do not move.
//
// Cost: deterministic successive halving as binary auto (auto.go's
// halveSurvivors): at events n0, 2n0, 4n0, … (halving, default 1000) the
// worse half of the FOGD survivors by L_i is dropped, never below keep
// (default 2), and the linear member is never dropped (prune): 21 → 10+1 →
// 5+1 → 3+1 → 2+1 members from event 8000 on. Per event: one
// projection O(d·D) per view that has a FOGD survivor, and per FOGD
// survivor O(D) sin/cos and its head O(K·(2D + d)); plus O(N·K) for the
// mixture. Nothing is allocated per event (each member writes into its own
// scratch distribution).
//
// State: the survivors' states, the loss sums, Δ, K and the schedule; a
// restored auto continues bit for bit.
//
// Tracking (track=true, the default; auto_multi_track.go): the weights
// come from Fixed Share losses, and a rise of the mixture's log loss that
// ADWIN detects restarts the bank (survivors kept, fresh members added,
// halving run again); the state then also holds each member's
// configuration and the tracking state. track=false is the learner above
// exactly (spec and state).

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"okstream/learner/kernel"
)

func init() {
	RegisterMulti(MultiRegistration{
		Name:    "auto",
		Summary: "the default multi-class model: multi-class FOGD over a σ × η grid around the data-driven σ, plus multinomial logistic regression, mixed by AdaHedge on the log loss, pruned by successive halving",
		Paper:   "de Rooij, van Erven, Grünwald & Koolen, JMLR 2014 (AdaHedge); Vovk 1998 (mixability of the log loss)",
		Params: []ParamDoc{
			{Name: "base", Default: "fogd", Doc: "the members' learner: fogd only (multi-class FOGD); accepted so that binary auto's spec (okstream run's default auto:base=fogd) means the same for a multi-class stream"},
			{Name: "octaves", Default: "2", Doc: "σ grid 2^-octaves..2^octaves × the data-driven σ"},
			{Name: "etas", Default: "2", Doc: "η grid of the FOGD members' head: the first of 1, 3, 0.3, 10 (1..4 values)"},
			{Name: "halving", Default: "1000", Doc: "successive halving at events halving, 2·halving, ...: keep the better half by cumulative log loss"},
			{Name: "keep", Default: "2", Doc: "pruning never goes below this many members"},
			{Name: "linear", Default: "true", Doc: "also run multinomial logistic regression (linear) as a member"},
			{Name: "common", Default: "true with scale=standard (the default), else false", Doc: "also run the FOGD σ × η grid on the common-scale view (centred features divided by one common scale and their own median-heuristic σ̂'; selftune_multi.go), for pixel-like data where per-feature standardisation inflates rare features"},
			{Name: "track", Default: "true", Doc: "Fixed Share weights and a restart of the bank (survivors kept, fresh members of their configurations and σ neighbours, a fresh linear member, halving run again) when ADWIN detects a rise of the mixture's log loss (auto_multi_track.go); false: the bank and weights as before tracking, with the same spec and states"},
			{Name: "(other keys)", Default: "fogd's defaults", Doc: "passed to every FOGD member (budget, features, kernel, normalize, seed)"},
		},
		New: newAutoMulti,
	})
}

// autoMultiEps clips the members' probabilities in the log loss AdaHedge
// weighs them by (see the file comment).
const autoMultiEps = 1e-6

var autoMultiEtas = []float64{1, 3, 0.3, 10}

var autoMultiOwnKeys = []string{"base", "octaves", "etas", "halving", "keep", "linear", "common", "track"}

// AutoMulti is the multi-class model-selection learner. Build it with
// NewMulti("auto:..."), which wraps it in the self-tuning wrapper.
type AutoMulti struct {
	base
	specs   []map[string]string // members' specs (for rebuilding)
	names   []string            // members' learners
	views   []int               // members' input view: 0 standardised, 1 common-scale
	mdim    int                 // the members' input dimension d (auto's input: views·d)
	fogdOn  []bool              // a FOGD member (on the shared map)
	shared  *kernel.Fourier     // the map at σ = 1 every FOGD member is built on
	pbuf    [][]float64         // per view: scratch, the shared map's projections (D)
	pdone   []bool              // per view: scratch, projected this event
	slot    []int               // member i's configuration (specs, names, views, fogdOn); i without track
	members []Multi             // nil once pruned
	alive   []int
	loss    []float64 // cumulative clipped log loss per member
	next    uint64    // the next pruning event (0: no more)
	keep    int
	delta   float64 // AdaHedge's Δ
	den     float64 // scratch: Σ w of the round
	k       int     // classes
	q       [][]float64
	w       []float64  // scratch: weights
	l       []float64  // scratch: the round's losses
	tr      *autoTrack // track=true: Fixed Share losses, change detector, restarts (auto_multi_track.go); nil otherwise
	width   float64    // σ̂ the wrapper last told (setInputWidth; 0: never), for fresh linear members
}

func (a *AutoMulti) selfTuning() {}

func newAutoMulti(p *Params, dim int) (Multi, error) {
	p.Enum("base", "fogd", "fogd")
	oct := p.Int("octaves", 2, InRange(0, 6))
	etas := p.Int("etas", 2, InRange(1, 4))
	n0 := p.Int("halving", 1000, InRange(1, 1<<40))
	keep := p.Int("keep", 2, InRange(1, 100))
	withLinear := p.Bool("linear", true)
	common := p.Bool("common", false) // (the wrapper sets it, selftune_multi.go)
	track := autoTrackParam(p)
	fwd := map[string]string{}
	for k, v := range p.raw {
		if !slices.Contains(autoMultiOwnKeys, k) {
			fwd[k] = v
		}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	for _, k := range []string{"sigma", "eta"} {
		if _, ok := fwd[k]; ok {
			return nil, fmt.Errorf("learner auto: parameter %s: the members' %s is a grid (set octaves or etas instead)", k, k)
		}
	}
	a := &AutoMulti{keep: keep, next: uint64(n0), mdim: dim}
	views := []int{0}
	if common {
		views = append(views, 1)
	}
	for _, view := range views {
		for _, eta := range autoMultiEtas[:etas] {
			for i := -oct; i <= oct; i++ {
				kv := maps.Clone(fwd)
				kv["sigma"] = FormatNumber(math.Pow(2, float64(i)))
				kv["eta"] = FormatNumber(eta)
				if _, set := kv["raw"]; !set {
					kv["raw"] = "true"
				}
				if a.shared == nil { // one draw of the frequencies, at σ = 1
					t := maps.Clone(kv)
					t["sigma"] = "1"
					m, err := newPlainMulti("fogd", t, dim)
					if err != nil {
						return nil, fmt.Errorf("learner auto: member %s: %w", canonicalSpec("fogd", kv), err)
					}
					a.shared = m.(*FOGDMulti).rff
				}
				m, err := a.newMember("fogd", kv)
				if err != nil {
					return nil, fmt.Errorf("learner auto: member %s: %w", canonicalSpec("fogd", kv), err)
				}
				if len(a.members) == 0 {
					_, mkv, _ := ParseSpec(m.Info().Spec)
					for k, v := range mkv {
						if k != "sigma" && k != "eta" {
							p.resolved[k] = v // the canonical spec lists the members' resolved keys
						}
					}
				}
				a.add("fogd", kv, m, view)
			}
		}
	}
	for range views {
		a.pbuf = append(a.pbuf, make([]float64, a.shared.Frequencies()))
	}
	if withLinear {
		kv := map[string]string{"eta": FormatNumber(linearMultiEta(dim) * math.Sqrt(2*float64(dim)))}
		m, err := newPlainMulti("linear", kv, dim)
		if err != nil {
			return nil, fmt.Errorf("learner auto: linear member: %w", err)
		}
		a.add("linear", kv, m, 0)
	}
	a.base = newBase(p, len(views)*dim, MultiClass)
	n := len(a.members)
	a.loss = make([]float64, n)
	a.w = make([]float64, n)
	a.l = make([]float64, n)
	a.q = make([][]float64, n)
	a.pdone = make([]bool, len(a.pbuf))
	if n-len(a.members)+a.fogdCount() <= keep {
		a.next = 0 // nothing to prune: the FOGD members are already at keep
	}
	if track {
		a.tr = newAutoMultiTrack(n, keep, uint64(n0))
	}
	return a, nil
}

// setInputWidth (the self-tuning wrapper's tellWidth) sets the linear
// member's step to linear's own default times σ̂: the member sees the
// standardised inputs divided by σ̂, and a per-coordinate AdaGrad step on
// inputs scaled by 1/σ̂ with step σ̂·η moves the logits exactly as step η on
// the unscaled inputs (every gradient coordinate is divided by σ̂, and
// AdaGrad's normalised step does not change), so the member is the
// `linear` model (the baseline of every multi-class table) on the same
// stream, not an approximation of it at σ̂ ≈ √(2d).
func (a *AutoMulti) setInputWidth(w float64) {
	if !(w > 0) || math.IsInf(w, 0) {
		return
	}
	a.width = w
	for i, m := range a.members {
		if lm, ok := m.(*LinearMulti); ok && a.names[a.slot[i]] == "linear" {
			a.scaleLinear(lm)
		}
	}
}

// scaleLinear sets a linear member's steps for the width a.width
// (setInputWidth; nothing before the wrapper told one).
func (a *AutoMulti) scaleLinear(lm *LinearMulti) {
	if a.width == 0 {
		return
	}
	eta := linearMultiEta(a.mdim)
	lm.head.eta, lm.head.etaB = eta*a.width, eta // the bias's feature, 1, is not scaled
}

func (a *AutoMulti) add(name string, kv map[string]string, m Multi, view int) {
	a.specs = append(a.specs, kv)
	a.names = append(a.names, name)
	a.views = append(a.views, view)
	a.fogdOn = append(a.fogdOn, name == "fogd")
	a.members = append(a.members, m)
	a.slot = append(a.slot, len(a.slot))
	a.alive = append(a.alive, len(a.alive))
}

// newMember builds a member: FOGD on the shared map, linear as usual.
func (a *AutoMulti) newMember(name string, kv map[string]string) (Multi, error) {
	if name != "fogd" {
		return newPlainMulti(name, kv, a.mdim)
	}
	return newPlainMultiWith(name, kv, a.mdim, func(p *Params, d int) (Multi, error) {
		return newFOGDMultiOn(p, d, a.shared)
	})
}

// view returns member i's part of auto's input x.
func (a *AutoMulti) view(x []float64, i int) []float64 {
	v := a.views[a.slot[i]] * a.mdim
	return x[v : v+a.mdim]
}

// fogd returns member i as a FOGD member whose projections are in
// a.pbuf[view] (computing them once per event and view), or nil for the
// linear member.
func (a *AutoMulti) fogd(x []float64, i int) *FOGDMulti {
	if !a.fogdOn[a.slot[i]] {
		return nil
	}
	if v := a.views[a.slot[i]]; !a.pdone[v] {
		a.shared.Project(a.pbuf[v], a.view(x, i))
		a.pdone[v] = true
	}
	return a.members[i].(*FOGDMulti)
}

// Classes returns K.
func (a *AutoMulti) Classes() int { return a.k }

// scratch returns member i's distribution buffer with room for n entries.
func (a *AutoMulti) scratch(i, n int) []float64 {
	if cap(a.q[i]) < n {
		a.q[i] = make([]float64, n, n+8)
	}
	return a.q[i][:n]
}

// mix writes the weighted average of the survivors' distributions a.q
// (over K classes) into p, with the weights of this round in a.w.
func (a *AutoMulti) mix(p []float64) []float64 {
	den := adaHedgeWeights(a.w, a.weighLoss(), a.alive, adaHedgeRate(len(a.alive), a.delta, math.Inf(1)))
	a.den = den
	p = p[:a.k]
	clear(p)
	for _, i := range a.alive {
		w := a.w[i] / den
		if w == 0 {
			continue
		}
		for k, v := range a.q[i][:a.k] {
			p[k] += float64(w * v)
		}
	}
	// The normalised weights sum to 1 only up to rounding: a class every
	// survivor gives probability 1 (one class seen) came out 1 + 4·10⁻¹⁶,
	// which the prediction record's decoder rightly refuses.
	for k, v := range p {
		p[k] = min(v, 1)
	}
	return p
}

// PredictProba writes the mixture of the survivors' distributions into p.
func (a *AutoMulti) PredictProba(x, p []float64) []float64 {
	a.checkDim(x)
	for _, i := range a.alive {
		if f := a.fogd(x, i); f != nil {
			a.q[i] = f.predictProjected(a.view(x, i), a.pbuf[a.views[a.slot[i]]], a.scratch(i, a.k+1))
		} else {
			a.q[i] = a.members[i].PredictProba(a.view(x, i), a.scratch(i, a.k+1))
		}
	}
	clear(a.pdone)
	return a.mix(p)
}

// LearnClass lets every survivor predict and learn class c, updates the
// loss sums and Δ, prunes on schedule, and returns the pre-update mixture.
func (a *AutoMulti) LearnClass(x []float64, c int, p []float64) []float64 {
	a.checkDim(x)
	if c < 0 || c > a.k || c >= MaxClasses {
		panic("learner auto: class index out of range")
	}
	for _, i := range a.alive {
		if f := a.fogd(x, i); f != nil {
			a.q[i] = f.learnProjected(a.view(x, i), a.pbuf[a.views[a.slot[i]]], c, a.scratch(i, a.k+1))
		} else {
			a.q[i] = a.members[i].LearnClass(a.view(x, i), c, a.scratch(i, a.k+1))
		}
	}
	clear(a.pdone)
	p = a.mix(p)
	eta := adaHedgeRate(len(a.alive), a.delta, math.Inf(1))
	var q float64 // Σ w_i max(p_i(c), ε) / Σ w_i: the mixture of the clipped probabilities
	for _, i := range a.alive {
		pc := 0.0
		if c < a.k {
			pc = a.q[i][c]
		}
		if !(pc > autoMultiEps) { // (also a NaN from a diverged member: the worst loss)
			pc = autoMultiEps
		}
		a.l[i] = -math.Log(pc)
		q += float64(a.w[i] * pc)
	}
	// AdaHedge on the mixture's own loss: δ = −ln(q) − m (m the mix loss).
	_, m := adaHedgeLosses(a.w, a.l, a.alive, eta)
	a.delta += positiveGap(-math.Log(q/a.den) - m)
	for _, i := range a.alive {
		a.loss[i] += a.l[i]
	}
	if a.tr != nil {
		a.share()
	}
	var mixLoss float64 // the mixture's clipped log loss (the detector's, track)
	if a.tr != nil {
		pc := 0.0
		if c < a.k {
			pc = p[c]
		}
		mixLoss = -math.Log(math.Max(pc, autoMultiEps))
		if math.IsNaN(mixLoss) {
			mixLoss = -math.Log(autoMultiEps)
		}
	}
	if c == a.k {
		a.k++
	}
	a.updates++
	if a.next != 0 && a.updates == a.next {
		a.prune()
	}
	if a.tr != nil {
		a.detect(mixLoss)
	}
	return p
}

// fogdCount is the number of FOGD members built (the linear one is never
// pruned).
func (a *AutoMulti) fogdCount() int {
	n := 0
	for _, name := range a.names {
		if name != "linear" {
			n++
		}
	}
	return n
}

// prune drops the worse half of the FOGD survivors by cumulative loss
// (halveSurvivors, never below keep); the linear member is never dropped,
// so the regret bound holds against the linear model on every stream, also
// one where it overtakes the kernel members only after they were pruned
// (near-linear files: dna, wine quality). With track, after a restart the
// bank has two linear members (the old one and a fresh one,
// auto_multi_track.go): both stay until the last halving of the restart's
// schedule, which keeps the one of least loss since the restart.
// The schedule doubles the distance from its origin: event 0, or with
// track the last restart.
func (a *AutoMulti) prune() {
	var cand []int
	alive := a.alive[:0:0]
	for _, i := range a.alive {
		if a.names[a.slot[i]] == "linear" {
			alive = append(alive, i)
		} else {
			cand = append(cand, i)
		}
	}
	kept, dropped := halveSurvivors(cand, a.loss, a.keep)
	for _, i := range dropped {
		a.members[i], a.q[i] = nil, nil
	}
	origin := uint64(0)
	if a.tr != nil {
		origin = a.tr.origin
	}
	a.next = origin + 2*(a.next-origin)
	if len(kept) <= a.keep {
		a.next = 0
		alive = a.oneLinear(alive)
	}
	a.alive = append(alive, kept...)
	slices.Sort(a.alive)
}

// MarshalBinary writes the schedule, K, Δ, survivors, loss sums and the
// survivors' states.
func (a *AutoMulti) MarshalBinary() ([]byte, error) {
	e := a.encoder(64 + 8*len(a.loss))
	e.U64(a.next)
	e.Int(a.k)
	e.F64(a.delta)
	if a.tr != nil {
		e.Ints(a.slot)
		if err := a.tr.encode(e); err != nil {
			return nil, err
		}
	}
	e.Ints(a.alive)
	e.F64s(a.loss)
	for _, i := range a.alive {
		b, err := a.members[i].MarshalBinary()
		if err != nil {
			return nil, err
		}
		e.Blob(b)
	}
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state of an identically configured auto; on
// any error the learner is unchanged.
func (a *AutoMulti) UnmarshalBinary(data []byte) error {
	d, updates := a.decoder(data)
	next := d.U64()
	k := d.IntIn(0, MaxClasses, "classes")
	delta := d.F64()
	n := len(a.specs)
	slot := a.slot
	var tr *autoTrack
	if a.tr != nil {
		slot, tr = a.tr.decodeBank(d, len(a.specs), 0, updates)
		n = len(slot)
	}
	alive := d.Ints(nil)
	loss := d.F64sN(nil, n)
	if d.Err() != nil {
		return d.Err()
	}
	if len(alive) == 0 || len(alive) > n {
		d.Fail("%d survivors of %d", len(alive), n)
		return d.Err()
	}
	for j, i := range alive {
		if i < 0 || i >= n || (j > 0 && i <= alive[j-1]) {
			d.Fail("bad survivor list")
			return d.Err()
		}
	}
	if !(delta >= 0) || math.IsInf(delta, 0) {
		d.Fail("bad mixability gap %v", delta)
		return d.Err()
	}
	for _, l := range loss {
		if !(l >= 0) || math.IsInf(l, 0) {
			d.Fail("bad loss sum %v", l)
			return d.Err()
		}
	}
	if next != 0 && next <= updates {
		d.Fail("pruning point %d not after %d updates", next, updates)
		return d.Err()
	}
	if tr != nil && !validTrackBank(slot, alive, a.names, next, tr) {
		d.Fail("bad tracking bank")
		return d.Err()
	}
	members := make([]Multi, n)
	for _, i := range alive {
		blob := d.Blob()
		if d.Err() != nil {
			return d.Err()
		}
		m, err := a.newMember(a.names[slot[i]], a.specs[slot[i]])
		if err != nil {
			return err
		}
		if err := m.UnmarshalBinary(blob); err != nil {
			return fmt.Errorf("auto member %d: %w", i, err)
		}
		if m.Classes() != k {
			d.Fail("auto member %d has %d classes, auto %d", i, m.Classes(), k)
			return d.Err()
		}
		members[i] = m
	}
	if err := d.Done(); err != nil {
		return err
	}
	a.updates, a.next, a.k, a.delta = updates, next, k, delta
	a.alive, a.loss, a.members = alive, loss, members
	a.q = make([][]float64, n)
	if tr != nil {
		a.slot, a.tr = slot, tr
		a.w = make([]float64, max(n, len(a.w)))
		a.l = make([]float64, max(n, len(a.l)))
	}
	return nil
}

// Info reports the survivors' total budget, use and memory.
func (a *AutoMulti) Info() Info {
	var budget, used, bytes int
	for _, i := range a.alive {
		in := a.members[i].Info()
		budget += in.Budget
		used += in.Used
		bytes += in.Bytes
	}
	bytes += 8 * a.mdim * a.shared.Frequencies() // the shared map
	for _, b := range a.pbuf {
		bytes += 8 * len(b)
	}
	return a.info(budget, used, bytes+24*len(a.loss))
}

// String describes the survivors and their loss sums (logs and tests).
func (a *AutoMulti) String() string {
	s := "auto[multi] Δ=" + strconv.FormatFloat(a.delta, 'g', 4, 64)
	for _, i := range a.alive {
		name, j := "linear", a.slot[i]
		if a.names[j] == "fogd" {
			name = a.specs[j]["sigma"] + "σ̂/η" + a.specs[j]["eta"]
			if a.views[j] == 1 {
				name = a.specs[j]["sigma"] + "σ̂'/η" + a.specs[j]["eta"]
			}
		}
		s += " " + name + ":" + strconv.FormatFloat(a.loss[i], 'g', 4, 64)
	}
	return s
}
