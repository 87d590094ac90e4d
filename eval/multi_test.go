package eval

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"okstream/dataset"
	"okstream/learner"
	"okstream/learner/rng"
)

// recorder is a multi-class "learner" for the tests: it predicts the
// uniform distribution over the classes it knows and records the class
// indices LearnClass receives (runs of a test use Workers: 1).
type recorder struct {
	k    int
	seen *[]int
}

var (
	recordMu   sync.Mutex
	recordSeen []int
)

func init() {
	learner.RegisterMulti(learner.MultiRegistration{
		Name:    "evaltest-uniform",
		Summary: "test only: uniform over the known classes, records its class indices",
		New: func(p *learner.Params, dim int) (learner.Multi, error) {
			return &recorder{seen: &recordSeen}, p.Err()
		},
	})
}

func (r *recorder) Classes() int { return r.k }
func (r *recorder) PredictProba(x, p []float64) []float64 {
	p = p[:r.k]
	for i := range p {
		p[i] = 1 / float64(r.k)
	}
	return p
}
func (r *recorder) LearnClass(x []float64, c int, p []float64) []float64 {
	p = r.PredictProba(x, p)
	recordMu.Lock()
	*r.seen = append(*r.seen, c)
	recordMu.Unlock()
	if c == r.k {
		r.k++
	}
	return p
}
func (r *recorder) MarshalBinary() ([]byte, error) { return nil, nil }
func (r *recorder) UnmarshalBinary([]byte) error   { return nil }
func (r *recorder) Info() learner.Info {
	return learner.Info{Name: "evaltest-uniform", Spec: "evaltest-uniform", Task: learner.MultiClass}
}

