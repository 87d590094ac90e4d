package learner

// auto — online model selection over a grid of kernel widths and steps.
//
// A bank of N members, all of the base learner (base=fogd, nogd, forks,
// bogd, bpas, pkawv, nons-ald, ... any learner with a shift-invariant
// kernel), one per grid point: kernel width σ = 2^i·σ̂ for
// i = −octaves..octaves, where σ̂ is the self-tuning wrapper's data-driven
// width (selftune.go: auto is always built inside the wrapper, which
// standardises the features and divides them by σ̂, so a member with
// sigma=2^i sees width 2^i·σ̂), times — for bases with a gradient step and
// no eta in the spec — step η = η0·10^-j for j < etas (default 3), η0 the
// base's default. For FOGD that grid holds both published settings, the
// FORKS paper's η = 0.2 and the LSOKL toolbox's 0.002 (the toolbox's is the
// better one on every file of docs/results.md; neither is right for every
// stream, which is why both are members). Defaults: 7 σ × 3 η = 21 members
// for the first-order bases fogd, nogd, bogd, skegd on a classification
// loss; 7 σ otherwise (regression, forks, bpas, nons-ald, pkawv, ...).
// Plus, unless linear=false, one linear member (learner linear on the same
// standardised inputs): NAG on the squared hinge for classification, online
// ridge by recursive least squares (solver=rls, O(d²)) for regression — the
// loss auto weighs members by (autoLinearLoss). For regression two more
// members, second-order kernel ones: online kernel ridge (the same RLS) on
// 128 random Fourier features at σ̂ and σ̂/2 (autoRidgeFeatures). The regret bound below
// holds against every member, so auto tracks min(best kernel member,
// linear): on streams where a linear model is as good as the kernel members
// at their budget (short or near-linear ones: german, spambase, elevators,
// ailerons in docs/results.md) auto is not worse than it; elsewhere the
// kernel members take the weight.
//
// Every member predicts every event before learning it (the same protocol
// as any learner), and auto predicts with the weighted average of the
// members' clipped predictions, weighted by AdaHedge (de Rooij, van Erven,
// Grünwald & Koolen, "Follow the Leader If You Can, Hedge If You Must",
// JMLR 15, 2014, §2):
//
//	p̂_t = Σ_i w_i p_i / Σ_i w_i,  w_i = exp(−η_t (L_i − min_j L_j)),
//	p_i = clip(f_i(x_t), lo, hi),  L_i = Σ_s (p_i,s − y_s)²,
//	η_t = ln K / Δ_{t−1}  (η = ∞, i.e. follow the leader, while Δ = 0),
//	Δ_t = Σ_s δ_s,  δ_s = h_s − m_s ≥ 0,
//
// where h_s = Σ w_i ℓ_i,s / Σ w_i is the round's hedge loss, m_s =
// −(1/η) ln(Σ w_i e^(−η ℓ_i,s) / Σ w_i) its mix loss, K the number of
// survivors, and [lo, hi] = [−1, 1] for classification and the range of
// the labels seen before the event for regression.
//
// Why this method, and its guarantee. The losses are the members' plain
// square losses, in the label's own units: AdaHedge needs no known loss
// range — its learning rate is set by the observed mixability gap and is
// invariant to rescaling the losses — so nothing has to be normalised by a
// range that a few extreme labels set (the fixed-η exponentially weighted
// average used before needed losses in [0, 1] and divided by the squared
// label range, which on cpusmall, labels 0–99 with most above 80, made its
// weights concentrate slowly). Guarantee (ibid., §2): for every sequence,
// with per-round loss ranges at most S (unknown to the algorithm), the
// hedge loss H_T = Σ h_t satisfies H_T − min_i L_i ≤ 2Δ_T (the mix loss
// with non-increasing η is at most min_i L_i + ln K/η_T = min_i L_i +
// Δ_{T−1}), and Δ_T ≤ (S/2)·sqrt(T(ln K + 4)) (each δ_t ≤ S, and δ_t ≤
// η_t S²/8 by Hoeffding's lemma, so Δ_t² − Δ_{t−1}² ≤ S² ln K/4 + S²),
// so the regret is at most S·sqrt(T(ln K + 4)); the
// paper sharpens this to O(sqrt(S ln K · L*(ST − L*)/T)), small when the
// best member's loss is small. Where a single member leads, Δ stays small,
// η large, and AdaHedge follows it. The square loss is convex, so the loss
// of the averaged prediction p̂ is at most the
// hedge loss (Jensen): the bound holds for auto's own predictions
// (TestAutoAdaHedgeRegretBound). For classification a mistake of p̂
// (sign(p̂) ≠ y) costs at least 1 of square loss on [−1, 1]. The
// fixed-η EWA on the normalised loss has the tighter 2 ln K regret for
// exp-concave losses, but only in units of the squared range, which is the
// weakness above; follow-the-leader alone has no guarantee (it can be
// forced to switch every round), and AdaHedge is FTL whenever FTL works.
//
// Cost: deterministic successive halving. At events n0, 2·n0, 4·n0, ...
// (halving=n0, default 1000) the surviving members are ranked by L_i (ties:
// the smaller member index first) and the worse half is dropped, never
// below keep members (default 2). With track (the default) and base=fogd,
// a race drops the members clearly behind the leader between the halvings
// (auto_race.go; the halvings keep the sizes below), and with base=fogd
// the members share one projection per event and one map per σ
// (auto_bank.go): auto over the first 3,700 events of a cod-rna
// partition cost 9–11× its steady state per event, ~3× with both
// (BenchmarkAutoWarmup). With the defaults auto runs 22 members
// (21 and the linear one) up to event 1000, then 11, 6, 3 and, from event
// 8000 on, 2 (8 → 4 → 2 for a σ-only grid, from event 2000; 10 → 5 → 3 → 2
// for regression, 7 σ, linear and 2 kernel ridge, from event 4000): in steady
// state it costs at most about keep× its most expensive survivor plus O(N)
// for the weights (BenchmarkAutoSteadyState reports the ratio: 1.05–2.19,
// less when the linear member is a survivor). Pruning compares cumulative
// progressive losses, the quantity the regret bound is about; the bound
// then holds against the survivors, and pruning can drop a member that
// would have overtaken later (the price of bounded cost).
//
// State: every survivor's state, the loss sums, the mixability gap Δ, the
// label range and the pruning schedule position are marshalled (and with
// the race its pair sums, auto_race.go); restoring
// rebuilds the survivors from the spec and restores them, so a restored auto continues
// bit for bit.

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
)

