package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
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

// WriteTable writes a human-readable table: every model with its
// measures, the trivial baseline (class prior or running mean) on the same
// runs, and with a test set the frozen models' test measures beside the
// training stream's baseline.
func (r *Result) WriteTable(w io.Writer) error {
	metric := "mistake %"
	if r.Metric == MSE {
		metric = "MSE"
	}
	fmt.Fprintf(w, "%s: n=%d d=%d, %s, %d permutations (seed %d)", r.Dataset, r.N, r.Dim, r.Task, r.Runs, r.Seed)
	if r.Passes > 1 {
		fmt.Fprintf(w, ", %d passes each", r.Passes)
	}
	if r.SelectRuns > 0 {
		fmt.Fprintf(w, ", grids selected on %d separate permutations", r.SelectRuns)
	}
	fmt.Fprintln(w)
	names := r.measureColumns()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "model\t%s\t%s\tµs/event\tbudget\tused\tKiB\tchosen\n", metric, columnHeads(names))
	for _, m := range r.Models {
		chosen := "-"
		if len(m.Won) > 0 {
			chosen = (Candidate{Values: m.Won}).Label()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%d\t%d\t%.1f\t%s\n", m.Label, r.FormatMetric(m), columnValues(names, m.Measures), m.NsPerEvent/1e3, m.Budget, m.Used, float64(m.Bytes)/1024, chosen)
	}
	if b := r.Baseline; b != nil {
		fmt.Fprintf(tw, "%s (baseline)\t%s\t%s\t\t\t\t\t\n", b.Label, r.formatStat(b.Measures[r.Metric]), columnValues(names, b.Measures))
	}
	if b := r.LinearBaseline; b != nil {
		fmt.Fprintf(tw, "%s (baseline)\t%s\t%s\t\t\t\t\t%s\n", b.Label, r.formatStat(b.Measures[r.Metric]), columnValues(names, b.Measures), b.Spec)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Classes) > 0 {
		for _, m := range r.Models {
			if err := r.writeClasses(w, m.Label, "progressive", m.PerClass, m.Confusion); err != nil {
				return err
			}
		}
	}
	if t := r.Test; t != nil {
		fmt.Fprintf(w, "test set %s: n=%d, models frozen after %d training events (no learning on the test set)\n", t.Dataset, t.N, t.TrainEvents)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "model\ttest %s\t%s\n", metric, columnHeads(names))
		for _, m := range t.Models {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Label, r.formatStat(m.Measures[r.Metric]), columnValues(names, m.Measures))
		}
		fmt.Fprintf(tw, "%s (baseline)\t%s\t%s\n", t.Baseline.Label, r.formatStat(t.Baseline.Measures[r.Metric]), columnValues(names, t.Baseline.Measures))
		if b := t.LinearBaseline; b != nil {
			fmt.Fprintf(tw, "%s (baseline)\t%s\t%s\n", b.Label, r.formatStat(b.Measures[r.Metric]), columnValues(names, b.Measures))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if len(r.Classes) > 0 {
			for _, m := range t.Models {
				if err := r.writeClasses(w, m.Label, "test", m.PerClass, m.Confusion); err != nil {
					return err
				}
			}
		}
	}
	for _, warn := range r.Warnings() {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	return nil
}

// measureColumns are the measures shown beside the primary metric.
func (r *Result) measureColumns() []string {
	if r.Metric == MSE {
		return []string{MeasureMAE, MeasureR2}
	}
	if len(r.Classes) > 0 { // multi-class: no AUC
		return []string{MeasureLogLoss, MeasureBrier, MeasureECE}
	}
	return []string{MeasureLogLoss, MeasureBrier, MeasureECE, MeasureAUC}
}

var columnNames = map[string]string{MeasureLogLoss: "log loss", MeasureBrier: "Brier", MeasureECE: "ECE", MeasureAUC: "AUC", MeasureMAE: "MAE", MeasureR2: "R²"}

func columnHeads(names []string) string {
	heads := make([]string, len(names))
	for i, n := range names {
		heads[i] = columnNames[n]
	}
	return strings.Join(heads, "\t")
}

// columnValues renders the means of the measures (- where undefined).
func columnValues(names []string, ms map[string]Stat) string {
	vals := make([]string, len(names))
	for i, n := range names {
		st, ok := ms[n]
		if !ok {
			vals[i] = "-"
			continue
		}
		vals[i] = fmt.Sprintf("%.4f", st.Mean)
	}
	return strings.Join(vals, "\t")
}

// TableConfusionClasses is the largest number of classes whose confusion
// matrix WriteTable prints (JSON has it up to MaxConfusionClasses).
const TableConfusionClasses = 30

// writeClasses prints a multi-class model's accuracy per class and, for at
// most TableConfusionClasses classes, its confusion matrix (rows: true
// class, columns: predicted, counts summed over the runs).
func (r *Result) writeClasses(w io.Writer, label, what string, per []Stat, conf [][]uint64) error {
	if len(per) == 0 {
		return nil
	}
	fmt.Fprintf(w, "%s, %s accuracy per class (%%):", label, what)
	for k, st := range per {
		if math.IsNaN(st.Mean) {
			fmt.Fprintf(w, " %s -", r.Classes[k])
			continue
		}
		fmt.Fprintf(w, " %s %.1f", r.Classes[k], st.Mean)
	}
	fmt.Fprintln(w)
	if conf == nil || len(r.Classes) > TableConfusionClasses {
		return nil
	}
	fmt.Fprintf(w, "%s, %s confusion (rows: true class, columns: predicted; counts over %d runs):\n", label, what, r.Runs)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "\t")
	for _, c := range r.Classes {
		fmt.Fprintf(tw, "%s\t", c)
	}
	fmt.Fprintln(tw)
	for i, row := range conf {
		fmt.Fprintf(tw, "%s\t", r.Classes[i])
		for _, v := range row {
			fmt.Fprintf(tw, "%d\t", v)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// formatStat renders a primary-metric Stat like FormatMetric.
func (r *Result) formatStat(s Stat) string {
	return r.FormatMetric(ModelResult{Mean: s.Mean, Std: s.Std})
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
		if m.AUCSampled {
			out = append(out, fmt.Sprintf("%s: the AUC is estimated on a uniform sample of %d events per run (the stream is longer; standard error about 0.001)", m.Label, DefaultAUCCap))
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
