package learner

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// A spec names a learner and sets its parameters:
//
//	name[:key=value[,key=value...]]
//
// for example "fogd:budget=50,sigma=8,loss=hinge". Keys are lower case;
// numbers may be written as decimals, with exponents (1e-3), or as powers
// (2^-3, which is 0.125). Every parameter has a documented default (see
// Describe or `okstream help learners`); an unknown learner, an unknown key,
// a malformed value or a value out of range is an error that names the
// problem and the accepted values.
//
// The canonical form of a spec (Info().Spec) lists every parameter, defaults
// included, with keys sorted and numbers in shortest round-trip form. It is
// stored in every marshalled state so that a state is never loaded into a
// differently configured learner.

// ParamDoc documents one parameter of a learner.
type ParamDoc struct {
	Name    string
	Default string // as text, e.g. "0.2" or "4×budget"
	Doc     string
	// When, if set, says when the parameter applies (e.g.
	// "kernel=polynomial"); otherwise it is always accepted.
	When string
	// Local marks a parameter that changes how the learner runs but not
	// what it computes (e.g. a cache size): it is left out of the canonical
	// spec, so changing it does not make checkpoints incompatible.
	Local bool
}

// Registration describes a learner for the registry.
type Registration struct {
	Name    string
	Summary string // one line
	Paper   string // reference
	Params  []ParamDoc
	// New builds the learner. It must read every parameter it accepts from p
	// (so that unknown keys can be detected) and return p.Err() if any.
	New func(p *Params, dim int) (Learner, error)
}

var registry = map[string]*Registration{}

// Register adds a learner to the registry. It panics on a duplicate name; it
// is meant to be called from init functions.
func Register(r Registration) {
	if _, dup := registry[r.Name]; dup {
		panic("learner: duplicate registration of " + r.Name)
	}
	if r.New == nil {
		panic("learner: registration without constructor: " + r.Name)
	}
	registry[r.Name] = &r
}

// Names returns the registered learner names, sorted.
func Names() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Describe returns the registration of a learner, or nil.
func Describe(name string) *Registration { return registry[name] }

// ParseSpec splits a spec into its learner name and key/value pairs (values
// as written). It checks the syntax only.
func ParseSpec(spec string) (name string, kv map[string]string, err error) {
	spec = strings.TrimSpace(spec)
	name, rest, hasParams := strings.Cut(spec, ":")
	name = strings.TrimSpace(name)
	if name == "" {
		return "", nil, fmt.Errorf("learner spec %q: missing learner name (form: name:key=value,...)", spec)
	}
	kv = map[string]string{}
	if !hasParams || strings.TrimSpace(rest) == "" {
		return name, kv, nil
	}
	for _, item := range strings.Split(rest, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return "", nil, fmt.Errorf("learner spec %q: %q is not key=value", spec, item)
		}
		if _, dup := kv[k]; dup {
			return "", nil, fmt.Errorf("learner spec %q: parameter %q given twice", spec, k)
		}
		kv[k] = v
	}
	return name, kv, nil
}

// New builds a learner from a spec for inputs of dimension dim.
func New(spec string, dim int) (Learner, error) {
	name, kv, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	if l, ok, err := splitSelfTune(name, kv, dim); ok {
		return l, err // wrapped (scale=, sigma=auto, or σ left to the data): selftune.go
	}
	return newPlain(name, kv, dim)
}

