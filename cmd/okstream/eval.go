package main

import (
	"errors"
	"fmt"
	"io"

	"okstream/dataset"
	"okstream/dataset/drift"
	"okstream/dataset/kuairec"
	"okstream/eval"
	"okstream/internal/progress"
	"okstream/label"
	"okstream/learner"
)

func init() {
	register(command{name: "eval", summary: "evaluate learners offline on a dataset (progressive validation, permutations, grids, plots)", run: runEval})
}

const evalSynopsis = `eval --data DATASET [--model SPEC ...] [--task binary|multiclass|regression|auto] [flags]

Runs every model over N seeded permutations of the dataset, predicting each
example before learning from it (progressive validation), and reports the
mistake rate (classification, %) or MSE (regression) as mean ± std over the
permutations, beside the log loss, Brier score, calibration error (ECE) and
AUC (classification) or MAE and R² (regression), the time per event, and
the model size; the trivial baseline (running class prior or running mean)
on the same permutations is reported under the models. With --test FILE the
models trained on the stream (--passes times over it) are frozen and scored
on FILE (no learning on it), at the end and every --test-every events. A spec value may be a
grid (sigma=2^-5..2^7:2^0.5, eta=0.1|0.2); the best grid point is reported,
chosen on the same permutations as the papers did, or on --select-runs
separate ones. Same flags and seed ⇒ same metrics. Without --model the
model is auto (okstream run's default). Learner specs: okstream help
learners.

Files with named features: a CSV file whose feature cells include text
(categorical values) or missing cells (empty, ?, NA, N/A, NaN, null,
None) is read with the header's names, and JSON lines (.jsonl, .ndjson)
hold runtime events ("v": 3 with "f", or "x"/"xi"+"xv", and "y"). Each
run encodes its presented order with a fresh feature encoder, as okstream
run encodes a stream (a numeric value as is, one 0/1 indicator per
categorical value, the running mean plus a missing indicator for a missing
number); the dimension is what the file needs (--dim overrides it). No row
is refused for a string or a missing cell (the rules: docs of package
dataset, "Named features").

Task (--task auto, the default, infers it from the file): labels that are
class names (a CSV column of strings) with more than 2 classes are
multi-class, 2 class names binary; numbers are binary if they are -1/+1 or
two values (0/1), regression otherwise (or binary one-vs-rest with
--positive). Integer labels are classes only with --task multiclass, or
for the shared files the catalog declares multi-class (letter, mnist).
Multi-class models are the multi-class forms of the learners (okstream help
learners; the same spec, one head per class); classes are numbered in order
of first appearance in each run's presented sequence, as okstream run does.
A multi-class run reports the mistake rate, log loss (probabilities
clipped at 1e-15: a class seen for the first time has probability 0),
Brier score (sum over classes), ECE of the top-class probability, accuracy
per class and the confusion matrix (printed up to 30 classes; JSON up to
256), beside two baselines on the same runs: the class prior (predicts the
most frequent class so far, probabilities (n_k+1)/(n+K) over the K classes
seen) and an online multinomial logistic regression (linear). A test
class never seen in training counts as a mistake with probability 0.`

const evalExamples = `  # FORKS paper Table 1 settings on german (unscaled file, B = 50, σ from the paper's grid):
  okstream eval --data german --runs 20 \
    --model 'fogd:budget=50,sigma=2^-5..2^7:2^0.5' \
    --model 'nogd:budget=50,k=5,sigma=2^-5..2^7:2^0.5' --plot german.png

  # Test error on a held-out file (a9a → a9a.t), with the online linear model beside:
  okstream eval --data ../shared/datasets/a9a/a9a --test ../shared/datasets/a9a/a9a.t --runs 3 \
    --model auto:base=fogd --model linear --test-every 4000 --test-plot a9a-test.png

  # A regression file with [0,1] targets and [-1,1] features:
  okstream eval --data elevators --scale minmax11+y01 --runs 10 --model 'nogd:loss=square,budget=400,sigma=8'

  # Multi-class (26 letters; the linear and class-prior baselines are added):
  okstream eval --data letter --runs 3 --scale minmax11 --model auto

  # A CSV file with categorical columns and missing cells (UCI Adult as published):
  okstream eval --data adult.csv --label class --runs 3 --model auto --model linear

  # Integer labels as classes in a file the catalog does not know:
  okstream eval --data digits.csv --label 0 --task multiclass --runs 3`

