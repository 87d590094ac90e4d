package learner

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"okstream/dataset"
	"okstream/learner/rng"
)

// multiStream is a multi-class stream: rows and class indices in order of
// first appearance (as package label numbers them).
type multiStream struct {
	x       [][]float64
	c       []int
	classes int
}

// loadMultiShared loads letter (CSV, label first, 26 letters) or mnist (the
// 10,000-event LIBSVM test file, 784 raw pixels 0–255) from
// ../shared/datasets, takes a random subsample of n events (all if n ≤ 0 or
// n ≥ the file) in a random order fixed by perm, and numbers the classes by
// first appearance. It skips the test when the file is absent.
func loadMultiShared(t testing.TB, name string, n int, perm uint64) *multiStream {
	t.Helper()
	var path string
	var opts dataset.Options
	switch name {
	case "letter":
		path = filepath.Join(dataset.DataRoot(), "letter", "letter-recognition.data")
		opts = dataset.Options{Format: dataset.FormatCSV, Header: dataset.HeaderNo, Label: "0", ClassNames: true}
	case "mnist":
		path = filepath.Join(dataset.DataRoot(), "mnist", "mnist.t.libsvm")
		opts = dataset.Options{Format: dataset.FormatLIBSVM, Dim: 784}
	default:
		t.Fatalf("unknown dataset %s", name)
	}
	if _, err := os.Stat(path); err != nil {
		t.Skipf("shared datasets not available (%v); this test needs ../shared/datasets beside the repository", err)
	}
	ds, err := dataset.Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	idx := make([]int, ds.Len())
	for i := range idx {
		idx[i] = i
	}
	src := rng.New(perm)
	for i := len(idx) - 1; i > 0; i-- {
		j := src.IntN(i + 1)
		idx[i], idx[j] = idx[j], idx[i]
	}
	if n > 0 && n < len(idx) {
		idx = idx[:n]
	}
	s := &multiStream{}
	ids := map[float64]int{}
	for _, i := range idx {
		y := ds.Y[i]
		c, ok := ids[y]
		if !ok {
			c = len(ids)
			ids[y] = c
		}
		s.x = append(s.x, ds.X[i])
		s.c = append(s.c, c)
	}
	s.classes = len(ids)
	return s
}

// multiScore is a progressive (predict-then-learn) evaluation.
type multiScore struct {
	acc, logLoss float64 // accuracy and mean log loss (probabilities clipped at 1e-15)
}

// evalMulti runs m over the stream; a class seen for the first time counts
// as a mistake with probability 0 (clipped).
func evalMulti(m Multi, s *multiStream) multiScore {
	p := make([]float64, s.classes+1)
	var right int
	var ll float64
	for i, x := range s.x {
		c := s.c[i]
		q := m.LearnClass(x, c, p)
		pc := 0.0
		if c < len(q) {
			pc = q[c]
			if ArgMax(q) == c {
				right++
			}
		}
		ll -= math.Log(math.Max(pc, 1e-15))
	}
	n := float64(len(s.x))
	return multiScore{acc: float64(right) / n, logLoss: ll / n}
}

// priorScore is the online class prior: predict the running class
// frequencies (add-½, Krichevsky–Trofimov), the majority class as the
// decision.
func priorScore(s *multiStream) multiScore {
	cnt := make([]float64, s.classes)
	var right int
	var ll float64
	for i, c := range s.c {
		k := 0 // classes seen so far: those below the largest index seen
		for j := range cnt {
			if cnt[j] > 0 {
				k = j + 1
			}
		}
		best := -1
		var tot float64
		for j := 0; j < k; j++ {
			tot += cnt[j] + 0.5
			if best < 0 || cnt[j] > cnt[best] {
				best = j
			}
		}
		pc := 0.0
		if c < k {
			pc = (cnt[c] + 0.5) / tot
		}
		if best == c {
			right++
		}
		ll -= math.Log(math.Max(pc, 1e-15))
		cnt[c]++
		_ = i
	}
	n := float64(len(s.c))
	return multiScore{acc: float64(right) / n, logLoss: ll / n}
}

