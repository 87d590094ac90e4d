package paper

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"okstream/dataset"
	"okstream/dataset/drift"
	"okstream/eval"
	"okstream/internal/progress"
)

// drift: learners under concept drift (issue 40).
//
// Every stream of dataset/drift named below is drawn as `okstream eval
// --data drift:...` draws it (drift.Load for the shape, drift.LoadRun for
// run r's own draw, eval.Config.NoPermute), and the default learners run
// on it with nothing set per stream: auto, the online linear model and
// FOGD (regression: the same with loss=square), next to eval's constant
// predictor (the prequential class prior, or the running mean). The
// learning curve has one point every DriftWindow events, so that
// drift.SegmentErrors gives the prequential error over tumbling windows of
// DriftWindow events; from it, per change point the generator reports
// (Generator.Changes, never hard-coded here), the error of the window just
// before the change, of the first window after it, the worst window until
// the next change, and the recovery time (driftRecovery).
//
// Recorded River numbers (scripts/river_drift.py, docs/data/drift_river.json)
// are read when present and shown beside ours, with the same windowed
// curves and the same recovery definition computed here from their
// curves; a River result is shown only for a stream whose spec, length
// and window match ours. Elec2 (Harries 1999) joins when its CSV is found
// (Options.Data, or DataRoot()/elec2/elec.csv; scripts/fetch_elec2.sh).

// DriftWindow is the window of the windowed prequential error (events).
const DriftWindow = 1000

// Recovery tolerances: classification, points of mistake rate; regression,
// a fraction of the pre-change windowed MSE.
const (
	DriftTolPoints = 2.0
	DriftTolRel    = 0.10
)

// DriftRiverPath is where the recorded River results are read from
// (relative to the working directory, the repository root for
// `okstream reproduce`).
var DriftRiverPath = filepath.Join("docs", "data", "drift_river.json")

// driftStream is one stream of the experiment.
type driftStream struct {
	Key     string // short name (file names, --datasets)
	Title   string
	Spec    string // drift spec without seed (the experiment's seed is appended)
	Task    string
	Gradual bool // the changes are gradual (centre or start of the transition)
}

// driftStreams are the experiment's synthetic streams, in table order.
// Lengths are multiples of DriftWindow and put the generators' default
// change points on window boundaries.
var driftStreams = []driftStream{
	{"sea", "SEA (abrupt, 4 concepts θ = 8, 9, 7, 9.5; 10 % noise)", "sea,n=48000", "classification", false},
	{"hyperplane", "Rotating hyperplane (gradual, d = 10, k = 2, t = 0.001; 5 % noise)", "hyperplane,n=48000", "classification", true},
	{"agrawal-abrupt", "Agrawal F1 → F4 (abrupt, middle)", "agrawal,n=48000,f=1,to=4", "classification", false},
	{"agrawal-gradual", "Agrawal F2 → F7 (gradual, width 2000, middle)", "agrawal,n=48000,f=2,to=7,w=2000", "classification", true},
	{"friedman-gra", "Friedman #1 gra (global recurring abrupt)", "friedman,n=40000,mode=gra", "regression", false},
	{"friedman-gsg", "Friedman #1 gsg (global slow gradual, width 2000)", "friedman,n=40000,mode=gsg", "regression", true},
	{"friedman-lea", "Friedman #1 lea (local expanding abrupt)", "friedman,n=40000,mode=lea", "regression", false},
}

// elec2Key is the Elec2 stream's key.
const elec2Key = "elec2"

// Elec2Path is where the experiment looks for Elec2's CSV without
// Options.Data: DataRoot()/elec2/elec.csv (scripts/fetch_elec2.sh).
func Elec2Path() string { return filepath.Join(dataset.DataRoot(), "elec2", "elec.csv") }

// driftLearners are the rows we run, as (label, spec) for a task.
func driftLearners(task string) [][2]string {
	if task == "regression" {
		return [][2]string{{"auto", "auto:loss=square"}, {"linear", "linear:loss=square"}, {"fogd", "fogd:loss=square"}}
	}
	return [][2]string{{"auto", "auto"}, {"linear", "linear"}, {"fogd", "fogd"}}
}

// driftChange is what happens around one change point.
type driftChange struct {
	At     int     `json:"at"`     // first event of the new concept (gradual: centre or start)
	Before float64 `json:"before"` // error of the last window ending at or before At
	First  float64 `json:"first"`  // error of the first window ending after At
	Peak   float64 `json:"peak"`   // worst window from At to the next change
	// Recovery is driftRecovery's time in events (−1: not recovered
	// before the next change or the end).
	Recovery int `json:"recovery"`
}