// newPlain builds the registered learner itself, without the self-tuning
// wrapper.
func newPlain(name string, kv map[string]string, dim int) (Learner, error) {
	r := registry[name]
	if r == nil {
		return nil, fmt.Errorf("unknown learner %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	if dim <= 0 {
		return nil, fmt.Errorf("learner %s: input dimension must be positive, got %d", name, dim)
	}
	p := &Params{learner: name, raw: kv, resolved: map[string]string{}, local: map[string]string{}, docs: r.Params}
	l, err := r.New(p, dim)
	if err == nil {
		err = p.finish()
	}
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Params gives a learner constructor typed access to the spec's parameters.
// Each accessor takes the default used when the key is absent and records
// the resolved value for the canonical spec. Errors are sticky: after the
// first one, accessors return their defaults and Err reports it.
type Params struct {
	learner  string
	raw      map[string]string
	resolved map[string]string
	local    map[string]string
	docs     []ParamDoc
	err      error
}

// Err returns the first parameter error.
func (p *Params) Err() error { return p.err }

// Canonical returns the canonical spec of the parameters read so far.
func (p *Params) Canonical() string {
	keys := make([]string, 0, len(p.resolved))
	for k := range p.resolved {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(p.learner)
	for i, k := range keys {
		if i == 0 {
			b.WriteByte(':')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(p.resolved[k])
	}
	return b.String()
}

// Has reports whether the spec sets key explicitly.
func (p *Params) Has(key string) bool {
	_, ok := p.raw[key]
	return ok
}

func (p *Params) fail(key, format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("learner %s: parameter %s: %s", p.learner, key, fmt.Sprintf(format, args...))
	}
}

func (p *Params) finish() error {
	if p.err != nil {
		return p.err
	}
	var unknown []string
	for k := range p.raw {
		_, ok := p.resolved[k]
		_, isLocal := p.local[k]
		if !ok && !isLocal {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	known := make([]string, 0, len(p.resolved))
	for k := range p.resolved {
		known = append(known, k)
	}
	sort.Strings(known)
	msg := fmt.Sprintf("learner %s: unknown parameter %q", p.learner, unknown[0])
	if s := Closest(unknown[0], known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return fmt.Errorf("%s; accepted: %s", msg, strings.Join(known, ", "))
}

// Closest returns the entry of known nearest to k within edit distance 2
// (the first of equals), or "" if none is that close: the "did you mean"
// of unknown parameters, flags and environment variables.
func Closest(k string, known []string) string {
	best, bestD := "", 3
	for _, c := range known {
		if d := editDistance(k, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// ParseNumber parses a decimal number, or a power written base^exp
// (e.g. 2^-3.5). It rejects NaN and infinities.
func ParseNumber(s string) (float64, error) {
	if b, e, ok := strings.Cut(s, "^"); ok {
		base, err1 := strconv.ParseFloat(b, 64)
		exp, err2 := strconv.ParseFloat(e, 64)
		if err1 != nil || err2 != nil {
			return 0, fmt.Errorf("%q is not a number or power (e.g. 0.5, 1e-3, 2^-3)", s)
		}
		v := math.Pow(base, exp)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%q is not finite", s)
		}
		return v, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a finite number (e.g. 0.5, 1e-3, 2^-3)", s)
	}
	return v, nil
}

// FormatNumber is the canonical text of a number: shortest round-trip form.
func FormatNumber(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Check validates a numeric parameter; it returns a description of the
// accepted range when v is outside it.
type Check func(v float64) (ok bool, want string)

// Positive accepts v > 0.
func Positive(v float64) (bool, string) { return v > 0, "> 0" }

// NonNegative accepts v ≥ 0.
func NonNegative(v float64) (bool, string) { return v >= 0, ">= 0" }

// InRange accepts lo ≤ v ≤ hi.
func InRange(lo, hi float64) Check {
	return func(v float64) (bool, string) {
		return v >= lo && v <= hi, fmt.Sprintf("in [%s, %s]", FormatNumber(lo), FormatNumber(hi))
	}
}

// Float reads a real parameter.
func (p *Params) Float(key string, def float64, checks ...Check) float64 {
	v := def
	if s, ok := p.raw[key]; ok {
		x, err := ParseNumber(s)
		if err != nil {
			p.fail(key, "%v", err)
			return def
		}
		v = x
	}
	for _, c := range checks {
		if ok, want := c(v); !ok {
			p.fail(key, "%s must be %s", FormatNumber(v), want)
			return def
		}
	}
	p.resolved[key] = FormatNumber(v)
	return v
}

// Int reads an integer parameter.
func (p *Params) Int(key string, def int, checks ...Check) int {
	v := def
	if s, ok := p.raw[key]; ok {
		x, err := ParseNumber(s)
		if err != nil || x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			p.fail(key, "%q is not an integer", s)
			return def
		}
		v = int(x)
	}
	for _, c := range checks {
		if ok, want := c(float64(v)); !ok {
			p.fail(key, "%d must be %s", v, want)
			return def
		}
	}
	p.resolved[key] = strconv.Itoa(v)
	return v
}

// LocalInt reads an integer parameter that does not change what the
// learner computes (see ParamDoc.Local): it is validated like Int but left
// out of the canonical spec.
func (p *Params) LocalInt(key string, def int, checks ...Check) int {
	v := p.Int(key, def, checks...)
	if s, ok := p.resolved[key]; ok {
		delete(p.resolved, key)
		p.local[key] = s
	}
	return v
}

// LocalFloat is LocalInt for a real parameter.
func (p *Params) LocalFloat(key string, def float64, checks ...Check) float64 {
	v := p.Float(key, def, checks...)
	if s, ok := p.resolved[key]; ok {
		delete(p.resolved, key)
		p.local[key] = s
	}
	return v
}

// Uint64 reads a non-negative integer (e.g. a seed).
func (p *Params) Uint64(key string, def uint64) uint64 {
	v := def
	if s, ok := p.raw[key]; ok {
		x, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			p.fail(key, "%q is not a non-negative integer", s)
			return def
		}
		v = x
	}
	p.resolved[key] = strconv.FormatUint(v, 10)
	return v
}

// Bool reads a boolean (true/false, 1/0, yes/no).
func (p *Params) Bool(key string, def bool) bool {
	v := def
	if s, ok := p.raw[key]; ok {
		switch strings.ToLower(s) {
		case "true", "1", "yes", "on":
			v = true
		case "false", "0", "no", "off":
			v = false
		default:
			p.fail(key, "%q is not a boolean (true/false)", s)
			return def
		}
	}
	p.resolved[key] = strconv.FormatBool(v)
	return v
}

// Enum reads one of a fixed set of words.
func (p *Params) Enum(key, def string, allowed ...string) string {
	v := def
	if s, ok := p.raw[key]; ok {
		v = s
	}
	for _, a := range allowed {
		if a == v {
			p.resolved[key] = v
			return v
		}
	}
	p.fail(key, "%q is not one of %s", v, strings.Join(allowed, ", "))
	return def
}

// LocalEnum is Enum for a parameter left out of the canonical spec (see
// ParamDoc.Local), e.g. a preset that only chooses the defaults of other
// parameters, whose resolved values are in the canonical spec.
func (p *Params) LocalEnum(key, def string, allowed ...string) string {
	v := p.Enum(key, def, allowed...)
	if s, ok := p.resolved[key]; ok {
		delete(p.resolved, key)
		p.local[key] = s
	}
	return v
}

// Loss reads the "loss" parameter.
func (p *Params) Loss(def Loss) Loss {
	s := p.Enum("loss", def.String(), LossNames()...)
	l, err := ParseLoss(s)
	if err != nil {
		return def
	}
	return l
}
