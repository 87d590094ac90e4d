package dataset

// Adversarial "online learning games" of the FORKS paper (Wen et al., arXiv
// 2410.11188v2, §5.2 and App. D.3; how instances are drawn is our
// reading, docs/algorithms/forks-and-baselines.md), built from a binary dataset: b blocks, each block one
// instance of the base dataset repeated r times as r consecutive rounds,
// with the labels of every even block multiplied by −1. codrna-1 and
// german-1 are b = 500, r = 10 (T = 5,000); codrna-2 and german-2 are
// b = 500, r = 20 (T = 10,000).
//
// The paper does not say how the instances are drawn, whether "even" is
// 1-based, or whether each run draws a new game. Our recipe (docs/algorithms/forks-and-baselines.md):
// the b instances are drawn uniformly without replacement from the base
// dataset with okstream's generator seeded by the game's seed (so a game is
// a pure function of the base dataset, b, r and the seed); blocks are
// numbered 1..b and block j's labels are flipped when j is even; the rows
// are returned in presentation order, which is the experiment — callers
// must not permute them (eval.Config.NoPermute). Experiments that want a
// new game per run give run i the seed rng.Derive(seed, i).

import (
	"fmt"
	"strings"

	"okstream/learner/rng"
)

// AdversarialGame configures an adversarial game.
type AdversarialGame struct {
	Blocks  int    // b ≥ 1, at most the base dataset's size (distinct instances)
	Repeats int    // r ≥ 1
	Seed    uint64 // draws the instances
}

// The paper's games: suffix "-1" (Table 2) and "-2" (Table 3).
var (
	AdversarialGame1 = AdversarialGame{Blocks: 500, Repeats: 10}
	AdversarialGame2 = AdversarialGame{Blocks: 500, Repeats: 20}
)

// Len is the number of rounds T = b·r.
func (g AdversarialGame) Len() int { return g.Blocks * g.Repeats }

// String names the game, e.g. "b=500,r=10,seed=1".
func (g AdversarialGame) String() string {
	return fmt.Sprintf("b=%d,r=%d,seed=%d", g.Blocks, g.Repeats, g.Seed)
}

// Adversarial returns the game g played on base: T = b·r rows in
// presentation order, block j (1-based) being one instance of base repeated
// r times with its label negated when j is even. base's labels must be −1
// or +1 (see BinaryLabels). The rows are shared with base (not copied); Y
// is new. Instance i of the game is base row Sample(n, b)[i] of
// rng.New(g.Seed). The result's Name is base's with the game appended.
func Adversarial(base *Dataset, g AdversarialGame) (*Dataset, error) {
	n := base.Len()
	switch {
	case g.Blocks < 1 || g.Repeats < 1:
		return nil, fmt.Errorf("dataset: adversarial game %s: blocks and repeats must be >= 1", g)
	case g.Blocks > n:
		return nil, fmt.Errorf("dataset: adversarial game %s: %d blocks need %d distinct instances, %s has %d rows", g, g.Blocks, g.Blocks, base.Name, n)
	}
	for i, y := range base.Y {
		if y != 1 && y != -1 {
			return nil, fmt.Errorf("dataset: adversarial game on %s: row %d has label %v, want −1/+1 (map them with BinaryLabels)", base.Name, i, y)
		}
	}
	inst := rng.New(g.Seed).Sample(n, g.Blocks)
	T := g.Len()
	out := *base
	out.Name = fmt.Sprintf("%s [adversarial %s]", base.Name, g)
	out.X = make([][]float64, 0, T)
	out.Y = make([]float64, 0, T)
	for j, i := range inst {
		y := base.Y[i]
		if (j+1)%2 == 0 {
			y = -y
		}
		for range g.Repeats {
			out.X = append(out.X, base.X[i])
			out.Y = append(out.Y, y)
		}
	}
	return &out, nil
}

// ParseAdversarialName splits a name of the paper's adversarial datasets,
// "<base>-1" or "<base>-2" (german-1, codrna-2, cod-rna-1, ...), into the
// base dataset's short name (codrna → cod-rna) and the game (seed 0; set
// it). ok is false for any other name.
func ParseAdversarialName(name string) (base string, g AdversarialGame, ok bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return "", AdversarialGame{}, false
	}
	switch name[i+1:] {
	case "1":
		g = AdversarialGame1
	case "2":
		g = AdversarialGame2
	default:
		return "", AdversarialGame{}, false
	}
	base = name[:i]
	if base == "codrna" {
		base = "cod-rna"
	}
	return base, g, true
}

// AdversarialSeed is the seed of run r's game in an experiment with base
// seed seed: a stream of its own, independent of the permutations
// (Permutation) and of the learners' seeds. okstream eval --data german-1
// and okstream reproduce forks-table2 use it, so they play the same games.
func AdversarialSeed(seed uint64, run int) uint64 {
	return rng.Derive(rng.Derive(seed, 3<<32), uint64(run))
}
