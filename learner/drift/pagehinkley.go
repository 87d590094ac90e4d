// The Page-Hinkley test.
//
// References: E. S. Page, "Continuous inspection schemes", Biometrika 41
// (1954) 100–115; D. V. Hinkley, "Inference about the change-point from
// cumulative sum tests", Biometrika 58 (1971) 509–523; as stated in J. Gama,
// I. Žliobaitė, A. Bifet, M. Pechenizkiy and A. Bouchachia, "A survey on
// concept drift adaptation", ACM Computing Surveys 46(4) (2014), §3.2
// (change detection, sequential analysis): with x̄_T the mean of the values
// seen so far,
//
//	m_T = Σ_{t=1..T} (x_t − x̄_T − δ),   M_T = min_{t=1..T} m_t,
//
// and a change (an increase of the mean) is signalled when
// PH_T = m_T − M_T > λ.
//
// As in River's PageHinkley (river.drift.PageHinkley, whose parameters and
// defaults MOA's PageHinkleyDM shares), this implementation:
//
//   - uses the running mean x̄_t at step t (x̄_t includes x_t) in the t-th
//     term, and a forgetting factor α on the sum:
//     m_t = α·m_{t−1} + (x_t − x̄_t) − δ;
//   - tests only from the MinInstances-th value since the last reset on;
//   - starts afresh (mean, sums and minimum) after every detection;
//   - defaults: δ = 0.005, λ = 50, MinInstances = 30, α = 1 − 10⁻⁴.
//
// Mode DirUp (the default, and the survey's and MOA's test) detects an
// increase of the mean, the case of a loss that rises; DirDown detects a
// decrease with River's mirrored statistic (m'_t = α·m'_{t−1} + (x_t − x̄_t)
// + δ, alarm when max m' − m'_T > λ); DirBoth (River's default) either.
//
// Deviations: River resets at the next update after a detection, this
// implementation at the detection itself (the same detections; after an
// alarm Width and Mean describe the empty fresh state). River starts the
// minimum at +∞; here M_1 = m_1, the same values without storing an
// infinity. A variance of the values since the reset is also kept
// (Welford's update) for Variance. λ and δ are in the units of x: on values
// of standard deviation σ the false-alarm rate depends on λ/σ and δ/σ (see
// docs/algorithms/drift-detection.md for measured rates).
package drift

import (
	"fmt"
	"math"
	"strconv"

	"okstream/learner/state"
)

// Direction selects which changes of the mean Page-Hinkley reports.
type Direction uint8

const (
	// DirUp reports increases (the default).
	DirUp Direction = iota
	// DirDown reports decreases.
	DirDown
	// DirBoth reports both.
	DirBoth
)

func (d Direction) String() string {
	switch d {
	case DirUp:
		return "up"
	case DirDown:
		return "down"
	case DirBoth:
		return "both"
	}
	return "direction(" + strconv.Itoa(int(d)) + ")"
}

// Page-Hinkley defaults (River's and MOA's).
const (
	DefaultPHDelta        = 0.005
	DefaultPHLambda       = 50
	DefaultPHMinInstances = 30
	DefaultPHAlpha        = 1 - 0.0001
)

// PageHinkleyConfig configures a PageHinkley; a zero field takes its
// default (so δ = 0 cannot be asked for: use a tiny δ).
type PageHinkleyConfig struct {
	// Delta δ ≥ 0 is the magnitude of change tolerated. Default 0.005.
	Delta float64
	// Lambda λ > 0 is the alarm threshold. Default 50.
	Lambda float64
	// MinInstances ≥ 1: no alarm before this many values since the last
	// reset. Default 30.
	MinInstances int
	// Alpha α in (0, 1] is the forgetting factor. Default 0.9999.
	Alpha float64
	// Dir selects the changes reported. Default DirUp.
	Dir Direction
}

// PageHinkley is the Page-Hinkley test (see the file comment). Not safe
// for concurrent use.
type PageHinkley struct {
	delta, lambda, alpha float64
	minInst              int
	dir                  Direction
	spec                 string

	n          int64
	mean, m2   float64 // running mean and Σ(x − mean)²
	up, minUp  float64 // m_t and M_t
	dn, maxDn  float64 // the mirrored statistic and its maximum
	detections int64
}

// NewPageHinkley returns a PageHinkley with configuration c (zero fields
// default).
func NewPageHinkley(c PageHinkleyConfig) (*PageHinkley, error) {
	if c.Delta == 0 {
		c.Delta = DefaultPHDelta
	}
	if c.Lambda == 0 {
		c.Lambda = DefaultPHLambda
	}
	if c.MinInstances == 0 {
		c.MinInstances = DefaultPHMinInstances
	}
	if c.Alpha == 0 {
		c.Alpha = DefaultPHAlpha
	}
	switch {
	case !(c.Delta >= 0 && c.Delta <= MaxInput):
		return nil, fmt.Errorf("drift: Page-Hinkley delta %v not in [0, %g]", c.Delta, MaxInput)
	case !(c.Lambda > 0 && c.Lambda <= MaxInput):
		return nil, fmt.Errorf("drift: Page-Hinkley lambda %v not in (0, %g]", c.Lambda, MaxInput)
	case c.MinInstances < 1:
		return nil, fmt.Errorf("drift: Page-Hinkley min instances %d < 1", c.MinInstances)
	case !(c.Alpha > 0 && c.Alpha <= 1):
		return nil, fmt.Errorf("drift: Page-Hinkley alpha %v not in (0, 1]", c.Alpha)
	case c.Dir > DirBoth:
		return nil, fmt.Errorf("drift: unknown Page-Hinkley direction %d", c.Dir)
	}
	p := &PageHinkley{delta: c.Delta, lambda: c.Lambda, alpha: c.Alpha, minInst: c.MinInstances, dir: c.Dir}
	p.spec = "pagehinkley:delta=" + strconv.FormatFloat(c.Delta, 'g', -1, 64) +
		",lambda=" + strconv.FormatFloat(c.Lambda, 'g', -1, 64) +
		",min=" + strconv.Itoa(c.MinInstances) +
		",alpha=" + strconv.FormatFloat(c.Alpha, 'g', -1, 64) +
		",dir=" + c.Dir.String()
	return p, nil
}

