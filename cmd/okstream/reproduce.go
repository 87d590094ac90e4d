package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"okstream/dataset"
	"okstream/eval/paper"
)

// dataTask resolves reproduce --task for a user's file: "auto" reads the
// file once and says classification if its label takes at most two
// distinct values, else regression.
func dataTask(df *dataFlags, task string) (string, error) {
	switch task {
	case "classification", "regression":
		return task, nil
	case "auto":
	default:
		return "", fmt.Errorf("--task %q: use classification, regression or auto", task)
	}
	ds, _, err := df.load(false)
	if err != nil {
		return "", err
	}
	if len(ds.LabelCounts()) <= 2 {
		return "classification", nil
	}
	return "regression", nil
}

func init() {
	register(command{name: "reproduce", summary: "re-run a paper's experiment and update its section of docs/results.md", run: runReproduce})
}

func runReproduce(args []string, stdout, stderr io.Writer) int {
	synopsis := `reproduce EXPERIMENT [flags]

Runs a paper experiment (datasets, preprocessing, algorithms and settings as
the paper states them) through the same code path as okstream eval, and
writes a markdown section with the paper's numbers, the public reference
code's numbers on our files and ours side by side, learning-curve plots and
the raw JSON results. The section replaces the experiment's previous one in
--out. Experiments:
`
	for _, id := range paper.IDs() {
		synopsis += fmt.Sprintf("  %-16s %s\n", id, paper.Title(id))
	}
	examples := `  okstream reproduce forks-table1                         # all datasets, 20 permutations
  okstream reproduce forks-table1 --datasets german --runs 5 --print`
	fs := newFlagSet("reproduce", synopsis, examples, stderr)
	runs := fs.Int("runs", 0, "permutations (0: the paper's number)")
	seed := fs.Uint64("seed", 1, "base seed")
	selectRuns := fs.Int("select-runs", 0, "pick grid winners on this many separate permutations (0: the experiment's choice, -1: on the reported runs)")
	workers := fs.Int("workers", 0, "runs in parallel (0: all CPUs)")
	datasets := fs.String("datasets", "", "comma-separated dataset titles to run (default: all)")
	variants := fs.String("variants", "", "comma-separated variants to run, e.g. unscaled (default: all)")
	data := fs.String("data", "", "forks-kuairec: a KuaiRec 2.0 folder (kuairec[,OPT...]:DIR or DIR; default: a SYNTHETIC sample generated on the fly); auto-vs-grid: any dataset file or shared name, read with the format flags below")
	task := fs.String("task", "auto", "auto-vs-grid --data: classification, regression or auto (classification if the label takes two values)")
	df := dataFlags{scale: "none"}
	fs.StringVar(&df.format, "format", "auto", "auto-vs-grid --data: file format: auto, libsvm or csv")
	fs.StringVar(&df.label, "label", "", "auto-vs-grid --data: CSV label column: index (0 first, -1 last) or header name")
	fs.StringVar(&df.drop, "drop", "", "auto-vs-grid --data: CSV columns to ignore, comma-separated indices or names")
	fs.StringVar(&df.header, "header", "auto", "auto-vs-grid --data: CSV header row: auto, yes or no")
	fs.IntVar(&df.dim, "dim", 0, "auto-vs-grid --data: LIBSVM feature dimension (0: infer)")
	fs.IntVar(&df.maxDense, "max-dense-mib", dataset.DefaultMaxDenseBytes>>20, "auto-vs-grid --data: refuse a dataset whose dense rows take more than this many MiB")
	fs.StringVar(&df.positive, "positive", "", "auto-vs-grid --data: classification: the label value mapped to +1")
	fs.IntVar(&df.limit, "limit", 0, "auto-vs-grid --data: use only the first N rows (0: all)")
	out := fs.String("out", "docs/results.md", "markdown file whose section is replaced")
	img := fs.String("img", "docs/img", "directory for the plots")
	jsonDir := fs.String("json", "docs/data", "directory for the raw JSON results")
	printOnly := fs.Bool("print", false, "print the markdown to stdout and write nothing")
	quiet := fs.Bool("quiet", false, "no progress bar")
	rerender := fs.Bool("rerender", false, "re-render the section from the raw JSON results (--json) without running anything (table experiments); numbers stay byte-identical")
	writeStreams := fs.String("write-streams", "", "drift: write the experiment's streams (every run, in order) as CSV files and streams.json into this directory, for scripts/river_drift.py, and run nothing")
	algos := fs.String("algos", "", "comma-separated algorithm labels: run only these rows and merge them into the raw JSON results of an earlier run (same --runs, --seed), then re-render the whole section")
	var id string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		id, args = args[0], args[1:]
	}
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	if id == "" {
		fmt.Fprintf(stderr, "okstream reproduce: name an experiment (%s)\n", strings.Join(paper.IDs(), ", "))
		return 2
	}
	exp, err := paper.Get(id)
	if err != nil {
		fmt.Fprintf(stderr, "okstream reproduce: %v\n", err)
		return 2
	}
	if *selectRuns < -1 {
		fmt.Fprintf(stderr, "okstream reproduce: --select-runs %d: use a count ≥ 1, 0 for the experiment's choice or -1 for the reported runs\n", *selectRuns)
		return 2
	}
	if *writeStreams != "" {
		if id != "drift" {
			fmt.Fprintf(stderr, "okstream reproduce: --write-streams is for the drift experiment\n")
			return 2
		}
		var keys []string
		if *datasets != "" {
			keys = strings.Split(*datasets, ",")
		}
		man, err := paper.WriteDriftStreams(*writeStreams, *runs, *seed, *data, keys)
		if err != nil {
			fmt.Fprintf(stderr, "okstream reproduce: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %d streams to %s (streams.json lists the files)\n", len(man.Streams), *writeStreams)
		return 0
	}
	o := paper.Options{Runs: *runs, Seed: *seed, Workers: *workers, SelectRuns: *selectRuns}
	o.Data = *data
	if *data != "" && id == "auto-vs-grid" {
		df.data = *data
		if o.Task, err = dataTask(&df, *task); err != nil {
			fmt.Fprintf(stderr, "okstream reproduce: %v\n", err)
			return 2
		}
		o.Load = func(classification bool) (*dataset.Dataset, error) {
			ds, _, err := df.load(classification)
			return ds, err
		}
	}
	if *datasets != "" {
		o.Datasets = strings.Split(*datasets, ",")
	}
	if *variants != "" {
		o.Variants = strings.Split(*variants, ",")
	}
	if !*printOnly {
		o.ImgDir = *img
		rel, err := filepath.Rel(filepath.Dir(*out), *img)
		if err != nil {
			rel = *img
		}
		o.ImgRel = rel
	}
	if !*quiet {
		o.Progress = stderr
	}
	if *algos != "" {
		o.Algos = strings.Split(*algos, ",")
	}
	jsonPath := filepath.Join(*jsonDir, id+".json")
	var prev *paper.Report
	if *rerender && exp.Custom != nil {
		rep, err := rerenderCustom(exp, jsonPath, o)
		if err != nil {
			fmt.Fprintf(stderr, "okstream reproduce: %v\n", err)
			return 1
		}
		rep.Elapsed = paper.SectionElapsed(*out, id)
		prev = rep
	} else if *rerender || *algos != "" {
		if prev, err = paper.ReadReport(jsonPath, exp); err != nil {
			fmt.Fprintf(stderr, "okstream reproduce: %v\n", err)
			return 1
		}
		if prev.Elapsed == 0 {
			prev.Elapsed = paper.SectionElapsed(*out, id)
		}
		if *runs <= 0 {
			o.Runs = prev.Runs // the merged rows must match the table's runs
		}
	}
	start := time.Now()
	var rep *paper.Report
	if *rerender {
		rep = prev
	} else {
		if rep, err = exp.Run(o); err != nil {
			fmt.Fprintf(stderr, "okstream reproduce: %v\n", err)
			return 1
		}
		rep.Elapsed = time.Since(start)
		if prev != nil {
			if err := prev.Merge(rep); err != nil {
				fmt.Fprintf(stderr, "okstream reproduce: %v\n", err)
				return 1
			}
			if err := prev.Replot(o); err != nil {
				fmt.Fprintf(stderr, "okstream reproduce: %v\n", err)
				return 1
			}
			rep = prev
		}
	}
	if err := rep.FillMajority(); err != nil {
		fmt.Fprintf(stderr, "okstream reproduce: %v\n", err)
		return 1
	}
	cmdLine := "okstream reproduce " + id
	if *runs > 0 {
		cmdLine += fmt.Sprintf(" --runs %d", *runs)
	}
	if *selectRuns != 0 {
		cmdLine += fmt.Sprintf(" --select-runs %d", *selectRuns)
	}
	if *seed != 1 {
		cmdLine += fmt.Sprintf(" --seed %d", *seed)
	}
	if *datasets != "" {
		cmdLine += " --datasets " + *datasets
	}
	if *variants != "" {
		cmdLine += " --variants " + *variants
	}
	if *data != "" {
		cmdLine += " --data " + *data
		if id == "auto-vs-grid" {
			cmdLine += " --task " + o.Task
			fs.Visit(func(f *flag.Flag) { // the format flags given
				switch f.Name {
				case "format", "label", "drop", "header", "dim", "max-dense-mib", "positive", "limit":
					cmdLine += fmt.Sprintf(" --%s %s", f.Name, f.Value)
				}
			})
		}
	}
	if prev != nil && *runs <= 0 && rep.Runs != exp.Runs {
		cmdLine += fmt.Sprintf(" --runs %d", rep.Runs)
	}
	md := rep.Markdown(cmdLine, rep.Elapsed)
	if *printOnly {
		fmt.Fprint(stdout, md)
		return 0
	}
	if err := paper.UpdateSection(*out, id, md); err != nil {
		fmt.Fprintf(stderr, "okstream reproduce: %v\n", err)
		return 1
	}
	if err := rep.WriteJSON(jsonPath); err != nil {
		fmt.Fprintf(stderr, "okstream reproduce: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "updated section %q of %s (plots in %s, data in %s)\n", id, *out, *img, filepath.Join(*jsonDir, id+".json"))
	return 0
}

// rerenderCustom rebuilds a custom experiment's report from its raw JSON
// results (Experiment.Rerender), refusing one that cannot.
func rerenderCustom(exp *paper.Experiment, path string, o paper.Options) (*paper.Report, error) {
	if exp.Rerender == nil {
		return nil, fmt.Errorf("%s: cannot be re-rendered from its JSON; run it", exp.ID)
	}
	raw, err := readBounded(path, 256<<20)
	if err != nil {
		return nil, err
	}
	rep, err := exp.Rerender(exp, raw, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}

// readBounded reads a whole file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: more than the %d bytes this reads", path, limit)
	}
	return b, nil
}