func init() {
	Register(Registration{
		Name:    "auto",
		Summary: "online model selection: a bank of base learners over a σ grid around the data-driven σ, plus the online linear model, combined by AdaHedge weights, pruned by successive halving",
		Paper:   "de Rooij, van Erven, Grünwald & Koolen, Follow the Leader If You Can, Hedge If You Must, JMLR 2014 (AdaHedge)",
		Params: []ParamDoc{
			{Name: "base", Default: "fogd", Doc: "the members' learner (any learner with a shift-invariant kernel: fogd, nogd, forks, bogd, bpas, pkawv, nons-ald, ...); the task follows the base (and its loss)"},
			{Name: "octaves", Default: "3", Doc: "σ grid 2^-octaves..2^octaves × the data-driven σ (2·octaves+1 members)"},
			{Name: "etas", Default: "3 for fogd, nogd, bogd, skegd on a classification loss; else 1", Doc: "η grid η0·10^-j, j < etas, η0 the base's default step (0.2: the FORKS paper's; 0.002: the LSOKL toolbox's), when the base has a step size and the spec does not set eta", When: "the base has eta"},
			{Name: "per_octave", Default: "1", Doc: "σ grid points per octave (2: the papers' 2^0.5 steps)"},
			{Name: "halving", Default: "1000", Doc: "successive halving at events halving, 2·halving, 4·halving, ...: keep the better half by cumulative loss"},
			{Name: "keep", Default: "2", Doc: "pruning never goes below this many members"},
			{Name: "linear", Default: "true", Doc: "also run the online linear model (learner linear: NAG on the squared hinge, or ridge by recursive least squares, solver=rls, for regression) on the same standardised inputs as one more member, weighed and pruned like the others; for regression also two online kernel ridge members (linear, solver=rls, on 128 random Fourier features of widths σ̂ and σ̂/2: second-order, O(128²) per event)"},
			{Name: "ridge_features", Default: "128", Doc: "random Fourier features D of each kernel ridge member (0: none; memory 16·(2D+1)² bytes for the two)", When: "regression, linear=true"},
			{Name: "track", Default: "true", Doc: "follow a changing stream (learner/auto_track.go, docs/algorithms/tracking.md): Fixed Share weights, and on a rise of auto's loss that ADWIN detects a restart: fresh members (the survivors' configurations and the leader's σ neighbours, their inputs re-standardised) join the survivors and pruning starts again; false: the bank of before (same canonical spec and states)"},
			{Name: "race", Default: "true for base=fogd, else false", Doc: "between the halvings, every halving/8 events, drop the members whose loss is behind the leader's by more than a Freedman confidence margin (learner/auto_race.go); the halvings keep their sizes", When: "track=true"},
			{Name: "horizon", Default: "the base's", Doc: "expected stream length T, passed to members whose base takes one (okstream eval sets it); ignored otherwise", When: "any base"},
			{Name: "(other keys)", Default: "the base's defaults", Doc: "passed to every member (e.g. budget=50, loss=square); scale and warmup as for every learner; sigma is auto; base=forks members default to preset=wide (learns on class-imbalanced streams; preset=paper or explicit sm, k, c override it)", When: "any key of the base learner"},
		},
		New: newAuto,
	})
}

