package eval

import (
	"math"
	"strings"
	"testing"

	"okstream/dataset"
	"okstream/learner"
	"okstream/learner/rng"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol || math.IsNaN(got) != math.IsNaN(want) {
		t.Fatalf("%s = %.12g, want %.12g (±%g)", what, got, want, tol)
	}
}

// AUC on hand-computed cases: scikit-learn's documented example (0.75), a
// perfect ranking, a reversed one, and ties counting one half.
func TestAUCHandCases(t *testing.T) {
	mk := func(s []float64, pos []bool) []scored {
		var out []scored
		for i := range s {
			out = append(out, scored{s[i], pos[i]})
		}
		return out
	}
	near(t, "sklearn example", AUC(mk([]float64{0.1, 0.4, 0.35, 0.8}, []bool{false, false, true, true})), 0.75, 1e-15)
	near(t, "perfect", AUC(mk([]float64{-2, -1, 1, 2}, []bool{false, false, true, true})), 1, 0)
	near(t, "reversed", AUC(mk([]float64{-2, -1, 1, 2}, []bool{true, true, false, false})), 0, 0)
	// positives {1, 2}, negatives {1, 0}: pairs 0.5 + 1 + 1 + 1 of 4.
	near(t, "ties", AUC(mk([]float64{1, 2, 1, 0}, []bool{true, true, false, false})), 3.5/4, 1e-15)
	near(t, "all tied", AUC(mk([]float64{3, 3, 3}, []bool{true, false, false})), 0.5, 0)
	if v := AUC(mk([]float64{1, 2}, []bool{true, true})); !math.IsNaN(v) {
		t.Fatalf("one class: AUC %v, want NaN", v)
	}
}

// bruteAUC is the O(n²) definition.
func bruteAUC(s []float64, y []float64) float64 {
	var num, den float64
	for i := range s {
		for j := range s {
			if y[i] > 0 && y[j] < 0 {
				den++
				switch {
				case s[i] > s[j]:
					num++
				case s[i] == s[j]:
					num += 0.5
				}
			}
		}
	}
	return num / den
}

// Binary's AUC is exact up to the cap (equal to the pairwise definition)
// and an estimate, flagged, past it.
func TestBinaryAUCExactAndReservoir(t *testing.T) {
	src := rng.New(5)
	var s, y []float64
	for i := 0; i < 600; i++ {
		lab := -1.0
		if src.Float64() < 0.4 {
			lab = 1
		}
		// coarse scores so that ties occur
		sc := math.Round((lab*0.7+2*src.Float64()-1)*8) / 8
		s, y = append(s, sc), append(y, lab)
	}
	want := bruteAUC(s, y)
	b := NewBinary(nil, 0)
	small := NewBinary(nil, 100)
	for i := range s {
		b.Add(s[i], y[i])
		small.Add(s[i], y[i])
	}
	got := b.Summary()
	if !got.AUCExact {
		t.Fatal("600 events under the default cap: AUC not exact")
	}
	near(t, "AUC", got.AUC, want, 1e-12)
	est := small.Summary()
	if est.AUCExact {
		t.Fatal("600 events over a cap of 100: AUC flagged exact")
	}
	if len(small.auc.pairs) != 100 {
		t.Fatalf("reservoir holds %d pairs, cap 100", len(small.auc.pairs))
	}
	near(t, "reservoir AUC", est.AUC, want, 0.1)
}