// Spec is the canonical configuration.
func (p *PageHinkley) Spec() string { return p.spec }

// Reset starts afresh; the detection count continues.
func (p *PageHinkley) Reset() {
	p.n, p.mean, p.m2, p.up, p.minUp, p.dn, p.maxDn = 0, 0, 0, 0, 0, 0, 0
}

// Width is the number of values since the last reset.
func (p *PageHinkley) Width() int { return int(p.n) }

// Mean is their mean.
func (p *PageHinkley) Mean() float64 { return p.mean }

// Variance is their population variance.
func (p *PageHinkley) Variance() float64 {
	if p.n == 0 {
		return 0
	}
	return p.m2 / float64(p.n)
}

// Statistic is the current test statistic: m_T − M_T for DirUp, the
// mirrored one for DirDown, the larger of the two for DirBoth.
func (p *PageHinkley) Statistic() float64 {
	switch p.dir {
	case DirUp:
		return p.up - p.minUp
	case DirDown:
		return p.maxDn - p.dn
	}
	return max(p.up-p.minUp, p.maxDn-p.dn)
}

// Detections is the number of Add calls that reported a change.
func (p *PageHinkley) Detections() int64 { return p.detections }

// Add feeds x (ignored unless finite with |x| ≤ MaxInput) and reports
// whether the test signals a change; if so the test starts afresh.
func (p *PageHinkley) Add(x float64) bool {
	if !usable(x) {
		return false
	}
	p.n++
	old := p.mean
	p.mean += (x - old) / float64(p.n)
	p.m2 += float64((x - old) * (x - p.mean))
	dev := x - p.mean
	p.up = float64(p.alpha*p.up) + dev - p.delta
	p.dn = float64(p.alpha*p.dn) + dev + p.delta
	if p.n == 1 || p.up < p.minUp {
		p.minUp = p.up
	}
	if p.n == 1 || p.dn > p.maxDn {
		p.maxDn = p.dn
	}
	if p.n < int64(p.minInst) {
		return false
	}
	alarm := (p.dir != DirDown && p.up-p.minUp > p.lambda) ||
		(p.dir != DirUp && p.maxDn-p.dn > p.lambda)
	if alarm {
		p.detections++
		p.Reset()
	}
	return alarm
}

// MarshalBinary encodes the detector's state.
func (p *PageHinkley) MarshalBinary() ([]byte, error) {
	e := state.NewEncoder(96 + len(p.spec))
	e.Header("pagehinkley", p.spec, 0)
	e.I64(p.n)
	e.I64(p.detections)
	for _, v := range [...]float64{p.mean, p.m2, p.up, p.minUp, p.dn, p.maxDn} {
		e.F64(v)
	}
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state written by a PageHinkley of the same
// configuration (else a *state.MismatchError); a corrupt state is an error
// wrapping state.ErrCorrupt, and on any error the detector is unchanged.
func (p *PageHinkley) UnmarshalBinary(data []byte) error {
	d := state.NewDecoder(data)
	d.Header("pagehinkley", p.spec, 0)
	n, det := d.I64(), d.I64()
	var v [6]float64
	for i := range v {
		v[i] = d.F64()
	}
	if err := d.Done(); err != nil {
		return err
	}
	if n < 0 || det < 0 {
		return fmt.Errorf("drift: pagehinkley counters %d, %d negative: %w", n, det, state.ErrCorrupt)
	}
	// Bounds every reachable state obeys: |mean| ≤ MaxInput, m2 ≤ n·(2·MaxInput)², |sums| ≤ n·(2·MaxInput + δ).
	fn := float64(max(n, 1))
	lim := fn * (4*MaxInput + p.delta)
	if !(math.Abs(v[0]) <= MaxInput) || !(v[1] >= 0 && v[1] <= fn*4*MaxInput*MaxInput) {
		return fmt.Errorf("drift: pagehinkley mean or variance out of range: %w", state.ErrCorrupt)
	}
	for _, s := range v[2:] {
		if !(math.Abs(s) <= lim) {
			return fmt.Errorf("drift: pagehinkley sums out of range: %w", state.ErrCorrupt)
		}
	}
	if n > 0 && (v[3] > v[2] || v[5] < v[4]) {
		return fmt.Errorf("drift: pagehinkley minimum above the sum: %w", state.ErrCorrupt)
	}
	p.n, p.detections = n, det
	p.mean, p.m2, p.up, p.minUp, p.dn, p.maxDn = v[0], v[1], v[2], v[3], v[4], v[5]
	return nil
}
