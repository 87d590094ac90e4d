package dataset

import (
	"slices"
	"testing"
)

func advBase(n int) *Dataset {
	d := &Dataset{Name: "toy", Dim: 2}
	for i := 0; i < n; i++ {
		d.X = append(d.X, []float64{float64(i), float64(-i)})
		y := 1.0
		if i%3 == 0 {
			y = -1
		}
		d.Y = append(d.Y, y)
	}
	return d
}

// The game of Wen et al. §5.2: b blocks of r repeats of one instance each,
// distinct instances, labels of even (1-based) blocks flipped, nothing else.
func TestAdversarialStructure(t *testing.T) {
	base := advBase(50)
	g := AdversarialGame{Blocks: 20, Repeats: 7, Seed: 3}
	d, err := Adversarial(base, g)
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 140 || g.Len() != 140 || d.Dim != 2 {
		t.Fatalf("len %d (game %d), dim %d", d.Len(), g.Len(), d.Dim)
	}
	seen := map[int]bool{}
	for j := 0; j < 20; j++ {
		first := d.X[j*7]
		i := int(first[0])
		if seen[i] {
			t.Fatalf("instance %d used by two blocks", i)
		}
		seen[i] = true
		want := base.Y[i]
		if (j+1)%2 == 0 {
			want = -want
		}
		for r := 0; r < 7; r++ {
			k := j*7 + r
			if &d.X[k][0] != &base.X[i][0] {
				t.Fatalf("row %d is not base row %d (shared)", k, i)
			}
			if d.Y[k] != want {
				t.Fatalf("block %d repeat %d: label %v, want %v", j+1, r, d.Y[k], want)
			}
		}
	}
	if base.Y[0] != -1 {
		t.Fatal("the base labels were modified")
	}
}

// Same seed ⇒ same game; another seed ⇒ another game; the paper's games.
func TestAdversarialDeterministic(t *testing.T) {
	base := advBase(1000)
	a, _ := Adversarial(base, AdversarialGame{Blocks: 500, Repeats: 10, Seed: 9})
	b, _ := Adversarial(base, AdversarialGame{Blocks: 500, Repeats: 10, Seed: 9})
	c, _ := Adversarial(base, AdversarialGame{Blocks: 500, Repeats: 10, Seed: 10})
	if !slices.Equal(a.Y, b.Y) || a.X[4999][0] != b.X[4999][0] {
		t.Fatal("same seed, different games")
	}
	same := true
	for k := 0; k < a.Len(); k += 10 {
		same = same && a.X[k][0] == c.X[k][0]
	}
	if same {
		t.Fatal("different seeds gave the same game")
	}
	if AdversarialGame1.Len() != 5000 || AdversarialGame2.Len() != 10000 {
		t.Fatal("the paper's games are b = 500 with r = 10 and r = 20")
	}
}

func TestAdversarialRejects(t *testing.T) {
	if _, err := Adversarial(advBase(10), AdversarialGame{Blocks: 11, Repeats: 2}); err == nil {
		t.Fatal("more blocks than instances accepted")
	}
	if _, err := Adversarial(advBase(10), AdversarialGame{Blocks: 0, Repeats: 2}); err == nil {
		t.Fatal("zero blocks accepted")
	}
	d := advBase(10)
	d.Y[3] = 2
	if _, err := Adversarial(d, AdversarialGame{Blocks: 5, Repeats: 2}); err == nil {
		t.Fatal("non-±1 labels accepted")
	}
}

func TestParseAdversarialName(t *testing.T) {
	for _, c := range []struct {
		name, base string
		g          AdversarialGame
		ok         bool
	}{
		{"german-1", "german", AdversarialGame1, true},
		{"codrna-2", "cod-rna", AdversarialGame2, true},
		{"cod-rna-1", "cod-rna", AdversarialGame1, true},
		{"german", "", AdversarialGame{}, false},
		{"german-3", "", AdversarialGame{}, false},
	} {
		base, g, ok := ParseAdversarialName(c.name)
		if base != c.base || g != c.g || ok != c.ok {
			t.Errorf("%s: (%q, %v, %v)", c.name, base, g, ok)
		}
	}
}