// Log loss, Brier score, ECE and mistake rate with given probabilities
// (a Prober), computed by hand.
func TestBinaryHandCase(t *testing.T) {
	b := NewBinary(func(s float64) float64 { return s }, 0)
	events := [][2]float64{{0.05, -1}, {0.15, 1}, {0.95, 1}, {0.95, -1}}
	for _, e := range events {
		b.Add(e[0], e[1])
	}
	s := b.Summary()
	near(t, "log loss", s.LogLoss, -(math.Log(0.95)+math.Log(0.15)+math.Log(0.95)+math.Log(0.05))/4, 1e-15)
	near(t, "Brier", s.Brier, (0.0025+0.7225+0.0025+0.9025)/4, 1e-15)
	// bins: [0,0.1): p .05 y 0; [0.1,0.2): p .15 y 1; [0.9,1]: 2 events, p .95, y .5
	near(t, "ECE", s.ECE, (0.05+0.85+2*0.45)/4, 1e-15)
	// every score is positive: the two negatives are mistakes
	near(t, "mistake rate", s.MistakeRate, 50, 0)
	// positives {.15, .95} vs negatives {.05, .95}: 1 + 0 + 1 + ½ of 4
	near(t, "AUC", s.AUC, 2.5/4, 0)
}

// The Platt calibration: the first probability is σ(score); one update
// moves (A, B) by the normalised gradient step (hand formula); and on a
// stream whose label is +1 with probability 0.8 whatever the score, the
// probability converges to 0.8 (the log loss to the entropy).
func TestPlatt(t *testing.T) {
	c := NewPlatt()
	p := c.Prob(2)
	near(t, "first p", p, 1/(1+math.Exp(-2)), 1e-15)
	c.Update(2, p, 1)
	g := p - 1
	wantA, wantB := 1-0.05*g*2/5, -0.05*g/5
	near(t, "A", c.A, wantA, 1e-15)
	near(t, "B", c.B, wantB, 1e-15)
	near(t, "second p", c.Prob(-1), 1/(1+math.Exp(-(-wantA+wantB))), 1e-15)
	if c.Prob(math.NaN()) != 0.5 {
		t.Fatal("NaN score: probability is not 0.5")
	}

	b := NewBinary(nil, 0)
	src := rng.New(9)
	for i := 0; i < 20000; i++ {
		y := -1.0
		if src.Float64() < 0.8 {
			y = 1
		}
		b.Add(0.001, y) // an uninformative (tiny, positive) score
	}
	near(t, "calibrated p", b.Prob(0.001), 0.8, 0.03)
	// the late events are scored with p ≈ 0.8: the mean log loss nears the
	// entropy of Bernoulli(0.8) = 0.5004 from above
	s := b.Summary()
	if s.LogLoss < 0.5004-0.01 || s.LogLoss > 0.53 {
		t.Fatalf("log loss %v, want about the entropy 0.5004", s.LogLoss)
	}
	if s.ECE > 0.03 {
		t.Fatalf("ECE %v of a converged calibration", s.ECE)
	}
}

// A frozen accumulator does not update its calibration.
func TestBinaryFrozen(t *testing.T) {
	b := NewBinary(nil, 0)
	for i := 0; i < 50; i++ {
		b.Add(1, -1)
	}
	before := b.Prob(1)
	f := b.Frozen(0)
	for i := 0; i < 50; i++ {
		f.Add(1, 1)
	}
	if f.Prob(1) != before || b.Prob(1) != before {
		t.Fatalf("frozen calibration moved: %v → %v", before, f.Prob(1))
	}
	near(t, "frozen log loss", f.Summary().LogLoss, -math.Log(before), 1e-15)
}

// The running class prior (Laplace) on +,+,−,+, by hand.
func TestBaselinePriorHandCase(t *testing.T) {
	b := NewBaseline(true)
	for _, y := range []float64{1, 1, -1, 1} {
		b.Add(y)
	}
	s := b.Summary()
	// p: 1/2 (tie: mistake), 2/3 (right), 3/4 (y = −1: mistake), 3/5 (right)
	near(t, "mistake rate", s.MistakeRate, 50, 0)
	near(t, "log loss", s.LogLoss, (math.Log(2)+math.Log(1.5)+math.Log(4)+math.Log(5.0/3))/4, 1e-15)
	near(t, "Brier", s.Brier, (0.25+1.0/9+9.0/16+4.0/25)/4, 1e-15)
	if !math.IsNaN(s.AUC) || !math.IsNaN(s.MSE) {
		t.Fatal("the prior reports an AUC or an MSE")
	}
	// frozen at p = 3/5 (3 positives, 1 negative → (3+1)/(4+2) = 2/3)
	f := b.Frozen()
	f.Add(-1)
	f.Add(-1)
	fs := f.Summary()
	near(t, "frozen mistake rate", fs.MistakeRate, 100, 0)
	near(t, "frozen log loss", fs.LogLoss, math.Log(3), 1e-15)
}

