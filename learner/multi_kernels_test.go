package learner_test

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"okstream/dataset"
	"okstream/eval"
	"okstream/learner"
	"okstream/learner/rng"
)

// multiStream is a multi-class stream: rows and class indices 0..K−1 in
// order of first appearance (the protocol of learner.Multi).
type multiStream struct {
	X   [][]float64
	C   []int
	Dim int
	K   int
}

// loadLetter loads UCI letter (../shared/datasets/letter, CSV, label
// first, 26 class names), permutes it with seed and keeps the first n rows
// (n ≤ 0: all), renumbering the classes in order of first appearance. It
// skips the test when the file is absent.
func loadLetter(t testing.TB, n int, seed uint64) *multiStream {
	t.Helper()
	path := filepath.Join(dataset.DataRoot(), "letter", "letter-recognition.data")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("shared datasets not available (%v); this test needs ../shared/datasets/letter beside the repository", err)
	}
	ds, err := dataset.Load(path, dataset.Options{Format: dataset.FormatCSV, Header: dataset.HeaderNo, Label: "0", ClassNames: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Classes) != 26 {
		t.Fatalf("letter: %d classes, want 26", len(ds.Classes))
	}
	perm := rng.New(seed).Perm(ds.Len())
	if n <= 0 || n > len(perm) {
		n = len(perm)
	}
	s := &multiStream{Dim: ds.Dim}
	idx := map[float64]int{}
	for _, i := range perm[:n] {
		c, ok := idx[ds.Y[i]]
		if !ok {
			c = len(idx)
			idx[ds.Y[i]] = c
		}
		s.X = append(s.X, ds.X[i])
		s.C = append(s.C, c)
	}
	s.K = len(idx)
	return s
}

// multiScore is a progressive evaluation: accuracy (%) of the pre-update
// argmax and mean log loss (nats, probabilities clipped at eval.ProbClip;
// a class seen for the first time had probability 0).
type multiScore struct{ Acc, LogLoss float64 }

func multiProgressive(t testing.TB, m learner.Multi, s *multiStream) multiScore {
	t.Helper()
	p := make([]float64, learner.MaxClasses)
	var hit int
	var ll float64
	for i, x := range s.X {
		c := s.C[i]
		q := m.LearnClass(x, c, p)
		var pc float64
		if c < len(q) {
			pc = q[c]
		}
		if learner.ArgMax(q) == c {
			hit++
		}
		ll -= math.Log(math.Max(pc, eval.ProbClip))
	}
	n := float64(len(s.X))
	return multiScore{Acc: 100 * float64(hit) / n, LogLoss: ll / n}
}

// priorScore is the class prior's score on s: the accuracy of always
// predicting the majority class (in hindsight) and the progressive log
// loss of the online class frequencies with add-one smoothing over the
// classes seen so far.
func priorScore(s *multiStream) multiScore {
	count := make([]int, s.K)
	var ll float64
	seen := 0
	for i, c := range s.C {
		if c >= seen {
			ll -= math.Log(eval.ProbClip)
			seen = c + 1
		} else {
			ll -= math.Log(float64(count[c]+1) / float64(i+seen))
		}
		count[c]++
	}
	best := 0
	for _, v := range count {
		best = max(best, v)
	}
	n := float64(len(s.C))
	return multiScore{Acc: 100 * float64(best) / n, LogLoss: ll / n}
}

