package paper

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"okstream/dataset"
	"okstream/eval"
	"okstream/internal/progress"
)

// Options controls a reproduction run.
type Options struct {
	Runs     int      // permutations (0: the experiment's)
	Seed     uint64   // base seed (0: 1)
	Workers  int      // parallel runs (0: all CPUs)
	Datasets []string // restrict to these dataset titles (nil: all)
	Variants []string // restrict to these variant names (nil: all)
	ImgDir   string   // where plots go ("" = no plots)
	ImgRel   string   // how the markdown refers to ImgDir
	Progress io.Writer
}

// Cell is the outcome of one (dataset, variant).
type Cell struct {
	Dataset string
	Variant string
	Scale   string
	Data    string
	Result  *eval.Result
	Plot    string // markdown-relative path of the curve plot
	Command string // the equivalent okstream eval command
}

// Report is the outcome of an experiment.
type Report struct {
	Exp   *Experiment
	Runs  int
	Seed  uint64
	Cells []Cell
}

func keep(filter []string, name string) bool {
	if len(filter) == 0 {
		return true
	}
	for _, f := range filter {
		if strings.EqualFold(f, name) {
			return true
		}
	}
	return false
}

// Run executes the experiment.
func (e *Experiment) Run(o Options) (*Report, error) {
	runs := o.Runs
	if runs <= 0 {
		runs = e.Runs
	}
	seed := o.Seed
	if seed == 0 {
		seed = 1
	}
	rep := &Report{Exp: e, Runs: runs, Seed: seed}
	for _, d := range e.Datasets {
		if !keep(o.Datasets, d.Title) {
			continue
		}
		for _, v := range d.Variants {
			if !keep(o.Variants, v.Name) {
				continue
			}
			cell, err := e.runCell(d, v, runs, seed, o)
			if err != nil {
				return nil, fmt.Errorf("%s %s/%s: %w", e.ID, d.Title, v.Name, err)
			}
			rep.Cells = append(rep.Cells, cell)
		}
	}
	return rep, nil
}

func (e *Experiment) runCell(d Dataset, v Variant, runs int, seed uint64, o Options) (Cell, error) {
	key := d.Key
	if v.Data != "" {
		key = v.Data
	}
	path, opts, err := dataset.Resolve(key)
	if err != nil {
		return Cell{}, err
	}
	ds, err := dataset.Load(path, opts)
	if err != nil {
		return Cell{}, err
	}
	if d.Limit > 0 && d.Limit < ds.Len() {
		idx := make([]int, d.Limit)
		for i := range idx {
			idx[i] = i
		}
		ds = ds.Subset(idx)
	}
	if e.Task == "classification" {
		if err := ds.BinaryLabels(nil); err != nil {
			return Cell{}, err
		}
	}
	sc, err := dataset.ParseScale(v.Scale)
	if err != nil {
		return Cell{}, err
	}
	ds.ApplyScale(sc)
	specs := make([]string, len(e.Algos))
	labels := make([]string, len(e.Algos))
	for i, a := range e.Algos {
		specs[i] = a.Spec(d)
		labels[i] = a.Label
	}
	cfg := eval.Config{Runs: runs, Seed: seed, Workers: o.Workers}
	if o.Progress != nil {
		total, err := eval.TotalEvents(specs, ds.Len(), cfg)
		if err != nil {
			return Cell{}, err
		}
		cfg.Progress = progress.New(o.Progress, fmt.Sprintf("%s %s/%s", e.ID, d.Title, v.Name), total, "events")
	}
	res, err := eval.Run(ds, specs, labels, cfg)
	if err != nil {
		return Cell{}, err
	}
	res.Dataset = d.Title + " (" + v.Name + ")"
	cell := Cell{Dataset: d.Title, Variant: v.Name, Scale: sc.String(), Data: key, Result: res}
	var cmd strings.Builder
	fmt.Fprintf(&cmd, "okstream eval --data %s", key)
	if sc.String() != "none" {
		fmt.Fprintf(&cmd, " --scale %s", sc)
	}
	if d.Limit > 0 {
		fmt.Fprintf(&cmd, " --limit %d", d.Limit)
	}
	fmt.Fprintf(&cmd, " --runs %d --seed %d", runs, seed)
	for _, s := range specs {
		fmt.Fprintf(&cmd, " \\\n    --model '%s'", s)
	}
	cell.Command = cmd.String()
	if o.ImgDir != "" {
		name := fmt.Sprintf("%s-%s-%s.png", e.ID, slug(d.Title), slug(v.Name))
		if err := os.MkdirAll(o.ImgDir, 0o755); err != nil {
			return Cell{}, err
		}
		if err := res.PlotCurves(filepath.Join(o.ImgDir, name)); err != nil {
			return Cell{}, err
		}
		cell.Plot = filepath.ToSlash(filepath.Join(o.ImgRel, name))
	}
	return cell, nil
}