// autoFORKSPreset is the preset of FORKS members unless the spec sets one:
// "wide" (forks.go: s_m = 0.5 s_p, k = s_m, no slab for the hinge), because
// at the paper's settings FORKS is the majority-class predictor on
// class-imbalanced streams whatever σ (w7a 3.003 % vs 2.997 % majority;
// wide 2.669 %), and a stream nobody tuned for may be imbalanced. Explicit
// sm, k or c in the spec still win (they override any preset), and
// preset=paper restores the paper's settings.
const autoFORKSPreset = "wide"

// Auto is the online model-selection learner. Build it with
// New("auto:base=..."); New wraps it in the self-tuning wrapper.
type Auto struct {
	base
	specs   []map[string]string // the bank's configurations (for rebuilding), by slot
	names   []string            // their learners (the base, or linear), by slot
	slot    []int               // member i's configuration (specs, names); i without track
	bname   string
	members []Learner // nil once pruned
	alive   []int     // indices of the survivors, increasing
	loss    []float64 // cumulative square loss per member (since the last restart with track)
	lo, hi  float64   // prediction range
	ranged  bool      // regression: a label has been seen
	next    uint64    // the next pruning event count (0: no more pruning)
	keep    int
	delta   float64    // AdaHedge: cumulative mixability gap Δ
	f       []float64  // scratch: members' scores, then losses
	w       []float64  // scratch: members' weights
	tr      *autoTrack // track=true: Fixed Share losses, change detector, restarts (auto_track.go); nil otherwise
	bank    *autoBank  // base=fogd: the FOGD members' shared projection (auto_bank.go); nil otherwise
	q       []float64  // the race's pair sums V (auto_race.go); nil without the race (track=false or race=false)
	racing  []int      // scratch: the raced survivors (auto_race.go)
}

func (a *Auto) selfTuning() {}

var autoOwnKeys = []string{"base", "octaves", "per_octave", "halving", "keep", "etas", "linear", "ridge_features", "track", "race"}

