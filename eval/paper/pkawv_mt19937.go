package paper

// NumPy's legacy permutation, so that the PKAWV casp experiment streams the
// rows in exactly the order the authors' Python code used on our files
// (np.random.RandomState(0).permutation(n)).
// okstream's own permutations (dataset.Permutation, PCG-DXSM) are
// statistically equivalent but cannot reproduce that order, and the
// deterministic methods (Taylor features, exact Kernel-AWV) can only be
// compared with the reference's numbers to 1e-9 on the same order.
//
// MT19937 as specified by Matsumoto and Nishimura (1998): a 624-word state
// seeded by init_genrand (NumPy's RandomState(seed) for an integer seed),
// the standard twist and tempering. The permutation is NumPy's legacy
// shuffle of 0..n−1: for i = n−1 down to 1, j is drawn from 0..i by
// masking 32-bit outputs with the smallest 2^k − 1 ≥ i and rejecting
// values above i, and a[i], a[j] are swapped. Checked against the authors' code's
// perm[0:10] and perm[−3:] for n = 45,730 and 59,535
// (TestNumPyPermutationMatchesAuthorsCode).

const (
	mtN       = 624
	mtM       = 397
	mtMatrixA = 0x9908b0df
	mtUpper   = 0x80000000
	mtLower   = 0x7fffffff
)

// mt19937 is a Mersenne Twister generator (32-bit outputs).
type mt19937 struct {
	mt  [mtN]uint32
	idx int
}

// newMT19937 seeds the generator with init_genrand(seed).
func newMT19937(seed uint32) *mt19937 {
	g := &mt19937{}
	g.mt[0] = seed
	for i := 1; i < mtN; i++ {
		prev := g.mt[i-1]
		g.mt[i] = 1812433253*(prev^(prev>>30)) + uint32(i)
	}
	g.idx = mtN
	return g
}

// twist regenerates the 624 words of state.
func (g *mt19937) twist() {
	for i := range mtN {
		y := (g.mt[i] & mtUpper) | (g.mt[(i+1)%mtN] & mtLower)
		v := g.mt[(i+mtM)%mtN] ^ (y >> 1)
		if y&1 != 0 {
			v ^= mtMatrixA
		}
		g.mt[i] = v
	}
	g.idx = 0
}

// Uint32 returns the next tempered output.
func (g *mt19937) Uint32() uint32 {
	if g.idx >= mtN {
		g.twist()
	}
	y := g.mt[g.idx]
	g.idx++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// interval returns a uniform integer in [0, max] (NumPy's legacy
// random_interval for max < 2³²).
func (g *mt19937) interval(max uint32) uint32 {
	if max == 0 {
		return 0
	}
	mask := max
	mask |= mask >> 1
	mask |= mask >> 2
	mask |= mask >> 4
	mask |= mask >> 8
	mask |= mask >> 16
	for {
		if v := g.Uint32() & mask; v <= max {
			return v
		}
	}
}

// NumPyPermutation returns np.random.RandomState(seed).permutation(n) for
// 0 ≤ n < 2³²: the stream order of the PKAWV authors' experiments (seed 0)
// on a dataset of n rows.
func NumPyPermutation(n int, seed uint32) []int {
	g := newMT19937(seed)
	a := make([]int, n)
	for i := range a {
		a[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := int(g.interval(uint32(i)))
		a[i], a[j] = a[j], a[i]
	}
	return a
}
