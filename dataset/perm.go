package dataset

import "okstream/learner/rng"

// Permutation returns permutation number run of seed: a uniformly random
// permutation of 0..n-1 drawn as rng.New(rng.Derive(seed, uint64(run))).Perm(n).
// It depends on nothing but (n, seed, run) and okstream's own generator, so
// run r of seed s is the same permutation on every machine, Go version and
// platform, and runs 0, 1, 2, ... of one seed are independent.
func Permutation(n int, seed uint64, run int) []int {
	return rng.New(rng.Derive(seed, uint64(run))).Perm(n)
}