// evalTask is the task of the models: that of every model whose learner
// fixes it (they must agree), or label.Undecided when every model follows
// the labels (label.Flexible: auto without loss=), which eval then decides
// on the whole dataset: binary when its labels are (-1/+1, or two values, or
// --positive given: dataset.BinaryLabels), regression otherwise.
func evalTask(models []string) (label.Task, error) {
	task := label.Undecided
	for _, m := range models {
		if label.Flexible(m) {
			continue
		}
		cands, err := eval.Expand(m)
		if err != nil {
			return 0, err
		}
		probe, err := learner.New(cands[0].Spec, 1)
		if err != nil {
			if _, merr := learner.NewMulti(cands[0].Spec, 1); merr == nil {
				continue // a multi-class-only spec (e.g. fogd:raw=true): the labels decide, and a binary run refuses it
			}
			return 0, err
		}
		t := label.OfLearner(probe.Info().Task)
		if task != label.Undecided && t != task {
			return 0, fmt.Errorf("--model %s is %s but an earlier model is %s: evaluate binary and regression models separately", m, t, task)
		}
		task = t
	}
	return task, nil
}

// checkMultiSpecs checks that every model (each grid point) has a
// multi-class form (native or one-vs-rest).
func checkMultiSpecs(models []string) error {
	for _, m := range models {
		cands, err := eval.Expand(m)
		if err != nil {
			return err
		}
		for _, c := range cands {
			if _, err := learner.NewMulti(c.Spec, 1); err != nil {
				return fmt.Errorf("--model %s: %w", m, err)
			}
		}
	}
	return nil
}

// The task of okstream eval (--task auto infers it; evalSynopsis says the
// same to users):
//
//   - labels that are class names (a CSV column of strings, loaded with
//     dataset.Options.ClassNames): more than 2 classes ⇒ multi-class, 2 ⇒
//     binary (as before: the first name in the file −1, true of
//     true/false +1), or binary one-vs-rest with --positive;
//   - numbers: binary if they are −1/+1 or two values (0/1), otherwise
//     regression — integers are classes only with --task multiclass,
//     except in a shared file the catalog declares multi-class
//     (dataset.DeclaredTask: letter, mnist);
//   - a model whose learner fixes the task (loss=square: regression)
//     wins over the labels, and --task binary|regression over both (they
//     must agree).
//
// evalMulti decides whether eval runs multi-class: always for --task
// multiclass; for --task auto when no model is a regression model,
// --positive is not given, and the catalog declares the file multi-class.
// A CSV of more than two class names is found when the binary load
// refuses it (runEval).
func evalMulti(taskFlag string, task label.Task, df *dataFlags) bool {
	switch {
	case taskFlag == "multiclass":
		return true
	case taskFlag != "auto" || task == label.Regression || df.positive != "":
		return false
	}
	if drift.IsSpec(df.data) && !isFile(df.data) {
		g, _, err := drift.Parse(df.data)
		return err == nil && driftClasses(g) > 2
	}
	path, _, err := dataset.Resolve(df.data)
	return err == nil && dataset.DeclaredTask(path) == dataset.TaskMultiClass
}

// driftClasses is the number of classes of a multi-class drift stream
// (led), 2 for a binary one and 0 for regression.
func driftClasses(g drift.Generator) int {
	if g.Regression() {
		return 0
	}
	if c, ok := g.(interface{ Classes() int }); ok {
		return c.Classes()
	}
	return 2
}

// loadMulti reads the dataset for a multi-class evaluation: the labels
// as they are, class names kept (dataset.Dataset.Classes), features scaled
// as --scale says.
func (d *dataFlags) loadMulti() (*dataset.Dataset, error) {
	if d.positive != "" {
		return nil, errors.New("--positive makes the task binary (one class against the rest): drop it for multi-class, or use --task binary")
	}
	if _, _, ok := dataset.ParseAdversarialName(d.data); ok && !isFile(d.data) {
		return nil, fmt.Errorf("--data %s is an adversarial binary game, not a multi-class dataset", d.data)
	}
	if _, _, ok, _ := kuairec.ParseDataArg(d.data); ok {
		return nil, errors.New("--data kuairec:... is a binary stream, not a multi-class dataset")
	}
	if drift.IsSpec(d.data) && !isFile(d.data) {
		ds, g, err := drift.Load(d.data)
		if err != nil {
			return nil, fmt.Errorf("--data: %w", err)
		}
		if driftClasses(g) <= 2 {
			return nil, fmt.Errorf("--data %s is not a multi-class stream (drift:led is): use --task binary or regression", d.data)
		}
		d.ordered, d.drift = true, true // in its order, each run its own draw
		return ds, nil
	}
	path, opts, err := d.options()
	if err != nil {
		return nil, err
	}
	opts.ClassNames = true
	sc, err := dataset.ParseScale(d.scale)
	if err != nil {
		return nil, fmt.Errorf("--scale: %w", err)
	}
	if sc.Targets {
		return nil, fmt.Errorf("--scale %s: target scaling (y01/y11) is for regression, but the task is multi-class", d.scale)
	}
	ds, err := dataset.Load(path, opts)
	if err != nil {
		return nil, err
	}
	if d.limit > 0 && d.limit < ds.Len() {
		idx := make([]int, d.limit)
		for i := range idx {
			idx[i] = i
		}
		ds = ds.Subset(idx)
	}
	d.fitted = ds.ApplyScale(sc)
	return ds, nil
}