// The running mean and R², by hand: labels 1, 3, 2; the mean predicts 0,
// 1, 2; the model predicts 1, 2, 2.
func TestRegressHandCase(t *testing.T) {
	b := NewBaseline(false)
	r := NewRegress()
	ys, fs := []float64{1, 3, 2}, []float64{1, 2, 2}
	for i := range ys {
		b.Add(ys[i])
		r.Add(fs[i], ys[i])
	}
	bs, rs := b.Summary(), r.Summary()
	near(t, "mean MSE", bs.MSE, (1+4+0)/3.0, 1e-15)
	near(t, "mean MAE", bs.MAE, (1+2+0)/3.0, 1e-15)
	near(t, "model MSE", rs.MSE, 1/3.0, 1e-15)
	near(t, "model MAE", rs.MAE, 1/3.0, 1e-15)
	near(t, "R²", rs.R2, 1-1/5.0, 1e-15)
	if !math.IsNaN(rs.LogLoss) {
		t.Fatal("regression reports a log loss")
	}
	f := b.Frozen() // mean 2
	f.Add(5)
	near(t, "frozen mean MSE", f.Summary().MSE, 9, 0)
}

func BenchmarkBinaryAdd(b *testing.B) {
	m := NewBinary(nil, 0)
	src := rng.New(1)
	s := make([]float64, 1024)
	for i := range s {
		s[i] = 4*src.Float64() - 2
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x := s[i&1023]
		y := 1.0
		if x < 0.3 {
			y = -1
		}
		m.Add(x, y)
	}
}

func BenchmarkRegressAdd(b *testing.B) {
	m := NewRegress()
	for i := 0; i < b.N; i++ {
		m.Add(float64(i&7), float64(i&3))
	}
}

