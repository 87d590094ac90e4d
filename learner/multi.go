package learner

import (
	"encoding"
	"fmt"
	"sort"
	"strings"
)

// Multi-class learners.
//
// A Multi learns a distribution over classes 0..K−1. The caller (package
// label) names the classes and gives them indices in order of first
// appearance, so K grows online: LearnClass with c == Classes() adds class
// K. A new class starts with the parameters a class that was never the
// label has (a zero head: the same score as every class never learnt), so
// the model's first prediction after it appears is well defined. The cap on
// K is the caller's (label.Map's class dictionary cap); MaxClasses is only
// the hard limit a state may claim.
//
// The protocol is the binary one: every event is predicted before its label
// is used. LearnClass returns the distribution the model had before it
// learned, over the classes it knew then (a class seen for the first time
// has no entry: its probability was 0; measures clip it, see eval).
//
// Determinism: the same spec, seed and input give bit-identical
// distributions and states, also across MarshalBinary/UnmarshalBinary at any
// point, as for Learner.

// MaxClasses is the largest number of classes a multi-class state may
// hold; UnmarshalBinary refuses a state claiming more.
const MaxClasses = 1 << 12

// MultiClass is the task of a multi-class learner (Info().Task).
const MultiClass Task = Regression + 1

// Multi is an online multi-class learner (see above). x always has the
// dimension the learner was built with; a learner may panic on a
// wrong-length x, on c > Classes(), on c ≥ MaxClasses, or on p shorter than
// Classes() (+1 in LearnClass).
type Multi interface {
	// Classes returns K, the number of classes learnt so far.
	Classes() int
	// PredictProba writes P(class k | x) for k < K into p[:K] and returns
	// p[:K] (p[:0] while K = 0). The entries are ≥ 0 and sum to 1 up to
	// rounding. It never changes the model.
	PredictProba(x, p []float64) []float64
	// LearnClass writes the pre-update distribution into p as PredictProba
	// does (over the K classes known before), then learns that x is of
	// class c (c ≤ K; c == K adds a class), and returns p[:K] for the old K.
	LearnClass(x []float64, c int, p []float64) []float64
	// MarshalBinary returns the complete state; UnmarshalBinary restores a
	// state of a learner of the same canonical spec and dimension, with the
	// guarantees of Learner's (untrusted bytes, errors wrapping
	// state.ErrCorrupt or *state.MismatchError, learner unchanged on error).
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
	// Info describes the learner (Task is MultiClass).
	Info() Info
}

// MultiRegistration describes a multi-class learner for the registry. Its
// Name is the binary learner's name where it is the same model with one head
// per class ("fogd", "dsg", "linear", ...), so that a user's spec means the
// same model for every task.
type MultiRegistration struct {
	Name    string
	Summary string
	Paper   string
	Params  []ParamDoc
	// New builds the learner; like Registration.New it reads every
	// parameter it accepts and returns p.Err() if any.
	New func(p *Params, dim int) (Multi, error)
}

var multiRegistry = map[string]*MultiRegistration{}

// RegisterMulti adds a multi-class learner to the registry; it panics on a
// duplicate name (meant for init functions).
func RegisterMulti(r MultiRegistration) {
	if _, dup := multiRegistry[r.Name]; dup {
		panic("learner: duplicate multi-class registration of " + r.Name)
	}
	if r.New == nil {
		panic("learner: multi-class registration without constructor: " + r.Name)
	}
	multiRegistry[r.Name] = &r
}

// MultiNames returns the names of the learners that have a multi-class
// form, sorted.
func MultiNames() []string {
	out := make([]string, 0, len(multiRegistry))
	for n := range multiRegistry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// DescribeMulti returns the multi-class registration of a learner, or nil.
func DescribeMulti(name string) *MultiRegistration { return multiRegistry[name] }

// NewMulti builds a multi-class learner from a spec (the syntax of New) for
// inputs of dimension dim. A binary classifier without a native
// multi-class form (not in MultiNames: bogd, bpas, projectron, kons, ...)
// becomes a one-vs-rest learner (ovr.go): one binary learner per class,
// built from the same spec, so K× the binary learner's memory and time;
// its state carries the binary learner's canonical spec, so a state of
// another spec is refused. A binary learner configured for regression is
// an error.
func NewMulti(spec string, dim int) (Multi, error) {
	name, kv, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	r := multiRegistry[name]
	if (r != nil || registry[name] != nil) && dim <= 0 {
		return nil, fmt.Errorf("learner %s: input dimension must be positive, got %d", name, dim)
	}
	if r == nil {
		if registry[name] != nil {
			m, err := newOvR(spec, dim)
			if err != nil {
				return nil, fmt.Errorf("%w (learner %s has no native multi-class form, so it runs one-vs-rest: one binary learner per class; native multi-class learners: %s)", err, name, strings.Join(MultiNames(), ", "))
			}
			return m, nil
		}
		return nil, fmt.Errorf("unknown learner %q (native multi-class learners: %s; every other binary classifier runs one-vs-rest, one binary learner per class)", name, strings.Join(MultiNames(), ", "))
	}
	if m, ok, err := wrapSelfTuneMulti(name, kv, dim); ok {
		return m, err // scale=, sigma=auto, or σ left to the data: selftune_multi.go
	}
	return newPlainMulti(name, kv, dim)
}

// ArgMax returns the index of the largest entry of p (the first on ties),
// or −1 for an empty p: the predicted class of a distribution.
func ArgMax(p []float64) int {
	best := -1
	for i, v := range p {
		if best < 0 || v > p[best] {
			best = i
		}
	}
	return best
}