func nearly(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

// The measures on a 4-event stream computed by hand.
func TestMultiMeasuresByHand(t *testing.T) {
	var m MultiMeasures
	events := []struct {
		p []float64
		y int
	}{
		{nil, 0},                      // no class known: mistake, p_y = 0, Brier 1, conf 0
		{[]float64{1}, 1},             // a new class: predicted 0, p_y = 0, Brier 1 + 1
		{[]float64{0.2, 0.7, 0.1}, 1}, // right, Brier .04 + .09 + .01
		{[]float64{0.5, 0.3, 0.2}, 2}, // predicted 0, Brier .25 + .09 + .64
	}
	wantMistake := []bool{true, true, false, true}
	for i, e := range events {
		if got := m.Add(e.p, e.y); got != wantMistake[i] {
			t.Fatalf("event %d: mistake %v, want %v", i, got, wantMistake[i])
		}
	}
	eps := -math.Log(1e-15)
	s := m.Summary([]int{0, 1, 2}, 3)
	want := map[string][2]float64{
		"mistake": {s.MistakeRate, 75},
		"logloss": {s.LogLoss, (eps + eps - math.Log(0.7) - math.Log(0.2)) / 4},
		"brier":   {s.Brier, (1 + 2 + 0.14 + 0.98) / 4},
		// bins: conf 0 (acc 0), 1 (acc 0), 0.7 (acc 1), 0.5 (acc 0)
		"ece": {s.ECE, (0 + 1 + 0.3 + 0.5) / 4},
	}
	for name, v := range want {
		if !nearly(v[0], v[1]) {
			t.Errorf("%s = %v, want %v", name, v[0], v[1])
		}
	}
	if !reflect.DeepEqual(s.PerClass, []float64{0, 50, 0}) {
		t.Errorf("per class %v, want [0 50 0]", s.PerClass)
	}
	wantConf := [][]uint64{{0, 0, 0}, {1, 1, 0}, {1, 0, 0}}
	if !reflect.DeepEqual(s.Confusion, wantConf) {
		t.Errorf("confusion %v, want %v", s.Confusion, wantConf)
	}
	// Reported in another class order (index k is reported class classOf[k]),
	// with a fourth class that had no event.
	s = m.Summary([]int{2, 0, 3}, 4)
	if !math.IsNaN(s.PerClass[1]) || s.PerClass[2] != 0 || s.PerClass[0] != 50 || s.PerClass[3] != 0 {
		t.Errorf("remapped per class %v, want [50 NaN 0 0]", s.PerClass)
	}
	if s.Confusion[0][2] != 1 || s.Confusion[0][0] != 1 || s.Confusion[3][2] != 1 || s.Confusion[2][0]+s.Confusion[1][1] != 0 {
		t.Errorf("remapped confusion %v", s.Confusion)
	}
}

// A diverged distribution is the worst prediction.
func TestMultiMeasuresNonFinite(t *testing.T) {
	var m MultiMeasures
	if !m.Add([]float64{math.NaN(), 1}, 1) {
		t.Fatal("a NaN distribution was not a mistake")
	}
	s := m.Summary([]int{0, 1}, 2)
	if !nearly(s.LogLoss, -math.Log(ProbClip)) || s.Brier != 2 || s.ECE != 0 { // confidence 0, accuracy 0
		t.Fatalf("NaN distribution: log loss %v Brier %v ECE %v", s.LogLoss, s.Brier, s.ECE)
	}
}

// The class prior by hand: Laplace over the known classes, majority with
// the first class on ties, nothing before the first label.
func TestMultiPrior(t *testing.T) {
	var c MultiPrior
	p := make([]float64, 4)
	if got := c.Proba(p); len(got) != 0 {
		t.Fatalf("empty prior gave %v", got)
	}
	c.Add(0)
	c.Add(0)
	if got := c.Proba(p); !reflect.DeepEqual(got, []float64{1}) {
		t.Fatalf("after 0,0: %v, want [1]", got)
	}
	c.Add(1)
	if got := c.Proba(p); !nearly(got[0], 3.0/5) || !nearly(got[1], 2.0/5) {
		t.Fatalf("after 0,0,1: %v, want [3/5 2/5]", got)
	}
	c.Add(2)
	c.Add(1)
	got := c.Proba(p)
	if !nearly(got[0], 3.0/8) || !nearly(got[1], 3.0/8) || !nearly(got[2], 2.0/8) || learner.ArgMax(got) != 0 {
		t.Fatalf("after 0,0,1,2,1: %v, want [3/8 3/8 2/8] predicting 0", got)
	}
}

// synthMulti is a 3-class problem (the angle of (x0, x1) in three
// sectors) with class names, the first row's class being "c".
func synthMulti(n int, seed uint64) *dataset.Dataset {
	src := rng.New(seed)
	ds := &dataset.Dataset{Name: "synth3", Dim: 2, Classes: []string{"c", "a", "b"}}
	for i := 0; i < n; i++ {
		x := []float64{2*src.Float64() - 1, 2*src.Float64() - 1}
		a := math.Atan2(x[1], x[0]) + math.Pi // 0..2π
		y := float64(int(a / (2 * math.Pi / 3)))
		if y > 2 {
			y = 2
		}
		ds.X = append(ds.X, x)
		ds.Y = append(ds.Y, y)
	}
	return ds
}

// Class indices are given in order of first appearance in the presented
// sequence (the permutation), per run; the uniform model's measures follow
// by hand from that sequence.
func TestMultiClassOrderAndUniformByHand(t *testing.T) {
	ds := synthMulti(50, 5)
	recordMu.Lock()
	recordSeen = nil
	recordMu.Unlock()
	cfg := Config{Runs: 1, Seed: 9, Workers: 1, MultiClass: true}
	res, err := Run(ds, []string{"evaltest-uniform:scale=none"}, nil, cfg) // scale=none: no self-tuning wrapper (its warm-up replays events)
	if err != nil {
		t.Fatal(err)
	}
	perm := dataset.Permutation(ds.Len(), 9, 0)
	index := map[float64]int{}
	var wantSeq []int
	var logLoss float64
	mistakes := 0
	for _, i := range perm {
		k, ok := index[ds.Y[i]]
		known := len(index)
		if !ok {
			k = known
			index[ds.Y[i]] = k
		}
		wantSeq = append(wantSeq, k)
		if k < known {
			logLoss -= math.Log(1 / float64(known))
		} else {
			logLoss -= math.Log(ProbClip)
		}
		if k != 0 || known == 0 { // uniform: arg max is class index 0
			mistakes++
		}
	}
	recordMu.Lock()
	got := append([]int(nil), recordSeen...)
	recordMu.Unlock()
	if !reflect.DeepEqual(got, wantSeq) {
		t.Fatalf("class indices %v, want order of first appearance %v", got, wantSeq)
	}
	m := res.Models[0]
	if !nearly(m.Mean, 100*float64(mistakes)/50) || !nearly(m.Measures[MeasureLogLoss].Mean, logLoss/50) {
		t.Fatalf("uniform model: mistakes %v log loss %v, want %v and %v", m.Mean, m.Measures[MeasureLogLoss].Mean, 100*float64(mistakes)/50, logLoss/50)
	}
	if !reflect.DeepEqual(res.Classes, []string{"a", "b", "c"}) {
		t.Fatalf("classes %v, want sorted [a b c]", res.Classes)
	}
	if res.Task != "multiclass" || res.Baseline == nil || res.LinearBaseline == nil {
		t.Fatalf("task %q, baselines %v %v", res.Task, res.Baseline, res.LinearBaseline)
	}
}

// Same config ⇒ same JSON (times aside); the linear baseline learns this
// easy problem far better than the class prior.
func TestMultiDeterministicJSON(t *testing.T) {
	ds := synthMulti(900, 3)
	test := synthMulti(300, 4)
	cfg := Config{Runs: 2, Seed: 5, MultiClass: true, Test: test, TestEvery: 300, Passes: 2}
	var out [2][]byte
	for i := range out {
		c := cfg
		c.Workers = 1 + i
		res, err := Run(ds, []string{"linear:eta=0.3|0.6"}, nil, c)
		if err != nil {
			t.Fatal(err)
		}
		for j := range res.Models {
			res.Models[j].NsPerEvent, res.Models[j].Seconds = 0, 0
		}
		var b bytes.Buffer
		if err := res.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		out[i] = b.Bytes()
		if i == 0 {
			lin := res.LinearBaseline.Measures[MeasureMistakeRate].Mean
			prior := res.Baseline.Measures[MeasureMistakeRate].Mean
			if !(lin < prior/2) || !(res.Models[0].Mean < prior/2) {
				t.Fatalf("linear %v%% and model %v%% mistakes, class prior %v%%", lin, res.Models[0].Mean, prior)
			}
			tl := res.Test.LinearBaseline.Measures[MeasureLogLoss].Mean
			tp := res.Test.Baseline.Measures[MeasureLogLoss].Mean
			if !(tl < tp) || len(res.Test.Models[0].Curve) != 6 {
				t.Fatalf("test log loss linear %v prior %v; test curve %d points", tl, tp, len(res.Test.Models[0].Curve))
			}
			var tw bytes.Buffer
			if err := res.WriteTable(&tw); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"class prior (baseline)", "linear multinomial logistic (baseline)", "confusion", "accuracy per class"} {
				if !bytes.Contains(tw.Bytes(), []byte(want)) {
					t.Errorf("table lacks %q:\n%s", want, tw.String())
				}
			}
		}
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Fatal("two runs of the same configuration gave different JSON")
	}
}

