package eval

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"okstream/dataset"
	"okstream/learner"
	"okstream/learner/rng"
)

// synth returns a small nonlinear binary problem (labels ±1) or a
// regression problem.
func synth(n int, regression bool) *dataset.Dataset {
	src := rng.New(77)
	ds := &dataset.Dataset{Name: "synth", Dim: 3}
	for i := 0; i < n; i++ {
		x := []float64{2*src.Float64() - 1, 2*src.Float64() - 1, 2*src.Float64() - 1}
		y := -1.0
		if x[0]*x[0]+x[1]*x[1] < 0.5 {
			y = 1
		}
		if regression {
			y = math.Sin(2*x[0]) + x[1]*x[2]
		}
		ds.X = append(ds.X, x)
		ds.Y = append(ds.Y, y)
	}
	return ds
}

func TestRunIsReproducible(t *testing.T) {
	ds := synth(600, false)
	specs := []string{"fogd:sigma=0.5|1,budget=10", "nogd:sigma=1,budget=20,k=10"}
	a, err := Run(ds, specs, nil, Config{Runs: 4, Seed: 3, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(ds, specs, nil, Config{Runs: 4, Seed: 3, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Models {
		if !reflect.DeepEqual(a.Models[i].PerRun, b.Models[i].PerRun) || !reflect.DeepEqual(a.Models[i].Curve, b.Models[i].Curve) {
			t.Fatalf("model %d: runs differ between executions: %v vs %v", i, a.Models[i].PerRun, b.Models[i].PerRun)
		}
	}
	c, _ := Run(ds, specs, nil, Config{Runs: 4, Seed: 4, Workers: 2})
	if reflect.DeepEqual(a.Models[1].PerRun, c.Models[1].PerRun) {
		t.Fatal("a different seed gave identical runs")
	}
}

// The reported metric is exactly the progressive mistake rate of the
// learner over the seeded permutation (recomputed here independently).
func TestMetricDefinition(t *testing.T) {
	ds := synth(500, false)
	res, err := Run(ds, []string{"fogd:sigma=1,budget=10,seed=9"}, nil, Config{Runs: 3, Seed: 5, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < 3; r++ {
		l, _ := learner.New("fogd:sigma=1,budget=10,seed=9,horizon=500", 3)
		mistakes := 0
		for _, i := range dataset.Permutation(500, 5, r) {
			if f := l.Learn(ds.X[i], ds.Y[i]); f*ds.Y[i] <= 0 {
				mistakes++
			}
		}
		if want := 100 * float64(mistakes) / 500; res.Models[0].PerRun[r] != want {
			t.Fatalf("run %d: reported %v, recomputed %v", r, res.Models[0].PerRun[r], want)
		}
	}
	last := res.Models[0].Curve[len(res.Models[0].Curve)-1]
	if last.T != 500 || math.Abs(last.Mean-res.Models[0].Mean) > 1e-9 {
		t.Fatalf("curve ends at %+v, mean %v", last, res.Models[0].Mean)
	}
}

// A grid reports its best candidate, and that candidate's runs are the same
// as running it alone.
func TestGridPicksBest(t *testing.T) {
	ds := synth(400, true)
	res, err := Run(ds, []string{"fogd:loss=square,sigma=2^-3..2^1:2^1,budget=10"}, nil, Config{Runs: 3, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Models[0]
	if len(m.Grid) != 5 {
		t.Fatalf("grid has %d points", len(m.Grid))
	}
	best := math.Inf(1)
	var bestV string
	for _, g := range m.Grid {
		if g.Mean < best {
			best, bestV = g.Mean, g.Values["sigma"]
		}
	}
	if m.Won["sigma"] != bestV || m.Mean != best {
		t.Fatalf("won %v (mean %v), best grid point sigma=%s (mean %v)", m.Won, m.Mean, bestV, best)
	}
	alone, _ := Run(ds, []string{"fogd:loss=square,sigma=" + bestV + ",budget=10"}, nil, Config{Runs: 3, Seed: 2})
	if !reflect.DeepEqual(alone.Models[0].PerRun, m.PerRun) {
		t.Fatalf("winner's runs %v differ from a plain run %v", m.PerRun, alone.Models[0].PerRun)
	}
	if res.Metric != MSE || !strings.Contains(m.Chosen, "horizon=400") {
		t.Fatalf("metric %s, chosen %s (eval must set horizon = N)", res.Metric, m.Chosen)
	}
	// Selection on separate permutations reports the winner on the normal ones.
	sel, _ := Run(ds, []string{"fogd:loss=square,sigma=2^-3..2^1:2^1,budget=10"}, nil, Config{Runs: 3, Seed: 2, SelectRuns: 2})
	w := sel.Models[0].Won["sigma"]
	plain, _ := Run(ds, []string{"fogd:loss=square,sigma=" + w + ",budget=10"}, nil, Config{Runs: 3, Seed: 2})
	if !reflect.DeepEqual(plain.Models[0].PerRun, sel.Models[0].PerRun) {
		t.Fatal("with SelectRuns the reported runs are not the standard permutations")
	}
}

func TestRunRejects(t *testing.T) {
	ds := synth(50, true) // real-valued labels
	if _, err := Run(ds, []string{"fogd"}, nil, Config{Runs: 1}); err == nil || !strings.Contains(err.Error(), "−1/+1") {
		t.Fatalf("classification on real labels: %v", err)
	}
	if _, err := Run(synth(50, false), []string{"fogd", "fogd:loss=square"}, nil, Config{Runs: 1}); err == nil {
		t.Fatal("mixed tasks accepted")
	}
	if _, err := Run(synth(50, false), []string{"nosuch"}, nil, Config{Runs: 1}); err == nil {
		t.Fatal("unknown learner accepted")
	}
}

func TestOutputs(t *testing.T) {
	ds := synth(300, false)
	res, err := Run(ds, []string{"fogd:sigma=1|2,budget=5", "nogd:budget=10,k=5"}, []string{"FOGD", ""}, Config{Runs: 2})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := res.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "FOGD") || !strings.Contains(buf.String(), "sigma=") {
		t.Fatalf("table:\n%s", buf.String())
	}
	buf.Reset()
	if err := res.WriteJSON(&buf); err != nil || !strings.Contains(buf.String(), `"mistake_rate_pct"`) {
		t.Fatalf("json: %v\n%s", err, buf.String())
	}
	dir := t.TempDir()
	for _, ext := range []string{".png", ".svg"} {
		p := filepath.Join(dir, "curve"+ext)
		if err := res.PlotCurves(p); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(p)
		if len(b) < 100 || (ext == ".png" && !bytes.HasPrefix(b, []byte("\x89PNG"))) || (ext == ".svg" && !bytes.Contains(b, []byte("<svg"))) {
			t.Fatalf("%s plot is not a valid file (%d bytes)", ext, len(b))
		}
	}
	if err := res.PlotCurves(filepath.Join(dir, "x.gif")); err == nil {
		t.Fatal("unsupported plot format accepted")
	}
}

func TestTotalEvents(t *testing.T) {
	n, err := TotalEvents([]string{"fogd:sigma=1|2|3", "nogd"}, 100, Config{Runs: 5})
	if err != nil || n != (3*5+5)*100 {
		t.Fatalf("TotalEvents = %d, %v", n, err)
	}
	_ = strconv.Itoa
}

// A diverged model (NaN/Inf scores) is counted, reported, and its NaN
// scores count as mistakes — not as correct answers, which is what a bare
// score*y <= 0 test would make of them.
func TestDivergedModelCountsAsMistakes(t *testing.T) {
	if !learner.Mistake(math.NaN(), 1) || !learner.Mistake(math.NaN(), -1) || learner.Mistake(0.5, 1) || !learner.Mistake(0, 1) {
		t.Fatal("learner.Mistake: NaN and 0 must be mistakes, a right sign must not")
	}
	ds := synth(400, false)
	res, err := Run(ds, []string{"fogd:loss=squared_hinge,eta=1e12,sigma=0.1,budget=20", "fogd:sigma=1,budget=20"}, nil, Config{Runs: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	bad, good := res.Models[0], res.Models[1]
	if bad.NonFinite == 0 || good.NonFinite != 0 {
		t.Fatalf("non-finite scores: diverging model %d, stable model %d", bad.NonFinite, good.NonFinite)
	}
	if min := 100 * float64(bad.NonFinite) / float64(ds.Len()); bad.Mean < min {
		t.Fatalf("mistake rate %.2f%% below the share of NaN scores %.2f%%", bad.Mean, min)
	}
	var b strings.Builder
	if err := res.WriteTable(&b); err != nil || !strings.Contains(b.String(), "diverged") {
		t.Fatalf("table does not warn:\n%s", b.String())
	}
}

// A NaN metric (a diverged grid value) is written to JSON as null instead of
// failing the whole report; finite values are unchanged.
func TestJSONWithNonFiniteMetrics(t *testing.T) {
	res := &Result{Models: []ModelResult{{Label: "m", Mean: math.NaN(), Std: 0.5, PerRun: []float64{math.Inf(1), 2},
		Curve: []Point{{T: 1, Mean: math.NaN()}}, Grid: []GridPoint{{Mean: math.NaN(), Std: 1}}}}}
	var b strings.Builder
	if err := res.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Models []struct {
			Mean   *float64   `json:"mean"`
			Std    *float64   `json:"std"`
			PerRun []*float64 `json:"per_run"`
			Grid   []struct {
				Mean *float64 `json:"mean"`
			} `json:"grid"`
		} `json:"models"`
	}
	if err := json.Unmarshal([]byte(b.String()), &back); err != nil {
		t.Fatal(err)
	}
	m := back.Models[0]
	if m.Mean != nil || m.Std == nil || *m.Std != 0.5 || m.PerRun[0] != nil || *m.PerRun[1] != 2 || m.Grid[0].Mean != nil {
		t.Fatalf("round trip: %s", b.String())
	}
}

// TestBudgetColumnIsTheSpecs checks that the table's budget is the spec's
// (fogd:budget=50 uses 4×50 random frequencies, reported as used).
func TestBudgetColumnIsTheSpecs(t *testing.T) {
	ds := synth(200, false)
	res, err := Run(ds, []string{"fogd:sigma=1,budget=50"}, nil, Config{Runs: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Models[0]; m.Budget != 50 || m.Used != 200 {
		t.Errorf("fogd:budget=50: budget %d, used %d; want 50 and 200", m.Budget, m.Used)
	}
}
