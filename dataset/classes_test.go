package dataset

import (
	"reflect"
	"strings"
	"testing"
)

// A CSV label column of class names: numbers by first appearance, except
// false/true (0/1 in any order and case); BinaryLabels then makes the first
// name (or false) -1, as okstream run maps a partition's labels.
func TestCSVClassLabels(t *testing.T) {
	for _, c := range []struct {
		name, labels string
		classes      []string
		y, binary    []float64
	}{
		{"names", "no yes yes no", []string{"no", "yes"}, []float64{0, 1, 1, 0}, []float64{-1, 1, 1, -1}},
		{"names, positive first", "yes no no", []string{"yes", "no"}, []float64{0, 1, 1}, []float64{-1, 1, 1}},
		{"true first", "true false true", []string{"false", "true"}, []float64{1, 0, 1}, []float64{1, -1, 1}},
		{"upper case", "FALSE TRUE", []string{"FALSE", "TRUE"}, []float64{0, 1}, []float64{-1, 1}},
		{"three names", "a b c a", []string{"a", "b", "c"}, []float64{0, 1, 2, 0}, nil},
		{"numbers", "0 1 1", nil, []float64{0, 1, 1}, []float64{-1, 1, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var sb strings.Builder
			sb.WriteString("a,y\n")
			for i, l := range strings.Fields(c.labels) {
				sb.WriteString(strings.Repeat("1", i+1) + "," + l + "\n")
			}
			d := mustLoad(t, writeFile(t, "d.csv", sb.String()), Options{Label: "y", ClassNames: true})
			if !reflect.DeepEqual(d.Classes, c.classes) || !reflect.DeepEqual(d.Y, c.y) {
				t.Fatalf("classes %q, Y %v; want %q, %v", d.Classes, d.Y, c.classes, c.y)
			}
			err := d.BinaryLabels(nil)
			if c.binary == nil {
				if err == nil {
					t.Fatal("three classes taken as binary")
				}
				return
			}
			if err != nil || !reflect.DeepEqual(d.Y, c.binary) {
				t.Fatalf("BinaryLabels: %v, %v; want %v", d.Y, err, c.binary)
			}
		})
	}
	for _, bad := range []struct{ content, want string }{
		{"a,y\n1,yes\n2,1\n", `number "1" among class names`},
		{"a,y\n1,1\n2,yes\n", `class name "yes" among numbers`},
		{"a,y\n1,yes\n2,?\n", `missing value`},
	} {
		if _, err := Load(writeFile(t, "d.csv", bad.content), Options{Label: "y", ClassNames: true}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want %q", bad.content, err, bad.want)
		}
	}
	// Without ClassNames, and in the streaming reader, labels are numbers.
	if _, err := Load(writeFile(t, "d.csv", "a,y\n1,yes\n"), Options{Label: "y"}); err == nil || !strings.Contains(err.Error(), "bad number") {
		t.Fatalf("Load without ClassNames: %v", err)
	}
	r, err := Open(writeFile(t, "d.csv", "a,y\n1,yes\n"), Options{Label: "y", ClassNames: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), "bad number") {
		t.Fatalf("Reader: %v", err)
	}
}