// driftModel is one learner's result on a stream.
type driftModel struct {
	Label   string        `json:"label"`
	Spec    string        `json:"spec,omitempty"`
	Overall float64       `json:"overall"` // mean over runs of the prequential error
	Std     float64       `json:"std"`
	NsEvent float64       `json:"ns_per_event,omitempty"`
	Window  []float64     `json:"windowed"` // error per window (ends DriftStreamResult.Ts), mean over runs
	Changes []driftChange `json:"changes,omitempty"`
	River   bool          `json:"river,omitempty"` // a recorded River result
	// Trivial marks a predictor that learns no function of the features
	// (the constant predictor; River's prior, mean and no-change): the
	// plot's y axis ignores it.
	Trivial bool `json:"trivial,omitempty"`
}

// driftStreamResult is one stream's results.
type driftStreamResult struct {
	Key     string       `json:"key"`
	Title   string       `json:"title"`
	Spec    string       `json:"spec"` // canonical drift spec with n (or the Elec2 file)
	Task    string       `json:"task"`
	Metric  string       `json:"metric"`
	N       int          `json:"n"`
	Dim     int          `json:"dim"`
	Runs    int          `json:"runs"`
	Gradual bool         `json:"gradual,omitempty"`
	Changes []int        `json:"changes,omitempty"`
	Ts      []int        `json:"ts"` // window ends
	Models  []driftModel `json:"models"`
	Command string       `json:"command"`
	SHA256  string       `json:"sha256,omitempty"` // a data file's (Elec2)
}

// driftResult is the experiment's raw results (docs/data/drift.json).
type driftResult struct {
	Experiment string              `json:"experiment"`
	Runs       int                 `json:"runs"`
	Seed       uint64              `json:"seed"`
	Window     int                 `json:"window"`
	TolPoints  float64             `json:"tol_points"`
	TolRel     float64             `json:"tol_rel"`
	Elapsed    float64             `json:"elapsed_seconds"`
	Streams    []driftStreamResult `json:"streams"`
	Elec2Note  string              `json:"elec2_note,omitempty"`
}

func init() {
	register(&Experiment{
		ID:    "drift",
		Title: "Learners under concept drift: windowed prequential error, error after each change, recovery time",
		Paper: "none (okstream's own experiment, issue 40; streams from Street & Kim 2001, Hulten, Spencer & Domingos 2001, Agrawal, Imielinski & Swami 1993, Ikonomovska, Gama & Džeroski 2011, Harries 1999; windowed prequential error after Gama, Sebastião & Rodrigues 2013)",
		Task:  "mixed",
		Runs:  3,
		Intro: `Each stream is drawn in order (no permutation) as ` + "`okstream eval --data drift:...`" + ` draws it;
run r > 0 is a fresh draw of the same generator (seed rng.Derive(seed, r)), run 0 the spec's own.
Learners with their defaults and nothing set per stream: ` + "`auto`" + `, ` + "`linear`" + ` (the online linear
model) and ` + "`fogd`" + ` (regression: each with loss=square), and the constant predictor (the
prequential class prior, or the running mean of the labels seen so far). Errors are prequential
(each event predicted before its label is learnt): mistake % or MSE, mean over runs. The windowed
error is the error over tumbling windows of 1000 events (drift.SegmentErrors on eval's curve
with one point per window; averaged over runs). Change points are the generators' own
(Generator.Changes; for a gradual change, the centre of Agrawal's sigmoid or the start of
Friedman gsg's window). Per change: the window just before it, the first window after it, and the
**recovery time**: the number of events from the change until the end of the first window, at or
after the worst window before the next change, whose error is within the tolerance of the window
just before the change (2 points of mistake rate; regression 10 % of the pre-change MSE) —
drift.Recovery on the windows up to the next change; 0 when no window left the band, "never"
when it did not come back before the next change or the end. Its resolution is one window.`,
		Custom:      runDrift,
		Rerender:    rerenderDrift,
		AcceptsData: true,
	})
}

// driftSpec is a stream's spec with the experiment's seed.
func driftSpec(s driftStream, seed uint64) string {
	return drift.Prefix + s.Spec + fmt.Sprintf(",seed=%d", seed)
}

