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
	"time"

	"okstream/dataset"
	"okstream/eval"
	"okstream/internal/progress"
	"okstream/learner"
)

// Options controls a reproduction run.
type Options struct {
	Runs int // permutations (0: the experiment's)
	// SelectRuns overrides the experiment's SelectRuns: > 0 picks grid
	// winners on that many separate permutations, < 0 on the reported
	// runs themselves, 0 keeps the experiment's choice.
	SelectRuns int
	Seed       uint64   // base seed (0: 1)
	Workers    int      // parallel runs (0: all CPUs)
	Datasets   []string // restrict to these dataset titles (nil: all)
	Variants   []string // restrict to these variant names (nil: all)
	ImgDir     string   // where plots go ("" = no plots)
	ImgRel     string   // how the markdown refers to ImgDir
	Progress   io.Writer
	// Data overrides an experiment's data (only experiments with
	// AcceptsData, e.g. a KuaiRec 2.0 folder for forks-kuairec).
	Data string
	// Algos restricts a table experiment to these algorithm labels (nil:
	// all); with Report.Merge it adds or refreshes rows of an earlier run
	// without re-running the others.
	Algos []string

	// Load, if set, reads a user's file for experiments that accept one
	// (reproduce --data FILE with the format flags): classification says
	// whether labels must be mapped to ±1. Task is that file's task
	// ("classification" or "regression"; "" lets the experiment decide).
	Load func(classification bool) (*dataset.Dataset, error)
	Task string
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
	// Skipped lists the algorithms not run because their learner is not
	// registered in this build.
	Skipped []string `json:",omitempty"`
	// Majority is the mistake rate (%) of the majority-class predictor on
	// the cell's data (classification; for adversarial games the mean over
	// the runs' games); 0 for regression. Cells of the table within
	// MajorityBand of it are marked.
	Majority float64 `json:",omitempty"`
}

