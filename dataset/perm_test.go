package dataset

import (
	"reflect"
	"slices"
	"testing"
)

func isPerm(p []int) bool {
	s := slices.Clone(p)
	slices.Sort(s)
	for i, v := range s {
		if v != i {
			return false
		}
	}
	return true
}

func TestPermutation(t *testing.T) {
	const n = 1000
	a := Permutation(n, 42, 0)
	if !reflect.DeepEqual(a, Permutation(n, 42, 0)) {
		t.Error("same seed and run gave different permutations")
	}
	if !isPerm(a) || len(a) != n {
		t.Fatal("not a permutation")
	}
	for run := 1; run < 5; run++ {
		b := Permutation(n, 42, run)
		if !isPerm(b) {
			t.Fatalf("run %d: not a permutation", run)
		}
		if reflect.DeepEqual(a, b) {
			t.Errorf("runs 0 and %d coincide", run)
		}
	}
	if reflect.DeepEqual(a, Permutation(n, 43, 0)) {
		t.Error("seeds 42 and 43 coincide")
	}
	if slices.IsSorted(a) {
		t.Error("identity permutation")
	}
	// Pinned: the permutation is a function of (n, seed, run) and okstream's
	// generator alone, so it must not change between machines or releases.
	if got := Permutation(10, 1, 0); !reflect.DeepEqual(got, pinnedPerm) {
		t.Errorf("Permutation(10, 1, 0) = %v, want %v (a change breaks reproducibility)", got, pinnedPerm)
	}
	if len(Permutation(0, 1, 0)) != 0 || !reflect.DeepEqual(Permutation(1, 1, 0), []int{0}) {
		t.Error("n = 0 / 1")
	}
}

var pinnedPerm = []int{9, 5, 7, 0, 4, 1, 2, 3, 8, 6}

func TestPermutedShares(t *testing.T) {
	d := toy()
	p := d.Permuted([]int{2, 0, 1})
	if !reflect.DeepEqual(p.Y, []float64{3, 2, 4}) || &p.X[0][0] != &d.X[2][0] {
		t.Errorf("Permuted: %v, rows not shared", p.Y)
	}
	p.Y[0] = 99
	if d.Y[2] != 3 {
		t.Error("Permuted shares Y")
	}
	s := d.Subset([]int{1, 1})
	if s.Len() != 2 || s.X[0][0] != 10 || s.Dim != 3 || s.Name != "toy" {
		t.Errorf("Subset %+v", s)
	}
	c := d.Clone()
	c.X[0][0] = -5
	if d.X[0][0] != 0 {
		t.Error("Clone shares rows")
	}
	for _, bad := range [][]int{{0, 1}, {0, 1, 1}, {0, 1, 3}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Permuted(%v) did not panic", bad)
				}
			}()
			d.Permuted(bad)
		}()
	}
}

func TestPermuteRealFile(t *testing.T) {
	d := loadShared(t, "german.numer/german.numer")
	perm := Permutation(d.Len(), 7, 3)
	p := d.Permuted(perm)
	c := p.LabelCounts()
	if c[-1] != 700 || c[1] != 300 {
		t.Errorf("permuted label counts %v", c)
	}
	for k, i := range perm {
		if &p.X[k][0] != &d.X[i][0] || p.Y[k] != d.Y[i] {
			t.Fatalf("row %d is not row %d of the file", k, i)
		}
	}
}
