package dataset

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Shared names the datasets of ../shared/datasets by short name, so that
// commands can say `--data german` instead of a path. Paths are relative to
// DataRoot.
var Shared = map[string]string{
	"german":       "german.numer/german.numer",       // raw (unscaled) features, as the FORKS paper's Table 1
	"german-scale": "german.numer/german.numer_scale", // LIBSVM's [−1, 1] scaling
	"svmguide3":    "svmguide3/svmguide3.csv",
	"svmguide3.t":  "svmguide3/svmguide3.t.csv",
	"spambase":     "spambase/spambase.data",
	"cod-rna":      "cod-rna/cod-rna.train.csv",
	"w7a":          "w7a/w7a",
	"w7a.t":        "w7a/w7a.t",
	"parkinsons":   "parkinsons/parkinsons_updrs.data",
	"elevators":    "elevators/elevators.csv",
	"ailerons":     "ailerons/ailerons.csv",
	"bank32nh":     "bank32nh/bank32nh.csv",
	"cpusmall":     "cpusmall/cpu_small.csv",
	"casp":         "casp/CASP.csv",
	"letter":       "letter/letter-recognition.data", // 26 classes A..Z (class names): multi-class
	"mnist":        "mnist/mnist.t.libsvm",           // the 10,000 test images only; labels 0..9 are classes (DeclaredTask)
}

// TaskMultiClass is DeclaredTask's answer for a multi-class file.
const TaskMultiClass = "multiclass"

// declaredTasks are the tasks of shared files whose labels alone would be
// read otherwise, by base name: mnist's labels are the integers 0..9,
// which a command would take for regression targets unless told they are
// classes. letter's class names already say it; it is listed so that the
// catalog states the task of every multi-class file it names.
var declaredTasks = map[string]string{
	"mnist.t.libsvm":          TaskMultiClass,
	"letter-recognition.data": TaskMultiClass,
}

// DeclaredTask returns the task the catalog declares for a file (by its
// base name, as Preset): TaskMultiClass, or "" when the labels decide.
func DeclaredTask(path string) string { return declaredTasks[filepath.Base(path)] }

// SharedNames returns the short names of Shared, sorted.
func SharedNames() []string {
	out := make([]string, 0, len(Shared))
	for k := range Shared {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// DataRoot returns the directory of the shared datasets: $OKSTREAM_DATA_ROOT
// if set, else ../shared/datasets next to the repository root (found by
// walking up from the working directory to go.mod), else
// ../shared/datasets relative to the working directory.
func DataRoot() string {
	if r := os.Getenv("OKSTREAM_DATA_ROOT"); r != "" {
		return r
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return filepath.Join(dir, "..", "shared", "datasets")
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return filepath.Join("..", "shared", "datasets")
}

// Resolve turns a dataset argument into a path and the reading options:
// an existing file is used as is (with its Preset options if its base name
// is a known shared file); otherwise a short name of Shared is looked up
// under DataRoot. The error lists the short names when nothing matches.
func Resolve(arg string) (path string, opts Options, err error) {
	if st, e := os.Stat(arg); e == nil && !st.IsDir() {
		opts, _ = Preset(arg)
		return arg, opts, nil
	}
	rel, ok := Shared[arg]
	if !ok {
		return "", Options{}, fmt.Errorf("dataset %q: no such file, and not a known dataset name (known: %s)", arg, strings.Join(SharedNames(), ", "))
	}
	path = filepath.Join(DataRoot(), rel)
	if _, e := os.Stat(path); e != nil {
		return "", Options{}, fmt.Errorf("dataset %q: %s not found (set OKSTREAM_DATA_ROOT to the directory holding the shared datasets)", arg, path)
	}
	opts, _ = Preset(path)
	return path, opts, nil
}
