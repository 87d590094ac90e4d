package paper

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The permutation the PKAWV authors' code used on our files:
// NumPy's RandomState(0).permutation(n) for casp and cod-rna.
func TestNumPyPermutationMatchesAuthorsCode(t *testing.T) {
	for _, c := range []struct {
		n          int
		head, tail []int
	}{
		{45730, []int{23527, 12311, 14747, 5809, 20851, 29156, 31406, 22564, 27608, 21255}, []int{42613, 43567, 2732}},
		{59535, []int{49428, 24944, 37468, 53489, 15479, 36147, 17048, 20070, 27302, 25987}, []int{42613, 43567, 2732}},
	} {
		p := NumPyPermutation(c.n, 0)
		if !slices.Equal(p[:10], c.head) || !slices.Equal(p[c.n-3:], c.tail) {
			t.Errorf("n = %d: perm[0:10] = %v, perm[-3:] = %v; the authors' code: %v, %v", c.n, p[:10], p[c.n-3:], c.head, c.tail)
		}
		seen := make([]bool, c.n)
		for _, v := range p {
			if seen[v] {
				t.Fatalf("n = %d: %d repeated", c.n, v)
			}
			seen[v] = true
		}
	}
	// The first outputs of MT19937 seeded by init_genrand(5489), the
	// reference implementation's default seed.
	g := newMT19937(5489)
	if v := g.Uint32(); v != 3499211612 {
		t.Errorf("MT19937(5489) first output %d, want 3499211612", v)
	}
}

// The pkawv-casp experiment's code path on the first 1,000 events of casp
// (skipped without the shared data): every algorithm runs, the
// deterministic rows equal the authors' code at t = 1000 (run on our file) to
// 1e-9, Kernel-AWV is the best, the Taylor rows approach it as M grows,
// and the markdown and both plots are written.
func TestPKAWVCaspExperimentPrefix(t *testing.T) {
	if testing.Short() {
		t.Skip("runs eight learners on 1,000 casp events")
	}
	ds, _, err := pkawvCaspData()
	if err != nil {
		t.Skipf("shared datasets not available (%v)", err)
	}
	algos := pkawvCaspAlgos(ds.Len())
	for i := range algos {
		algos[i].Limit = 1000
	}
	series, err := pkawvCaspRun(ds, algos, nil)
	if err != nil {
		t.Fatal(err)
	}
	loss := map[string]float64{}
	for _, s := range series {
		loss[s.Label] = s.Loss[len(s.Loss)-1]
		t.Logf("%-32s %.5f  size %4d  %7.1f µs/event", s.Label, loss[s.Label], s.Size, s.NsPerEvent/1e3)
		if s.Events != 1000 || s.T[len(s.T)-1] != 1000 {
			t.Errorf("%s: %d events, last checkpoint %d", s.Label, s.Events, s.T[len(s.T)-1])
		}
		for _, c := range s.Checks {
			if s.Exact && math.Abs(c.Delta) > 1e-9 {
				t.Errorf("%s at t = %d: %.10f, the authors' code %.10f", s.Label, c.T, c.Ours, c.Ref)
			}
		}
	}
	k, m2, m3, m4 := loss["Kernel-AWV"], loss["PKAWV-Taylor M=2"], loss["PKAWV-Taylor M=3"], loss["PKAWV-Taylor M=4"]
	if !(k < m4 && m4 < m3 && m3 < m2) {
		t.Errorf("Kernel-AWV %.5f, Taylor M=4 %.5f, M=3 %.5f, M=2 %.5f: not approaching Kernel-AWV as M grows", k, m4, m3, m2)
	}
	dir := t.TempDir()
	res := &pkawvCaspResult{N: 1000, Series: series}
	for _, tp := range []bool{false, true} {
		if err := pkawvCaspPlot(res, filepath.Join(dir, "p.png"), tp); err != nil {
			t.Fatal(err)
		}
	}
	md := pkawvCaspMarkdown(res, "img/l.png", "img/t.png")
	for _, want := range []string{"| Kernel-AWV | 1000 |", "(0.24854)", "Gap to Kernel-AWV at t = 1000", "![casp: cumulative time against t](img/t.png)"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
