package paper

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"okstream/dataset"
	"okstream/learner"
	"okstream/learner/kernel"
	"okstream/learner/linalg"
	"okstream/learner/rng"
)

// The ceiling's map is the exact rank-k Nyström map: with every point a
// landmark, the Gram matrix of its first k feature columns is the best
// rank-k approximation of K (Eckart–Young: the squared Frobenius error is
// the sum of the discarded squared eigenvalues), and at full rank it is K.
func TestCeilingFeaturesAreTheExactRankKMap(t *testing.T) {
	ds, err := dataset.Load(forksToyFile(t, 40), dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := ds.Len()
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	const sigma = 2.0
	kern := kernel.MustNew(kernel.Gaussian, sigma, 0, 0)
	K := make([]float64, n*n)
	for i := range ds.X {
		for j := range ds.X {
			K[i*n+j] = kern.Eval(ds.X[i], ds.X[j])
		}
	}
	vals, _, err := linalg.SymEig(K, n)
	if err != nil {
		t.Fatal(err)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(vals)))
	const kmax = 8
	feats := ceilingFeatures(ds, all, sigma, kmax)
	for _, k := range []int{1, 3, kmax} {
		var err2, want float64
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				var g float64
				for c := 0; c < k; c++ {
					g += feats[i*kmax+c] * feats[j*kmax+c]
				}
				err2 += (K[i*n+j] - g) * (K[i*n+j] - g)
			}
		}
		for _, v := range vals[k:] {
			want += v * v
		}
		if math.Abs(err2-want) > 1e-9*float64(n) {
			t.Errorf("k = %d: ‖K − F_k F_kᵀ‖² = %.12g, Eckart–Young's %.12g", k, err2, want)
		}
	}
}

// The runner reports FORKS (paper's settings and without update rounds) and
// the ceiling at k = 0.1B, 0.2B, 0.5B and B, each with σ picked on the
// reported runs; FORKS' per-run rates are those of the learner run directly
// on each permutation with the chosen σ, the ceiling's are rates, and the
// markdown and plot are written.
func TestForksCeilingRunner(t *testing.T) {
	path := forksToyFile(t, 300)
	e := &Experiment{ID: "toy-ceiling", Task: "classification", Runs: 2,
		Datasets: []Dataset{{Key: path, Title: "toy", B: 20, Variants: []Variant{{Name: "raw", Scale: "none"}}}},
		Custom:   runForksCeiling}
	img := t.TempDir()
	rep, err := e.Run(Options{ImgDir: img, ImgRel: "img", Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Data.(*ceilingResult).Cells[0]
	if len(c.FORKS) != 2 || len(c.Ceiling) != len(ceilingRanks) {
		t.Fatalf("%d FORKS rows, %d ceiling rows", len(c.FORKS), len(c.Ceiling))
	}
	for j, row := range c.Ceiling {
		if row.K != ceilingRanks[j]*2 || len(row.PerRun) != 2 || row.Mean < 0 || row.Mean > 100 {
			t.Errorf("ceiling row %d: k = %d, %d runs, mean %v", j, row.K, len(row.PerRun), row.Mean)
		}
	}
	ds, _ := dataset.Load(path, dataset.Options{})
	if err := ds.BinaryLabels(nil); err != nil {
		t.Fatal(err)
	}
	row := c.FORKS[0]
	for r := 0; r < 2; r++ {
		spec := fmt.Sprintf("forks:budget=20,buffer=40,sp=20,sm=4,k=2,blocks=1,theta=0.3,%s,horizon=%d,seed=%d", row.Sigma, ds.Len(), rng.Derive(3, 1<<32+uint64(r)))
		l, err := learner.New(spec, ds.Dim)
		if err != nil {
			t.Fatal(err)
		}
		mistakes := 0
		for _, i := range dataset.Permutation(ds.Len(), 3, r) {
			if learner.Mistake(l.Learn(ds.X[i], ds.Y[i]), ds.Y[i]) {
				mistakes++
			}
		}
		if want := 100 * float64(mistakes) / float64(ds.Len()); math.Abs(row.PerRun[r]-want) > 1e-12 {
			t.Fatalf("FORKS run %d: reported %v, recomputed %v", r, row.PerRun[r], want)
		}
	}
	if !strings.Contains(rep.Body, "**ceiling, k = 0.1B (FORKS' rank)**") || !strings.Contains(rep.Body, "okstream FORKS, no update rounds") {
		t.Fatalf("markdown lacks rows:\n%s", rep.Body)
	}
	if _, err := os.Stat(filepath.Join(img, "toy-ceiling.png")); err != nil {
		t.Fatal(err)
	}
}