func newAuto(p *Params, dim int) (Learner, error) {
	bname := p.Enum("base", "fogd", autoBases()...)
	oct := p.Int("octaves", 3, InRange(0, 10))
	per := p.Int("per_octave", 1, InRange(1, 4))
	n0 := p.Int("halving", 1000, InRange(1, 1<<40))
	keep := p.Int("keep", 2, InRange(1, 100))
	withLinear := p.Bool("linear", true)
	track := autoTrackParam(p)
	// The race (auto_race.go, which bases race); race absent: the
	// canonical spec is unchanged.
	race := track && bname == "fogd"
	if p.Has("race") {
		race = p.Bool("race", true) && track
	}
	ridgeD := autoRidgeFeatures
	if p.Has("ridge_features") { // absent: the canonical spec is unchanged for classification
		ridgeD = p.Int("ridge_features", autoRidgeFeatures, InRange(0, 1<<10))
	}
	fwd := map[string]string{}
	for k, v := range p.raw {
		if !slices.Contains(autoOwnKeys, k) {
			fwd[k] = v
		}
	}
	if _, set := fwd["preset"]; !set && bname == "forks" {
		fwd["preset"] = autoFORKSPreset
	}
	if h, ok := fwd["horizon"]; ok && !slices.ContainsFunc(Describe(bname).Params, func(d ParamDoc) bool { return d.Name == "horizon" }) {
		delete(fwd, "horizon")
		p.resolved["horizon"] = h // unused by the base; kept in the spec so that states stay tied to it
	}
	if _, ok := fwd["sigma"]; ok {
		return nil, fmt.Errorf("learner auto: parameter sigma: the members' σ is the grid 2^-octaves..2^octaves × the data-driven σ; set octaves instead")
	}
	// A probe member (σ = 1) tells the task and the base's default step η0.
	var task Task
	var eta0 string
	var probe Learner
	if p.Err() == nil {
		kv := maps.Clone(fwd)
		kv["sigma"] = "1"
		var err error
		if probe, err = newPlain(bname, kv, dim); err == nil {
			task = probe.Info().Task
			_, pkv, _ := ParseSpec(probe.Info().Spec)
			eta0 = pkv["eta"]
		}
	}
	etas := p.Int("etas", autoDefaultEtas(bname, task), InRange(1, 6))
	if err := p.Err(); err != nil {
		return nil, err
	}
	a := &Auto{bname: bname, keep: keep, next: uint64(n0)}
	var sib *autoSiblings // FOGD members without a draw each (auto_bank.go)
	// The η axis: η0·10^-j, j < etas, if the base has a step and the spec
	// does not fix it.
	etaGrid := []string{""}
	if _, fixed := fwd["eta"]; !fixed && etas > 1 && eta0 != "" {
		e0, _ := ParseNumber(eta0)
		etaGrid = etaGrid[:0]
		for j := 0; j < etas; j++ {
			etaGrid = append(etaGrid, FormatNumber(e0*math.Pow(10, -float64(j))))
		}
	}
	gridPoint := func(eta string, i int) map[string]string {
		kv := maps.Clone(fwd)
		kv["sigma"] = FormatNumber(math.Pow(2, float64(i)/float64(per)))
		if eta != "" {
			kv["eta"] = eta
		}
		return kv
	}
	if bname == "fogd" && probe != nil {
		sib = newAutoSiblings(probe, gridPoint(etaGrid[len(etaGrid)-1], oct*per), dim)
	}
	for _, eta := range etaGrid {
		for i := -oct * per; i <= oct*per; i++ {
			kv := gridPoint(eta, i)
			if err := a.addMember(p, kv, fwd, dim, eta != "", sib); err != nil {
				return nil, err
			}
		}
	}
	if withLinear {
		kv := map[string]string{"loss": autoLinearLoss(task)}
		if task == Regression {
			kv["solver"] = "rls" // O(d²): the inputs are standardised
			kv["lambda"] = FormatNumber(autoLinearLambda(dim))
		}
		if err := a.addLinear(kv, dim); err != nil {
			return nil, err
		}
		if track && task == Classification {
			// The second linear member (auto_track.go): logistic regression
			// whose AdaGrad steps forget with horizon autoLinearForget.
			if err := a.addLinear(map[string]string{"loss": "logistic", "forget": strconv.Itoa(autoLinearForget)}, dim); err != nil {
				return nil, err
			}
		}
		if task == Regression && ridgeD > 0 {
			for _, sig := range autoRidgeSigmas {
				kv := map[string]string{"loss": "square", "solver": "rls", "lambda": "1",
					"features": strconv.Itoa(ridgeD), "sigma": FormatNumber(sig)}
				if err := a.addLinear(kv, dim); err != nil {
					return nil, err
				}
			}
		}
	}
	a.base = newBase(p, dim, a.members[0].Info().Task)
	a.loss = make([]float64, len(a.members))
	a.f = make([]float64, len(a.members))
	a.w = make([]float64, len(a.members))
	a.lo, a.hi = -1, 1
	if a.task == Regression {
		a.lo, a.hi = 0, 0
	}
	if len(a.members) <= keep {
		a.next = 0
	}
	if track {
		a.tr = newAutoTrack(len(a.members), keep, dim, uint64(n0))
		if race {
			a.q = make([]float64, pairCount(len(a.members)))
		}
	}
	a.bank = newAutoBank(a, probe)
	return a, nil
}

