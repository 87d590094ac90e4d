package eval

import (
	"encoding/json"
	"math"
)

// JSON has no NaN or ±Inf, and a diverged model (a grid value with a step
// too large, say) has a NaN MSE. The result types therefore marshal their
// metric fields through finite: a non-finite value is written as null, and
// every other value exactly as encoding/json would.

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func finites(xs []float64) []*float64 {
	out := make([]*float64, len(xs))
	for i, x := range xs {
		out[i] = finite(x)
	}
	return out
}

// MarshalJSON writes Mean, Std and PerRun with null for non-finite values.
func (m ModelResult) MarshalJSON() ([]byte, error) {
	type alias ModelResult
	return json.Marshal(struct {
		alias
		Mean   *float64   `json:"mean"`
		Std    *float64   `json:"std"`
		PerRun []*float64 `json:"per_run"`
	}{alias(m), finite(m.Mean), finite(m.Std), finites(m.PerRun)})
}

// MarshalJSON writes Mean and Std with null for non-finite values.
func (p Point) MarshalJSON() ([]byte, error) {
	type alias Point
	return json.Marshal(struct {
		alias
		Mean *float64 `json:"mean"`
		Std  *float64 `json:"std"`
	}{alias(p), finite(p.Mean), finite(p.Std)})
}

// MarshalJSON writes Mean and Std with null for non-finite values.
func (g GridPoint) MarshalJSON() ([]byte, error) {
	type alias GridPoint
	return json.Marshal(struct {
		alias
		Mean *float64 `json:"mean"`
		Std  *float64 `json:"std"`
	}{alias(g), finite(g.Mean), finite(g.Std)})
}

// MarshalJSON writes Mean and Std with null for non-finite values.
func (s Stat) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Mean *float64 `json:"mean"`
		Std  *float64 `json:"std"`
	}{finite(s.Mean), finite(s.Std)})
}
