package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"okstream/learner"
)

func writeLearnerHelp(w io.Writer, names []string) {
	if len(names) == 0 {
		fmt.Fprint(w, `Learner specs: name:key=value,key=value,...   e.g. fogd:sigma=4,budget=50

Numbers can be written as powers (sigma=2^-3). In okstream eval a value can
also be a grid: sigma=2^-5..2^7:2^0.5, eta=0.1|0.2, budget=50..400:*2.

Learners (okstream help learners NAME... for their parameters):
`)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, n := range learner.Names() {
			r := learner.Describe(n)
			fmt.Fprintf(tw, "  %s\t%s\n", n, r.Summary)
		}
		tw.Flush()
		writeMultiHelp(w)
		writeSelfTuneHelp(w)
		names = learner.Names()
		fmt.Fprintln(w)
	}
	for _, n := range names {
		r := learner.Describe(n)
		if r == nil {
			fmt.Fprintf(w, "unknown learner %q (known: %s)\n", n, strings.Join(learner.Names(), ", "))
			continue
		}
		fmt.Fprintf(w, "%s — %s\n  paper: %s\n", r.Name, r.Summary, r.Paper)
		writeParams(w, r.Name, r.Params)
		if m := learner.DescribeMulti(n); m != nil {
			fmt.Fprintf(w, "  multi-class form — %s\n  paper: %s\n", m.Summary, m.Paper)
			writeParams(w, m.Name, m.Params)
		} else if _, err := learner.NewMulti(n, 2); err == nil {
			fmt.Fprintf(w, "  multi-class: one-vs-rest (one %s per class, each calibrated by online Platt scaling)\n", r.Name)
		} else {
			fmt.Fprintf(w, "  multi-class: none (a regression learner)\n")
		}
		fmt.Fprintln(w)
	}
}

// writeParams lists a learner's parameters with their defaults.
func writeParams(w io.Writer, name string, params []learner.ParamDoc) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, p := range params {
		when := ""
		if p.When != "" {
			when = " (when " + p.When + ")"
		}
		def := p.Default
		if p.Name == "sigma" && name != "auto" {
			// Leaving σ out derives it from the stream (learner/selftune.go).
			def = "auto (from the stream; with scale=standard)"
		}
		fmt.Fprintf(tw, "    %s\t%s\t%s%s\n", p.Name, def, p.Doc, when)
	}
	tw.Flush()
}

// writeMultiHelp lists the learners' multi-class forms.
func writeMultiHelp(w io.Writer) {
	fmt.Fprint(w, `
Multi-class (okstream run --task multiclass, or a stream whose labels are three or more strings;
okstream eval --task multiclass): the same spec names the model's multi-class form. Native forms
compute their feature map once per event and keep one head per class:
`)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, n := range learner.MultiNames() {
		fmt.Fprintf(tw, "  %s\t%s\n", n, learner.DescribeMulti(n).Summary)
	}
	tw.Flush()
	fmt.Fprint(w, `  Every other classifier runs one-vs-rest: one binary learner per class (K× its memory and
  cost), each score made a probability by an online Platt scaling, normalised over the classes.
  Parameters of a multi-class form: okstream help learners NAME (after the binary form's;
  docs/algorithms/multiclass.md and multiclass-kernels.md for the derivations).
`)
}

// writeSelfTuneHelp lists the keys every learner accepts for data-driven
// settings (learner.SelfTuneDocs) and says which values come from the data.
func writeSelfTuneHelp(w io.Writer) {
	fmt.Fprint(w, `
Data-driven settings (every learner; stored in the model, checkpointed, restored exactly):
`)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, p := range learner.SelfTuneDocs() {
		fmt.Fprintf(tw, "    %s\t%s\t%s\n", p.Name, p.Default, p.Doc)
	}
	tw.Flush()
	fmt.Fprint(w, `  Data-driven by default: σ (every learner with a gaussian, laplacian or cauchy
  kernel) and the feature scaling. A spec that gives no σ (fogd, nogd:budget=50,
  forks, ...) means sigma=auto,scale=standard. A spec that gives σ as a number
  keeps the papers' behaviour (raw features) unless it says scale=standard.
  A spec without σ has left the papers' settings already, so forks, nogd and
  skegd without σ also run preset=wide, the variant that learns on
  class-imbalanced streams (at the papers' settings all three are the
  majority-class predictor there): forks s_m = k = B/2 and no slab (c=0) for
  the hinge, and (bare forks only, not preset=wide) carry=true, its ONS carried
  over update rounds instead of reset, and a Stage-1 step η = 1 for the hinge; nogd k = B and η = 1 for the hinge; skegd s_m = k = B/2, λ = 0,
  carry=transfer, warm=lsq and η = 1 for the hinge. Explicit values win, and
  preset=paper (or any σ given as a number) keeps every paper setting.
  auto:base=NAME (okstream run's default model: auto:base=fogd) also chooses σ
  online among 2^-3..2^3 × the data-driven σ, and η for fogd, nogd, bogd and
  skegd on classification, and weighs in the online linear model (linear=true)
  on the same standardised features; no value comes from an offline grid
  search. Every other parameter keeps the default listed with its learner.
  Task: a learner classifies (labels -1/+1, 0/1, true/false or two strings)
  unless it has loss=square (or is a regression learner: aogd-ald, nons-ald,
  kawv, pkawv). auto without loss= follows the labels: classification on
  binary labels, regression (auto:loss=square) on real ones - in okstream run
  by each partition's labels (--task-warmup) unless --task says, in okstream
  eval by the whole file.
`)
}