// addMember builds the member with spec kv; the first one's resolved
// parameters (but σ, and η when it is on the grid) go into auto's canonical
// spec.
func (a *Auto) addMember(p *Params, kv, fwd map[string]string, dim int, etaGrid bool, sib *autoSiblings) error {
	bname := a.bname
	m, err := sib.make(kv), error(nil)
	if m == nil {
		m, err = newPlain(bname, kv, dim)
	}
	if err != nil {
		return fmt.Errorf("learner auto: member %s: %w", canonicalSpec(bname, kv), err)
	}
	_, mkv, _ := ParseSpec(m.Info().Spec)
	if mkv["sigma"] == "" {
		return fmt.Errorf("learner auto: base %s has no kernel width σ with this configuration", bname)
	}
	if len(a.members) == 0 {
		// The canonical spec lists the members' resolved parameters.
		for k, v := range mkv {
			if k == "sigma" || (k == "eta" && etaGrid) {
				continue
			}
			p.resolved[k] = v
		}
		for k, v := range fwd {
			if _, ok := mkv[k]; !ok {
				p.local[k] = v // a member's local key (see ParamDoc.Local)
			}
		}
	}
	a.specs = append(a.specs, kv)
	a.names = append(a.names, bname)
	a.slot = append(a.slot, len(a.slot))
	a.members = append(a.members, m)
	a.alive = append(a.alive, len(a.alive))
	return nil
}

// addLinear adds the linear member (learner linear with spec kv) last.
func (a *Auto) addLinear(kv map[string]string, dim int) error {
	m, err := newPlain("linear", kv, dim)
	if err != nil {
		return fmt.Errorf("learner auto: linear member: %w", err)
	}
	a.specs = append(a.specs, kv)
	a.names = append(a.names, "linear")
	a.slot = append(a.slot, len(a.slot))
	a.members = append(a.members, m)
	a.alive = append(a.alive, len(a.alive))
	return nil
}

// autoLinearLoss is the linear member's loss: the loss auto weighs every
// member by. For regression that is the square loss (linear: ridge). For
// classification auto scores a member by (clip(f, −1, 1) − y)² =
// (1 − y·clip(f))², the squared hinge loss capped at 4, so the linear member
// is trained on the squared hinge (linear: NAG), the smooth surrogate of
// the very loss it is compared on. With track (the default) a second
// linear member is trained on the logistic loss: online logistic
// regression on the standardised inputs, the model streaming users compare
// with (River's StandardScaler | LogisticRegression). On drifting linear
// streams the squared-hinge member alone made more mistakes than that
// model (rotating hyperplane 7.44 % vs 7.19 %, SEA 12.00 % vs 11.76 %) and,
// its clipped scores being the more confident ones when wrong, lost the
// weight to the kernel members, which make more mistakes there (auto
// 10.24 % and 12.54 %); the logistic member takes the weight (auto 7.19 %
// and 11.74 %). On stationary files the squared hinge is often the better
// of the two (w7a 2.03 % vs 2.39 %, docs/algorithms/selftune.md), so both
// are members: the first pruning keeps the better one (by the loss auto
// weighs by), which then stays (prune), and a restart brings both back.
//
// The logistic member's AdaGrad accumulators forget with horizon
// autoLinearForget events (linear's forget=H, docs/algorithms/steps-under-drift.md):
// its steps level off instead of decaying like 1/√t, as the constant-step
// SGD of River's model does (rotating hyperplane, 3 draws: 7.50 % without,
// 7.23 % with; River 7.19 %); on stationary files forget=10⁴ moved plain
// linear by at most 0.03 points.
const autoLinearForget = 10000

func autoLinearLoss(task Task) string {
	if task == Regression {
		return "square"
	}
	return "squared_hinge"
}

// autoLinearLambda is the regression member's ridge penalty λ (solver=rls,
// penalty λ‖w‖²): auto's inputs are standardised features divided by σ̂,
// and σ̂ ≈ sqrt(2d) (the median distance of d independent standardised
// features, selftune.go's σ₀), so each coordinate's scale is about
// 1/sqrt(2d) and λ = 1/(2d) is the unit penalty λ = 1 of standardised
// coordinates (measured on the shared regression files, auto:fogd against
// λ = 1: elevators 8.58e-6 vs 8.77e-6, ailerons 3.10e-8 vs 3.11e-8,
// parkinsons 90.3 vs 90.1, the others within 0.3 %).
func autoLinearLambda(dim int) float64 { return 1 / (2 * float64(dim)) }

// autoRidgeFeatures and autoRidgeSigmas configure auto's second-order
// kernel members for regression: online kernel ridge regression (learner
// linear, solver=rls) on autoRidgeFeatures random Fourier features of the
// Gaussian kernel of width σ·σ̂ for σ in autoRidgeSigmas. The kernel
// members of the grid (fogd, nogd, ...) are first-order: on cpusmall their
// best is ~32 MSE where the second-order NONS-ALD gets 26.4
// (docs/results.md); a ridge in a fixed feature span has regret
// O(D·ln T) against the best predictor of that span (linear.go), at
// O(D²) per event. λ = 1 is the universal unit penalty here: the
// features have ‖z‖ = 1 (κ(x, x) = 1) and the wrapper standardises the
// labels, so λ = 1 weighs the penalty like one event's loss, the kernel
// ridge choice of the Kernel-AWV paper (Jézéquel, Gaillard & Rudi, COLT
// 2019, λ = 1 with a unit-diagonal kernel).
const autoRidgeFeatures = 128