func newMultiT(t testing.TB, spec string, dim int) learner.Multi {
	t.Helper()
	m, err := learner.NewMulti(spec, dim)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkMultiContract checks the Multi contract on the first n events of s:
// determinism (two learners of one spec give bit-identical distributions
// and states), bit-identical continuation after MarshalBinary /
// UnmarshalBinary into a fresh learner at every cut in cuts, distributions
// that sum to 1, classes that grow by one on a new class, and hostile
// state bytes (truncations, flipped bytes, another spec's state) that
// error without panicking and leave the learner unchanged.
func checkMultiContract(t *testing.T, spec string, s *multiStream, n int, cuts ...int) {
	t.Helper()
	a, b := newMultiT(t, spec, s.Dim), newMultiT(t, spec, s.Dim)
	if a.Info().Task != learner.MultiClass {
		t.Fatalf("%s: task %v", spec, a.Info().Task)
	}
	pa, pb := make([]float64, learner.MaxClasses), make([]float64, learner.MaxClasses)
	var c learner.Multi // restored copy
	cutAt := map[int]bool{}
	for _, k := range cuts {
		cutAt[k] = true
	}
	for i := range n {
		x, y := s.X[i], s.C[i]
		if cutAt[i] {
			st, err := b.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			c = newMultiT(t, spec, s.Dim)
			if err := c.UnmarshalBinary(st); err != nil {
				t.Fatalf("%s: restore at %d: %v", spec, i, err)
			}
			b = c
		}
		k := a.Classes()
		q := a.PredictProba(x, pa)
		if len(q) != k {
			t.Fatalf("%s: %d probabilities for %d classes", spec, len(q), k)
		}
		qa := append([]float64(nil), a.LearnClass(x, y, pa)...)
		qb := b.LearnClass(x, y, pb)
		if len(qa) != len(qb) {
			t.Fatalf("%s event %d: %d vs %d classes", spec, i, len(qa), len(qb))
		}
		var sum float64
		for j := range qa {
			if math.Float64bits(qa[j]) != math.Float64bits(qb[j]) {
				t.Fatalf("%s event %d: p[%d] = %v vs %v (determinism or continuation)", spec, i, j, qa[j], qb[j])
			}
			if !(qa[j] >= 0) {
				t.Fatalf("%s event %d: p[%d] = %v", spec, i, j, qa[j])
			}
			sum += qa[j]
		}
		if k > 0 && math.Abs(sum-1) > 1e-9 {
			t.Fatalf("%s event %d: probabilities sum to %v", spec, i, sum)
		}
		want := k
		if y == k {
			want++
		}
		if a.Classes() != want {
			t.Fatalf("%s event %d: %d classes after class %d with %d before", spec, i, a.Classes(), y, k)
		}
	}
	sa, _ := a.MarshalBinary()
	sb, _ := b.MarshalBinary()
	if string(sa) != string(sb) {
		t.Fatalf("%s: final states differ (%d vs %d bytes)", spec, len(sa), len(sb))
	}
	// Hostile bytes: every truncation point (sampled) and flipped bytes
	// must error or succeed without panicking; an error leaves the learner
	// unchanged.
	fresh := newMultiT(t, spec, s.Dim)
	before, _ := fresh.MarshalBinary()
	try := func(what string, data []byte) {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%s: %s: panic %v", spec, what, r)
			}
		}()
		if err := fresh.UnmarshalBinary(data); err != nil {
			now, _ := fresh.MarshalBinary()
			if string(now) != string(before) {
				t.Fatalf("%s: %s: refused state changed the learner", spec, what)
			}
			return
		}
		fresh = newMultiT(t, spec, s.Dim)
	}
	step := max(1, len(sa)/97)
	for cut := 0; cut < len(sa); cut += step {
		try("truncated", sa[:cut])
	}
	r := rng.New(7)
	for range 200 {
		g := append([]byte(nil), sa...)
		for range 1 + r.IntN(4) {
			g[r.IntN(len(g))] ^= byte(1 + r.IntN(255))
		}
		try("flipped", g)
	}
	junk := make([]byte, 4096)
	for i := range junk {
		junk[i] = byte(r.IntN(256))
	}
	try("junk", junk)
	if err := fresh.UnmarshalBinary(junk); err == nil {
		t.Fatalf("%s: random bytes accepted", spec)
	}
}

// standardised returns s with every feature standardised by the mean and
// standard deviation of the first w events (the online warm-up's view: no
// later event is used); a constant feature is only centred.
func standardised(s *multiStream, w int) *multiStream {
	w = min(w, len(s.X))
	mean, sd := make([]float64, s.Dim), make([]float64, s.Dim)
	for _, x := range s.X[:w] {
		for j, v := range x {
			mean[j] += v / float64(w)
		}
	}
	for _, x := range s.X[:w] {
		for j, v := range x {
			sd[j] += (v - mean[j]) * (v - mean[j]) / float64(w)
		}
	}
	out := *s
	out.X = make([][]float64, len(s.X))
	for i, x := range s.X {
		z := make([]float64, s.Dim)
		for j, v := range x {
			z[j] = v - mean[j]
			if sd[j] > 0 {
				z[j] /= math.Sqrt(sd[j])
			}
		}
		out.X[i] = z
	}
	return &out
}

