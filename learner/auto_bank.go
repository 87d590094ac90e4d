package learner

// auto (binary and regression), base=fogd — one projection for the whole
// σ grid.
//
// Every FOGD member of auto's grid has the same kernel, D, scale and seed,
// and σ = 2^i (per_octave=1) times the same σ̂ (the wrapper's): its
// frequencies are those of width 1 divided by 2^i, exactly, and the η
// members of one σ have the same map. So auto computes, per event and per
// input (the survivors' x, or a restart's re-standardised u,
// auto_track.go), one projection Uᵀx on the map at σ = 1 (the probe
// member's, which newAuto builds anyway), one z(x) per distinct σ
// (kernel.Fourier.MapProjected with the factor 2^−i) shared by that σ's η
// members, and each member's score wᵀz (kernel.Fourier.Score) and step.
// The technique is multi-class auto's (auto_multi.go); the bits are those
// of each member's own Learn (a power-of-two factor is exact in floating
// point: MapProjected's documentation): auto's predictions and states are
// unchanged (TestAutoBankBitIdentical). A configuration is put on the bank
// only when its member's map is checked to be the shared one times 2^−i
// (kernel.Fourier.ScaledOf); the others (per_octave > 1: σ = 2^(i/2))
// learn through their own Learn as before.
//
// Cost per event with the default grid (7 σ × 3 η + 2 linear members):
// one O(d·D) projection and 7 O(D) sin/cos passes in place of 21 of each,
// plus the 21 members' O(D) scores and steps. The members still hold their
// own maps (drawn at build: newFOGD draws them; a shared draw needs a
// constructor on a given map in fogd.go, as fogd_multi.go has).

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"

	"okstream/learner/kernel"
)

// autoBank is auto's shared-projection state for its FOGD members.
type autoBank struct {
	ref   *kernel.Fourier // the map at σ = 1 (the probe's)
	mult  []float64       // per configuration (slot): 1/σ when on the bank, else 0
	stamp uint64          // the current event (Predict or Learn call)
	proj  []autoProj      // per input: the event's projection
	zs    []autoZ         // per input and σ: the event's z(x)
	ws    [][]float64     // scratch: a group's weights (learnMembers)
	sc    []float64       // scratch: their scores
}

type autoProj struct {
	key   int // the input: 0 auto's own, g > 0 re-standardised by transform g (autoTrack.inputKey)
	stamp uint64
	p     []float64 // D
}

type autoZ struct {
	key   int
	mult  float64
	stamp uint64
	z     []float64 // 2D
	group []int     // scratch: the members that read z this event (learnMembers)
}

// newAutoBank returns the bank of auto a's FOGD members on probe's map
// (σ = 1), or nil when the base is not FOGD or no configuration qualifies.
func newAutoBank(a *Auto, probe Learner) *autoBank {
	pf, ok := probe.(*FOGD)
	if !ok || a.bname != "fogd" {
		return nil
	}
	b := &autoBank{ref: pf.rff, mult: make([]float64, len(a.specs))}
	any := false
	for s, kv := range a.specs {
		if a.names[s] != "fogd" {
			continue
		}
		m, ok := a.members[s].(*FOGD)
		sig, err := ParseNumber(kv["sigma"])
		if !ok || err != nil || !(sig > 0) {
			continue
		}
		if fr, _ := math.Frexp(sig); fr != 0.5 {
			continue // not a power of two: its own map
		}
		if m.rff.ScaledOf(b.ref, 1/sig) {
			b.mult[s] = 1 / sig
			any = true
		}
	}
	if !any {
		return nil
	}
	return b
}

// newEvent marks the projections and maps stale. Nil-safe.
func (b *autoBank) newEvent() {
	if b != nil {
		b.stamp++
	}
}

// on returns member i's FOGD and map factor when it is on the bank.
func (a *Auto) onBank(i int) (*FOGD, float64) {
	if a.bank == nil {
		return nil, 0
	}
	mult := a.bank.mult[a.slot[i]]
	if mult == 0 {
		return nil, 0
	}
	return a.members[i].(*FOGD), mult
}

// memberPredict is member i's score for x (its Predict's bits).
func (a *Auto) memberPredict(x []float64, i int) float64 {
	if m, mult := a.onBank(i); m != nil {
		return m.rff.Score(m.w, a.bank.z(a, x, i, mult))
	}
	return a.members[i].Predict(a.tr.input(x, i))
}

// learnMembers lets every survivor learn (x, y), leaving its pre-update
// score in a.f (each member's Learn, the same bits): the members on the
// bank by groups that read one z(x) (a σ's η members), their scores three
// at a time (kernel.Fourier.Scores), then each one's step.
func (a *Auto) learnMembers(x []float64, y float64) {
	b := a.bank
	if b != nil {
		for k := range b.zs {
			b.zs[k].group = b.zs[k].group[:0]
		}
	}
	for _, i := range a.alive {
		if m, mult := a.onBank(i); m != nil {
			k := b.entry(a, x, i, mult)
			b.zs[k].group = append(b.zs[k].group, i)
			continue
		}
		a.f[i] = a.members[i].Learn(a.tr.input(x, i), y)
	}
	if b == nil {
		return
	}
	for k := range b.zs {
		e := &b.zs[k]
		if len(e.group) == 0 {
			continue
		}
		b.ws = b.ws[:0]
		for _, i := range e.group {
			b.ws = append(b.ws, a.members[i].(*FOGD).w)
		}
		b.sc = slices.Grow(b.sc[:0], len(e.group))[:len(e.group)]
		b.ref.Scores(b.sc, b.ws, e.z)
		for n, i := range e.group {
			a.f[i] = a.members[i].(*FOGD).stepMapped(e.z, b.sc[n], y)
		}
	}
}

