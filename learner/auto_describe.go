package learner

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// StateDescription is what okstream model inspect shows of a learner's
// state beyond Info: the data-driven kernel width of a self-tuning learner
// and, for auto, the members it keeps and their weights.
type StateDescription struct {
	// SigmaHat is the data-driven width σ̂ of a learner with sigma=auto (the
	// median trick on its warm-up rows, in standardised units under
	// scale=standard); 0 when it has none. WarmingUp: the warm-up has not
	// ended, and SigmaHat is the provisional σ₀.
	SigmaHat  float64
	WarmingUp bool
	// Base is auto's base learner ("" for any other learner), Members the
	// members it keeps now.
	Base    string
	Members []AutoMember
}

// AutoMember is one of the members auto keeps.
type AutoMember struct {
	Learner string // the base's name, or linear
	// SigmaFactor is the member's σ as a multiple of σ̂ (0 for a linear
	// member), Params its other parameters (key=value, sorted).
	SigmaFactor float64
	Params      string
	// Weight is its normalised AdaHedge weight in auto's prediction now,
	// Loss the loss the weights come from (cumulative, or Fixed Share's
	// with track=true).
	Weight float64
	Loss   float64
}

// DescribeState describes l's state (a learner of this package; any other
// gives the zero description). It reads l only (scratch buffers aside: do
// not call it concurrently with l's other methods).
func DescribeState(l Learner) StateDescription {
	var d StateDescription
	if t, ok := l.(*selfTuned); ok {
		d.sigma(t)
		l = t.inner
	}
	if a, ok := l.(*Auto); ok && a != nil {
		d.Base = a.bname
		if len(a.alive) > 0 && len(a.w) >= len(a.loss) {
			d.members(a.specs, a.names, a.slot, a.alive, a.w, a.weighLoss(), a.weights())
		}
	}
	return d
}

// DescribeMultiState is DescribeState for a multi-class learner
// (multi-class auto: its members and weights).
func DescribeMultiState(m Multi) StateDescription {
	var d StateDescription
	if s, ok := m.(*selfTunedMulti); ok {
		d.sigma(s.t)
		m = s.inner().m
	}
	if a, ok := m.(*AutoMulti); ok && a != nil {
		d.Base = "fogd"
		if len(a.alive) > 0 && len(a.w) >= len(a.loss) {
			den := adaHedgeWeights(a.w, a.weighLoss(), a.alive, adaHedgeRate(len(a.alive), a.delta, math.Inf(1)))
			d.members(a.specs, a.names, a.slot, a.alive, a.w, a.weighLoss(), den)
		}
	}
	return d
}

// sigma reads the self-tuning wrapper's σ̂.
func (d *StateDescription) sigma(t *selfTuned) {
	if t.autoSigma && t.inv > 0 {
		d.SigmaHat = 1 / t.inv
	}
	d.WarmingUp = t.buf != nil
}

// members lists the survivors alive of an auto bank: configurations
// specs/names by slot, weights w (summing to sum over alive), losses loss.
func (d *StateDescription) members(specs []map[string]string, names []string, slot, alive []int, w, loss []float64, sum float64) {
	for _, i := range alive {
		s := i
		if i < len(slot) {
			s = slot[i]
		}
		kv := specs[s]
		m := AutoMember{Learner: names[s], Weight: w[i] / sum, Loss: loss[i]}
		if m.Learner != "linear" {
			m.SigmaFactor, _ = strconv.ParseFloat(kv["sigma"], 64)
		}
		var ps []string
		for k, v := range kv {
			if k != "sigma" && k != "seed" {
				ps = append(ps, k+"="+v)
			}
		}
		sort.Strings(ps)
		m.Params = strings.Join(ps, ",")
		d.Members = append(d.Members, m)
	}
}