var autoRidgeSigmas = []float64{1, 0.5}

// autoDefaultEtas is 3 for the first-order learners on a classification
// loss, whose gradient step η is the setting the papers and the LSOKL
// toolbox disagree on (0.2 vs 0.002), and 1 (no η axis) otherwise: for the
// square loss the papers agree on c/√T with labels of order one, which the
// wrapper's label standardisation provides (and extra slow members cost
// their share of the early average: on cpusmall 48.5 vs 47.2 MSE, elevators
// 1.03e-5 vs 0.99e-5); FORKS' η only drives its buffer phase; second-order
// and passive-aggressive bases have none.
func autoDefaultEtas(base string, task Task) int {
	switch base {
	case "fogd", "nogd", "bogd", "skegd":
		if task == Classification {
			return 3
		}
	}
	return 1
}

// autoBases lists the learners auto accepts as base (every registered
// learner but auto; whether it has a σ is checked when the members are
// built).
func autoBases() []string {
	var out []string
	for _, n := range Names() {
		if n != "auto" {
			out = append(out, n)
		}
	}
	return out
}

func (a *Auto) clip(f float64) float64 {
	if a.task == Regression && !a.ranged {
		return f
	}
	return math.Max(a.lo, math.Min(a.hi, f))
}

// weights writes the AdaHedge weights of the survivors (not normalised) into
// a.w and returns their sum (adaHedgeWeights at η = ln K/Δ).
func (a *Auto) weights() float64 {
	return adaHedgeWeights(a.w, a.weighLoss(), a.alive, adaHedgeRate(len(a.alive), a.delta, math.Inf(1)))
}

// weighLoss is the loss the weights come from: the cumulative loss, or
// with track the Fixed Share loss (auto_track.go).
func (a *Auto) weighLoss() []float64 {
	if a.tr != nil {
		return a.tr.tl
	}
	return a.loss
}

// adaHedgeRate is AdaHedge's learning rate η = ln K/Δ for K survivors and
// mixability gap Δ (∞ while Δ = 0), capped at etaMax (auto: ∞; multi-class
// auto: 1, auto_multi.go).
func adaHedgeRate(k int, delta, etaMax float64) float64 {
	eta := math.Inf(1)
	if delta > 0 {
		eta = math.Log(float64(k)) / delta
	}
	return math.Min(eta, etaMax)
}

// adaHedgeWeights writes the AdaHedge weights w_i = exp(−η(L_i − min L))
// of the members in alive (not normalised; at η = ∞, 1 on the members of
// least loss and 0 elsewhere) into w and returns their sum, summed in the
// order of alive. Shared by auto and multi-class auto.
func adaHedgeWeights(w, loss []float64, alive []int, eta float64) float64 {
	lmin := math.Inf(1)
	for _, i := range alive {
		lmin = math.Min(lmin, loss[i])
	}
	var den float64
	for _, i := range alive {
		v := 0.0
		switch {
		case loss[i] == lmin:
			v = 1
		case !math.IsInf(eta, 1):
			v = math.Exp(-eta * (loss[i] - lmin))
		}
		w[i] = v
		den += v
	}
	return den
}

// adaHedgeGap returns the round's mixability gap δ = h − m ≥ 0 for the
// members' losses l (indexed like alive) under the weights w the round's
// prediction used (adaHedgeWeights at rate eta), h = Σ w_i l_i / Σ w_i the
// hedge loss and m the mix loss (adaHedgeLosses). A gap that rounding
// makes negative, or an infinite one, is returned as 0 (not added to Δ).
func adaHedgeGap(w, l []float64, alive []int, eta float64) float64 {
	h, m := adaHedgeLosses(w, l, alive, eta)
	return positiveGap(h - m)
}

// positiveGap is g if it is positive and finite, else 0.
func positiveGap(g float64) float64 {
	if g > 0 && !math.IsInf(g, 1) {
		return g
	}
	return 0
}