// Run's measures are the progressive ones of the learner over the seeded
// permutation, recomputed here from the scores with independent code (the
// Platt formula written out, the pairwise AUC, the majority-so-far prior).
func TestRunMeasuresRecomputed(t *testing.T) {
	ds := synth(300, false)
	spec := "fogd:sigma=1,budget=10,seed=9"
	res, err := Run(ds, []string{spec}, nil, Config{Runs: 2, Seed: 5, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	var ll, auc, prior, priorLL []float64
	for r := 0; r < 2; r++ {
		l, _ := learner.New(spec+",horizon=300", 3)
		a, b := 1.0, 0.0
		var sumLL float64
		var ss, ys []float64
		pos, neg := 0.0, 0.0
		var pm, pll float64
		for _, i := range dataset.Permutation(300, 5, r) {
			y := ds.Y[i]
			// the prior, before y
			pp := (pos + 1) / (pos + neg + 2)
			if !((pos-neg)*y > 0) {
				pm++
			}
			if y > 0 {
				pll -= math.Log(pp)
				pos++
			} else {
				pll -= math.Log(1 - pp)
				neg++
			}
			f := l.Learn(ds.X[i], y)
			p := 1 / (1 + math.Exp(-(a*f + b)))
			t01 := (y + 1) / 2
			sumLL -= t01*math.Log(p) + (1-t01)*math.Log(1-p)
			a -= 0.05 * (p - t01) * f / (1 + f*f)
			b -= 0.05 * (p - t01) / (1 + f*f)
			ss, ys = append(ss, f), append(ys, y)
		}
		ll = append(ll, sumLL/300)
		auc = append(auc, bruteAUC(ss, ys))
		prior = append(prior, 100*pm/300)
		priorLL = append(priorLL, pll/300)
	}
	m := res.Models[0]
	wantLL, _ := MeanStd(ll)
	wantAUC, _ := MeanStd(auc)
	near(t, "log loss", m.Measures[MeasureLogLoss].Mean, wantLL, 1e-12)
	near(t, "AUC", m.Measures[MeasureAUC].Mean, wantAUC, 1e-12)
	near(t, "mistake rate measure", m.Measures[MeasureMistakeRate].Mean, m.Mean, 1e-12)
	wantP, _ := MeanStd(prior)
	wantPLL, _ := MeanStd(priorLL)
	near(t, "prior mistake rate", res.Baseline.Measures[MeasureMistakeRate].Mean, wantP, 1e-12)
	near(t, "prior log loss", res.Baseline.Measures[MeasureLogLoss].Mean, wantPLL, 1e-12)
	if _, ok := res.Baseline.Measures[MeasureAUC]; ok {
		t.Fatal("the baseline reports an AUC")
	}
	if last := res.Baseline.Curve[len(res.Baseline.Curve)-1]; last.T != 300 || last.Mean != wantP {
		t.Fatalf("baseline curve ends at %+v, want t=300 %v", last, wantP)
	}
	var b strings.Builder
	if err := res.WriteTable(&b); err != nil || !strings.Contains(b.String(), "class prior (baseline)") || !strings.Contains(b.String(), "log loss") {
		t.Fatalf("table:\n%s", b.String())
	}
	b.Reset()
	if err := res.WriteJSON(&b); err != nil || !strings.Contains(b.String(), `"log_loss"`) || !strings.Contains(b.String(), `"baseline"`) {
		t.Fatalf("json: %v\n%s", err, b.String())
	}
}

// With a test set, the reported test error is the frozen model's: trained
// on the permutation (two passes here), then Predict on every test row;
// the curve's points are the model's after the first k·every events.
// Recomputed independently.
func TestRunTestSet(t *testing.T) {
	all := synth(500, false)
	train, test := all.Subset(seq(0, 400)), all.Subset(seq(400, 500))
	spec := "fogd:sigma=1,budget=10,seed=3"
	res, err := Run(train, []string{spec}, nil, Config{Runs: 2, Seed: 7, Passes: 2, Test: test, TestEvery: 300})
	if err != nil {
		t.Fatal(err)
	}
	if res.Test == nil || res.Test.TrainEvents != 800 || res.Passes != 2 {
		t.Fatalf("test result %+v, passes %d", res.Test, res.Passes)
	}
	if !strings.Contains(res.Models[0].Chosen, "horizon=800") {
		t.Fatalf("chosen %s: the horizon must be passes × n", res.Models[0].Chosen)
	}
	testErr := func(l learner.Learner) float64 {
		m := 0
		for i, x := range test.X {
			if l.Predict(x)*test.Y[i] <= 0 {
				m++
			}
		}
		return 100 * float64(m) / float64(test.Len())
	}
	var final, at300, at600 []float64
	var prior []float64
	for r := 0; r < 2; r++ {
		l, _ := learner.New(spec+",horizon=800", 3)
		order := append(dataset.Permutation(400, 7, r), dataset.Permutation(400, rng.Derive(7, passSalt+1), r)...)
		pos := 0
		for k, i := range order {
			l.Learn(train.X[i], train.Y[i])
			if train.Y[i] > 0 {
				pos++
			}
			switch k + 1 {
			case 300:
				at300 = append(at300, testErr(l))
			case 600:
				at600 = append(at600, testErr(l))
			}
		}
		if l.Info().Updates != 800 {
			t.Fatalf("learner updated %d times", l.Info().Updates)
		}
		final = append(final, testErr(l))
		// frozen prior: majority of the training stream (pos of 800)
		maj := 1.0
		switch {
		case 2*pos < 800:
			maj = -1
		case 2*pos == 800:
			maj = 0 // a tie: every prediction a mistake
		}
		m := 0
		for _, y := range test.Y {
			if maj != y {
				m++
			}
		}
		prior = append(prior, 100*float64(m)/float64(test.Len()))
	}
	tm := res.Test.Models[0]
	want, _ := MeanStd(final)
	near(t, "test mistake rate", tm.Measures[MeasureMistakeRate].Mean, want, 1e-12)
	if len(tm.Curve) != 3 || tm.Curve[0].T != 300 || tm.Curve[1].T != 600 || tm.Curve[2].T != 800 {
		t.Fatalf("test curve %+v, want t = 300, 600, 800", tm.Curve)
	}
	w300, _ := MeanStd(at300)
	w600, _ := MeanStd(at600)
	near(t, "test error at 300", tm.Curve[0].Mean, w300, 1e-12)
	near(t, "test error at 600", tm.Curve[1].Mean, w600, 1e-12)
	near(t, "test error at the end", tm.Curve[2].Mean, want, 1e-12)
	wp, _ := MeanStd(prior)
	near(t, "frozen prior's test mistakes", res.Test.Baseline.Measures[MeasureMistakeRate].Mean, wp, 1e-12)
	dir := t.TempDir()
	if err := res.PlotTestCurves(dir + "/test.png"); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := res.WriteTable(&b); err != nil || !strings.Contains(b.String(), "test set synth") {
		t.Fatalf("table:\n%s", b.String())
	}
	// a test set of another dimension is refused
	bad := &dataset.Dataset{Name: "bad", Dim: 2, X: [][]float64{{1, 2}}, Y: []float64{1}}
	if _, err := Run(train, []string{spec}, nil, Config{Runs: 1, Test: bad}); err == nil {
		t.Fatal("test set of dimension 2 accepted for dimension 3")
	}
}

// Regression: MAE, R² against the running mean, and the mean's MSE,
// recomputed.
func TestRunRegressionMeasures(t *testing.T) {
	ds := synth(200, true)
	spec := "fogd:loss=square,sigma=1,budget=10,seed=2"
	res, err := Run(ds, []string{spec}, nil, Config{Runs: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	l, _ := learner.New(spec+",horizon=200", 3)
	var sae, sse, msse, sum float64
	for k, i := range dataset.Permutation(200, 3, 0) {
		y := ds.Y[i]
		mean := 0.0
		if k > 0 {
			mean = sum / float64(k)
		}
		f := l.Learn(ds.X[i], y)
		sae += math.Abs(f - y)
		sse += (f - y) * (f - y)
		msse += (mean - y) * (mean - y)
		sum += y
	}
	m := res.Models[0].Measures
	near(t, "MAE", m[MeasureMAE].Mean, sae/200, 1e-12)
	near(t, "R²", m[MeasureR2].Mean, 1-sse/msse, 1e-12)
	near(t, "mean MSE", res.Baseline.Measures[MeasureMSE].Mean, msse/200, 1e-12)
}

func seq(a, b int) []int {
	var out []int
	for i := a; i < b; i++ {
		out = append(out, i)
	}
	return out
}

// The progress total counts every pass.
func TestTotalEventsPasses(t *testing.T) {
	n, err := TotalEvents([]string{"fogd:sigma=1|2", "nogd"}, 100, Config{Runs: 3, Passes: 2})
	if err != nil || n != (2*3+3)*100*2 {
		t.Fatalf("TotalEvents = %d, %v; want %d", n, err, (2*3+3)*100*2)
	}
}

// A learner with its own probability (the logistic linear model) is
// judged by it, not by a calibration: log loss = mean log(1 + e^(−y·f)).
func TestRunUsesTheLearnersProbability(t *testing.T) {
	ds := synth(300, false)
	res, err := Run(ds, []string{"linear"}, nil, Config{Runs: 1, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	l, _ := learner.New("linear", 3)
	var sum float64
	for _, i := range dataset.Permutation(300, 4, 0) {
		f := l.Learn(ds.X[i], ds.Y[i])
		sum += math.Log1p(math.Exp(-ds.Y[i] * f))
	}
	near(t, "log loss", res.Models[0].Measures[MeasureLogLoss].Mean, sum/300, 1e-12)
}