// A test class the training stream never had is a mistake with
// probability 0; test labels match the training classes by name, whatever
// their numbering in the test file.
func TestMultiTestUnseenClass(t *testing.T) {
	train := &dataset.Dataset{Name: "train", Dim: 1, Classes: []string{"x", "y"},
		X: [][]float64{{0}, {1}, {0}, {1}}, Y: []float64{0, 1, 0, 1}}
	test := &dataset.Dataset{Name: "test", Dim: 1, Classes: []string{"z", "y", "w"},
		X: [][]float64{{0}, {1}, {1}, {0}}, Y: []float64{0, 1, 1, 2}}
	res, err := Run(train, []string{"evaltest-uniform:scale=none"}, nil, Config{Runs: 1, Workers: 1, MultiClass: true, Test: test})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Classes, []string{"x", "y", "w", "z"}) {
		t.Fatalf("classes %v, want [x y w z]", res.Classes)
	}
	// The uniform model knows x and y (indices 0, 1 in the run's order of
	// appearance): "z" and "w" have probability 0, each "y" 1/2.
	tm := res.Test.Models[0]
	wantLL := (-2*math.Log(ProbClip) - 2*math.Log(0.5)) / 4
	if !nearly(tm.Measures[MeasureLogLoss].Mean, wantLL) {
		t.Fatalf("test log loss %v, want %v", tm.Measures[MeasureLogLoss].Mean, wantLL)
	}
	if tm.PerClass[2].Mean != 0 || tm.PerClass[3].Mean != 0 || !math.IsNaN(tm.PerClass[0].Mean) {
		t.Fatalf("test accuracy per class %v, want [NaN ? 0 0]", tm.PerClass)
	}
}