// Report is the outcome of an experiment.
type Report struct {
	Exp   *Experiment
	Runs  int
	Seed  uint64
	Cells []Cell
	// Body and Data are a Custom experiment's markdown and raw results.
	Body string
	Data any
	// Elapsed is the wall time of the run (recorded in the JSON so that a
	// section can be re-rendered from it; 0 when unknown).
	Elapsed time.Duration
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
	if o.Data != "" && !e.AcceptsData {
		return nil, fmt.Errorf("%s: takes no --data (its datasets are part of its definition)", e.ID)
	}
	if e.Custom != nil {
		o.Runs, o.Seed = runs, seed
		return e.Custom(e, o)
	}
	rep := &Report{Exp: e, Runs: runs, Seed: seed}
	err := e.eachCell(o, func(d Dataset, v Variant) error {
		cell, err := e.runCell(d, v, runs, seed, o)
		if err != nil {
			return fmt.Errorf("%s %s/%s: %w", e.ID, d.Title, v.Name, err)
		}
		rep.Cells = append(rep.Cells, cell)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// eachCell calls fn for every dataset variant the options select
// (Options.Datasets, Options.Variants), in the definition's order, and
// returns fn's first error.
func (e *Experiment) eachCell(o Options, fn func(d Dataset, v Variant) error) error {
	for _, d := range e.Datasets {
		if !keep(o.Datasets, d.Title) {
			continue
		}
		for _, v := range d.Variants {
			if !keep(o.Variants, v.Name) {
				continue
			}
			if err := fn(d, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// load reads a dataset variant as the experiment uses it: the file (or the
// variant's), the first Limit rows, ±1 labels for classification, the
// variant's scaling. It returns the data, its scaling and the data key.
func (e *Experiment) load(d Dataset, v Variant) (*dataset.Dataset, dataset.Scale, string, error) {
	key := d.Key
	if v.Data != "" {
		key = v.Data
	}
	var ds *dataset.Dataset
	if d.Load != nil {
		var err error
		if ds, err = d.Load(e.Task == "classification"); err != nil {
			return nil, dataset.Scale{}, "", err
		}
	} else {
		path, opts, err := dataset.Resolve(key)
		if err != nil {
			return nil, dataset.Scale{}, "", err
		}
		if ds, err = dataset.Load(path, opts); err != nil {
			return nil, dataset.Scale{}, "", err
		}
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
			return nil, dataset.Scale{}, "", err
		}
	}
	sc, err := dataset.ParseScale(v.Scale)
	if err != nil {
		return nil, dataset.Scale{}, "", err
	}
	ds.ApplyScale(sc)
	return ds, sc, key, nil
}

func (e *Experiment) runCell(d Dataset, v Variant, runs int, seed uint64, o Options) (Cell, error) {
	ds, sc, key, err := e.load(d, v)
	if err != nil {
		return Cell{}, err
	}
	var specs, labels, skipped []string
	for _, a := range e.Algos {
		if !keep(o.Algos, a.Label) {
			continue
		}
		s := a.Spec(d)
		if name, _, err := learner.ParseSpec(s); err == nil && learner.Describe(name) == nil {
			skipped = append(skipped, a.Label) // not in this build: the row shows "not run"
			continue
		}
		specs = append(specs, s)
		labels = append(labels, a.Label)
	}
	if len(specs) == 0 {
		return Cell{}, fmt.Errorf("none of the experiment's learners is registered in this build")
	}
	cfg := eval.Config{Runs: runs, Seed: seed, Workers: o.Workers, SelectRuns: e.selectRuns(o)}
	if d.Game != nil {
		base := ds
		game := func(run int) (*dataset.Dataset, error) {
			g := *d.Game
			g.Seed = GameSeed(seed, run)
			return dataset.Adversarial(base, g)
		}
		if ds, err = game(0); err != nil {
			return Cell{}, err
		}
		cfg.NoPermute, cfg.Sequence = true, game
	}
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
	cell := Cell{Dataset: d.Title, Variant: v.Name, Scale: sc.String(), Data: key, Result: res, Skipped: skipped}
	if cell.Majority, err = e.majority(d, ds, cfg.Sequence, runs); err != nil {
		return Cell{}, err
	}
	var cmd strings.Builder
	if d.Game != nil {
		switch g := *d.Game; {
		case g.Blocks == dataset.AdversarialGame1.Blocks && g.Repeats == dataset.AdversarialGame1.Repeats:
			key += "-1" // okstream eval plays the same game per run (dataset.AdversarialSeed)
		case g.Blocks == dataset.AdversarialGame2.Blocks && g.Repeats == dataset.AdversarialGame2.Repeats:
			key += "-2"
		default:
			fmt.Fprintf(&cmd, "# adversarial game b=%d,r=%d per run (seed dataset.AdversarialSeed(%d, run)) on the rows below;\n# okstream eval --data NAME-1|NAME-2 plays the paper's two games only\n", g.Blocks, g.Repeats, seed)
		}
	}
	fmt.Fprintf(&cmd, "okstream eval --data %s", key)
	if sc.String() != "none" {
		fmt.Fprintf(&cmd, " --scale %s", sc)
	}
	if d.Limit > 0 {
		fmt.Fprintf(&cmd, " --limit %d", d.Limit)
	}
	fmt.Fprintf(&cmd, " --runs %d --seed %d", runs, seed)
	if cfg.SelectRuns > 0 {
		fmt.Fprintf(&cmd, " --select-runs %d", cfg.SelectRuns)
	}
	for _, s := range specs {
		fmt.Fprintf(&cmd, " \\\n    --model '%s'", s)
	}
	cell.Command = cmd.String()
	if cell.Plot, err = o.writePlot(e.plotName(cell), res.PlotCurves); err != nil {
		return Cell{}, err
	}
	return cell, nil
}

// majority is the majority-class rate (%) of a classification cell: of ds,
// or, for a game (seq ≠ nil), the mean over the runs' games; 0 for
// regression.
func (e *Experiment) majority(d Dataset, ds *dataset.Dataset, seq func(int) (*dataset.Dataset, error), runs int) (float64, error) {
	if e.Task != "classification" {
		return 0, nil
	}
	if d.Game == nil || seq == nil {
		return MajorityRate(ds), nil
	}
	var sum float64
	for r := range runs {
		g, err := seq(r)
		if err != nil {
			return 0, err
		}
		sum += MajorityRate(g)
	}
	return sum / float64(runs), nil
}

// selectRuns resolves Options.SelectRuns against the experiment's.
func (e *Experiment) selectRuns(o Options) int {
	switch {
	case o.SelectRuns > 0:
		return o.SelectRuns
	case o.SelectRuns < 0:
		return 0
	}
	return e.SelectRuns
}

// GameSeed is the seed of run r's adversarial game in an experiment with
// base seed seed: a stream of its own, independent of the permutations'
// (dataset.Permutation) and the learners' seeds.
func GameSeed(seed uint64, run int) uint64 { return dataset.AdversarialSeed(seed, run) }

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

// withinFor is within with the algorithm's own band, if it has one.
func (e *Experiment) withinFor(a Algorithm, ours, target float64) bool {
	if a.Tolerance > 0 {
		c := *e
		c.Tolerance = a.Tolerance
		return c.within(ours, target)
	}
	return e.within(ours, target)
}

// Judge returns the verdict for an algorithm on a dataset variant.
func (e *Experiment) Judge(a Algorithm, ds, variant string, ours float64) Verdict {
	if p := a.Paper[ds]; p != nil && e.withinFor(a, ours, p.Mean) {
		return Verdict{OK: true, Target: "paper", Delta: ours - p.Mean}
	}
	if ref := a.Reference[ds+"/"+variant]; ref != nil && e.withinFor(a, ours, ref.Mean) {
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
	if r.Data != nil {
		if err := enc.Encode(r.Data); err != nil {
			return err
		}
		return os.WriteFile(path, buf.Bytes(), 0o644)
	}
	if err := enc.Encode(reportJSON{r.Exp.ID, r.Runs, r.Seed, r.Elapsed.Seconds(), r.Cells}); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// reportJSON is the file format of a table experiment's raw results.
type reportJSON struct {
	Experiment string  `json:"experiment"`
	Runs       int     `json:"runs"`
	Seed       uint64  `json:"seed"`
	Elapsed    float64 `json:"elapsed_seconds,omitempty"`
	Cells      []Cell  `json:"cells"`
}

// maxReportJSON bounds the JSON file ReadReport reads whole.
const maxReportJSON = 256 << 20

// ReadReport reads the raw results WriteJSON wrote for the table
// experiment e, so that its section can be re-rendered (Markdown) or rows
// merged into it (Merge) without re-running it. Numbers round-trip
// exactly (encoding/json writes the shortest representation that parses
// back to the same float64). It fails for a Custom experiment, a file of
// another experiment, or a file above 256 MiB. Cells written before
// Cell.Majority existed have it 0; FillMajority computes it.
func ReadReport(path string, e *Experiment) (*Report, error) {
	if e.Custom != nil {
		return nil, fmt.Errorf("%s: a custom experiment cannot be re-rendered from its JSON", e.ID)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxReportJSON {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d this reads", path, fi.Size(), maxReportJSON)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var j reportJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if j.Experiment != e.ID {
		return nil, fmt.Errorf("%s: results of %q, not %q", path, j.Experiment, e.ID)
	}
	for _, c := range j.Cells {
		if c.Result == nil {
			return nil, fmt.Errorf("%s: cell %s/%s has no result", path, c.Dataset, c.Variant)
		}
	}
	return &Report{Exp: e, Runs: j.Runs, Seed: j.Seed, Cells: j.Cells,
		Elapsed: time.Duration(j.Elapsed * float64(time.Second))}, nil
}

// FillMajority computes Cell.Majority where it is 0 (results written
// before it existed) by loading each cell's data as the experiment does.
func (r *Report) FillMajority() error {
	e := r.Exp
	if e.Task != "classification" {
		return nil
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Majority > 0 {
			continue
		}
		d, v, ok := e.find(c.Dataset, c.Variant)
		if !ok {
			return fmt.Errorf("%s: no dataset %s/%s in the experiment", e.ID, c.Dataset, c.Variant)
		}
		ds, _, _, err := e.load(d, v)
		if err != nil {
			return err
		}
		var seq func(int) (*dataset.Dataset, error)
		if d.Game != nil {
			seq = func(run int) (*dataset.Dataset, error) {
				g := *d.Game
				g.Seed = GameSeed(r.Seed, run)
				return dataset.Adversarial(ds, g)
			}
		}
		if c.Majority, err = e.majority(d, ds, seq, r.Runs); err != nil {
			return err
		}
	}
	return nil
}

// find returns the experiment's dataset and variant of a cell.
func (e *Experiment) find(title, variant string) (Dataset, Variant, bool) {
	for _, d := range e.Datasets {
		if d.Title != title {
			continue
		}
		for _, v := range d.Variants {
			if v.Name == variant {
				return d, v, true
			}
		}
	}
	return Dataset{}, Variant{}, false
}

// Merge adds the models of add (a run of the same experiment restricted
// with Options.Algos) to r: a model whose label r already has replaces it,
// a new one is appended, and its spec is appended to the cell's
// equivalent eval command. Both must have the same runs and seed, and
// every cell of add must exist in r. Elapsed times add up. Plots are not
// redrawn (Replot).
func (r *Report) Merge(add *Report) error {
	if add.Runs != r.Runs || add.Seed != r.Seed {
		return fmt.Errorf("%s: cannot merge %d runs (seed %d) into %d runs (seed %d)", r.Exp.ID, add.Runs, add.Seed, r.Runs, r.Seed)
	}
	for _, ac := range add.Cells {
		c := r.cell(ac.Dataset, ac.Variant)
		if c == nil {
			return fmt.Errorf("%s: no cell %s/%s to merge into", r.Exp.ID, ac.Dataset, ac.Variant)
		}
		if ac.Result.SelectRuns != c.Result.SelectRuns {
			return fmt.Errorf("%s %s/%s: grid winners picked on %d runs, the table's on %d", r.Exp.ID, ac.Dataset, ac.Variant, ac.Result.SelectRuns, c.Result.SelectRuns)
		}
		for _, m := range ac.Result.Models {
			if old := c.model(m.Label); old != nil {
				*old = m
				continue
			}
			c.Result.Models = append(c.Result.Models, m)
			c.Command += fmt.Sprintf(" \\\n    --model '%s'", m.Spec)
		}
		if c.Majority == 0 {
			c.Majority = ac.Majority
		}
	}
	r.Elapsed += add.Elapsed
	return nil
}

// Replot redraws every cell's learning-curve plot into o.ImgDir (nothing
// without one).
func (r *Report) Replot(o Options) error {
	for i := range r.Cells {
		c := &r.Cells[i]
		p, err := o.writePlot(r.Exp.plotName(*c), c.Result.PlotCurves)
		if err != nil {
			return err
		}
		if p != "" {
			c.Plot = p
		}
	}
	return nil
}

// plotName is the file name of a cell's learning-curve plot.
func (e *Experiment) plotName(c Cell) string {
	return fmt.Sprintf("%s-%s-%s.png", e.ID, slug(c.Dataset), slug(c.Variant))
}

// writePlot draws a plot into o.ImgDir/name with draw(path) and returns
// the path the markdown uses for it (o.ImgRel/name); with no o.ImgDir it
// draws nothing and returns "".
func (o Options) writePlot(name string, draw func(path string) error) (string, error) {
	if o.ImgDir == "" {
		return "", nil
	}
	if err := os.MkdirAll(o.ImgDir, 0o755); err != nil {
		return "", err
	}
	if err := draw(filepath.Join(o.ImgDir, name)); err != nil {
		return "", err
	}
	return filepath.ToSlash(filepath.Join(o.ImgRel, name)), nil
}

// maxSectionFile bounds the markdown file UpdateSection reads whole.
const maxSectionFile = 64 << 20

// UpdateSection replaces (or appends) the section of id in the markdown file
// at path. A file larger than 64 MiB is refused rather than read.
func UpdateSection(path, id, body string) error {
	begin := "<!-- BEGIN " + id + " -->"
	end := "<!-- END " + id + " -->"
	if st, err := os.Stat(path); err == nil && st.Size() > maxSectionFile {
		return fmt.Errorf("%s: %d bytes, more than the %d a results file may have", path, st.Size(), maxSectionFile)
	}
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

// SectionElapsed returns the running time a section of the results file
// at path states ("took 3m17s on this machine"), or 0 if the file, the
// section or the phrase is absent. ReadReport uses it for results written
// before the JSON recorded the time.
func SectionElapsed(path, id string) time.Duration {
	if st, err := os.Stat(path); err != nil || st.Size() > maxSectionFile {
		return 0
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.Index(s, "<!-- BEGIN "+id+" -->")
	if i < 0 {
		return 0
	}
	s = s[i:]
	if j := strings.Index(s, "<!-- END "+id+" -->"); j >= 0 {
		s = s[:j]
	}
	const pre, post = "; took ", " on this machine"
	i = strings.Index(s, pre)
	if i < 0 {
		return 0
	}
	s = s[i+len(pre):]
	j := strings.Index(s, post)
	if j < 0 {
		return 0
	}
	d, err := time.ParseDuration(s[:j])
	if err != nil {
		return 0
	}
	return d
}