func runDrift(e *Experiment, o Options) (*Report, error) {
	start := time.Now()
	res := &driftResult{Experiment: e.ID, Runs: o.Runs, Seed: o.Seed, Window: DriftWindow, TolPoints: DriftTolPoints, TolRel: DriftTolRel}
	for _, s := range driftStreams {
		if !keep(o.Datasets, s.Key) {
			continue
		}
		sr, err := runDriftStream(s, o)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", e.ID, s.Key, err)
		}
		res.Streams = append(res.Streams, *sr)
	}
	if keep(o.Datasets, elec2Key) {
		sr, note, err := runElec2(o)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", e.ID, elec2Key, err)
		}
		res.Elec2Note = note
		if sr != nil {
			res.Streams = append(res.Streams, *sr)
		}
	}
	res.Elapsed = time.Since(start).Seconds()
	return renderDrift(e, res, o)
}

// runDriftStream evaluates the learners on one synthetic stream.
func runDriftStream(s driftStream, o Options) (*driftStreamResult, error) {
	spec := driftSpec(s, o.Seed)
	ds, g, err := drift.Load(spec)
	if err != nil {
		return nil, err
	}
	if g.Regression() != (s.Task == "regression") {
		return nil, fmt.Errorf("stream %s is not %s", spec, s.Task)
	}
	cfg := eval.Config{Runs: o.Runs, Seed: o.Seed, Workers: o.Workers, CurvePoints: max(ds.Len()/DriftWindow, 1), NoPermute: true,
		Sequence: func(run int) (*dataset.Dataset, error) { return drift.LoadRun(spec, run) }}
	sr, err := runDriftEval(ds, s.Task, cfg, o, "drift "+s.Key)
	if err != nil {
		return nil, err
	}
	sr.Key, sr.Title, sr.Spec, sr.Gradual, sr.Changes = s.Key, s.Title, fmt.Sprintf("%s,n=%d", ds.Name, ds.Len()), s.Gradual, g.Changes()
	sr.Command = driftCommand("--data "+sr.Spec, cfg, s.Task)
	return sr, nil
}

// driftCommand is the equivalent okstream eval command line.
func driftCommand(data string, cfg eval.Config, task string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "okstream eval %s --runs %d --seed %d --curve-points %d", data, cfg.Runs, cfg.Seed, cfg.CurvePoints)
	for _, l := range driftLearners(task) {
		fmt.Fprintf(&b, " --model %s", l[1])
	}
	return b.String()
}

// runDriftEval runs eval and turns its cumulative curves into windowed
// errors (the constant predictor last).
func runDriftEval(ds *dataset.Dataset, task string, cfg eval.Config, o Options, name string) (*driftStreamResult, error) {
	var specs, labels []string
	for _, l := range driftLearners(task) {
		labels, specs = append(labels, l[0]), append(specs, l[1])
	}
	if o.Progress != nil {
		total, err := eval.TotalEvents(specs, ds.Len(), cfg)
		if err != nil {
			return nil, err
		}
		cfg.Progress = progress.New(o.Progress, name, total, "events")
	}
	r, err := eval.Run(ds, specs, labels, cfg)
	if err != nil {
		return nil, err
	}
	sr := &driftStreamResult{Task: task, Metric: r.Metric, N: r.N, Dim: r.Dim, Runs: r.Runs}
	cum := func(c []eval.Point) ([]int, []float64) {
		ts, m := make([]int, len(c)), make([]float64, len(c))
		for i, p := range c {
			ts[i], m[i] = p.T, p.Mean
		}
		return ts, m
	}
	for _, m := range r.Models {
		ts, c := cum(m.Curve)
		sr.Ts = ts
		w := drift.SegmentErrors(ts, c)
		if w == nil {
			return nil, fmt.Errorf("%s: curve of %s is not increasing", name, m.Label)
		}
		sr.Models = append(sr.Models, driftModel{Label: m.Label, Spec: m.Spec, Overall: m.Mean, Std: m.Std, NsEvent: m.NsPerEvent, Window: w})
	}
	if b := r.Baseline; b != nil {
		ts, c := cum(b.Curve)
		st := b.Measures[r.Metric]
		sr.Models = append(sr.Models, driftModel{Label: b.Label, Overall: st.Mean, Std: st.Std, Window: drift.SegmentErrors(ts, c), Trivial: true})
	}
	return sr, nil
}

// errNoElec2 marks an absent Elec2 file.
var errNoElec2 = errors.New("Elec2 not found")

