package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"okstream/dataset"
	"okstream/dataset/drift"
	"okstream/dataset/kuairec"
	"okstream/learner"
)

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, " ") }
func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// newFlagSet returns a FlagSet whose usage prints synopsis, the flags and
// the examples, and whose errors go to stderr.
func newFlagSet(name, synopsis, examples string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		out := fs.Output()
		usage, rest, _ := strings.Cut(strings.TrimSpace(synopsis), "\n")
		fmt.Fprintf(out, "Usage: okstream %s\n", usage)
		if rest = strings.TrimSpace(rest); rest != "" {
			fmt.Fprintf(out, "\n%s\n", rest)
		}
		fmt.Fprint(out, "\nFlags:\n")
		fs.PrintDefaults()
		if examples != "" {
			fmt.Fprintf(out, "\nExamples:\n%s\n", strings.TrimRight(examples, "\n"))
		}
	}
	return fs
}

// parseFlags parses args; it returns (exit code, done): done is true when
// the caller must return the code (help shown or bad flags).
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) (int, bool) {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" {
			fs.SetOutput(stdout)
			fs.Usage()
			return 0, true
		}
	}
	// A bad flag is one line (with the closest flag name), not the whole
	// usage: the flags are one `okstream help CMD` away.
	out, usage := fs.Output(), fs.Usage
	var msg strings.Builder
	fs.SetOutput(&msg)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	if err != nil {
		line := strings.TrimSpace(strings.SplitN(msg.String(), "\n", 2)[0])
		if line == "" {
			line = err.Error()
		}
		if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
			if c := closestFlag(fs, strings.TrimPrefix(name, "-")); c != "" {
				line += fmt.Sprintf(" (did you mean --%s?)", c)
			}
		}
		fmt.Fprintf(out, "okstream %s: %s\nRun 'okstream help %s' for the flags.\n", fs.Name(), line, fs.Name())
		return 2, true
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "okstream %s: unexpected argument %q (flags start with --)\n", fs.Name(), fs.Arg(0))
		return 2, true
	}
	return 0, false
}

// closestFlag returns the flag of fs nearest to name (edit distance at
// most 2), or "" if none is close.
func closestFlag(fs *flag.FlagSet, name string) string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return learner.Closest(name, names)
}

// dataFlags are the flags that say which dataset to read and how.
type dataFlags struct {
	data     string
	format   string
	label    string
	drop     string
	header   string
	dim      int
	maxDense int // MiB
	scale    string
	positive string
	limit    int
	// named reads a CSV file as named features even if every cell is a
	// number; maxValues caps a name's indicator coordinates
	// (dataset.Options.Named, MaxValuesPerName).
	named     bool
	maxValues int

	// game is set by load for an adversarial dataset name (german-1,
	// codrna-2, ...): the base dataset and the game, to be replayed with a
	// new seed per run (dataset.AdversarialSeed).
	game     *dataset.AdversarialGame
	gameBase *dataset.Dataset
	// seed seeds the adversarial game of run 0 (commands set it from their
	// --seed).
	seed uint64
	// ordered is set by load when the rows' order is the experiment (a
	// KuaiRec stream in replay order): callers must not permute them
	// (eval.Config.NoPermute).
	ordered bool
	// drift is set by load for a drift stream (--data drift:KIND,...):
	// run r of eval draws its own stream (drift.LoadRun).
	drift bool
	// fitted is the scaling load fitted on the file, and positiveUsed the
	// label load mapped to +1 (nil: the labels were ±1 already), for
	// loadTest to treat a test file exactly as the training file.
	fitted       *dataset.Fitted
	positiveUsed *float64
	// labelPair is set when load mapped two label values (not ±1) to
	// −1 (the smaller) and +1 (the larger).
	labelPair *[2]float64
}