// TestMultiClassResultsTable writes docs/results.md's "Multi-class" tables
// (markdown) to the file named by $OKSTREAM_MULTICLASS_TABLE ("-": stdout):
// every multi-class learner of the build (learner.MultiNames, bare specs;
// linear is the baseline column) on letter (first 16,000 rows, test on the
// last 4,000) and mnist (the 10,000 test images, progressive), features as
// the files have them (no per-file setting: every learner's self-tuning
// wrapper standardises its inputs), with
// $OKSTREAM_MULTICLASS_RUNS permutations (default 3), beside the class
// prior and linear multinomial logistic regression on the same runs. The
// same numbers come from okstream eval (docs/results.md gives the
// commands). Skipped unless the variable is set.
func TestMultiClassResultsTable(t *testing.T) {
	out := os.Getenv("OKSTREAM_MULTICLASS_TABLE")
	if out == "" {
		t.Skip("set OKSTREAM_MULTICLASS_TABLE=FILE (or -) to write the multi-class results tables")
	}
	runs := 3
	if v, err := strconv.Atoi(os.Getenv("OKSTREAM_MULTICLASS_RUNS")); err == nil && v > 0 {
		runs = v
	}
	var specs []string
	for _, n := range learner.MultiNames() {
		if n != LinearBaselineSpec && !strings.HasPrefix(n, "evaltest-") {
			specs = append(specs, n)
		}
	}
	load := func(name string) *dataset.Dataset {
		path, opts, err := dataset.Resolve(name)
		if err != nil {
			t.Skipf("%s: %v", name, err)
		}
		opts.ClassNames = true
		ds, err := dataset.Load(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	var b strings.Builder
	table := func(title string, ds *dataset.Dataset, cfg Config) {
		cfg.Runs, cfg.Seed, cfg.MultiClass = runs, 1, true
		var run []string
		var refused []string
		for _, s := range specs {
			if _, err := learner.NewMulti(s, ds.Dim); err != nil {
				refused = append(refused, fmt.Sprintf("`%s` (%v)", s, err))
				continue
			}
			run = append(run, s)
		}
		res, err := Run(ds, run, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		f := func(st Stat, pct bool) string {
			if pct {
				return fmt.Sprintf("%.2f ± %.2f", st.Mean, st.Std)
			}
			return fmt.Sprintf("%.3f", st.Mean)
		}
		fmt.Fprintf(&b, "### %s (%d classes, %d permutations, seed 1)\n\n", title, len(res.Classes), runs)
		head := "| model | progressive mistake % | log loss | ECE |"
		sep := "|---|---|---|---|"
		if res.Test != nil {
			head += " test mistake % | test log loss |"
			sep += "---|---|"
		}
		fmt.Fprintf(&b, "%s µs/event |\n%s---|\n", head, sep)
		row := func(label string, ms map[string]Stat, tm map[string]Stat, ns string) {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |", label, f(ms[MeasureMistakeRate], true), f(ms[MeasureLogLoss], false), f(ms[MeasureECE], false))
			if res.Test != nil {
				fmt.Fprintf(&b, " %s | %s |", f(tm[MeasureMistakeRate], true), f(tm[MeasureLogLoss], false))
			}
			fmt.Fprintf(&b, " %s |\n", ns)
		}
		for i, m := range res.Models {
			var tm map[string]Stat
			if res.Test != nil {
				tm = res.Test.Models[i].Measures
			}
			row("`"+m.Label+"`", m.Measures, tm, fmt.Sprintf("%.1f", m.NsPerEvent/1e3))
		}
		var tp, tl map[string]Stat
		if res.Test != nil {
			tp, tl = res.Test.Baseline.Measures, res.Test.LinearBaseline.Measures
		}
		row("class prior (baseline)", res.Baseline.Measures, tp, "")
		row("linear multinomial logistic (baseline, `"+LinearBaselineSpec+"`)", res.LinearBaseline.Measures, tl, "")
		b.WriteString("\n")
		for _, r := range refused {
			fmt.Fprintf(&b, "Not run: %s.\n\n", r)
		}
	}

	letter := load("letter")
	train, test := letter.Subset(seq(0, 16000)), letter.Subset(seq(16000, 20000))
	table("letter: first 16,000 rows, test on the last 4,000", train, Config{Test: test})

	mnist := load("mnist")
	table("mnist: the 10,000 test images, progressive", mnist, Config{})

	if out == "-" {
		fmt.Print(b.String())
		return
	}
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Once every class has been seen, counting an event allocates nothing.
func TestMultiMeasuresAllocs(t *testing.T) {
	var m MultiMeasures
	var prior MultiPrior
	p := make([]float64, 4)
	for c := 0; c < 4; c++ {
		m.Add(prior.Proba(p), c)
		prior.Add(c)
	}
	c := 0
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector (it allocates); the plain go test counts them")
	}
	if n := testing.AllocsPerRun(100, func() {
		m.Add(prior.Proba(p), c)
		prior.Add(c)
		c = (c + 1) % 4
	}); n != 0 {
		t.Fatalf("%v allocations per event", n)
	}
}
