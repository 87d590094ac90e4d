package learner

import (
	"fmt"
	"math"
)

// Loss is a loss function ℓ(f, y) of a real score f and a label y.
type Loss int

const (
	// Hinge is max(0, 1 − y f) (classification).
	Hinge Loss = iota + 1
	// SquaredHinge is max(0, 1 − y f)² (classification).
	SquaredHinge
	// Logistic is log(1 + exp(−y f)) (classification).
	Logistic
	// Square is (f − y)² (regression).
	Square
)

var lossNames = map[Loss]string{
	Hinge:        "hinge",
	SquaredHinge: "squared_hinge",
	Logistic:     "logistic",
	Square:       "square",
}

// LossNames lists the accepted loss names.
func LossNames() []string { return []string{"hinge", "squared_hinge", "logistic", "square"} }

// ParseLoss maps a name to a Loss.
func ParseLoss(s string) (Loss, error) {
	for l, n := range lossNames {
		if n == s {
			return l, nil
		}
	}
	return 0, fmt.Errorf("unknown loss %q (known: hinge, squared_hinge, logistic, square)", s)
}

func (l Loss) String() string {
	if n, ok := lossNames[l]; ok {
		return n
	}
	return fmt.Sprintf("Loss(%d)", int(l))
}

// Task is the task a loss belongs to.
func (l Loss) Task() Task {
	if l == Square {
		return Regression
	}
	return Classification
}

// Value returns ℓ(f, y).
func (l Loss) Value(f, y float64) float64 {
	switch l {
	case Hinge:
		return math.Max(0, 1-y*f)
	case SquaredHinge:
		m := math.Max(0, 1-y*f)
		return m * m
	case Logistic:
		z := -y * f
		if z > 0 {
			return z + math.Log1p(math.Exp(-z))
		}
		return math.Log1p(math.Exp(z))
	case Square:
		return (f - y) * (f - y)
	}
	panic("learner: unknown loss")
}

// Deriv returns ∂ℓ/∂f at (f, y). For the hinge it is the subgradient −y
// where y f < 1 and 0 elsewhere (0 at the kink, y f = 1).
func (l Loss) Deriv(f, y float64) float64 {
	switch l {
	case Hinge:
		if y*f < 1 {
			return -y
		}
		return 0
	case SquaredHinge:
		if m := 1 - y*f; m > 0 {
			return -2 * y * m
		}
		return 0
	case Logistic:
		// −y σ(−y f), computed stably.
		z := y * f
		if z > 0 {
			e := math.Exp(-z)
			return -y * e / (1 + e)
		}
		return -y / (1 + math.Exp(z))
	case Square:
		return 2 * (f - y)
	}
	panic("learner: unknown loss")
}
