package paper

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"okstream/learner"
)

// The score of a regression run is the partitions' squared-error sums over
// every event; a classification run's is the mistake rate in %.
func TestPartitionsScore(t *testing.T) {
	if got := partitionsScore(true, 7, []float64{1.5, 0.25, 2.25}, 8); got != 0.5 {
		t.Errorf("regression: MSE %v, want 4/8 = 0.5 (mistakes must not count)", got)
	}
	if got := partitionsScore(false, 2, []float64{100}, 8); got != 25 {
		t.Errorf("classification: %v %%, want 25 (squared errors must not count)", got)
	}
}

// A regression stream's table prints MSEs (not percentages) with the mean
// predictor next to them, and its plot is drawn; a classification
// stream's table keeps its mistake-rate columns.
func TestPartitionsBodyRegressionColumns(t *testing.T) {
	res := &partitionsResult{Experiment: "partitions", Rows: []partitionsRow{
		{Stream: "cls", Learner: "A", P: 1, N: 10, Independent: 12, Shared: 11.5, Simulated: 11.5, Exact: true, Pipeline: true},
		{Stream: "cls", Learner: "A", P: 4, N: 10, Independent: 13, Shared: 12, Simulated: 12, Exact: true, Pipeline: true},
		{Stream: "cls", Learner: "A", P: 16, N: 10, Independent: 14, Shared: 12, Simulated: 12, Pipeline: true, Timings: 9, Inexact: 1, InexactExpired: 1},
		{Stream: "cls", Learner: "A", P: 64, N: 10, Independent: 15, Shared: 13, Simulated: 13, Pipeline: true, Timings: 9, Inexact: 2, InexactExpired: 1},
		{Stream: "reg", Learner: "B", P: 1, N: 10, Regression: true, Mean: 0.33956, Independent: 0.25, Shared: 0.24, Simulated: 0.24, Exact: true, Pipeline: true},
		{Stream: "reg", Learner: "B", P: 4, N: 10, Regression: true, Mean: 0.33956, Independent: 0.27, Shared: 0.26, Simulated: 0.2599, Exact: false, Pipeline: true},
		{Stream: "reg", Learner: "C", P: 4, N: 10, Regression: true, Mean: 0.33956, Independent: 0.3, Shared: -1, Simulated: -1, Pipeline: true},
	}}
	body, err := partitionsBody(&Experiment{ID: "partitions"}, res, Options{ImgDir: t.TempDir(), ImgRel: "img"})
	if err != nil {
		t.Fatal(err)
	}
	cls, reg, ok := strings.Cut(body, "### reg")
	if !ok {
		t.Fatalf("no regression table:\n%s", body)
	}
	for _, want := range []string{"| A | 1 | 12.00 % | 11.50 % | 11.50 % | yes |", "![cls](img/partitions-1.png)",
		"| A | 16 | 14.00 % | 12.00 % | 12.00 % | no (1 of 9 runs, a wait expired in each) |",
		"| A | 64 | 15.00 % | 13.00 % | 13.00 % | no (2 of 9 runs, a wait expired in 1) |"} {
		if !strings.Contains(cls, want) {
			t.Errorf("classification table lacks %q:\n%s", want, cls)
		}
	}
	for _, want := range []string{
		"| learner | P | MSE independent | MSE shared | MSE sim. | mean | exact |",
		"| B | 1 | 0.25000 | 0.24000 | 0.24000 | 0.33956 | yes |",
		"| B | 4 | 0.27000 | 0.26000 | 0.25990 | 0.33956 | no |",
		"| C | 4 | 0.30000 | not shareable | not shareable | 0.33956 | – |",
		"![reg](img/partitions-2.png)",
	} {
		if !strings.Contains(reg, want) {
			t.Errorf("regression table lacks %q:\n%s", want, reg)
		}
	}
	if strings.Contains(reg, "%  |") || strings.Contains(reg, "0.25 %") {
		t.Errorf("regression cells printed as percentages:\n%s", reg)
	}
}

// The regression learners of the experiment must share (else their shared
// columns would silently read "not shareable"), and the casp stream is
// scaled to [−1, 1] with the mean predictor's MSE its labels' variance.
func TestPartitionsRegressionStream(t *testing.T) {
	for _, st := range partitionsStreams {
		if !st.Regression {
			continue
		}
		for _, lr := range st.Learners {
			spec := lr.Spec
			if lr.SpecFor != nil {
				spec = lr.SpecFor(45730)
			}
			l, err := learner.New(spec, 9)
			if err != nil {
				t.Fatalf("%s: %v", lr.Label, err)
			}
			if l.Info().Task != learner.Regression {
				t.Errorf("%s (%s): task %v, want regression", lr.Label, spec, l.Info().Task)
			}
			sh, ok := l.(learner.Sharer)
			if !ok {
				t.Fatalf("%s (%s) is not a learner.Sharer", lr.Label, spec)
			}
			if _, err := sh.ShareDelta(); err != nil {
				t.Errorf("%s (%s): %v", lr.Label, spec, err)
			}
		}
	}
	d, err := partitionsStream("casp", Options{Seed: 1})
	if err != nil {
		t.Skipf("casp: %v", err)
	}
	if len(d.Events) != 45730 || d.Dim != 9 || d.Users != nil {
		t.Fatalf("casp: %d events, d = %d, keyed %v; want 45730, 9, round robin", len(d.Events), d.Dim, d.Users != nil)
	}
	var lo, hi, mean, m2 float64 = math.Inf(1), math.Inf(-1), 0, 0
	for i, ev := range d.Events {
		lo, hi = math.Min(lo, ev.Y), math.Max(hi, ev.Y)
		for _, x := range ev.X {
			if x < -1 || x > 1 {
				t.Fatalf("event %d: feature %v outside [−1, 1]", i, x)
			}
		}
		delta := ev.Y - mean
		mean += delta / float64(i+1)
		m2 += delta * (ev.Y - mean)
	}
	if lo != -1 || hi != 1 {
		t.Errorf("y spans [%v, %v], want [−1, 1]", lo, hi)
	}
	if v := m2 / float64(len(d.Events)); math.Abs(v-d.Mean) > 1e-12*v || d.Mean <= 0 {
		t.Errorf("mean predictor's MSE %v, want the labels' variance %v", d.Mean, v)
	}
}

// --rerender rebuilds the same body from the raw results, and refuses the
// results of another experiment.
func TestPartitionsRerender(t *testing.T) {
	res := &partitionsResult{Experiment: "partitions", Every: 16, Lag: 1, Rows: []partitionsRow{
		{Stream: "reg", Learner: "B", P: 1, N: 10, Regression: true, Mean: 0.33956, Independent: 0.25, Shared: 0.24, Simulated: 0.24, Exact: true, Pipeline: true},
		{Stream: "reg", Learner: "B", P: 4, N: 10, Regression: true, Mean: 0.33956, Independent: 0.27, Shared: 0.26, Simulated: 0.26, Exact: true, Pipeline: true},
	}}
	e := &Experiment{ID: "partitions"}
	want, err := partitionsBody(e, res, Options{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := rerenderPartitions(e, raw, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Body != want {
		t.Errorf("re-rendered body\n%s\nwant\n%s", rep.Body, want)
	}
	if _, err := rerenderPartitions(&Experiment{ID: "auto-vs-grid"}, raw, Options{}); err == nil {
		t.Error("re-rendered the partitions results as auto-vs-grid's")
	}
}
