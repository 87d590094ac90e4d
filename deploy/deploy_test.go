// Package deploy holds the operator files shipped with okstream: the
// Prometheus configuration and alert rules (prometheus/), the Grafana
// dashboard and its provisioning (grafana/). It has no Go code; its tests
// check that those files parse and that every metric they query exists in
// okstream's registry with the type the query assumes.
package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.yaml.in/yaml/v3"

	"okstream/consumer"
)

// metricType is how a metric may be queried.
type metricType string

const (
	counter   metricType = "counter"
	gauge     metricType = "gauge"
	histogram metricType = "histogram"
	summary   metricType = "summary"
)

// family is one metric of the registry.
type family struct {
	typ    metricType
	labels []string
}

// recorder is a Registerer that keeps what consumer.New registers, so the
// test sees every metric (a Vec without series is absent from Gather).
type recorder struct{ cs []prometheus.Collector }

func (r *recorder) Register(c prometheus.Collector) error { r.cs = append(r.cs, c); return nil }
func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	r.cs = append(r.cs, cs...)
}
func (r *recorder) Unregister(prometheus.Collector) bool { return false }

var (
	descName   = regexp.MustCompile(`^Desc\{fqName: "([^"]+)"`)
	descLabels = regexp.MustCompile(`variableLabels: \{([^}]*)\}\}$`)
)

// registry builds the real metrics of a consumer.Pipeline (no broker is
// contacted before Run) and returns them by name.
func registry(t *testing.T) map[string]family {
	t.Helper()
	rec := &recorder{}
	_, err := consumer.New(consumer.Config{Brokers: []string{"127.0.0.1:1"}, Input: "events", Dim: 2,
		Models: []consumer.Model{{Name: "m", Spec: "fogd:sigma=1"}}, Registerer: rec})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]family{}
	for _, c := range rec.cs {
		typ := collectorType(c)
		ch := make(chan *prometheus.Desc, 64)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			s := d.String()
			m := descName.FindStringSubmatch(s)
			if m == nil {
				t.Fatalf("cannot read the name of %s", s)
			}
			var labels []string
			if l := descLabels.FindStringSubmatch(s); l != nil && l[1] != "" {
				for _, n := range strings.Split(l[1], ",") {
					labels = append(labels, strings.TrimSuffix(strings.TrimPrefix(n, "c("), ")"))
				}
			}
			ft := typ
			if ft == "" {
				ft = collectedType(c, m[1])
			}
			out[m[1]] = family{typ: ft, labels: labels}
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d metrics found in the registry", len(out))
	}
	return out
}

// collectorType is the type of a client_golang metric or vector ("" for a
// custom collector). Order matters: a Gauge also has Inc and Add.
func collectorType(c prometheus.Collector) metricType {
	switch c := c.(type) {
	case *prometheus.CounterVec:
		return counter
	case *prometheus.GaugeVec:
		return gauge
	case *prometheus.HistogramVec:
		return histogram
	case *prometheus.SummaryVec:
		return summary
	case prometheus.Histogram: // every Summary too (the same methods): what it writes tells them apart
		var pb dto.Metric
		if c.Write(&pb) == nil && pb.Summary != nil {
			return summary
		}
		return histogram
	case prometheus.Gauge:
		return gauge
	case prometheus.Counter:
		return counter
	}
	return ""
}

// collectedType asks a custom collector for its metrics and reads the type
// of those named name. A custom collector with no series yet (e.g. the
// per-partition stall gauges before any assignment) is taken to export
// gauges, the only kind of const metric okstream's collectors emit.
func collectedType(c prometheus.Collector, name string) metricType {
	ch := make(chan prometheus.Metric, 64)
	go func() { c.Collect(ch); close(ch) }()
	typ := gauge
	for m := range ch {
		if n := descName.FindStringSubmatch(m.Desc().String()); n == nil || n[1] != name {
			continue
		}
		var pb dto.Metric
		if m.Write(&pb) != nil {
			continue
		}
		switch {
		case pb.Counter != nil:
			typ = counter
		case pb.Histogram != nil:
			typ = histogram
		case pb.Summary != nil:
			typ = summary
		}
	}
	return typ
}