// loadElec2 reads Elec2's CSV (scikit-multiflow's elec.csv: six
// normalised features, label column "target" 0/1) with labels ±1.
func loadElec2(path string) (*dataset.Dataset, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w at %s (run scripts/fetch_elec2.sh, or pass --data FILE)", errNoElec2, path)
	}
	ds, err := dataset.Load(path, dataset.Options{Format: dataset.FormatCSV, Header: dataset.HeaderYes, Label: "target"})
	if err != nil {
		return nil, err
	}
	if err := ds.BinaryLabels(nil); err != nil {
		return nil, err
	}
	return ds, nil
}

// runElec2 evaluates Elec2 in its time order when its file is present;
// otherwise it returns a note saying why it was skipped.
func runElec2(o Options) (*driftStreamResult, string, error) {
	path := o.Data
	if path == "" {
		path = Elec2Path()
	}
	ds, err := loadElec2(path)
	if errors.Is(err, errNoElec2) && o.Data == "" {
		return nil, "Elec2 skipped: " + err.Error() + ".", nil
	}
	if err != nil {
		return nil, "", err
	}
	cfg := eval.Config{Runs: o.Runs, Seed: o.Seed, Workers: o.Workers, CurvePoints: max(ds.Len()/DriftWindow, 1), NoPermute: true}
	sr, err := runDriftEval(ds, "classification", cfg, o, "drift elec2")
	if err != nil {
		return nil, "", err
	}
	sr.Key, sr.Title, sr.Spec = elec2Key, "Elec2 (Harries 1999; NSW electricity price up/down, time order)", filepath.Base(path)
	if sr.SHA256, err = fileSHA256(path); err != nil {
		return nil, "", err
	}
	shown := path // the command names the default place machine-independently
	if o.Data == "" {
		shown = "../shared/datasets/elec2/elec.csv"
		if os.Getenv("OKSTREAM_DATA_ROOT") != "" {
			shown = "$OKSTREAM_DATA_ROOT/elec2/elec.csv"
		}
	}
	sr.Command = driftCommand("--data "+shown+" --label target --no-permute", cfg, "classification")
	return sr, "", nil
}

// fileSHA256 is the hex SHA-256 of a file.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// driftRecovery fills m.Changes for the change points of a stream:
// drift.Recovery on the windows ending up to the next change (or the end),
// with the tolerance of the task; a change after which no window left the
// band (peak ≤ before + tol) recovers in 0 events.
func driftRecovery(ts []int, changes []int, task string, m *driftModel) {
	m.Changes = nil
	for i, c := range changes {
		end := len(ts)
		if i+1 < len(changes) {
			for end > 0 && ts[end-1] > changes[i+1] {
				end--
			}
		}
		before, _, _ := drift.Recovery(ts[:end], m.Window[:end], c, 0)
		tol := DriftTolPoints
		if task == "regression" {
			tol = DriftTolRel * before
		}
		before, peak, rec := drift.Recovery(ts[:end], m.Window[:end], c, tol)
		first := math.NaN()
		for k, t := range ts[:end] {
			if t > c {
				first = m.Window[k]
				break
			}
		}
		if !math.IsNaN(before) && peak <= before+tol {
			rec = 0
		}
		m.Changes = append(m.Changes, driftChange{At: c, Before: before, First: first, Peak: peak, Recovery: rec})
	}
}

// riverResult is scripts/river_drift.py's output (docs/data/drift_river.json).
type riverResult struct {
	River   string        `json:"river_version"`
	Python  string        `json:"python_version"`
	Date    string        `json:"date"`
	Script  string        `json:"script"`
	Note    string        `json:"note"`
	Streams []riverStream `json:"streams"`
}

// riverStream is one stream's River results.
type riverStream struct {
	Key    string       `json:"key"`
	Spec   string       `json:"spec"`
	N      int          `json:"n"`
	Runs   int          `json:"runs"`
	Ts     []int        `json:"ts"`
	Models []riverModel `json:"models"`
}

// riverModel is one River model's result on a stream.
type riverModel struct {
	Label   string    `json:"label"`
	Overall float64   `json:"overall"`
	Std     float64   `json:"std"`
	Window  []float64 `json:"windowed"`
	Seconds float64   `json:"seconds"`
	Events  int       `json:"events"` // events scored (< n if time-boxed)
}

// riverTrivial are scripts/river_drift.py's predictors that learn no
// function of the features.
var riverTrivial = map[string]bool{"Prior": true, "Mean": true, "NoChange": true}

