// Package paper defines the papers' experiments as data — datasets,
// preprocessing, algorithms with their settings, the numbers the papers
// print and the numbers the public reference code gives on our files — and
// runs them through the same eval code path users run, writing a markdown
// section with the side-by-side table, plots and the raw JSON results.
//
// `okstream reproduce <experiment>` is the command; docs/results.md holds
// the generated sections between <!-- BEGIN id --> and <!-- END id -->
// markers, so one experiment can be regenerated without touching the others.
package paper

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"okstream/dataset"
)

// Value is a published number (mean ± std); Std < 0 means not given.
type Value struct {
	Mean, Std float64
}

// V builds a Value.
func V(mean, std float64) *Value { return &Value{mean, std} }

func (v *Value) String() string {
	if v == nil {
		return "–"
	}
	if v.Std < 0 {
		return trim(v.Mean)
	}
	return trim(v.Mean) + " ± " + trim(v.Std)
}

// format renders a Value with 5 decimals for MSE tables (where 3 decimals
// would hide the differences) and as String otherwise.
func (v *Value) format(mse bool) string {
	if v == nil || !mse {
		return v.String()
	}
	if v.Std < 0 {
		return fmt.Sprintf("%.5f", v.Mean)
	}
	return fmt.Sprintf("%.5f ± %.5f", v.Mean, v.Std)
}

func trim(x float64) string {
	if x != 0 && math.Abs(x) < 0.01 {
		return fmt.Sprintf("%.5f", x)
	}
	return fmt.Sprintf("%.3f", x)
}

// Variant is a preprocessing of a dataset.
type Variant struct {
	Name  string // "unscaled", "scaled"
	Scale string // dataset.ParseScale vocabulary
	// Data overrides the dataset file for this variant (e.g. LIBSVM's own
	// scaled german); empty = the dataset's.
	Data string
}

// Dataset is one dataset of an experiment.
type Dataset struct {
	Key      string // short name (dataset.Shared) or path
	Title    string
	B        int // budget for this dataset
	Sigma    string
	Variants []Variant
	Limit    int // first rows only (0: all)
	Note     string
	// Game, if set, plays an adversarial game (dataset.Adversarial) on the
	// (scaled) dataset instead of permuting it: run r gets a fresh game
	// drawn with its own seed and presents it in order (eval.Config
	// NoPermute/Sequence); Game.Seed is ignored.
	Game *dataset.AdversarialGame
	// Load, if set, reads the data instead of Key (a user's file: reproduce
	// --data FILE); classification says whether labels must become ±1.
	Load func(classification bool) (*dataset.Dataset, error) `json:"-"`
}

// Algorithm is one row of an experiment's table.
type Algorithm struct {
	Label string
	// Spec builds the learner spec (a grid is allowed) for a dataset.
	Spec func(d Dataset) string
	// Paper holds the paper's number per dataset title.
	Paper map[string]*Value
	// Reference holds the public reference code's number on our files, per
	// "title/variant".
	Reference map[string]*Value
	Note      string
	// Tolerance, if > 0, overrides the experiment's acceptance band for
	// this algorithm (e.g. the issue's ±1.5 points for FORKS).
	Tolerance float64
}

// Experiment is a table of a paper.
type Experiment struct {
	ID    string
	Title string
	Paper string
	Task  string // "classification" or "regression"
	Runs  int
	// SelectRuns, if > 0, picks each grid's winner on this many separate
	// permutations (eval.Config.SelectRuns) instead of on the reported
	// runs: the reported mean is then not biased by the selection, and a
	// 25-value σ grid costs SelectRuns×25 + Runs runs instead of Runs×25.
	SelectRuns int
	Intro      string
	Datasets   []Dataset
	Algos      []Algorithm
	// Tolerance is the acceptance band of the issue (e.g. 2.5 points).
	Tolerance float64
	// Relative makes the tolerance relative (fraction of the target).
	Relative bool
	// Discussion is appended after the tables (evidence for misses).
	Discussion string
	// SizeColumn, if set, adds a column with this header showing each
	// model's size (eval's ModelResult.UsedMean: stored examples,
	// dictionary or features at the end of a run, mean over runs), e.g. "J".
	SizeColumn string
	// AcceptsData marks an experiment that can run on a user's copy of its
	// data (Options.Data, reproduce --data).
	AcceptsData bool
	// Custom, if set, runs an experiment that is not a table of learners
	// over datasets (e.g. a convergence-rate study) instead of the
	// dataset loop; it fills Report.Body (markdown) and Report.Data (raw
	// results for the JSON file).
	Custom func(e *Experiment, o Options) (*Report, error)
	// Rerender, if set, rebuilds a Custom experiment's report from the raw
	// results it wrote (the JSON file), without running it; see
	// ReadReport for table experiments.
	Rerender func(e *Experiment, raw []byte, o Options) (*Report, error)
}

var experiments = map[string]*Experiment{}

func register(e *Experiment) { experiments[e.ID] = e }

// Get returns an experiment by id.
func Get(id string) (*Experiment, error) {
	if e, ok := experiments[id]; ok {
		return e, nil
	}
	return nil, fmt.Errorf("unknown experiment %q (known: %s)", id, strings.Join(IDs(), ", "))
}

// IDs lists the experiments.
func IDs() []string {
	var out []string
	for k := range experiments {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Title returns an experiment's title (for help).
func Title(id string) string {
	if e, ok := experiments[id]; ok {
		return e.Title
	}
	return ""
}

// valueRow maps keys[i] to the Value (meanStd[2i], meanStd[2i+1]): one row
// of a paper's table, written in the order of its columns. It panics when
// the counts disagree (a definition error, caught by the package's tests).
func valueRow(keys []string, meanStd []float64) map[string]*Value {
	if len(meanStd) != 2*len(keys) {
		panic(fmt.Sprintf("paper: %d numbers for %d (mean, std) cells", len(meanStd), len(keys)))
	}
	m := make(map[string]*Value, len(keys))
	for i, k := range keys {
		m[k] = V(meanStd[2*i], meanStd[2*i+1])
	}
	return m
}

// numberRow maps keys[i] to the number means[i] without a std (a reference
// code's result); a NaN leaves the cell out. It panics when the counts
// disagree.
func numberRow(keys []string, means []float64) map[string]*Value {
	if len(means) != len(keys) {
		panic(fmt.Sprintf("paper: %d numbers for %d cells", len(means), len(keys)))
	}
	m := make(map[string]*Value, len(keys))
	for i, k := range keys {
		if !math.IsNaN(means[i]) {
			m[k] = V(means[i], -1)
		}
	}
	return m
}