// z returns z(x) of member i's input at factor mult, computed once per
// event, input and σ.
func (b *autoBank) z(a *Auto, x []float64, i int, mult float64) []float64 {
	return b.zs[b.entry(a, x, i, mult)].z
}

// entry returns the index in zs of z(x) for member i's input at factor
// mult, computed once per event, input and σ.
func (b *autoBank) entry(a *Auto, x []float64, i int, mult float64) int {
	key := a.tr.inputKey(i)
	k := -1
	for j := range b.zs {
		if b.zs[j].key == key && b.zs[j].mult == mult {
			k = j
			break
		}
	}
	if k < 0 { // once per input and σ (restarts add inputs)
		b.zs = append(b.zs, autoZ{key: key, mult: mult, z: make([]float64, b.ref.Dim())})
		k = len(b.zs) - 1
	}
	e := &b.zs[k]
	if e.stamp != b.stamp {
		b.ref.MapProjected(e.z, b.project(a.tr.input(x, i), key), mult)
		e.stamp = b.stamp
	}
	return k
}

// project returns the event's projection of input in (key).
func (b *autoBank) project(in []float64, key int) []float64 {
	k := -1
	for j := range b.proj {
		if b.proj[j].key == key {
			k = j
			break
		}
	}
	if k < 0 {
		b.proj = append(b.proj, autoProj{key: key, p: make([]float64, b.ref.Frequencies())})
		k = len(b.proj) - 1
	}
	e := &b.proj[k]
	if e.stamp != b.stamp {
		b.ref.Project(e.p, in)
		e.stamp = b.stamp
	}
	return e.p
}

// inputKey is member i's input: 0 auto's own x (no tracking, or no
// transform, or an identity one), else its transform's number. Nil-safe.
func (tr *autoTrack) inputKey(i int) int {
	if tr == nil || tr.gen[i] == 0 || tr.tx[tr.gen[i]-1].identity {
		return 0
	}
	return tr.gen[i]
}

// autoSiblings builds auto's FOGD members without drawing their random
// features: each is a fresh copy of the probe (FOGD at σ = 1, the spec's
// other keys) with its map scaled by 1/σ (kernel.Fourier.Scaled: exact
// for σ a power of two), its step η and its canonical spec. newFOGD would
// draw the same frequencies (same seed) d·D samples at a time, 22 times
// per build, and the self-tuning wrapper builds auto 10 times during its
// warm-up: that was 16 % of auto's cost over a 3,700-event partition.
// Guard: newAutoSiblings builds one member both ways and keeps the
// factory only if the two are deeply equal (every field, the map's
// frequencies included), so a change to FOGD that the copy misses falls
// back to newPlain instead of building a different member.
type autoSiblings struct {
	probe *FOGD
	maps  map[float64]*kernel.Fourier // by σ, shared by that σ's members
}

// newAutoSiblings returns the factory for probe, checked on the member of
// spec kv (built by newPlain), or nil.
func newAutoSiblings(probe Learner, kv map[string]string, dim int) *autoSiblings {
	pf, ok := probe.(*FOGD)
	if !ok {
		return nil
	}
	s := &autoSiblings{probe: pf, maps: map[float64]*kernel.Fourier{}}
	key := fmt.Sprintf("%s|%s|%d", pf.spec, canonicalSpec("fogd", kv), dim)
	if ok, done := autoSiblingsChecked.Load(key); done {
		if !ok.(bool) {
			return nil
		}
		return s
	}
	m := s.make(kv)
	built, err := newPlain("fogd", kv, dim)
	ok = m != nil && err == nil && reflect.DeepEqual(m, built)
	autoSiblingsChecked.Store(key, ok)
	if !ok {
		return nil
	}
	s.maps = map[float64]*kernel.Fourier{} // (the check's maps are not the members')
	return s
}

// autoSiblingsChecked holds newAutoSiblings' checks by probe spec, checked
// member spec and dimension (a pure function of the code: done once per
// process and configuration, not at each of the wrapper's rebuilds).
var autoSiblingsChecked sync.Map

// make returns the member of spec kv (the probe's keys but σ and η), or
// nil when σ is not a power of two or η is not a positive number.
func (s *autoSiblings) make(kv map[string]string) Learner {
	if s == nil {
		return nil
	}
	sig, err := ParseNumber(kv["sigma"])
	if err != nil || !(sig > 0) || math.IsInf(sig, 0) {
		return nil
	}
	if fr, _ := math.Frexp(sig); fr != 0.5 {
		return nil
	}
	name, pkv, err := ParseSpec(s.probe.spec)
	if err != nil {
		return nil
	}
	eta := s.probe.eta
	if e, set := kv["eta"]; set {
		if eta, err = ParseNumber(e); err != nil || !(eta > 0) || math.IsInf(eta, 0) {
			return nil
		}
		pkv["eta"] = FormatNumber(eta)
	}
	pkv["sigma"] = FormatNumber(sig)
	for k, v := range kv {
		if k != "sigma" && k != "eta" && pkv[k] != v {
			return nil // a key the probe resolved otherwise
		}
	}
	rff := s.maps[sig]
	if rff == nil {
		rff = s.probe.rff.Scaled(1 / sig)
		s.maps[sig] = rff
	}
	c := s.probe.freshCopy().(*FOGD)
	c.rff, c.eta, c.spec = rff, eta, canonicalSpec(name, pkv)
	return c
}