// TestMultiLearnsRealData: on subsamples of letter and mnist (one
// permutation each) the default multi-class model (auto) beats online
// multinomial logistic regression (linear, standardised) and the class
// prior in progressive accuracy and log loss. Margins, from the measured
// gaps (docs/algorithms/multiclass.md): letter is strongly nonlinear (4,000
// events: auto 72.2 %, linear 62.5 %, log loss 1.206 vs 1.531), so auto
// must be 6 points ahead; on mnist a linear model is strong early (5,000
// events: auto 88.0 %, linear 86.1 %, log loss 0.464 vs 0.554), so auto
// must be ahead by 1 point; both 10 % lower in log loss. On mnist the
// common-scale view is what puts auto ahead (auto:common=false, the
// standardised view only: 86.6 %, log loss 0.499), so auto must also beat
// that by 0.7 points and 3 % in log loss. Both must be far above the prior
// (≈ 4 % and 11 %).
func TestMultiLearnsRealData(t *testing.T) {
	if testing.Short() {
		t.Skip("real-data learning test")
	}
	for _, tc := range []struct {
		name   string
		n      int
		margin float64
	}{{"letter", 4000, 0.06}, {"mnist", 5000, 0.01}} {
		t.Run(tc.name, func(t *testing.T) {
			s := loadMultiShared(t, tc.name, tc.n, 1)
			dim := len(s.x[0])
			run := func(spec string) multiScore {
				m, err := NewMulti(spec, dim)
				if err != nil {
					t.Fatal(err)
				}
				return evalMulti(m, s)
			}
			prior := priorScore(s)
			lin := run("linear")
			auto := run("auto")
			t.Logf("%s (%d events, %d classes): prior %.2f %% (log loss %.3f), linear %.2f %% (%.3f), auto %.2f %% (%.3f)",
				tc.name, len(s.c), s.classes, 100*prior.acc, prior.logLoss, 100*lin.acc, lin.logLoss, 100*auto.acc, auto.logLoss)
			if !(auto.acc > lin.acc+tc.margin) || !(auto.acc > prior.acc+0.3) {
				t.Errorf("auto accuracy %.4f not ahead of linear %.4f by %.3f and of the prior %.4f by 0.3", auto.acc, lin.acc, tc.margin, prior.acc)
			}
			if !(auto.logLoss < 0.9*lin.logLoss) || !(auto.logLoss < 0.5*prior.logLoss) {
				t.Errorf("auto log loss %.4f not 10 %% below linear's %.4f and half the prior's %.4f", auto.logLoss, lin.logLoss, prior.logLoss)
			}
			if tc.name == "mnist" {
				one := run("auto:common=false")
				t.Logf("mnist: auto:common=false %.2f %% (%.3f)", 100*one.acc, one.logLoss)
				if !(auto.acc > one.acc+0.007) || !(auto.logLoss < 0.97*one.logLoss) {
					t.Errorf("auto %.4f (log loss %.4f) not ahead of auto:common=false %.4f (%.4f) by 0.7 points and 3 %%", auto.acc, auto.logLoss, one.acc, one.logLoss)
				}
			}
		})
	}
}

// TestMultiMeasure prints progressive accuracy and log loss of the specs
// in $OKSTREAM_MULTI_SPECS (separated by ';') on $OKSTREAM_MULTI_DATA
// (letter or mnist, $OKSTREAM_MULTI_N events, 0 = all): the measurement
// behind docs/algorithms/multiclass.md. Skipped unless the variables are set.
func TestMultiMeasure(t *testing.T) {
	specs, data := os.Getenv("OKSTREAM_MULTI_SPECS"), os.Getenv("OKSTREAM_MULTI_DATA")
	if specs == "" || data == "" {
		t.Skip("set OKSTREAM_MULTI_SPECS and OKSTREAM_MULTI_DATA to measure")
	}
	n := 0
	if v := os.Getenv("OKSTREAM_MULTI_N"); v != "" {
		f, _ := ParseNumber(v)
		n = int(f)
	}
	s := loadMultiShared(t, data, n, 1)
	prior := priorScore(s)
	t.Logf("%s: %d events, %d classes; prior %.2f %% log loss %.4f", data, len(s.c), s.classes, 100*prior.acc, prior.logLoss)
	for _, spec := range strings.Split(specs, ";") {
		m, err := NewMulti(spec, len(s.x[0]))
		if err != nil {
			t.Fatal(err)
		}
		r := evalMulti(m, s)
		t.Logf("%-40s acc %.2f %% log loss %.4f  (%s)", spec, 100*r.acc, r.logLoss, m.Info().Spec)
		if st, ok := m.(*selfTunedMulti); ok {
			if a, ok := st.inner().m.(*AutoMulti); ok {
				if cv := st.t.common; cv != nil {
					t.Logf("   %v  σ̂ = %.4g, common scale c = %.4g, σ̂' = %.4g", a, 1/st.t.inv, cv.c, 1/cv.inv)
				} else {
					t.Logf("   %v  σ̂ = %.4g", a, 1/st.t.inv)
				}
			}
		}
	}
}