// adaHedgeLosses returns the round's hedge loss h = Σ w_i l_i / Σ w_i and
// mix loss m = −(1/η) ln(Σ w_i e^(−η l_i) / Σ w_i) (at η = ∞ the least
// loss among the leaders, w_i = 1), summed in the order of alive.
func adaHedgeLosses(w, l []float64, alive []int, eta float64) (h, m float64) {
	den := 0.0
	lmin := math.Inf(1)
	for _, i := range alive {
		lmin = math.Min(lmin, l[i])
		den += w[i]
	}
	var mix float64
	mleaders := math.Inf(1)
	for _, i := range alive {
		h += w[i] * l[i]
		if w[i] == 1 {
			mleaders = math.Min(mleaders, l[i])
		}
		if !math.IsInf(eta, 1) {
			mix += w[i] * math.Exp(-eta*(l[i]-lmin))
		}
	}
	h /= den
	m = mleaders
	if !math.IsInf(eta, 1) {
		m = lmin - math.Log(mix/den)/eta
	}
	return h, m
}

// halveSurvivors ranks alive by loss (ties: the smaller index first) and
// returns the better half, at least keep, in increasing index order, and
// the rest (successive halving; shared by auto and multi-class auto).
func halveSurvivors(alive []int, loss []float64, keep int) (kept, dropped []int) {
	n := max(keep, (len(alive)+1)/2)
	return bestOf(alive, loss, min(n, len(alive)))
}

// bestOf returns the n members of alive of least loss (ties: the smaller
// index first) in increasing index order, and the rest in rank order.
func bestOf(alive []int, loss []float64, n int) (kept, dropped []int) {
	idx := slices.Clone(alive) // pruning happens O(log T) times
	slices.SortStableFunc(idx, func(i, j int) int {
		switch {
		case loss[i] < loss[j]:
			return -1
		case loss[i] > loss[j]:
			return 1
		}
		return i - j
	})
	dropped = idx[n:]
	kept = slices.Clone(idx[:n])
	slices.Sort(kept)
	return kept, dropped
}

// combine returns the weighted average of the survivors' clipped scores in
// a.f.
func (a *Auto) combine() float64 {
	den := a.weights()
	var num float64
	for _, i := range a.alive {
		num += a.w[i] * a.clip(a.f[i])
	}
	return num / den
}

// Predict returns the weighted average of the members' clipped predictions.
func (a *Auto) Predict(x []float64) float64 {
	a.checkDim(x)
	a.tr.newEvent()
	a.bank.newEvent()
	for _, i := range a.alive {
		a.f[i] = a.memberPredict(x, i)
	}
	return a.combine()
}

// Learn lets every survivor predict and learn (x, y), updates the losses and
// the mixability gap, and prunes on schedule; it returns the pre-update
// combined score.
func (a *Auto) Learn(x []float64, y float64) float64 {
	a.checkDim(x)
	a.tr.newEvent()
	a.bank.newEvent()
	a.learnMembers(x, y) // each survivor's Learn, its score in a.f (auto_bank.go)
	score := a.combine() // also leaves the weights of this round in a.w
	// The members' losses ℓ_i = (clip(f_i) − y)², clipped with the range
	// the prediction used.
	for _, i := range a.alive {
		d := a.clip(a.f[i]) - y
		a.f[i] = d * d
	}
	// AdaHedge: the round's mixability gap δ ≥ 0 (hedge loss minus mix
	// loss, adaHedgeGap); Δ sums them.
	a.delta += adaHedgeGap(a.w, a.f, a.alive, adaHedgeRate(len(a.alive), a.delta, math.Inf(1)))
	for _, i := range a.alive {
		a.loss[i] += a.f[i]
	}
	if a.q != nil && a.next != 0 {
		a.raceObserve()
	}
	if a.tr != nil {
		a.share()
	}
	if a.task == Regression {
		if !a.ranged {
			a.lo, a.hi, a.ranged = y, y, true
		}
		a.lo, a.hi = math.Min(a.lo, y), math.Max(a.hi, y)
	}
	a.updates++
	if a.q != nil {
		a.race() // (not at a halving point)
	}
	if a.next != 0 && a.updates == a.next {
		a.prune()
	}
	if a.tr != nil {
		a.tr.observe(x, a.updates-a.tr.origin)
		a.detect(score, y, x)
	}
	return score
}

