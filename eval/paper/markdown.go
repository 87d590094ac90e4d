package paper

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"okstream/eval"
)

// Markdown renders the report as a docs/results.md section. cmdLine is the
// command that regenerates it.
func (r *Report) Markdown(cmdLine string, elapsed time.Duration) string {
	e := r.Exp
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", e.Title)
	fmt.Fprintf(&b, "Paper: %s.\n\n", e.Paper)
	if e.Custom != nil {
		fmt.Fprintf(&b, "Regenerate with `%s` (%d run(s), seed %d; took %s on this machine).\n\n",
			cmdLine, r.Runs, r.Seed, elapsed.Round(time.Second))
		for _, s := range []string{e.Intro, r.Body, e.Discussion} {
			if strings.TrimSpace(s) != "" {
				b.WriteString(strings.TrimSpace(s) + "\n\n")
			}
		}
		return strings.TrimRight(b.String(), "\n") + "\n"
	}
	sel := ""
	if len(r.Cells) > 0 && r.Cells[0].Result != nil && r.Cells[0].Result.SelectRuns > 0 {
		sel = fmt.Sprintf("; grid values chosen on %d separate permutations, then reported on the %d", r.Cells[0].Result.SelectRuns, r.Runs)
	}
	fmt.Fprintf(&b, "Regenerate with `%s` (%d permutations, seed %d%s; took %s on this machine).\n\n",
		cmdLine, r.Runs, r.Seed, sel, elapsed.Round(time.Second))
	if e.Intro != "" {
		b.WriteString(strings.TrimSpace(e.Intro) + "\n\n")
	}
	tolWord := fmt.Sprintf("%g points", e.Tolerance)
	if e.Relative {
		tolWord = fmt.Sprintf("%g%%", 100*e.Tolerance)
	}

	// Datasets in experiment order.
	var order []string
	seen := map[string]bool{}
	for _, c := range r.Cells {
		if !seen[c.Dataset] {
			seen[c.Dataset] = true
			order = append(order, c.Dataset)
		}
	}
	type verdictRow struct {
		algo, ds string
		v        Verdict
		ours     float64
	}
	var verdicts []verdictRow
	for _, dsName := range order {
		var d Dataset
		for _, x := range e.Datasets {
			if x.Title == dsName {
				d = x
			}
		}
		var cells []*Cell
		for i := range r.Cells {
			if r.Cells[i].Dataset == dsName {
				cells = append(cells, &r.Cells[i])
			}
		}
		res0 := cells[0].Result
		fmt.Fprintf(&b, "### %s (n = %d, d = %d", dsName, res0.N, res0.Dim)
		if d.B > 0 {
			fmt.Fprintf(&b, ", B = %d", d.B)
		}
		b.WriteString(")\n\n")
		if d.Note != "" {
			b.WriteString(d.Note + ".\n\n")
		}
		unit := "mistake %"
		if res0.Metric == eval.MSE {
			unit = "MSE"
		}
		mse := res0.Metric == eval.MSE
		dfmt := "%+.2f" // differences: points, or 5 decimals for MSE
		if mse {
			dfmt = "%+.5f"
		}
		// Header.
		b.WriteString("| algorithm | paper |")
		sep := "|---|---|"
		for _, c := range cells {
			fmt.Fprintf(&b, " reference (%s) | okstream (%s) | chosen (%s) |", c.Variant, c.Variant, c.Variant)
			sep += "---|---|---|"
			if e.SizeColumn != "" {
				fmt.Fprintf(&b, " %s (%s) |", e.SizeColumn, c.Variant)
				sep += "---|"
			}
		}
		fmt.Fprintf(&b, " µs/event (%s) | Δ vs paper (%s) | within %s? |\n", cells[0].Variant, cells[0].Variant, tolWord)
		sep += "---|---|---|"
		b.WriteString(sep + "\n")
		for _, a := range e.Algos {
			// The paper's number is marked against the first variant's
			// majority rate (the preprocessing does not change labels).
			fmt.Fprintf(&b, "| %s | %s |", a.Label, markValue(a.Paper[dsName].format(mse), a.Paper[dsName], cells[0].Majority))
			for _, c := range cells {
				m := c.model(a.Label)
				ref := a.Reference[dsName+"/"+c.Variant]
				size := ""
				if e.SizeColumn != "" {
					size = " – |"
					if m != nil {
						size = fmt.Sprintf(" %.1f |", m.UsedMean)
					}
				}
				if m == nil {
					ours := "–"
					if slices.Contains(c.Skipped, a.Label) {
						ours = "not run"
					}
					fmt.Fprintf(&b, " %s | %s | – |%s", markValue(ref.format(mse), ref, c.Majority), ours, size)
					continue
				}
				fmt.Fprintf(&b, " %s | %s | %s |%s", markValue(ref.format(mse), ref, c.Majority),
					markMajority(c.Result.FormatMetric(*m), m.Mean, c.Majority), chosenLabel(m), size)
			}
			m0 := cells[0].model(a.Label)
			if m0 == nil {
				b.WriteString(" – | – | – |\n")
				continue
			}
			v := e.Judge(a, dsName, cells[0].Variant, m0.Mean)
			if !v.OK && a.Reference[dsName+"/"+cells[0].Variant] == nil {
				// No reference run on this variant: the reference code was
				// only run on another preprocessing; compare there.
				for _, c := range cells[1:] {
					ref := a.Reference[dsName+"/"+c.Variant]
					if m := c.model(a.Label); ref != nil && m != nil && e.withinFor(a, m.Mean, ref.Mean) {
						v = Verdict{OK: true, Target: "reference/" + c.Variant, Delta: m.Mean - ref.Mean}
						break
					}
				}
			}
			delta := "–"
			if p := a.Paper[dsName]; p != nil {
				delta = fmt.Sprintf(dfmt, m0.Mean-p.Mean)
			}
			verdict := "–"
			switch {
			case v.OK && v.Target == "paper":
				verdict = "yes (paper)"
			case v.OK && v.Target == "reference":
				verdict = fmt.Sprintf("reference ("+dfmt+")", v.Delta)
			case v.OK:
				verdict = fmt.Sprintf("no reference run unscaled; %s run matches the reference ("+dfmt+")", strings.TrimPrefix(v.Target, "reference/"), v.Delta)
			case a.Paper[dsName] != nil:
				verdict = "**no**"
			}
			if a.Tolerance > 0 && a.Tolerance != e.Tolerance && verdict != "–" {
				verdict += fmt.Sprintf(" [band ±%g]", a.Tolerance)
			}
			if a.Paper[dsName] != nil || a.Reference[dsName+"/"+cells[0].Variant] != nil {
				verdicts = append(verdicts, verdictRow{a.Label, dsName, v, m0.Mean})
			}
			fmt.Fprintf(&b, " %.2f | %s | %s |\n", m0.NsPerEvent/1e3, delta, verdict)
		}
		b.WriteString("\n")
		_ = unit
		same := true
		for _, c := range cells[1:] {
			same = same && c.Majority == cells[0].Majority
		}
		for i, c := range cells {
			if same && i > 0 {
				break
			}
			if note := majorityNote(c.Majority); note != "" {
				if !same {
					note = "(" + c.Variant + ") " + note
				}
				b.WriteString(note + "\n\n")
			}
		}
		var notRun []string
		for _, c := range cells {
			for _, l := range c.Skipped {
				if !slices.Contains(notRun, l) {
					notRun = append(notRun, l)
				}
			}
		}
		if len(notRun) > 0 {
			fmt.Fprintf(&b, "Not run (learner not registered in this build): %s.\n\n", strings.Join(notRun, ", "))
		}
		var plots []string
		for _, c := range cells {
			if c.Plot != "" {
				plots = append(plots, fmt.Sprintf("![%s %s learning curves](%s)", dsName, c.Variant, c.Plot))
			}
		}
		if len(plots) > 0 {
			b.WriteString(strings.Join(plots, "\n") + "\n\n")
		}
		b.WriteString("<details><summary>equivalent okstream eval commands</summary>\n\n```sh\n")
		for _, c := range cells {
			b.WriteString(c.Command + "\n")
		}
		b.WriteString("```\n</details>\n\n")
	}
	// Summary.
	if len(verdicts) > 0 {
		fmt.Fprintf(&b, "### Summary against the acceptance band (±%s, %s variant)\n\n", tolWord, r.Cells[0].Variant)
		byAlgo := map[string][]verdictRow{}
		var algos []string
		for _, v := range verdicts {
			if _, ok := byAlgo[v.algo]; !ok {
				algos = append(algos, v.algo)
			}
			byAlgo[v.algo] = append(byAlgo[v.algo], v)
		}
		b.WriteString("| algorithm | within paper | within reference only | reference matched on another preprocessing | outside all |\n|---|---|---|---|---|\n")
		for _, a := range algos {
			var p, ref, other, no []string
			for _, v := range byAlgo[a] {
				switch {
				case v.v.OK && v.v.Target == "paper":
					p = append(p, v.ds)
				case v.v.OK && v.v.Target == "reference":
					ref = append(ref, v.ds)
				case v.v.OK:
					other = append(other, v.ds)
				default:
					no = append(no, v.ds)
				}
			}
			sort.Strings(no)
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", a, list(p), list(ref), list(other), list(no))
		}
		b.WriteString("\n")
	}
	if e.Discussion != "" {
		b.WriteString(strings.TrimSpace(e.Discussion) + "\n")
	}
	return b.String()
}

// markValue is markMajority for a published Value (nil: unchanged).
func markValue(s string, v *Value, maj float64) string {
	if v == nil {
		return s
	}
	return markMajority(s, v.Mean, maj)
}

func list(s []string) string {
	if len(s) == 0 {
		return "–"
	}
	return strings.Join(s, ", ")
}

func chosenLabel(m *eval.ModelResult) string {
	if len(m.Won) == 0 {
		return "–"
	}
	return (eval.Candidate{Values: m.Won}).Label()
}