// ref is one metric selector in a PromQL expression.
type ref struct {
	name     string   // as written (with _bucket, _sum, _count)
	fn       string   // the function directly around it ("" at top level or in an aggregation)
	matchers []string // label names in its {...}
}

// promql lists the metric selectors of expr and the labels of its by,
// without, on and ignoring clauses. It is a scanner, not a parser: enough
// for the expressions in this folder (string literals, [ranges] and
// Grafana's $variables are skipped).
func promql(expr string) (refs []ref, grouping []string, err error) {
	keywords := map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true,
		"group_left": true, "group_right": true, "inf": true, "nan": true}
	clauses := map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}
	var stack []string // enclosing function per open paren
	isIdent := func(c byte, first bool) bool {
		return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9')
	}
	skipSpace := func(i int) int {
		for i < len(expr) && strings.ContainsRune(" \t\r\n", rune(expr[i])) {
			i++
		}
		return i
	}
	// labelList reads "(a, b)" at i; returns the names and the index after it.
	labelList := func(i int, close byte) ([]string, int, error) {
		j := strings.IndexByte(expr[i:], close)
		if j < 0 {
			return nil, 0, fmt.Errorf("unclosed list at %d", i)
		}
		var names []string
		for _, part := range strings.Split(expr[i+1:i+j], ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			if k := strings.IndexAny(part, "=!~"); k >= 0 {
				part = strings.TrimSpace(part[:k])
			}
			names = append(names, part)
		}
		return names, i + j + 1, nil
	}
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(expr) && expr[j] != c {
				if expr[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
		case c == '[':
			j := strings.IndexByte(expr[i:], ']')
			if j < 0 {
				return nil, nil, fmt.Errorf("unclosed [ at %d", i)
			}
			i += j + 1
		case c == '(':
			stack = append(stack, "")
			i++
		case c == ')':
			if len(stack) == 0 {
				return nil, nil, fmt.Errorf("unbalanced ) at %d", i)
			}
			stack = stack[:len(stack)-1]
			i++
		case c >= '0' && c <= '9' || c == '.':
			for i < len(expr) && (isIdent(expr[i], false) || expr[i] == '.') {
				i++ // numbers, and durations such as 5m
			}
		case c == '$':
			i++
			for i < len(expr) && isIdent(expr[i], false) {
				i++
			}
		case isIdent(c, true):
			j := i
			for j < len(expr) && isIdent(expr[j], false) {
				j++
			}
			word := expr[i:j]
			k := skipSpace(j)
			switch {
			case clauses[word] && k < len(expr) && expr[k] == '(':
				names, next, err := labelList(k, ')')
				if err != nil {
					return nil, nil, err
				}
				grouping = append(grouping, names...)
				i = next
			case keywords[strings.ToLower(word)]:
				i = j
			case aggregators[word] && k < len(expr) && isIdent(expr[k], true):
				// sum by (a) (...): read the clause, then the body.
				e := k
				for e < len(expr) && isIdent(expr[e], false) {
					e++
				}
				o := skipSpace(e)
				if clause := expr[k:e]; (clause != "by" && clause != "without") || o >= len(expr) || expr[o] != '(' {
					return nil, nil, fmt.Errorf("%s %s: expected by (...) or without (...)", word, clause)
				}
				names, next, err := labelList(o, ')')
				if err != nil {
					return nil, nil, err
				}
				grouping = append(grouping, names...)
				if next = skipSpace(next); next >= len(expr) || expr[next] != '(' {
					return nil, nil, fmt.Errorf("%s by (...): expected ( at %d", word, next)
				}
				stack = append(stack, word)
				i = next + 1
			case k < len(expr) && expr[k] == '(':
				stack = append(stack, word)
				i = k + 1
			default:
				r := ref{name: word}
				if len(stack) > 0 {
					r.fn = stack[len(stack)-1]
				}
				i = j
				if k < len(expr) && expr[k] == '{' {
					names, next, err := labelList(k, '}')
					if err != nil {
						return nil, nil, err
					}
					r.matchers, i = names, next
				}
				refs = append(refs, r)
			}
		default:
			i++
		}
	}
	if len(stack) != 0 {
		return nil, nil, fmt.Errorf("unbalanced ( in %q", expr)
	}
	return refs, grouping, nil
}