// prune keeps the better half (at least keep) of the survivors. The
// schedule doubles the distance from its origin: event 0, or with track
// the last restart.
//
// With track the plain linear members are not among the halved: they
// compete among themselves, and the best of them by loss (the squared
// hinge or the logistic one, the old or a restart's fresh one) always
// survives beside keep others (auto_track.go).
func (a *Auto) prune() {
	cand, lin := a.alive, []int(nil)
	if a.tr != nil {
		cand, lin = a.splitLinear()
	}
	n := min(max(a.keep, (len(cand)+1)/2), len(cand))
	if a.q != nil {
		n = min(a.nominalKeep(), len(cand)) // the race's drops do not shrink the halvings (auto_race.go)
	}
	kept, dropped := bestOf(cand, a.loss, n)
	if len(lin) > 1 {
		var more []int
		lin, more = halveSurvivors(lin, a.loss, 1)
		lin, more = lin[:1], append(more, lin[1:]...)
		dropped = append(dropped, more...)
	}
	for _, i := range dropped {
		a.members[i] = nil
	}
	a.alive = append(kept, lin...)
	slices.Sort(a.alive)
	origin := uint64(0)
	if a.tr != nil {
		origin = a.tr.origin
	}
	a.next = origin + 2*(a.next-origin)
	if len(kept) <= a.keep {
		a.next = 0
	}
}

// MarshalBinary writes the schedule, label range, loss sums, survivors and
// their states.
func (a *Auto) MarshalBinary() ([]byte, error) {
	e := a.encoder(64 + 8*len(a.loss))
	e.U64(a.next)
	e.F64(a.lo)
	e.F64(a.hi)
	e.Bool(a.ranged)
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
	if a.q != nil {
		// The race's V (auto_race.go), after the members: empty once
		// pruning is done (unused until a restart resets it). States of
		// before restore without it.
		if a.next != 0 {
			e.F64s(a.q)
		} else {
			e.F64s(nil)
		}
	}
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state of an identically configured auto; on
// any error the learner is unchanged.
func (a *Auto) UnmarshalBinary(data []byte) error {
	d, updates := a.decoder(data)
	next := d.U64()
	lo, hi := d.F64(), d.F64()
	ranged := d.Bool()
	delta := d.F64()
	n := len(a.specs)
	slot := a.slot
	var tr *autoTrack
	if a.tr != nil {
		slot, tr = a.tr.decodeBank(d, len(a.specs), a.dim, updates)
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
	for k, i := range alive {
		if i < 0 || i >= n || (k > 0 && i <= alive[k-1]) {
			d.Fail("bad survivor list")
			return d.Err()
		}
	}
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || lo > hi {
		d.Fail("bad label range")
		return d.Err()
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
	members := make([]Learner, n)
	for _, i := range alive {
		blob := d.Blob()
		if d.Err() != nil {
			return d.Err()
		}
		m, err := newPlain(a.names[slot[i]], a.specs[slot[i]], a.dim)
		if err != nil {
			return err
		}
		if err := m.UnmarshalBinary(blob); err != nil {
			return fmt.Errorf("auto member %d: %w", i, err)
		}
		members[i] = m
	}
	var q []float64
	if a.q != nil {
		if q = a.decodeRace(d, loss, lo, hi, next != 0); d.Err() != nil {
			return d.Err()
		}
	}
	if err := d.Done(); err != nil {
		return err
	}
	a.updates, a.next, a.lo, a.hi, a.ranged, a.delta = updates, next, lo, hi, ranged, delta
	a.alive, a.loss, a.members = alive, loss, members
	if q != nil {
		a.q = q
	}
	if tr != nil {
		a.slot, a.tr = slot, tr
		a.f = make([]float64, max(n, len(a.f)))
		a.w = make([]float64, max(n, len(a.w)))
	}
	return nil
}

// Info reports the survivors' total budget, use and memory.
func (a *Auto) Info() Info {
	var budget, used, bytes int
	for _, i := range a.alive {
		in := a.members[i].Info()
		budget += in.Budget
		used += in.Used
		bytes += in.Bytes
	}
	return a.info(budget, used, bytes+16*len(a.loss))
}

// String describes the survivors (for logs and tests).
func (a *Auto) String() string {
	s := "auto[" + a.bname + "]"
	for _, i := range a.alive {
		kv := a.specs[a.slot[i]]
		name := kv["sigma"] + "σ̂"
		if a.names[a.slot[i]] == "linear" {
			name = "linear"
			if kv["loss"] == "logistic" {
				name = "logistic"
			}
			if f := kv["features"]; f != "" {
				name = "ridge" + f + "@" + kv["sigma"] + "σ̂"
			}
		}
		s += " " + name + ":" + strconv.FormatFloat(a.loss[i], 'g', 4, 64)
	}
	return s
}
