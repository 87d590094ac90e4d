package kuairec_test

import (
	"strings"
	"testing"

	"okstream/dataset/kuairec"
	"okstream/eval"
	"okstream/learner"
)

// learnerSpecs are the settings used for each learner on the synthetic
// stream: the kuairec-v1 features are in [0, 1] with squared distances of
// a few units, so σ = 2; the FORKS paper's budgets (100) and, for
// PROS-N-KONS, its budgeted variant (B_max = 100). A registered
// classification learner not listed here runs with σ = 2 alone (or its
// defaults if it has no σ).
var learnerSpecs = map[string]string{
	"fogd":        "fogd:budget=200,sigma=2",
	"nogd":        "nogd:budget=100,sigma=2",
	"rbp":         "rbp:budget=100,sigma=2",
	"bpas":        "bpas:budget=100,sigma=2",
	"bogd":        "bogd:budget=100,sigma=2",
	"projectron":  "projectron:budget=100,sigma=2",
	"forks":       "forks:budget=100,sigma=2",
	"skegd":       "skegd:budget=100,sigma=2",
	"pros-n-kons": "pros-n-kons:sigma=2,bmax=100",
	"con-kons":    "con-kons:sigma=2,bmax=100,loss=hinge",
	"dsg":         "dsg:sigma=2",
	"pkawv":       "pkawv:task=classification,basis=nystrom,sigma=2,max_points=100",
}

// TestLearnersBeatMajority runs every registered classification learner
// once over the committed synthetic sample's stream in replay (time) order
// — predict, then learn, as the service does — and requires a mistake rate
// at least 5 points below the majority class's.
func TestLearnersBeatMajority(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every learner over 3,054 events")
	}
	s, err := kuairec.Open("../../testdata/kuairec-synthetic", kuairec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := s.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	pos := 0
	for _, y := range ds.Y {
		if y > 0 {
			pos++
		}
	}
	majority := 100 * float64(min(pos, ds.Len()-pos)) / float64(ds.Len())
	var specs []string
	for _, name := range learner.Names() {
		spec, ok := learnerSpecs[name]
		if !ok {
			spec = name + ":sigma=2"
			if _, err := learner.New(spec, ds.Dim); err != nil {
				spec = name
			}
		}
		l, err := learner.New(spec, ds.Dim)
		if err != nil {
			if ok {
				t.Errorf("%s: %v", spec, err)
			} else {
				t.Logf("%s: not run (%v)", name, err)
			}
			continue
		}
		if l.Info().Task == learner.Classification {
			specs = append(specs, spec)
		}
	}
	res, err := eval.Run(ds, specs, nil, eval.Config{Runs: 1, Workers: 1, NoPermute: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s, %d events in replay order; majority-class mistake rate %.2f %%", ds.Name, ds.Len(), majority)
	for _, m := range res.Models {
		t.Logf("  %-32s %6.2f %%", m.Label, m.Mean)
		if m.Mean > majority-5 {
			t.Errorf("%s: mistake rate %.2f %% is not 5 points below the majority rate %.2f %%", m.Label, m.Mean, majority)
		}
	}
	if len(res.Models) < 6 || !strings.Contains(strings.Join(specs, " "), "fogd") {
		t.Errorf("only %v ran", specs)
	}
}