func (d *dataFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.data, "data", "", "dataset: a file path, a short name of the shared datasets ("+strings.Join(dataset.SharedNames(), ", ")+"), a drift stream drift:KIND[,key=value...] (KIND sea, hyperplane, agrawal, friedman, or led: multi-class; docs/drift.md), or kuairec[,OPT...]:DIR for a KuaiRec 2.0 folder (real or synthetic) in replay order with the kuairec-v1 features; OPTs: matrix=small|big, threshold=F, profile=full|compact, same-day, dedup, limit=N")
	fs.StringVar(&d.format, "format", "auto", "file format: auto, libsvm, csv or jsonl (JSON lines: one event object per line, the runtime's schema)")
	fs.StringVar(&d.label, "label", "", "CSV label column: index (0 first, -1 last) or header name (default: the shared dataset's, else required for CSV)")
	fs.StringVar(&d.drop, "drop", "", "CSV columns to ignore, comma-separated indices or names")
	fs.StringVar(&d.header, "header", "auto", "CSV header row: auto, yes or no")
	fs.IntVar(&d.dim, "dim", 0, fmt.Sprintf("LIBSVM feature dimension (0: infer, up to %d; set it for a wider file, or a CSV file with more feature columns)", dataset.DefaultMaxDim))
	fs.IntVar(&d.maxDense, "max-dense-mib", dataset.DefaultMaxDenseBytes>>20, "refuse a dataset whose dense rows (rows × dimension × 8 bytes) take more than this many MiB")
	fs.StringVar(&d.scale, "scale", "none", "min-max scaling: none, minmax11 (features to [-1,1]), minmax01 ([0,1]), plus y01/y11 for regression targets, e.g. minmax11+y01")
	fs.StringVar(&d.positive, "positive", "", "classification: the label value (or CSV class name) mapped to +1, all others to -1 (default: {-1,+1} as is, else the larger of two values; for class names the second in the file, and true of true/false, as okstream run maps them)")
	fs.IntVar(&d.limit, "limit", 0, "use only the first N rows of the file (0: all)")
	fs.BoolVar(&d.named, "named", false, "read a CSV file as named features (header names; text cells categorical; empty, ?, NA, N/A, NaN, null, None missing) even if every cell is a number; a file with a text or missing cell is read so anyway")
	fs.IntVar(&d.maxValues, "max-values-per-name", 0, "named features: indicator coordinates per name before the rest share <other> (0: 64)")
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

// options resolves --data to a path and turns the format flags into
// reading options.
func (d *dataFlags) options() (string, dataset.Options, error) {
	if d.data == "" {
		return "", dataset.Options{}, fmt.Errorf("--data is required (a file path or one of: %s)", strings.Join(dataset.SharedNames(), ", "))
	}
	path, opts, err := dataset.Resolve(d.data)
	if err != nil {
		return "", opts, err
	}
	switch d.format {
	case "auto":
	case "libsvm":
		opts.Format = dataset.FormatLIBSVM
	case "csv":
		opts.Format = dataset.FormatCSV
	case "jsonl":
		opts.Format = dataset.FormatJSONL
	default:
		return "", opts, fmt.Errorf("--format %q: use auto, libsvm, csv or jsonl", d.format)
	}
	opts.Named, opts.MaxValuesPerName = d.named, d.maxValues
	if d.label != "" {
		opts.Label = d.label
	}
	if d.drop != "" {
		opts.Drop = strings.Split(d.drop, ",")
	}
	switch d.header {
	case "auto":
	case "yes":
		opts.Header = dataset.HeaderYes
	case "no":
		opts.Header = dataset.HeaderNo
	default:
		return "", opts, fmt.Errorf("--header %q: use auto, yes or no", d.header)
	}
	if d.dim > 0 {
		opts.Dim = d.dim
	}
	if d.maxDense <= 0 {
		return "", opts, fmt.Errorf("--max-dense-mib %d: must be positive", d.maxDense)
	}
	opts.MaxDenseBytes = int64(d.maxDense) << 20
	return path, opts, nil
}

