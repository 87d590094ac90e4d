package learner

import (
	"math/bits"
	"slices"
)

// kthSmallest returns the k-th smallest value of a (k = 0: the minimum),
// the value a sorted copy holds at index k, reordering a in place. It is
// introselect: Hoare's quickselect with a median-of-three pivot, O(len(a))
// on average, and slices.Sort (O(n log n)) once the partitioning has gone
// 2·log₂(n) rounds without finishing, so a crafted input cannot make it
// quadratic. a must hold no NaN (the answer is then still a's k-th value
// in slices.Sort's order, computed by that sort). It panics if k is out of
// range.
func kthSmallest(a []float64, k int) float64 {
	if k < 0 || k >= len(a) {
		panic("learner: kthSmallest: rank out of range")
	}
	for _, v := range a {
		if v != v { // NaN: no total order for the partitioning
			slices.Sort(a)
			return a[k]
		}
	}
	lo, hi := 0, len(a)-1
	for budget := 2 * bits.Len(uint(len(a))); hi-lo > 16; budget-- {
		if budget == 0 {
			slices.Sort(a[lo : hi+1])
			return a[k]
		}
		// Median of three as the pivot value.
		m := lo + (hi-lo)/2
		if a[m] < a[lo] {
			a[m], a[lo] = a[lo], a[m]
		}
		if a[hi] < a[lo] {
			a[hi], a[lo] = a[lo], a[hi]
		}
		if a[hi] < a[m] {
			a[hi], a[m] = a[m], a[hi]
		}
		p := a[m]
		i, j := lo, hi
		for i <= j {
			for a[i] < p {
				i++
			}
			for p < a[j] {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		// a[lo..j] ≤ p ≤ a[i..hi], and a[j+1..i−1] == p.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k]
		}
	}
	slices.Sort(a[lo : hi+1])
	return a[k]
}
