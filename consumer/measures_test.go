package consumer

import (
	"bytes"
	"log/slog"
	"math"
	"strings"
	"testing"
)

// The progress line's "models" group: per model, over the labelled events
// since the previous line, the mistake rate and log loss (a classifier) or
// MSE and MAE (a regressor), beside the baseline's; hand-computed values.
func TestProgressQuality(t *testing.T) {
	models := []Model{{Name: "clf"}, {Name: "reg"}, {Name: "idle"}}
	prev := []errorTotals{{labeled: 10, mistakes: 2, logLoss: 3}, {labeled: 10, sqErr: 5, absErr: 4}, {labeled: 7}, {labeled: 10, mistakes: 4, logLoss: 6, sqErr: 9, absErr: 8}}
	now := []errorTotals{{labeled: 50, mistakes: 6, logLoss: 15}, {labeled: 50, sqErr: 25, absErr: 16}, {labeled: 7}, {labeled: 50, mistakes: 16, logLoss: 30, sqErr: 49, absErr: 40}}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("progress", slog.Group("models", quality(models, prev, now)...))
	got := buf.String()
	for _, want := range []string{
		`"clf":{"labeled":40,"mistake_rate":0.1,"log_loss":0.3}`,                  // 4/40, 12/40
		`"reg":{"labeled":40,"mse":0.5,"mae":0.3}`,                                // 20/40, 12/40
		`"baseline_class_prior":{"labeled":40,"mistake_rate":0.3,"log_loss":0.6}`, // 12/40, 24/40
		`"baseline_running_mean":{"labeled":40,"mse":1,"mae":0.8}`,                // 40/40, 32/40
	} {
		if !strings.Contains(got, want) {
			t.Errorf("progress line lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "idle") {
		t.Errorf("a model without labelled events since the previous line is reported:\n%s", got)
	}
}

// The baseline's per-event counts on +1, +1, −1, +1 (labels) by hand: the
// prior is wrong at the tie and at the −1; the mean predicts 0, 1, 1, 1/3.
func TestBaselineCount(t *testing.T) {
	var b baseline
	for _, y := range []float64{1, 1, -1, 1} {
		b.count(y)
	}
	tl := b.tally
	if tl.labeled != 4 || tl.mistakes != 2 {
		t.Fatalf("labeled %d, mistakes %d; want 4 and 2", tl.labeled, tl.mistakes)
	}
	if want := math.Log(2) + math.Log(1.5) + math.Log(4) + math.Log(5.0/3); math.Abs(tl.logLoss-want) > 1e-12 {
		t.Fatalf("log loss %v, want %v", tl.logLoss, want)
	}
	if want := 1 + 0 + 4 + 4.0/9; math.Abs(tl.sqErr-want) > 1e-12 {
		t.Fatalf("square loss %v, want %v", tl.sqErr, want)
	}
	if want := 1 + 0 + 2 + 2.0/3; math.Abs(tl.absErr-want) > 1e-12 {
		t.Fatalf("absolute error %v, want %v", tl.absErr, want)
	}
}

// BenchmarkModelCount is the per-event cost of a labelled event's
// statistics and counters (mistake, square and absolute error, calibrated
// log loss) plus the baseline's, without the learner.
func BenchmarkModelCount(b *testing.B) {
	m, err := newModel(Model{Name: "m", Spec: "linear"}, 3)
	if err != nil {
		b.Fatal(err)
	}
	var base baseline
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		f := float64(i&15)/4 - 2
		y := 1.0
		if i%3 == 0 {
			y = -1
		}
		p, own := m.prob(f)
		m.count(f, y, p, own)
		base.count(y)
	}
}

// A logistic linear model's log loss uses its own probability σ(score) and
// leaves the calibration alone; a kernel model's uses the calibration,
// which then moves.
func TestModelCountProbability(t *testing.T) {
	lin, _ := newModel(Model{Name: "l", Spec: "linear"}, 3)
	p, own := lin.prob(2)
	if want := 1 / (1 + math.Exp(-2)); !own || p != want {
		t.Fatalf("linear: prob %v, %v; want its own %v", p, own, want)
	}
	lin.count(2, 1, p, own)
	if want := math.Log1p(math.Exp(-2)); math.Abs(lin.tally.logLoss-want) > 1e-15 || lin.calib.A != 1 || lin.calib.B != 0 {
		t.Fatalf("linear: log loss %v (want %v), calibration %+v", lin.tally.logLoss, want, lin.calib)
	}
	k, _ := newModel(Model{Name: "k", Spec: "fogd:sigma=1,budget=5"}, 3)
	p, own = k.prob(2)
	if want := 1 / (1 + math.Exp(-2)); own || p != want { // the calibration's start: σ(score)
		t.Fatalf("fogd: prob %v, %v; want the calibration's %v", p, own, want)
	}
	k.count(2, -1, p, own)
	if want := math.Log1p(math.Exp(2)); math.Abs(k.tally.logLoss-want) > 1e-12 || k.calib.A == 1 {
		t.Fatalf("fogd: log loss %v (want %v), calibration %+v", k.tally.logLoss, want, k.calib)
	}
}