// readRiver reads the recorded River results (nil, nil when absent).
func readRiver(path string) (*riverResult, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r riverResult
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// riverModels returns River's models for a stream whose spec, length and
// window ends match ours (nil otherwise), with their change statistics.
func riverModels(rv *riverResult, sr *driftStreamResult) []driftModel {
	if rv == nil {
		return nil
	}
	for _, s := range rv.Streams {
		if s.Key != sr.Key || s.Spec != sr.Spec || s.N != sr.N || !slices.Equal(s.Ts, sr.Ts) {
			continue
		}
		var out []driftModel
		for _, m := range s.Models {
			if len(m.Window) != len(sr.Ts) || (m.Events != 0 && m.Events != sr.N) {
				continue
			}
			dm := driftModel{Label: "River " + m.Label, Overall: m.Overall, Std: m.Std, Window: m.Window, River: true,
				Trivial: riverTrivial[m.Label]}
			if m.Events > 0 {
				dm.NsEvent = 1e9 * m.Seconds / float64(m.Events)
			}
			driftRecovery(sr.Ts, sr.Changes, sr.Task, &dm)
			out = append(out, dm)
		}
		return out
	}
	return nil
}

// renderDrift computes the change statistics, draws the plots and writes
// the section.
func renderDrift(e *Experiment, res *driftResult, o Options) (*Report, error) {
	rv, err := readRiver(DriftRiverPath)
	if err != nil {
		return nil, err
	}
	for i := range res.Streams {
		sr := &res.Streams[i]
		for j := range sr.Models {
			driftRecovery(sr.Ts, sr.Changes, sr.Task, &sr.Models[j])
		}
	}
	var b strings.Builder
	driftSummary(&b, res, rv)
	for i := range res.Streams {
		sr := &res.Streams[i]
		all := append(append([]driftModel(nil), sr.Models...), riverModels(rv, sr)...)
		plot, err := o.writePlot(fmt.Sprintf("%s-%s.svg", e.ID, sr.Key), func(path string) error { return driftPlot(sr, all, path) })
		if err != nil {
			return nil, err
		}
		driftStreamSection(&b, sr, all, plot)
	}
	if res.Elec2Note != "" {
		b.WriteString(res.Elec2Note + "\n\n")
	}
	rep := &Report{Exp: e, Runs: res.Runs, Seed: res.Seed, Body: b.String(), Data: res,
		Elapsed: time.Duration(res.Elapsed * float64(time.Second))}
	return rep, nil
}

func rerenderDrift(e *Experiment, raw []byte, o Options) (*Report, error) {
	var res driftResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	if res.Experiment != e.ID {
		return nil, fmt.Errorf("results of %q, not %q", res.Experiment, e.ID)
	}
	return renderDrift(e, &res, o)
}

// fmtErr prints an error: mistake % with 2 decimals, MSE with 3.
func fmtErr(v float64, task string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	if task == "regression" {
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func fmtRecovery(r int) string {
	if r < 0 {
		return "never"
	}
	return fmt.Sprintf("%d", r)
}

// driftSummary writes the overall table: one row per stream, one column
// per learner (ours, then River's where recorded).
func driftSummary(b *strings.Builder, res *driftResult, rv *riverResult) {
	for _, task := range []string{"classification", "regression"} {
		var rows []*driftStreamResult
		for i := range res.Streams {
			if res.Streams[i].Task == task {
				rows = append(rows, &res.Streams[i])
			}
		}
		if len(rows) == 0 {
			continue
		}
		var cols []string
		seen := map[string]bool{}
		models := map[string]map[string]driftModel{}
		for _, sr := range rows {
			models[sr.Key] = map[string]driftModel{}
			for _, m := range append(append([]driftModel(nil), sr.Models...), riverModels(rv, sr)...) {
				models[sr.Key][m.Label] = m
				if !seen[m.Label] {
					seen[m.Label] = true
					cols = append(cols, m.Label)
				}
			}
		}
		unit := "mistake %"
		if task == "regression" {
			unit = "MSE"
		}
		fmt.Fprintf(b, "### Overall prequential error, %s (%s, mean over runs)\n\n| stream |", task, unit)
		for _, c := range cols {
			fmt.Fprintf(b, " %s |", c)
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(cols)) + "\n")
		for _, sr := range rows {
			fmt.Fprintf(b, "| %s |", sr.Key)
			for _, c := range cols {
				if m, ok := models[sr.Key][c]; ok {
					fmt.Fprintf(b, " %s |", fmtErr(m.Overall, task))
				} else {
					b.WriteString(" – |")
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	driftRecoverySummary(b, res, rv)
	if rv != nil {
		fmt.Fprintf(b, "River columns: recorded numbers, River %s (Python %s), run by `%s` on %s on the streams `okstream reproduce drift --write-streams DIR` writes (the same events, in the same order); not run in CI. %s\n\n",
			rv.River, rv.Python, rv.Script, rv.Date, rv.Note)
	} else {
		fmt.Fprintf(b, "No recorded River results (%s absent): see scripts/river_drift.py.\n\n", DriftRiverPath)
	}
}

// driftRecoverySummary writes, for every abrupt change of every stream,
// each learner's recovery time and first window after the change.
func driftRecoverySummary(b *strings.Builder, res *driftResult, rv *riverResult) {
	var cols []string
	seen := map[string]bool{}
	type row struct {
		sr *driftStreamResult
		k  int
		ms map[string]driftModel
	}
	var rows []row
	for i := range res.Streams {
		sr := &res.Streams[i]
		if sr.Gradual || len(sr.Changes) == 0 {
			continue
		}
		ms := map[string]driftModel{}
		for _, m := range append(append([]driftModel(nil), sr.Models...), riverModels(rv, sr)...) {
			if m.Trivial {
				continue
			}
			ms[m.Label] = m
			if !seen[m.Label] {
				seen[m.Label] = true
				cols = append(cols, m.Label)
			}
		}
		for k := range sr.Changes {
			rows = append(rows, row{sr, k, ms})
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("### Recovery after each abrupt change (events until the windowed error is back within the tolerance; in parentheses the window before the change → the first window after it)\n\n| stream @ change |")
	for _, c := range cols {
		fmt.Fprintf(b, " %s |", c)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(cols)) + "\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s @ %d |", r.sr.Key, r.sr.Changes[r.k])
		for _, c := range cols {
			m, ok := r.ms[c]
			if !ok || r.k >= len(m.Changes) {
				b.WriteString(" – |")
				continue
			}
			ch := m.Changes[r.k]
			fmt.Fprintf(b, " %s (%s → %s) |", fmtRecovery(ch.Recovery), fmtErr(ch.Before, r.sr.Task), fmtErr(ch.First, r.sr.Task))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// driftStreamSection writes one stream's tables and plot.
func driftStreamSection(b *strings.Builder, sr *driftStreamResult, all []driftModel, plot string) {
	fmt.Fprintf(b, "### %s\n\n`%s`", sr.Title, sr.Spec)
	if sr.SHA256 != "" {
		fmt.Fprintf(b, " (sha256 %s; scripts/fetch_elec2.sh)", sr.SHA256)
	}
	fmt.Fprintf(b, ": n = %d, d = %d, %d run(s)", sr.N, sr.Dim, sr.Runs)
	if len(sr.Changes) > 0 {
		kind := "abrupt"
		if sr.Gradual {
			kind = "gradual"
		}
		fmt.Fprintf(b, "; %s changes at %v", kind, sr.Changes)
	} else {
		b.WriteString("; no discrete change point")
	}
	fmt.Fprintf(b, ". Equivalent: `%s`.\n\n", sr.Command)
	unit := "mistake %"
	if sr.Task == "regression" {
		unit = "MSE"
	}
	fmt.Fprintf(b, "| learner | overall %s |", unit)
	sep := "|---|---|"
	for _, c := range sr.Changes {
		fmt.Fprintf(b, " @%d before / first after / worst | @%d recovery (events) |", c, c)
		sep += "---|---|"
	}
	b.WriteString(" µs/event |\n" + sep + "---|\n")
	for _, m := range all {
		std := ""
		if m.Std > 0 {
			std = " ± " + fmtErr(m.Std, sr.Task)
		}
		fmt.Fprintf(b, "| %s | %s%s |", m.Label, fmtErr(m.Overall, sr.Task), std)
		for _, c := range m.Changes {
			fmt.Fprintf(b, " %s / %s / %s | %s |", fmtErr(c.Before, sr.Task), fmtErr(c.First, sr.Task), fmtErr(c.Peak, sr.Task), fmtRecovery(c.Recovery))
		}
		if m.NsEvent > 0 {
			fmt.Fprintf(b, " %.2f |\n", m.NsEvent/1000)
		} else {
			b.WriteString(" – |\n")
		}
	}
	b.WriteString("\n")
	if plot != "" {
		fmt.Fprintf(b, "![%s windowed error](%s)\n\n", sr.Key, plot)
	}
}
