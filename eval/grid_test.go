package eval

import (
	"reflect"
	"testing"
)

func TestExpandPaperSigmaGrid(t *testing.T) {
	c, err := Expand("fogd:sigma=2^-5..2^7:2^0.5,budget=50")
	if err != nil {
		t.Fatal(err)
	}
	if len(c) != 25 { // the FORKS paper's 25-value grid
		t.Fatalf("got %d candidates, want 25", len(c))
	}
	if c[0].Spec != "fogd:budget=50,sigma=2^-5" || c[24].Values["sigma"] != "2^7" || c[1].Values["sigma"] != "2^-4.5" {
		t.Fatalf("unexpected candidates %v ... %v", c[0], c[24])
	}
}

func TestExpandForms(t *testing.T) {
	cases := map[string][]string{
		"x:a=1|2|4":        {"x:a=1", "x:a=2", "x:a=4"},
		"x:a=0.1..0.5:0.1": {"x:a=0.1", "x:a=0.2", "x:a=0.3", "x:a=0.4", "x:a=0.5"},
		"x:a=50..400:*2":   {"x:a=50", "x:a=100", "x:a=200", "x:a=400"},
		"x:a=1..2:+1,b=3":  {"x:a=1,b=3", "x:a=2,b=3"},
		"x":                {"x"},
	}
	for in, want := range cases {
		c, err := Expand(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		var got []string
		for _, x := range c {
			got = append(got, x.Spec)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Expand(%q) = %v, want %v", in, got, want)
		}
	}
	c, _ := Expand("x:a=1|2,b=3|4")
	if len(c) != 4 || c[1].Label() != "a=1,b=4" {
		t.Fatalf("cartesian product: %v", c)
	}
	for _, bad := range []string{"x:a=1..5", "x:a=2^1..3^2:2^1", "x:a=5..1:1", "x:a=1..4:*1", "x:a=1||2"} {
		if _, err := Expand(bad); err == nil {
			t.Errorf("Expand(%q) accepted", bad)
		}
	}
}