// TestMultiKernelsLetterExplore logs the learners at several settings
// (-run Explore; skipped unless MULTI_EXPLORE is set).
func TestMultiKernelsLetterExplore(t *testing.T) {
	if os.Getenv("MULTI_EXPLORE") == "" {
		t.Skip("set MULTI_EXPLORE=spec1;spec2 to run")
	}
	n, _ := strconv.Atoi(os.Getenv("MULTI_EXPLORE_N"))
	if n == 0 {
		n = 4000
	}
	seed, _ := strconv.Atoi(os.Getenv("MULTI_EXPLORE_SEED"))
	s := standardised(loadLetter(t, n, uint64(max(seed, 1))), 300)
	prior := priorScore(s)
	lin := multiProgressive(t, newMultiT(t, "linear", s.Dim), s)
	t.Logf("prior %.2f %% %.3f; linear %.2f %% %.3f", prior.Acc, prior.LogLoss, lin.Acc, lin.LogLoss)
	for _, spec := range strings.Split(os.Getenv("MULTI_EXPLORE"), ";") {
		got := multiProgressive(t, newMultiT(t, spec, s.Dim), s)
		t.Logf("%s: %.2f %% %.3f", spec, got.Acc, got.LogLoss)
	}
}

// TestMultiKernelsContract: the Multi contract (checkMultiContract) for
// the multi-class forms of nogd, forks and pkawv, with cuts in both phases
// (before and after the map is built).
func TestMultiKernelsContract(t *testing.T) {
	s := standardised(loadLetter(t, 600, 5), 300)
	for _, spec := range multiKernelSpecs {
		if _, ok := newMultiT(t, spec, s.Dim).(*learner.OvR); ok {
			t.Fatalf("%s: built one-vs-rest, want the native multi-class form", spec)
		}
		checkMultiContract(t, spec, s, 600, 1, 20, 61, 250, 430)
	}
}

// multiKernelSpecs are small configurations of each learner (map built
// after at most 60 events).
var multiKernelSpecs = []string{
	"nogd:sigma=4,budget=60",
	"nogd:sigma=4,budget=60,k=20,warm=false",
	"pkawv:sigma=3",
	"forks:sigma=4,budget=20,rho=100",
	"forks:sigma=4,budget=20,rho=100,update_head=reset,warm=none,decomp=svd",
}

// synthMulti is a stream of C Gaussian clusters in ℝ^d (unit-variance
// noise around centres of norm about 3), classes cycling so that all C
// appear in the first C events.
func synthMulti(n, d, C int, seed uint64) *multiStream {
	r := rng.New(seed)
	centres := make([][]float64, C)
	for c := range centres {
		centres[c] = make([]float64, d)
		for j := range centres[c] {
			centres[c][j] = 3 * (2*r.Float64() - 1) / math.Sqrt(float64(d)/3)
		}
	}
	s := &multiStream{Dim: d, K: C}
	for i := range n {
		c := i % C
		if i >= C {
			c = r.IntN(C)
		}
		x := make([]float64, d)
		for j := range x {
			x[j] = centres[c][j] + 2*r.Float64() - 1
		}
		s.X, s.C = append(s.X, x), append(s.C, c)
	}
	return s
}

