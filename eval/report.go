package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// FormatMetric renders mean ± std the way the papers print them.
func (r *Result) FormatMetric(m ModelResult) string {
	if r.Metric == MistakeRate {
		return fmt.Sprintf("%.3f ± %.3f", m.Mean, m.Std)
	}
	return fmt.Sprintf("%.5f ± %.5f", m.Mean, m.Std)
}

// WriteTable writes a human-readable table.
func (r *Result) WriteTable(w io.Writer) error {
	metric := "mistake %"
	if r.Metric == MSE {
		metric = "MSE"
	}
	fmt.Fprintf(w, "%s: n=%d d=%d, %s, %d permutations (seed %d)", r.Dataset, r.N, r.Dim, r.Task, r.Runs, r.Seed)
	if r.SelectRuns > 0 {
		fmt.Fprintf(w, ", grids selected on %d separate permutations", r.SelectRuns)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "model\t%s\tµs/event\tbudget\tused\tKiB\tchosen\n", metric)
	for _, m := range r.Models {
		chosen := "-"
		if len(m.Won) > 0 {
			chosen = (Candidate{Values: m.Won}).Label()
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%d\t%d\t%.1f\t%s\n", m.Label, r.FormatMetric(m), m.NsPerEvent/1e3, m.Budget, m.Used, float64(m.Bytes)/1024, chosen)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, warn := range r.Warnings() {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	return nil
}

// Warnings are the result's warnings (a model that diverged), one line
// each; WriteTable prints them under the table, and okstream eval --json on
// stderr.
func (r *Result) Warnings() []string {
	var out []string
	for _, m := range r.Models {
		if m.NonFinite > 0 {
			out = append(out, fmt.Sprintf("%s diverged: %d non-finite scores (NaN/Inf), counted as mistakes; lower the step (eta) or change the loss", m.Label, m.NonFinite))
		}
	}
	return out
}

// WriteJSON writes the result as indented JSON.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteGrid writes every grid point's selection score (one block per model
// with a grid).
func (r *Result) WriteGrid(w io.Writer) error {
	for _, m := range r.Models {
		if len(m.Grid) == 0 {
			continue
		}
		fmt.Fprintf(w, "grid of %s:\n", m.Label)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, g := range m.Grid {
			mark := ""
			if (Candidate{Values: g.Values}).Label() == (Candidate{Values: m.Won}).Label() {
				mark = "  ← chosen"
			}
			fmt.Fprintf(tw, "  %s\t%s%s\n", (Candidate{Values: g.Values}).Label(), strings.TrimSpace(r.FormatMetric(ModelResult{Mean: g.Mean, Std: g.Std})), mark)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