// aggregators may take a by/without clause between their name and body.
var aggregators = map[string]bool{"sum": true, "avg": true, "min": true, "max": true, "count": true, "group": true,
	"stddev": true, "stdvar": true, "topk": true, "bottomk": true, "quantile": true, "count_values": true}

// counterFuncs take a counter (or a histogram's series); every other use of
// a selector must be a gauge.
var counterFuncs = map[string]bool{"rate": true, "irate": true, "increase": true, "resets": true}

// targetLabels are added by Prometheus to every scraped series.
var targetLabels = []string{"instance", "job"}

// checkExpr reports every problem of expr against the registry.
func checkExpr(reg map[string]family, expr string) []string {
	refs, grouping, err := promql(expr)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	if len(refs) == 0 {
		problems = append(problems, "queries no metric")
	}
	known := slices.Clone(targetLabels)
	for _, r := range refs {
		if r.name == "up" { // Prometheus's own per-target series
			continue
		}
		if !strings.HasPrefix(r.name, "okstream_") {
			problems = append(problems, fmt.Sprintf("%s: not an okstream metric (misspelt, or a function missing its parentheses?)", r.name))
			continue
		}
		name, fam, part := r.name, family{}, ""
		fam, ok := reg[name]
		if !ok {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				if base, cut := strings.CutSuffix(name, s); cut {
					if f, found := reg[base]; found && (f.typ == histogram || (f.typ == summary && s != "_bucket")) {
						fam, ok, part = f, true, s
					}
				}
			}
		}
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: no such metric in okstream's registry", name))
			continue
		}
		labels := append(slices.Clone(fam.labels), targetLabels...)
		if part == "_bucket" {
			labels = append(labels, "le")
		}
		known = append(known, labels...)
		for _, m := range r.matchers {
			if m != "__name__" && !slices.Contains(labels, m) {
				problems = append(problems, fmt.Sprintf("%s{%s}: the metric has no label %q (labels: %s)", name, m, m, strings.Join(fam.labels, ", ")))
			}
		}
		underCounterFn := counterFuncs[r.fn]
		switch {
		case part != "" && !underCounterFn:
			problems = append(problems, fmt.Sprintf("%s: a %s's %s series is a counter: wrap it in rate() or increase()", name, fam.typ, part))
		case part != "":
		case fam.typ == counter && !underCounterFn:
			problems = append(problems, fmt.Sprintf("%s is a counter: query it through rate() or increase(), not %s", name, usage(r.fn)))
		case fam.typ == gauge && underCounterFn:
			problems = append(problems, fmt.Sprintf("%s is a gauge: %s() is for counters (use deriv, delta or *_over_time)", name, r.fn))
		case fam.typ == histogram || fam.typ == summary:
			problems = append(problems, fmt.Sprintf("%s is a %s: query its _bucket, _sum or _count series", name, fam.typ))
		}
	}
	for _, g := range grouping {
		if !slices.Contains(known, g) {
			problems = append(problems, fmt.Sprintf("by/on label %q is a label of no metric in the expression", g))
		}
	}
	return problems
}

func usage(fn string) string {
	if fn == "" {
		return "as a raw value"
	}
	return fn + "()"
}