// loadTestMulti reads a held-out file for a multi-class evaluation as
// loadMulti read train: the same reader options, train's dimension, and
// the scaling fitted on train. Its classes are matched to train's by name
// in eval (a class train lacks is always a mistake).
func (d *dataFlags) loadTestMulti(path string, train *dataset.Dataset) (*dataset.Dataset, error) {
	t := *d
	t.data, t.dim = path, train.Dim
	if train.Named != nil { // the test file is read as the training file was, whatever its cells
		t.named, t.maxValues = true, train.Named.Config.MaxValuesPerName
	}
	p, opts, err := t.options()
	if err != nil {
		return nil, fmt.Errorf("--test: %w", err)
	}
	opts.ClassNames = true
	ds, err := dataset.Load(p, opts)
	if err != nil {
		return nil, fmt.Errorf("--test: %w", err)
	}
	if ds.Dim != train.Dim {
		return nil, fmt.Errorf("--test %s: dimension %d, the training file's is %d", path, ds.Dim, train.Dim)
	}
	d.fitted.Apply(ds)
	return ds, nil
}

func runEval(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("eval", evalSynopsis, evalExamples, stderr)
	var df dataFlags
	df.register(fs)
	var models listFlag
	fs.Var(&models, "model", "learner spec (repeatable); values may be grids (default: auto)")
	taskFlag := fs.String("task", "auto", "binary, multiclass, regression, or auto: inferred from the labels (class names: more than 2 ⇒ multiclass, 2 ⇒ binary; numbers: -1/+1 or two values ⇒ binary, else regression; integers are classes only with multiclass or a file the catalog declares multi-class: letter, mnist)")
	runs := fs.Int("runs", 20, "number of seeded permutations reported")
	seed := fs.Uint64("seed", 1, "base seed of permutations and learners")
	selectRuns := fs.Int("select-runs", 0, "pick grid winners on this many separate permutations (0: on the reported ones, as the papers did)")
	workers := fs.Int("workers", 0, "runs in parallel (0: all CPUs; use 1 for timing-grade per-event times)")
	jsonOut := fs.Bool("json", false, "write the result as JSON to stdout instead of a table (warnings, e.g. a model that diverged, go to stderr)")
	plotPath := fs.String("plot", "", "write learning curves to this file (.png, .svg or .pdf)")
	showGrid := fs.Bool("grid", false, "also print every grid point's score")
	curvePoints := fs.Int("curve-points", 100, "points per learning curve")
	quiet := fs.Bool("quiet", false, "no progress bar")
	passes := fs.Int("passes", 1, "passes over the dataset per run (pass p > 0 in a new seeded order); the progressive measures cover every pass")
	testPath := fs.String("test", "", "held-out file: after training, score the frozen models on it (same format options, dimension, label mapping and scaling as --data)")
	testEvery := fs.Int("test-every", 0, "with --test, also score the frozen models on the test file every N training events (the test curve; 0: only at the end)")
	testPlot := fs.String("test-plot", "", "with --test, write the test curves to this file (.png, .svg or .pdf)")
	savePath := fs.String("save", "", "write the first run's final models (each --model's grid winner) to this model file, as the pipeline would checkpoint them (okstream model inspect, score, import; docs/model-files.md)")
	noPermute := fs.Bool("no-permute", false, "present the rows in file order in every run instead of seeded permutations (default for data whose order is the experiment, e.g. --data kuairec:DIR)")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "okstream eval: %v\n", err)
		return 2
	}
	if len(models) == 0 {
		models = listFlag{"auto"}
	}
	switch *taskFlag {
	case "auto", "binary", "multiclass", "regression":
	default:
		return fail(fmt.Errorf("--task %q: use binary, multiclass, regression or auto", *taskFlag))
	}
	if *runs < 1 {
		return fail(fmt.Errorf("--runs must be at least 1"))
	}
	if *passes < 1 {
		return fail(fmt.Errorf("--passes must be at least 1"))
	}
	if *testPath == "" && (*testEvery != 0 || *testPlot != "") {
		return fail(fmt.Errorf("--test-every and --test-plot need --test"))
	}
	if *testEvery < 0 {
		return fail(fmt.Errorf("--test-every must be at least 0"))
	}
	var task label.Task
	var err error
	if *taskFlag == "multiclass" {
		err = checkMultiSpecs(models) // every model in its multi-class form: its binary task does not matter
	} else {
		task, err = evalTask(models)
	}
	if err != nil {
		return fail(err)
	}
	if forced, _ := label.ParseTask(*taskFlag); *taskFlag != "multiclass" && forced != label.Undecided {
		if task != label.Undecided && task != forced {
			return fail(fmt.Errorf("--task %s, but the models are %s", *taskFlag, task))
		}
		task = forced
	}
	if *taskFlag == "multiclass" && task == label.Regression {
		return fail(errors.New("--task multiclass, but the models are regression models"))
	}
	if *savePath != "" {
		if err := checkSave(&df); err != nil {
			return fail(err)
		}
	}
	df.seed = *seed
	multi := evalMulti(*taskFlag, task, &df)
	var ds *dataset.Dataset
	if multi {
		ds, err = df.loadMulti()
	} else {
		ds, _, err = df.load(task != label.Regression)
		if *taskFlag == "auto" && task != label.Regression && df.positive == "" && errors.Is(err, dataset.ErrNotBinary) {
			// More than two class names: multi-class (numbers are not).
			if mds, merr := df.loadMulti(); merr == nil && len(mds.Classes) > 2 {
				ds, err, multi = mds, nil, true
			}
		}
	}
	if task == label.Undecided && !multi && errors.Is(err, dataset.ErrNotBinary) {
		// Every model follows the labels (auto without loss=, as okstream
		// run's default): labels that are not binary are regression.
		task = label.Regression
		ds, _, err = df.load(false)
	}
	if err != nil {
		if errors.Is(err, dataset.ErrNotBinary) {
			err = fmt.Errorf("%w (or, for regression targets, use regression models, e.g. --model auto:loss=square; for integer classes, --task multiclass)", err)
		}
		return fail(err)
	}
	if !multi { // multi-class: a spec names the multi-class form of its learner, as it is
		for i := range models {
			models[i] = label.ResolveSpec(models[i], task)
		}
	}
	cfg := eval.Config{Runs: *runs, Seed: *seed, SelectRuns: *selectRuns, Workers: *workers, CurvePoints: *curvePoints, NoPermute: *noPermute || df.ordered,
		Passes: *passes, TestEvery: *testEvery, MultiClass: multi}
	if *testPath != "" {
		if multi {
			cfg.Test, err = df.loadTestMulti(*testPath, ds)
		} else {
			cfg.Test, err = df.loadTest(*testPath, ds, task != label.Regression)
		}
		if err != nil {
			return fail(err)
		}
	}
	if df.drift && !multi { // each run its own draw of the drift stream (run 0 the spec's seed); a multi-class one (led) is the spec's draw in every run: vary its seed= instead
		spec := df.data
		cfg.Sequence = func(run int) (*dataset.Dataset, error) { return drift.LoadRun(spec, run) }
	}
	if df.game != nil { // a new adversarial game per run, as okstream reproduce forks-table2 plays them
		base, game := df.gameBase, *df.game
		cfg.Sequence = func(run int) (*dataset.Dataset, error) {
			g := game
			g.Seed = dataset.AdversarialSeed(*seed, run)
			return dataset.Adversarial(base, g)
		}
	}
	if !*quiet {
		total, err := eval.TotalEvents(models, ds.Len(), cfg)
		if err != nil {
			return fail(err)
		}
		cfg.Progress = progress.New(stderr, "eval "+ds.Name, total, "events")
	}
	saver := &evalSaver{path: *savePath}
	if *savePath != "" {
		cfg.Final = saver.hook
	}
	res, err := eval.Run(ds, models, nil, cfg)
	if err != nil {
		return fail(err)
	}
	if *savePath != "" {
		if err := saver.save(res, ds, &df, args); err != nil {
			return fail(err)
		}
	}
	if *jsonOut {
		err = res.WriteJSON(stdout)
		for _, w := range res.Warnings() { // stdout is the JSON; the warnings go to stderr
			fmt.Fprintf(stderr, "okstream eval: warning: %s\n", w)
		}
	} else {
		err = res.WriteTable(stdout)
		if err == nil && *showGrid {
			err = res.WriteGrid(stdout)
		}
	}
	if err != nil {
		return fail(err)
	}
	if *plotPath != "" {
		if err := res.PlotCurves(*plotPath); err != nil {
			return fail(err)
		}
		if !*jsonOut {
			fmt.Fprintf(stdout, "learning curves: %s\n", *plotPath)
		}
	}
	if *testPlot != "" {
		if err := res.PlotTestCurves(*testPlot); err != nil {
			return fail(err)
		}
		if !*jsonOut {
			fmt.Fprintf(stdout, "test curves: %s\n", *testPlot)
		}
	}
	return 0
}
