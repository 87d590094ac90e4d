package drift

import (
	"math"
	"testing"

	"okstream/learner/rng"
)

// Hand-computed: α = 1, δ = 0.1, values 0, 0, 0, 2, 2.
// t = 1..3: x̄ = 0, m_t = −0.1t, M_t = m_t, PH = 0.
// t = 4: x̄ = 0.5, m_4 = −0.3 + 1.5 − 0.1 = 1.1, M_4 = −0.3, PH = 1.4.
// t = 5: x̄ = 0.8, m_5 = 1.1 + 1.2 − 0.1 = 2.2, PH = 2.5.
func TestPageHinkleyHand(t *testing.T) {
	xs := []float64{0, 0, 0, 2, 2}
	for _, tc := range []struct {
		lambda float64
		min    int
		dir    Direction
		data   []float64
		want   int // index of the alarm, -1 none
	}{
		{1, 1, DirUp, xs, 3},                         // 1.4 > 1
		{2, 1, DirUp, xs, 4},                         // 1.4 ≤ 2 < 2.5
		{1, 5, DirUp, xs, 4},                         // not before the 5th value
		{3, 1, DirUp, xs, -1},                        // 2.5 ≤ 3
		{1, 1, DirDown, xs, -1},                      // an increase
		{1, 1, DirDown, []float64{2, 2, 2, 0, 0}, 3}, // mirrored: 0.3 − (−1.1) = 1.4
		{1, 1, DirBoth, []float64{2, 2, 2, 0, 0}, 3},
		{1, 1, DirBoth, xs, 3},
	} {
		p := newPH(t, PageHinkleyConfig{Delta: 0.1, Lambda: tc.lambda, MinInstances: tc.min, Alpha: 1, Dir: tc.dir})
		got := firstFrom(alarms(p, tc.data), 0)
		if got != tc.want {
			t.Errorf("%+v: alarm at %d, want %d", tc, got, tc.want)
		}
	}
	p := newPH(t, PageHinkleyConfig{Delta: 0.1, Lambda: 10, MinInstances: 1, Alpha: 1})
	want := []float64{0, 0, 0, 1.4, 2.5}
	for i, x := range xs {
		p.Add(x)
		if math.Abs(p.Statistic()-want[i]) > 1e-12 {
			t.Errorf("step %d: PH = %v, want %v", i+1, p.Statistic(), want[i])
		}
	}
	if p.Width() != 5 || math.Abs(p.Mean()-0.8) > 1e-15 || math.Abs(p.Variance()-0.96) > 1e-12 {
		t.Errorf("width %d mean %v variance %v, want 5 0.8 0.96", p.Width(), p.Mean(), p.Variance())
	}
}

// With α = 1 the statistic is the survey's m_T − M_T, m_T = Σ_{t≤T}
// (x_t − x̄_t − δ), computed here directly; with α < 1, the recursion
// m_t = α·m_{t−1} + x_t − x̄_t − δ.
func TestPageHinkleyDefinition(t *testing.T) {
	for _, alpha := range []float64{1, 0.99} {
		p := newPH(t, PageHinkleyConfig{Lambda: 1e9, Alpha: alpha})
		src := rng.New(11)
		var sum, m, minm float64
		for i := 1; i <= 2000; i++ {
			x := src.Normal()
			p.Add(x)
			sum += x
			mean := sum / float64(i)
			m = alpha*m + (x - mean - DefaultPHDelta)
			if i == 1 || m < minm {
				minm = m
			}
			if math.Abs(p.Statistic()-(m-minm)) > 1e-9*(1+math.Abs(m)) {
				t.Fatalf("α=%v step %d: PH %v, definition %v", alpha, i, p.Statistic(), m-minm)
			}
		}
	}
}

// After an alarm the test starts afresh.
func TestPageHinkleyResetsAtAlarm(t *testing.T) {
	p := newPH(t, PageHinkleyConfig{})
	xs := abrupt(5, 20_000, 10_000, 0, 1, true)
	for i, x := range xs {
		if p.Add(x) {
			if p.Width() != 0 || p.Mean() != 0 || p.Statistic() != 0 {
				t.Fatalf("alarm at %d left state %d %v %v", i, p.Width(), p.Mean(), p.Statistic())
			}
			return
		}
	}
	t.Fatal("no alarm")
}

func TestPageHinkleyConfig(t *testing.T) {
	for _, c := range []PageHinkleyConfig{{Delta: -1}, {Lambda: -1}, {Lambda: math.Inf(1)}, {MinInstances: -3},
		{Alpha: 1.5}, {Alpha: math.NaN()}, {Dir: 9}} {
		if _, err := NewPageHinkley(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	p := newPH(t, PageHinkleyConfig{})
	if got := p.Spec(); got != "pagehinkley:delta=0.005,lambda=50,min=30,alpha=0.9999,dir=up" {
		t.Errorf("spec %q", got)
	}
	for _, x := range []float64{math.NaN(), math.Inf(-1), -2e100} {
		if p.Add(x) || p.Width() != 0 {
			t.Errorf("Add(%v) was taken", x)
		}
	}
}