// load reads and preprocesses the dataset for a task.
func (d *dataFlags) load(classification bool) (*dataset.Dataset, dataset.Scale, error) {
	if drift.IsSpec(d.data) && !isFile(d.data) {
		ds, g, err := drift.Load(d.data)
		if err != nil {
			return nil, dataset.Scale{}, fmt.Errorf("--data: %w", err)
		}
		switch {
		case classification && g.Regression():
			return nil, dataset.Scale{}, fmt.Errorf("--data %s: %w: a regression stream (use regression models, e.g. --model auto:loss=square)", d.data, dataset.ErrNotBinary)
		case driftClasses(g) > 2:
			return nil, dataset.Scale{}, fmt.Errorf("--data %s is a multi-class stream: use --task multiclass", d.data)
		case !classification && !g.Regression():
			return nil, dataset.Scale{}, fmt.Errorf("--data %s is a classification stream (labels -1/+1): use classification models", d.data)
		}
		d.ordered, d.drift = true, true // a stream in its order: eval runs it with NoPermute, each run its own draw
		return ds, dataset.Scale{}, nil
	}
	if base, g, ok := dataset.ParseAdversarialName(d.data); ok && !isFile(d.data) {
		if _, isShared := dataset.Shared[base]; isShared {
			if !classification {
				return nil, dataset.Scale{}, fmt.Errorf("--data %s is an adversarial classification game; use classification models", d.data)
			}
			bd := *d
			bd.data = base
			ds, sc, err := bd.load(true)
			if err != nil {
				return nil, dataset.Scale{}, err
			}
			g.Seed = dataset.AdversarialSeed(d.seed, 0)
			game, err := dataset.Adversarial(ds, g)
			if err != nil {
				return nil, dataset.Scale{}, err
			}
			d.game, d.gameBase, d.ordered = &g, ds, true
			return game, sc, nil
		}
	}
	if dir, kopts, ok, err := kuairec.ParseDataArg(d.data); ok {
		if err != nil {
			return nil, dataset.Scale{}, fmt.Errorf("--data: %w", err)
		}
		return d.loadKuaiRec(dir, kopts, classification)
	}
	path, opts, err := d.options()
	if err != nil {
		return nil, dataset.Scale{}, err
	}
	opts.ClassNames = true // labels may be class names (yes/no, true/false): dataset.Dataset.Classes
	sc, err := dataset.ParseScale(d.scale)
	if err != nil {
		return nil, dataset.Scale{}, fmt.Errorf("--scale: %w", err)
	}
	ds, err := dataset.Load(path, opts)
	if err != nil {
		return nil, dataset.Scale{}, err
	}
	if d.limit > 0 && d.limit < ds.Len() {
		idx := make([]int, d.limit)
		for i := range idx {
			idx[i] = i
		}
		ds = ds.Subset(idx)
	}
	if !classification && ds.Classes != nil {
		return nil, dataset.Scale{}, fmt.Errorf("dataset: %s: the labels are class names (%s), not regression targets: use classification models (two classes)", ds.Name, strings.Join(ds.Classes[:min(len(ds.Classes), 5)], ", "))
	}
	if classification {
		var pos *float64
		if d.positive != "" {
			v, err := strconv.ParseFloat(d.positive, 64)
			if k := slices.Index(ds.Classes, d.positive); k >= 0 {
				v, err = float64(k), nil // a class name: its number (dataset.Dataset.Classes)
			}
			if err != nil {
				if ds.Classes != nil {
					return nil, dataset.Scale{}, fmt.Errorf("--positive %q is not one of the classes %s", d.positive, strings.Join(ds.Classes, ", "))
				}
				return nil, dataset.Scale{}, fmt.Errorf("--positive %q is not a number", d.positive)
			}
			pos = &v
		}
		d.positiveUsed = pos
		if pos == nil {
			d.labelPair = mappedPair(ds.Y)
		}
		if err := ds.BinaryLabels(pos); err != nil {
			return nil, dataset.Scale{}, err
		}
		if sc.Targets {
			return nil, dataset.Scale{}, fmt.Errorf("--scale %s: target scaling (y01/y11) is for regression, but the models are classifiers", d.scale)
		}
	}
	d.fitted = ds.ApplyScale(sc)
	return ds, sc, nil
}

// mappedPair is the two labels dataset.BinaryLabels(nil) maps to −1 and
// +1 when it maps labels: exactly two values that are not −1 and +1 (nil
// otherwise: the labels are kept, or refused).
func mappedPair(ys []float64) *[2]float64 {
	var vals []float64
	for _, y := range ys {
		if !slices.Contains(vals, y) {
			if vals = append(vals, y); len(vals) > 2 {
				return nil
			}
		}
	}
	if len(vals) != 2 || (math.Abs(vals[0]) == 1 && math.Abs(vals[1]) == 1 && vals[0] != vals[1]) {
		return nil
	}
	return &[2]float64{min(vals[0], vals[1]), max(vals[0], vals[1])}
}

