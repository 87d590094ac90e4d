package learner

import (
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	name, kv, err := ParseSpec(" fogd : sigma=2^-3 , budget=50 ")
	if err != nil || name != "fogd" || kv["sigma"] != "2^-3" || kv["budget"] != "50" {
		t.Fatalf("got %q %v %v", name, kv, err)
	}
	for _, bad := range []string{"", ":x=1", "fogd:sigma", "fogd:sigma=", "fogd:a=1,a=2"} {
		if _, _, err := ParseSpec(bad); err == nil {
			t.Errorf("ParseSpec(%q) accepted", bad)
		}
	}
}

func TestParseNumber(t *testing.T) {
	for s, want := range map[string]float64{"2^-3": 0.125, "1e-3": 0.001, "4": 4, "2^0.5": 1.4142135623730951} {
		if v, err := ParseNumber(s); err != nil || v != want {
			t.Errorf("ParseNumber(%q) = %v, %v", s, v, err)
		}
	}
	for _, s := range []string{"x", "NaN", "Inf", "2^x", "1e999"} {
		if _, err := ParseNumber(s); err == nil {
			t.Errorf("ParseNumber(%q) accepted", s)
		}
	}
}

func TestNewErrors(t *testing.T) {
	cases := map[string]string{
		"nosuch":                 `unknown learner "nosuch"`,
		"fogd:sigm=1":            `did you mean "sigma"`,
		"fogd:sigma=abc":         `parameter sigma`,
		"fogd:sigma=-1":          `must be > 0`,
		"fogd:loss=hingee":       `not one of hinge`,
		"fogd:budget=1.5":        `not an integer`,
		"nogd:budget=10,k=20":    `k`,
		"fogd:seed=-3":           `non-negative integer`,
		"fogd:normalize=perhaps": `not a boolean`,
	}
	for spec, want := range cases {
		_, err := New(spec, 3)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New(%q) error = %v, want it to mention %q", spec, err, want)
		}
	}
	if _, err := New("fogd", 0); err == nil {
		t.Error("dimension 0 accepted")
	}
}

func TestCanonicalSpec(t *testing.T) {
	a, err := New("fogd:sigma=2^1,budget=50", 4)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New("fogd:budget=50,sigma=2", 4)
	if err != nil {
		t.Fatal(err)
	}
	if a.Info().Spec != b.Info().Spec {
		t.Fatalf("canonical specs differ: %q vs %q", a.Info().Spec, b.Info().Spec)
	}
	if !strings.Contains(a.Info().Spec, "features=200") || !strings.Contains(a.Info().Spec, "eta=0.2") {
		t.Fatalf("canonical spec lacks resolved defaults: %q", a.Info().Spec)
	}
	// Every registered learner documents every parameter it accepts.
	for _, n := range Names() {
		l, err := New(n, 3)
		if err != nil {
			t.Fatalf("%s with defaults: %v", n, err)
		}
		_, kv, _ := ParseSpec(l.Info().Spec)
		docs := map[string]bool{}
		conditional := map[string]bool{}
		params := append(Describe(n).Params, SelfTuneDocs()...) // keys New accepts for every learner
		if n == "auto" {
			for _, d := range Describe("fogd").Params { // its default base's keys, passed to the members
				d.When = "passed to the members"
				params = append(params, d)
			}
		}
		for _, d := range params {
			docs[d.Name] = true
			conditional[d.Name] = d.When != "" || d.Local
		}
		for k := range kv {
			if !docs[k] {
				t.Errorf("%s: parameter %q accepted but not documented", n, k)
			}
		}
		for k := range docs {
			if _, ok := kv[k]; !ok && !conditional[k] {
				t.Errorf("%s: parameter %q documented but not accepted", n, k)
			}
		}
	}
}
