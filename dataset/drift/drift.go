// Package drift generates the synthetic concept-drift streams of the
// stream-mining literature, written from their published definitions:
// SEA concepts (sea.go), the rotating hyperplane (hyperplane.go), Agrawal's
// loan functions with abrupt and gradual switches (agrawal.go) and
// Friedman #1 with global abrupt, gradual and local drift (friedman.go).
// docs/drift.md states every definition, parameter and reference.
//
// A Generator is an ordered stream: Next writes the next example into the
// caller's buffer and returns its label, with no allocation. Classification
// labels are −1/+1 (class index c of the reference implementations is
// y = 2c − 1); regression labels are real. Dataset draws n examples into a
// *dataset.Dataset whose row order is the experiment: evaluate it with
// eval.Config.NoPermute (a permutation would destroy the drift).
//
// Determinism: a generator's stream is a function of its configuration and
// seed alone (okstream/learner/rng, whose samplers give the same bits on
// every platform; transcendental functions are rng's portable ones), and
// MarshalBinary/UnmarshalBinary capture its mutable state (random source,
// position, drifting weights) so that a stream restored mid-way continues
// with the same bytes. UnmarshalBinary treats its input as untrusted: it
// never panics, never allocates beyond the configured dimension, and leaves
// the generator unchanged on error (learner/state's conventions).
package drift

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"okstream/dataset"
	"okstream/learner/rng"
	"okstream/learner/state"
)

// Generator is a drift stream.
type Generator interface {
	// Dim is the number of features.
	Dim() int
	// Regression reports whether labels are real targets (else −1/+1).
	Regression() bool
	// Next writes the next example's features into x (len(x) ≥ Dim) and
	// returns its label. It does not allocate.
	Next(x []float64) float64
	// Changes are the event indices (0-based) at which a concept changes:
	// the first example of the new concept for an abrupt change, the
	// centre of the sigmoid for Agrawal's gradual switch, the start of the
	// window for Friedman's gsg.
	Changes() []int
	// Spec is the canonical spec (Parse(Spec()) builds the same stream).
	Spec() string
	// T is the number of examples drawn so far.
	T() int
	MarshalBinary() ([]byte, error)
	UnmarshalBinary([]byte) error
}

// Prefix introduces a drift spec among dataset names: "drift:sea,n=50000".
const Prefix = "drift:"

// maxN bounds the length a spec may ask for (rows are materialised).
const maxN = 50_000_000

// Dataset draws n examples from g into a Dataset named name. Rows share one
// backing array. Classification labels are −1/+1, as eval expects.
func Dataset(g Generator, n int, name string) *dataset.Dataset {
	d := g.Dim()
	back := make([]float64, n*d)
	X := make([][]float64, n)
	Y := make([]float64, n)
	for i := range X {
		X[i] = back[i*d : (i+1)*d : (i+1)*d]
		Y[i] = g.Next(X[i])
	}
	return &dataset.Dataset{Name: name, Path: name, X: X, Y: Y, Dim: d}
}

// Load builds the stream a spec names ("drift:" prefix optional) and draws
// its n examples: the dataset (Name is the canonical spec with the prefix)
// and the generator (positioned after the last example; Changes gives the
// drift positions). Errors name the spec and the offending key.
func Load(spec string) (*dataset.Dataset, Generator, error) {
	g, n, err := Parse(spec)
	if err != nil {
		return nil, nil, err
	}
	return Dataset(g, n, Prefix+g.Spec()), g, nil
}

// IsSpec reports whether a dataset argument names a drift stream.
func IsSpec(arg string) bool { return strings.HasPrefix(arg, Prefix) }

// Parse reads "kind,key=value,..." (the "drift:" prefix optional) and
// returns the generator and the stream length n (key n; default 100000).
// Kinds and keys: see docs/drift.md and each generator's Config.
func Parse(spec string) (Generator, int, error) {
	spec = strings.TrimPrefix(spec, Prefix)
	parts := strings.Split(spec, ",")
	kind := parts[0]
	kv := map[string]string{}
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, 0, fmt.Errorf("drift %q: %q is not key=value", spec, p)
		}
		if _, dup := kv[k]; dup {
			return nil, 0, fmt.Errorf("drift %q: key %q given twice", spec, k)
		}
		kv[k] = v
	}
	a := args{spec: spec, kv: kv}
	n := a.int("n", 100000, 1, maxN)
	seed := a.uint("seed", 1)
	var g Generator
	var err error
	switch kind {
	case "sea":
		g, err = NewSEA(SEAConfig{Seed: seed, Block: a.int("block", max(n/4, 1), 1, maxN), Noise: a.float("noise", 0.1, 0, 1)})
	case "hyperplane":
		c := HyperplaneConfig{Seed: seed, Dim: a.int("d", 10, 1, 10000), Mag: a.float("t", 0.001, 0, 1), Reverse: a.float("reverse", 0.1, 0, 1), Noise: a.float("noise", 0.05, 0, 1)}
		c.DriftDims = a.int("k", min(2, c.Dim), 0, c.Dim)
		g, err = NewHyperplane(c)
	case "agrawal":
		c := AgrawalConfig{Seed: seed, Function: a.int("f", 1, 1, 10), To: a.int("to", 0, 0, 10), Position: a.int("p", n/2, 0, maxN), Width: a.int("w", 0, 0, maxN), Perturb: a.float("perturb", 0.05, 0, 1)}
		g, err = NewAgrawal(c)
	case "friedman":
		c := FriedmanConfig{Seed: seed, Mode: a.str("mode", "gra")}
		if c.Mode == "lea" {
			c.P1, c.P2, c.P3 = a.int("p1", n/4, 0, maxN), a.int("p2", n/2, 0, maxN), a.int("p3", 3*n/4, 0, maxN)
		} else {
			c.P1, c.P2 = a.int("p1", n/4, 0, maxN), a.int("p2", 3*n/4, 0, maxN)
			if c.Mode == "gsg" {
				c.Width = a.int("w", max(n/20, 1), 0, maxN)
			}
		}
		g, err = NewFriedman(c)
	case "led":
		g, err = NewLED(LEDConfig{Seed: seed, Noise: a.float("noise", 0.1, 0, 1), Position: a.int("p", n/2, 0, maxN), Swaps: a.int("k", 7, 0, LEDDim)})
	default:
		return nil, 0, fmt.Errorf("drift %q: unknown kind %q (known: sea, hyperplane, agrawal, friedman, led)", spec, kind)
	}
	if a.err != nil {
		return nil, 0, a.err
	}
	if err != nil {
		return nil, 0, fmt.Errorf("drift %q: %w", spec, err)
	}
	for k := range kv {
		if !a.used[k] {
			return nil, 0, fmt.Errorf("drift %q: unknown key %q for %s", spec, k, kind)
		}
	}
	return g, n, nil
}