// BenchmarkMultiCost: steady-state cost per event of each multi-class
// form against its binary form, C = 10 classes, d = 50 (after a warm-up
// of 2,000 events: maps built). The binary forms run the logistic loss
// (an update every event, as the softmax head's) at the multi-class
// forms' map sizes (preset=wide: k = B for NOGD, s_m = k = 50 for FORKS);
// the binary learner learns class 0 against the rest. ONS-k50 is one FORKS ONS step at k = 50
// (FeatureONS), the per-class cost a K-head ONS would pay K times.
func BenchmarkMultiCost(b *testing.B) {
	const d, C = 50, 10
	s := synthMulti(6000, d, C, 1)
	for _, tc := range []struct{ name, spec string }{
		{"nogd", "nogd:sigma=8,preset=wide,loss=logistic"},
		{"forks", "forks:sigma=8,preset=wide,loss=logistic"},
		{"pkawv", "pkawv:sigma=8,task=classification"},
		{"bpas-ovr", "bpas:sigma=8"},
	} {
		multiSpec := tc.spec
		switch tc.name {
		case "nogd":
			multiSpec = "nogd:sigma=8"
		case "forks":
			multiSpec = "forks:sigma=8"
		case "pkawv":
			multiSpec = "pkawv:sigma=8"
		}
		b.Run(tc.name+"/binary", func(b *testing.B) {
			l, err := learner.New(tc.spec, d)
			if err != nil {
				b.Fatal(err)
			}
			for i := range 2000 {
				l.Learn(s.X[i], float64(2*min(s.C[i], 1)-1))
			}
			b.ResetTimer()
			for i := range b.N {
				j := 2000 + i%4000
				l.Learn(s.X[j], float64(2*min(s.C[j], 1)-1))
			}
		})
		b.Run(tc.name+"/multi", func(b *testing.B) {
			m := newMultiT(b, multiSpec, d)
			p := make([]float64, C+1)
			for i := range 2000 {
				m.LearnClass(s.X[i], s.C[i], p)
			}
			b.ResetTimer()
			for i := range b.N {
				j := 2000 + i%4000
				m.LearnClass(s.X[j], s.C[j], p)
			}
		})
	}
	b.Run("ONS-k50", func(b *testing.B) {
		o := learner.NewFeatureONS(50, 0.01, 0, 0.5, learner.Hinge)
		phi := make([]float64, 50)
		for i := range phi {
			phi[i] = math.Sin(float64(i))
		}
		b.ResetTimer()
		for i := range b.N {
			o.Learn(phi, float64(2*(i%2)-1))
		}
	})
}

// TestMultiKernelsLearnLetter: on 4,000 letter events (standardised on the
// first 300), each multi-class kernel learner beats the class prior by a
// clear margin in accuracy and log loss; the linear multinomial model is
// logged beside them (docs/algorithms/multiclass-kernels.md has the
// numbers).
func TestMultiKernelsLearnLetter(t *testing.T) {
	s := standardised(loadLetter(t, 4000, 1), 300)
	prior := priorScore(s)
	lin := multiProgressive(t, newMultiT(t, "linear", s.Dim), s)
	t.Logf("class prior %.2f %% %.3f nats; linear %.2f %% %.3f", prior.Acc, prior.LogLoss, lin.Acc, lin.LogLoss)
	for _, spec := range []string{"nogd:sigma=3,budget=300", "forks:sigma=3,budget=200", "pkawv:sigma=3"} {
		got := multiProgressive(t, newMultiT(t, spec, s.Dim), s)
		t.Logf("%s: %.2f %% %.3f nats", spec, got.Acc, got.LogLoss)
		if got.Acc < prior.Acc+40 || got.LogLoss > prior.LogLoss-1 {
			t.Errorf("%s: %.2f %% / %.3f nats, not clearly better than the class prior's %.2f %% / %.3f", spec, got.Acc, got.LogLoss, prior.Acc, prior.LogLoss)
		}
	}
}

// TestMultiKernelsNoAlloc: once every class is known and the map is built
// (and away from FORKS' update rounds), PredictProba and LearnClass do not
// allocate.
func TestMultiKernelsNoAlloc(t *testing.T) {
	s := synthMulti(3000, 8, 5, 2)
	for _, spec := range []string{"nogd:sigma=2,budget=50", "forks:sigma=2,budget=30,rho=100000", "pkawv:sigma=2"} {
		m := newMultiT(t, spec, s.Dim)
		p := make([]float64, 8)
		for i := range 1000 {
			m.LearnClass(s.X[i], s.C[i], p)
		}
		i := 1000
		a := testing.AllocsPerRun(200, func() {
			m.PredictProba(s.X[i], p)
			m.LearnClass(s.X[i], s.C[i], p)
			i++
		})
		if a != 0 {
			t.Errorf("%s: %v allocations per event", spec, a)
		}
	}
}