// loadTest reads a held-out file (okstream eval --test) the way load read
// the training file train: the same reader options, the training file's
// dimension, its label mapping (a label other than the training file's
// two values is refused) and its scaling as fitted on the training file
// (not refitted). Call it after load.
func (d *dataFlags) loadTest(path string, train *dataset.Dataset, classification bool) (*dataset.Dataset, error) {
	if d.game != nil || d.ordered || d.fitted == nil {
		return nil, errors.New("--test needs --data to be a file or a shared dataset name (not a game or a KuaiRec folder)")
	}
	t := *d
	t.data, t.dim = path, train.Dim
	if train.Named != nil { // the test file is read as the training file was, whatever its cells
		t.named, t.maxValues = true, train.Named.Config.MaxValuesPerName
	}
	p, opts, err := t.options()
	if err != nil {
		return nil, fmt.Errorf("--test: %w", err)
	}
	opts.ClassNames = train.Classes != nil // class names (yes/no) as the training file's
	ds, err := dataset.Load(p, opts)
	if err != nil {
		return nil, fmt.Errorf("--test: %w", err)
	}
	if ds.Dim != train.Dim {
		return nil, fmt.Errorf("--test %s: dimension %d, the training file's is %d", path, ds.Dim, train.Dim)
	}
	if classification && train.Classes != nil {
		// The test file numbers its class names in its own order: renumber
		// them as the training file did, by name.
		if ds.Classes == nil {
			return nil, fmt.Errorf("--test %s: the labels are numbers, the training file's are class names (%s)", path, strings.Join(train.Classes, ", "))
		}
		for i, y := range ds.Y {
			name := ds.Classes[int(y)]
			k := slices.Index(train.Classes, name)
			if k < 0 {
				return nil, fmt.Errorf("--test %s: row %d has class %q; the training file's classes are %s", path, i+1, name, strings.Join(train.Classes, ", "))
			}
			ds.Y[i] = float64(k)
		}
		ds.Classes = train.Classes
	}
	if classification {
		switch {
		case d.labelPair != nil: // the test labels must be the training file's two values
			for i, y := range ds.Y {
				if y != d.labelPair[0] && y != d.labelPair[1] {
					return nil, fmt.Errorf("--test %s: row %d has label %v; the training file's labels are %v and %v (mapped to -1 and +1)", path, i+1, y, d.labelPair[0], d.labelPair[1])
				}
				ds.Y[i] = -1
				if y == d.labelPair[1] {
					ds.Y[i] = 1
				}
			}
		case d.positiveUsed != nil: // one-vs-rest, as the training file
			for i, y := range ds.Y {
				ds.Y[i] = -1
				if y == *d.positiveUsed {
					ds.Y[i] = 1
				}
			}
		default:
			for i, y := range ds.Y {
				if y != 1 && y != -1 {
					return nil, fmt.Errorf("--test %s: row %d has label %v; the training labels are -1/+1", path, i+1, y)
				}
			}
		}
	}
	d.fitted.Apply(ds)
	return ds, nil
}

// loadKuaiRec builds the dataset of --data kuairec:DIR: the matrix's timed
// events in replay order (timestamp, user_id, video_id), labelled
// watch_ratio > threshold (±1), with the kuairec-v1 features (already in
// [0, 1]; --scale still applies). The rows are in time order, which is the
// experiment: a permuted evaluation loses it. A synthetic folder is named
// "kuairec-synthetic/..." in every table.
func (d *dataFlags) loadKuaiRec(dir string, opts kuairec.Options, classification bool) (*dataset.Dataset, dataset.Scale, error) {
	if !classification {
		return nil, dataset.Scale{}, errors.New("--data kuairec:... is a classification stream (labels ±1 from watch_ratio > threshold); use classification models")
	}
	sc, err := dataset.ParseScale(d.scale)
	if err != nil {
		return nil, dataset.Scale{}, fmt.Errorf("--scale: %w", err)
	}
	if sc.Targets {
		return nil, dataset.Scale{}, fmt.Errorf("--scale %s: target scaling (y01/y11) is for regression", d.scale)
	}
	s, err := d.openKuaiRec(dir, opts)
	if err != nil {
		return nil, dataset.Scale{}, err
	}
	ds, err := s.Dataset()
	if err != nil {
		return nil, dataset.Scale{}, err
	}
	ds.ApplyScale(sc)
	d.ordered = true
	return ds, sc, nil
}

// openKuaiRec opens the KuaiRec folder of --data kuairec[,OPT...]:DIR for
// eval and demo alike: it refuses the file-format flags, which do
// not apply to it, and lets --limit N lower the folder's limit=N option.
func (d *dataFlags) openKuaiRec(dir string, opts kuairec.Options) (*kuairec.Stream, error) {
	switch {
	case d.positive != "":
		return nil, errors.New("--positive does not apply to --data kuairec:... (the label is watch_ratio > threshold; set threshold=F in the --data options)")
	case d.label != "" || d.drop != "" || d.dim != 0 || (d.format != "" && d.format != "auto") || (d.header != "" && d.header != "auto"):
		return nil, errors.New("--label, --drop, --dim, --format and --header do not apply to --data kuairec:DIR")
	case d.limit < 0:
		return nil, fmt.Errorf("--limit %d: give a number of interactions > 0, or 0 for all", d.limit)
	}
	if d.limit > 0 && (opts.Limit == 0 || d.limit < opts.Limit) {
		opts.Limit = d.limit
	}
	return kuairec.Open(dir, opts)
}