// dashboardExprs returns the PromQL of every target and query variable of
// the Grafana dashboard, keyed by where it is, and the metrics its
// label_values variables read.
func dashboardExprs(t *testing.T, path string) (exprs map[string]string, variableMetrics []string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type target struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	}
	type panel struct {
		ID      int       `json:"id"`
		Type    string    `json:"type"`
		Title   string    `json:"title"`
		Targets []target  `json:"targets"`
		Panels  []panel   `json:"panels"`
		Grid    *struct{} `json:"gridPos"`
	}
	var d struct {
		UID        string  `json:"uid"`
		Title      string  `json:"title"`
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Type       string `json:"type"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if d.UID == "" || d.Title == "" {
		t.Errorf("%s: the dashboard needs a uid and a title (provisioning keys on the uid)", path)
	}
	vars := map[string]bool{"__rate_interval": true, "__interval": true, "__range": true}
	exprs = map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
		if v.Type == "query" {
			m := regexp.MustCompile(`^label_values\((\w+),\s*\w+\)$`).FindStringSubmatch(v.Definition)
			if m == nil {
				t.Errorf("variable %s: query %q is not label_values(metric, label)", v.Name, v.Definition)
				continue
			}
			if !strings.HasPrefix(m[1], "okstream_") {
				t.Errorf("variable %s: %s is not an okstream metric", v.Name, m[1])
			}
			variableMetrics = append(variableMetrics, m[1])
		}
	}
	ids := map[int]bool{}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if ids[p.ID] {
				t.Errorf("panel %q: id %d used twice", p.Title, p.ID)
			}
			ids[p.ID] = true
			if p.Grid == nil {
				t.Errorf("panel %q has no gridPos", p.Title)
			}
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, tg := range p.Targets {
				if strings.TrimSpace(tg.Expr) == "" {
					t.Errorf("panel %q target %s: empty expression", p.Title, tg.RefID)
				}
				for _, v := range regexp.MustCompile(`\$(\w+)`).FindAllStringSubmatch(tg.Expr, -1) {
					if !vars[v[1]] {
						t.Errorf("panel %q: $%s is not a dashboard variable", p.Title, v[1])
					}
				}
				exprs[fmt.Sprintf("panel %q target %s", p.Title, tg.RefID)] = tg.Expr
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	if len(exprs) < 10 {
		t.Fatalf("%s: only %d queries found", path, len(exprs))
	}
	return exprs, variableMetrics
}

type rule struct {
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

// alertRules parses a Prometheus rule file strictly (unknown keys fail).
func alertRules(t *testing.T, path string) []rule {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var doc struct {
		Groups []struct {
			Name     string `yaml:"name"`
			Interval string `yaml:"interval"`
			Rules    []rule `yaml:"rules"`
		} `yaml:"groups"`
	}
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []rule
	names := map[string]bool{}
	for _, g := range doc.Groups {
		if g.Name == "" {
			t.Errorf("%s: a group without a name", path)
		}
		for _, r := range g.Rules {
			switch {
			case r.Alert == "":
				t.Errorf("%s: a rule without an alert name (%q)", path, r.Expr)
			case names[r.Alert]:
				t.Errorf("%s: alert %s defined twice", path, r.Alert)
			case r.Labels["severity"] == "":
				t.Errorf("alert %s: no severity label", r.Alert)
			case r.Annotations["summary"] == "" || r.Annotations["description"] == "":
				t.Errorf("alert %s: needs a summary and a description", r.Alert)
			}
			if r.For != "" {
				if _, err := time.ParseDuration(r.For); err != nil {
					t.Errorf("alert %s: for %q: %v", r.Alert, r.For, err)
				}
			}
			names[r.Alert] = true
			out = append(out, r)
		}
	}
	if len(out) < 5 {
		t.Fatalf("%s: only %d rules", path, len(out))
	}
	return out
}

// TestQueriesUseRegisteredMetrics checks the dashboard and the alert rules
// against the registry that `okstream run` serves on /metrics: every metric
// exists, counters and histogram series go through rate()/increase(),
// gauges do not, and every label matched or grouped on exists.
func TestQueriesUseRegisteredMetrics(t *testing.T) {
	reg := registry(t)
	exprs, vars := dashboardExprs(t, filepath.Join("grafana", "okstream.json"))
	for _, v := range vars {
		if _, ok := reg[v]; !ok {
			t.Errorf("dashboard variable: %s: no such metric in okstream's registry", v)
		}
	}
	for _, r := range alertRules(t, filepath.Join("prometheus", "alerts.yml")) {
		exprs["alert "+r.Alert] = r.Expr
	}
	keys := make([]string, 0, len(exprs))
	for k := range exprs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	used := map[string]bool{}
	for _, k := range keys {
		for _, p := range checkExpr(reg, exprs[k]) {
			t.Errorf("%s: %s\n\texpr: %s", k, p, strings.Join(strings.Fields(exprs[k]), " "))
		}
		refs, _, _ := promql(exprs[k])
		for _, r := range refs {
			used[r.name] = true
		}
	}
	t.Logf("%d queries checked, %d distinct series names", len(exprs), len(used))
}

// TestCheckExprFails shows that the checks can fail: each expression below
// has one mistake.
func TestCheckExprFails(t *testing.T) {
	reg := map[string]family{
		"okstream_events_total":             {counter, []string{"partition"}},
		"okstream_consumer_lag_records":     {gauge, []string{"partition"}},
		"okstream_restore_duration_seconds": {histogram, nil},
	}
	for _, expr := range []string{
		`rate(okstream_event_total[5m])`,                                    // misspelt
		`okstream_events_total`,                                             // raw counter
		`rate(okstream_consumer_lag_records[5m])`,                           // rate of a gauge
		`okstream_restore_duration_seconds > 1`,                             // histogram by its base name
		`histogram_quantile(0.9, okstream_restore_duration_seconds_bucket)`, // bucket without rate
		`sum by (model) (okstream_consumer_lag_records)`,                    // no such label
		`okstream_consumer_lag_records{reason="x"}`,                         // no such label
		`consumer_lag_records > 0`,                                          // not okstream's
		`sum(rate(okstream_events_total[5m])`,                               // unbalanced
		`1 > 0`,                                                             // no metric
		`sum by (partition (okstream_consumer_lag_records)`,                 // malformed clause
	} {
		if p := checkExpr(reg, expr); len(p) == 0 {
			t.Errorf("%s: no problem found", expr)
		}
	}
	for _, expr := range []string{
		`sum by (partition) (rate(okstream_events_total{instance=~"$instance"}[$__rate_interval]))`,
		`max by (instance, partition) (deriv(okstream_consumer_lag_records[10m])) > 0 and on (instance, partition) okstream_consumer_lag_records > 5`,
		`histogram_quantile(0.9, sum by (le) (rate(okstream_restore_duration_seconds_bucket[5m])))`,
		`up{job="okstream"} == 0`,
	} {
		if p := checkExpr(reg, expr); len(p) != 0 {
			t.Errorf("%s: %v", expr, p)
		}
	}
}

// TestPromtoolCheckRules runs `promtool check rules` on the alert file when
// promtool is installed (.ci/run installs it; the metric checks above run
// without it).
func TestPromtoolCheckRules(t *testing.T) {
	bin, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (apt-get install prometheus, or a Prometheus release): the rule file's syntax is checked by TestQueriesUseRegisteredMetrics only")
	}
	out, err := exec.Command(bin, "check", "rules", filepath.Join("prometheus", "alerts.yml")).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestComposeMounts checks that every host path docker-compose.yml mounts
// exists in the repository (a missing one becomes an empty directory), and
// that no service mounts ../shared by default.
func TestComposeMounts(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services map[string]struct {
			Volumes []string `yaml:"volumes"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for name, s := range doc.Services {
		for _, v := range s.Volumes {
			host, _, _ := strings.Cut(v, ":")
			if !strings.HasPrefix(host, ".") {
				continue // a named volume
			}
			n++
			if strings.Contains(host, "shared") {
				t.Errorf("service %s mounts %s: a clone without it would get an empty mount", name, host)
			}
			if _, err := os.Stat(filepath.Join("..", host)); err != nil {
				t.Errorf("service %s mounts %s: %v", name, host, err)
			}
		}
	}
	if n < 3 {
		t.Errorf("only %d host mounts found in docker-compose.yml (Prometheus config, alerts, Grafana)", n)
	}
}
