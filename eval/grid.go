package eval

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"okstream/learner"
)

// A grid spec is a learner spec in which some values list several
// candidates:
//
//	sigma=1|2|4            a list
//	sigma=2^-5..2^7:2^0.5  powers of one base: exponents −5, −4.5, …, 7
//	eta=0.1..0.5:0.1       arithmetic: 0.1, 0.2, …, 0.5 (also :+0.1)
//	budget=50..400:*2      geometric: 50, 100, 200, 400
//
// Expand turns it into the cartesian product of plain specs, in a fixed
// order (keys sorted, values ascending as written).

// Candidate is one point of a grid.
type Candidate struct {
	Spec   string            // plain learner spec
	Values map[string]string // the grid keys and the values of this point
}

// Label renders the grid values, e.g. "sigma=2^3,eta=0.2" ("" without grid).
func (c Candidate) Label() string {
	keys := make([]string, 0, len(c.Values))
	for k := range c.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + c.Values[k]
	}
	return strings.Join(parts, ",")
}

// maxCandidates bounds a grid so a typo cannot launch a million runs.
const maxCandidates = 10000

// Expand expands a grid spec.
func Expand(spec string) ([]Candidate, error) {
	name, kv, err := learner.ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	type axis struct {
		key  string
		vals []string
	}
	var fixed []string
	var axes []axis
	total := 1
	for _, k := range keys {
		vals, err := expandValue(kv[k])
		if err != nil {
			return nil, fmt.Errorf("spec %q, parameter %s: %w", spec, k, err)
		}
		if len(vals) == 1 && !isGrid(kv[k]) {
			fixed = append(fixed, k+"="+vals[0])
			continue
		}
		axes = append(axes, axis{k, vals})
		total *= len(vals)
		if total > maxCandidates {
			return nil, fmt.Errorf("spec %q: grid has more than %d points", spec, maxCandidates)
		}
	}
	out := make([]Candidate, 0, total)
	idx := make([]int, len(axes))
	for {
		parts := append([]string(nil), fixed...)
		vals := map[string]string{}
		for i, a := range axes {
			parts = append(parts, a.key+"="+a.vals[idx[i]])
			vals[a.key] = a.vals[idx[i]]
		}
		sort.Strings(parts)
		s := name
		if len(parts) > 0 {
			s += ":" + strings.Join(parts, ",")
		}
		out = append(out, Candidate{Spec: s, Values: vals})
		// advance the odometer, last axis fastest
		i := len(axes) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(axes[i].vals) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			break
		}
	}
	return out, nil
}

func isGrid(v string) bool { return strings.Contains(v, "|") || strings.Contains(v, "..") }

func expandValue(v string) ([]string, error) {
	if strings.Contains(v, "|") {
		parts := strings.Split(v, "|")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
			if parts[i] == "" {
				return nil, fmt.Errorf("empty value in list %q", v)
			}
		}
		return parts, nil
	}
	lohi, step, ok := strings.Cut(v, ":")
	lo, hi, isRange := strings.Cut(lohi, "..")
	if !isRange {
		return []string{v}, nil
	}
	if !ok {
		return nil, fmt.Errorf("range %q needs a step, e.g. 1..10:1, 2^-5..2^7:2^0.5 or 50..400:*2", v)
	}
	// Powers of one base: 2^a..2^b:2^c.
	if bl, el, ok1 := strings.Cut(lo, "^"); ok1 {
		bh, eh, ok2 := strings.Cut(hi, "^")
		bs, es, ok3 := strings.Cut(step, "^")
		if !ok2 || !ok3 || bl != bh || bl != bs {
			return nil, fmt.Errorf("range %q: write all three as powers of the same base (2^-5..2^7:2^0.5)", v)
		}
		a, err1 := strconv.ParseFloat(el, 64)
		b, err2 := strconv.ParseFloat(eh, 64)
		s, err3 := strconv.ParseFloat(es, 64)
		if err1 != nil || err2 != nil || err3 != nil || s <= 0 || b < a {
			return nil, fmt.Errorf("range %q: bad exponents", v)
		}
		n := int(math.Floor((b-a)/s+1e-9)) + 1
		out := make([]string, n)
		for i := range out {
			out[i] = bl + "^" + learner.FormatNumber(roundTo(a+float64(i)*s))
		}
		return out, nil
	}
	a, err1 := learner.ParseNumber(lo)
	b, err2 := learner.ParseNumber(hi)
	if err1 != nil || err2 != nil || b < a {
		return nil, fmt.Errorf("range %q: bad bounds", v)
	}
	var out []string
	if f, isGeo := strings.CutPrefix(step, "*"); isGeo {
		r, err := learner.ParseNumber(f)
		if err != nil || r <= 1 || a <= 0 {
			return nil, fmt.Errorf("range %q: a geometric step needs a factor > 1 and a positive start", v)
		}
		for x := a; x <= b*(1+1e-12) && len(out) <= maxCandidates; x *= r {
			out = append(out, learner.FormatNumber(roundTo(x)))
		}
		return out, nil
	}
	s, err := learner.ParseNumber(strings.TrimPrefix(step, "+"))
	if err != nil || s <= 0 {
		return nil, fmt.Errorf("range %q: step must be positive", v)
	}
	n := int(math.Floor((b-a)/s+1e-9)) + 1
	if n > maxCandidates {
		return nil, fmt.Errorf("range %q has more than %d values", v, maxCandidates)
	}
	for i := 0; i < n; i++ {
		out = append(out, learner.FormatNumber(roundTo(a+float64(i)*s)))
	}
	return out, nil
}

// roundTo removes accumulated binary noise (0.30000000000000004 → 0.3).
func roundTo(x float64) float64 {
	if x == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
	return v
}