type args struct {
	spec string
	kv   map[string]string
	used map[string]bool
	err  error
}

func (a *args) get(k string) (string, bool) {
	if a.used == nil {
		a.used = map[string]bool{}
	}
	a.used[k] = true
	v, ok := a.kv[k]
	return v, ok
}

func (a *args) fail(k, v, why string) {
	if a.err == nil {
		a.err = fmt.Errorf("drift %q: %s=%q: %s", a.spec, k, v, why)
	}
}

func (a *args) int(k string, def, lo, hi int) int {
	v, ok := a.get(k)
	if !ok {
		return def
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < lo || i > hi {
		a.fail(k, v, fmt.Sprintf("want an integer in [%d, %d]", lo, hi))
		return def
	}
	return i
}

func (a *args) uint(k string, def uint64) uint64 {
	v, ok := a.get(k)
	if !ok {
		return def
	}
	i, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		a.fail(k, v, "want an unsigned integer")
		return def
	}
	return i
}

func (a *args) float(k string, def, lo, hi float64) float64 {
	v, ok := a.get(k)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f >= lo && f <= hi) {
		a.fail(k, v, fmt.Sprintf("want a number in [%g, %g]", lo, hi))
		return def
	}
	return f
}

func (a *args) str(k, def string) string {
	if v, ok := a.get(k); ok {
		return v
	}
	return def
}

// fmtF formats a float for a canonical spec (shortest round-trip form).
func fmtF(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// base is the state every generator has: its random source and position.
type base struct {
	src rng.Source
	t   int
}

func (b *base) T() int { return b.t }

// encode writes the header and the base state.
func (b *base) encode(e *state.Encoder, name, spec string, dim int) {
	e.Header(name, spec, dim)
	hi, lo := b.src.State()
	e.U64(hi)
	e.U64(lo)
	e.Int(b.t)
}

// decode reads what encode wrote into fresh values (the caller commits
// them only when the whole state decoded).
func decodeBase(d *state.Decoder, name, spec string, dim int) (hi, lo uint64, t int) {
	d.Header(name, spec, dim)
	hi, lo = d.U64(), d.U64()
	t = d.IntIn(0, 1<<62, "position")
	return hi, lo, t
}

var errConfig = errors.New("invalid configuration")

// flip returns y with its sign flipped with probability p (one uniform
// draw, always taken so that the stream's draws do not depend on p).
func flip(src *rng.Source, y, p float64) float64 {
	if src.Float64() < p {
		return -y
	}
	return y
}

// mixNew reports whether example t of a gradual change centred at p with
// width w comes from the new concept: with probability
// 1/(1 + exp(−4(t − p)/w)) (MOA's ConceptDriftStream sigmoid). The test
// u < σ(z) is evaluated as logit(u) < z with rng's portable logarithm, so
// that the decision has the same bits on every platform. One uniform draw.
func mixNew(src *rng.Source, t, p, w int) bool {
	u := src.OpenFloat64()
	z := float64(4*float64(t-p)) / float64(w)
	return rng.Log(u)-rng.Log(1-u) < z
}

// LoadRun is Load for run r of an evaluation (eval.Config.Sequence, with
// NoPermute): run 0 is the spec's stream itself; run r > 0 draws the same
// generator with seed rng.Derive(seed, r), so that runs differ by their
// data as permutations of a file would, and every run is reproducible.
// The dataset keeps the spec's name (as eval wants one name for all runs).
func LoadRun(spec string, run int) (*dataset.Dataset, error) {
	g, n, err := Parse(spec)
	if err != nil {
		return nil, err
	}
	name := Prefix + g.Spec()
	if run > 0 {
		seed := Seed(g)
		if g, _, err = Parse(strings.Replace(g.Spec(), fmt.Sprintf("seed=%d", seed), fmt.Sprintf("seed=%d", rng.Derive(seed, uint64(run))), 1)); err != nil {
			return nil, err
		}
	}
	return Dataset(g, n, name), nil
}

// Seed returns a generator's seed (the last key of every canonical spec).
func Seed(g Generator) uint64 {
	s := g.Spec()
	i := strings.LastIndex(s, ",seed=")
	v, _ := strconv.ParseUint(s[i+len(",seed="):], 10, 64)
	return v
}