func slug(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// model finds an algorithm's result in a cell.
func (c *Cell) model(label string) *eval.ModelResult {
	if c == nil || c.Result == nil {
		return nil
	}
	for i := range c.Result.Models {
		if c.Result.Models[i].Label == label {
			return &c.Result.Models[i]
		}
	}
	return nil
}

func (r *Report) cell(ds, variant string) *Cell {
	for i := range r.Cells {
		if r.Cells[i].Dataset == ds && r.Cells[i].Variant == variant {
			return &r.Cells[i]
		}
	}
	return nil
}

// Verdict compares a result with the paper's number and, failing that,
// with the reference code's number on the same variant.
type Verdict struct {
	OK     bool
	Target string  // "paper" or "reference"
	Delta  float64 // ours − target
}

func (e *Experiment) within(ours, target float64) bool {
	if e.Relative {
		return math.Abs(ours-target) <= e.Tolerance*math.Abs(target)
	}
	return math.Abs(ours-target) <= e.Tolerance
}

// Judge returns the verdict for an algorithm on a dataset variant.
func (e *Experiment) Judge(a Algorithm, ds, variant string, ours float64) Verdict {
	if p := a.Paper[ds]; p != nil && e.within(ours, p.Mean) {
		return Verdict{OK: true, Target: "paper", Delta: ours - p.Mean}
	}
	if ref := a.Reference[ds+"/"+variant]; ref != nil && e.within(ours, ref.Mean) {
		return Verdict{OK: true, Target: "reference", Delta: ours - ref.Mean}
	}
	if p := a.Paper[ds]; p != nil {
		return Verdict{Target: "paper", Delta: ours - p.Mean}
	}
	return Verdict{}
}

// WriteJSON writes all cells' raw results.
func (r *Report) WriteJSON(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", " ")
	if err := enc.Encode(struct {
		Experiment string `json:"experiment"`
		Runs       int    `json:"runs"`
		Seed       uint64 `json:"seed"`
		Cells      []Cell `json:"cells"`
	}{r.Exp.ID, r.Runs, r.Seed, r.Cells}); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// UpdateSection replaces (or appends) the section of id in the markdown file
// at path.
func UpdateSection(path, id, body string) error {
	begin := "<!-- BEGIN " + id + " -->"
	end := "<!-- END " + id + " -->"
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	s := string(old)
	block := begin + "\n" + strings.TrimRight(body, "\n") + "\n" + end
	if i := strings.Index(s, begin); i >= 0 {
		j := strings.Index(s[i:], end)
		if j < 0 {
			return fmt.Errorf("%s: %q without %q", path, begin, end)
		}
		s = s[:i] + block + s[i+j+len(end):]
	} else {
		if s != "" && !strings.HasSuffix(s, "\n\n") {
			s = strings.TrimRight(s, "\n") + "\n\n"
		}
		s += block + "\n"
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(s), 0o644)
}
