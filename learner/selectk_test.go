package learner

import (
	"slices"
	"testing"

	"okstream/learner/rng"
)

// TestKthSmallestMatchesSort checks kthSmallest against a sorted copy on
// random, tied, sorted, reversed and organ-pipe inputs, for every rank of
// the small ones and the median and extremes of the large ones.
func TestKthSmallestMatchesSort(t *testing.T) {
	src := rng.New(7)
	inputs := map[string][]float64{}
	for _, n := range []int{1, 2, 3, 17, 18, 100, 1001, 44850} {
		r := make([]float64, n)
		tied := make([]float64, n)
		asc := make([]float64, n)
		pipe := make([]float64, n)
		for i := range r {
			r[i] = src.Normal()
			tied[i] = float64(src.IntN(3))
			asc[i] = float64(i)
			pipe[i] = float64(min(i, n-i))
		}
		desc := slices.Clone(asc)
		slices.Reverse(desc)
		for name, in := range map[string][]float64{"random": r, "tied": tied, "ascending": asc, "descending": desc, "organ-pipe": pipe} {
			inputs[name+"/"+itoa(n)] = in
		}
	}
	for name, in := range inputs {
		want := slices.Clone(in)
		slices.Sort(want)
		ranks := []int{0, (len(in) - 1) / 2, len(in) / 2, len(in) - 1}
		if len(in) <= 100 {
			ranks = ranks[:0]
			for k := range in {
				ranks = append(ranks, k)
			}
		}
		for _, k := range ranks {
			if got := kthSmallest(slices.Clone(in), k); got != want[k] {
				t.Fatalf("%s: rank %d: got %v, want %v", name, k, got, want[k])
			}
		}
	}
}
