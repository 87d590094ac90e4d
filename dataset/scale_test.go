package dataset

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func toy() *Dataset {
	return &Dataset{
		Name: "toy",
		X:    [][]float64{{0, 5, 1}, {10, 5, -1}, {5, 5, 0}},
		Y:    []float64{2, 4, 3},
		Dim:  3,
	}
}

func TestScaleFeatures(t *testing.T) {
	d := toy()
	shared := d.Permuted([]int{2, 0, 1})
	s := d.ScaleFeatures(-1, 1)
	want := [][]float64{{-1, 0, 1}, {1, 0, -1}, {0, 0, 0}} // column 1 is constant → 0
	if !reflect.DeepEqual(d.X, want) {
		t.Errorf("[-1,1]: %v, want %v", d.X, want)
	}
	if !reflect.DeepEqual(shared.X[0], []float64{5, 5, 0}) {
		t.Errorf("ScaleFeatures wrote into a shared row: %v", shared.X[0])
	}
	if !reflect.DeepEqual(s.Min, []float64{0, 5, -1}) || !reflect.DeepEqual(s.Max, []float64{10, 5, 1}) {
		t.Errorf("fitted %v %v", s.Min, s.Max)
	}
	// Out-of-range values are not clipped unless Clip is set; a constant
	// column maps any value to 0.
	x := []float64{20, 7, -3}
	s.Apply(x)
	if !reflect.DeepEqual(x, []float64{3, 0, -3}) {
		t.Errorf("unclipped %v", x)
	}
	s.Clip = true
	x = []float64{20, 7, -3}
	s.Apply(x)
	if !reflect.DeepEqual(x, []float64{1, 0, -1}) {
		t.Errorf("clipped %v", x)
	}

	d = toy()
	d.ScaleFeatures(0, 1)
	want = [][]float64{{0, 0, 1}, {1, 0, 0}, {0.5, 0, 0.5}}
	if !reflect.DeepEqual(d.X, want) {
		t.Errorf("[0,1]: %v, want %v", d.X, want)
	}
	// A range that excludes 0: constant columns go to the nearer end.
	if v := Rescale(3, 3, 3, 2, 4); v != 2 {
		t.Errorf("constant into [2,4] = %v", v)
	}
	if v := Rescale(3, 3, 3, -4, -2); v != -2 {
		t.Errorf("constant into [-4,-2] = %v", v)
	}
}

func TestScaleTargets(t *testing.T) {
	d := toy()
	lo, hi := d.ScaleTargets(0, 1)
	if lo != 2 || hi != 4 || !reflect.DeepEqual(d.Y, []float64{0, 1, 0.5}) {
		t.Errorf("ScaleTargets: %v %v %v", lo, hi, d.Y)
	}
	if v := Rescale(0.5, 0, 1, lo, hi); v != 3 {
		t.Errorf("inverse %v", v)
	}
	// ±1 labels are unchanged by y11.
	c := &Dataset{Y: []float64{-1, 1, 1}}
	c.ScaleTargets(-1, 1)
	if !reflect.DeepEqual(c.Y, []float64{-1, 1, 1}) {
		t.Errorf("y11 on ±1: %v", c.Y)
	}
}

func TestParseScale(t *testing.T) {
	for in, want := range map[string]string{
		"":              "none",
		"none":          "none",
		"minmax":        "minmax11",
		"MinMax11":      "minmax11",
		"x01":           "minmax01",
		"minmax11+y01":  "minmax11+y01",
		"y11, minmax01": "minmax01+y11",
		"y01":           "y01",
	} {
		s, err := ParseScale(in)
		if err != nil || s.String() != want {
			t.Errorf("ParseScale(%q) = %v, %v; want %s", in, s, err, want)
			continue
		}
		if back, err := ParseScale(s.String()); err != nil || back != s {
			t.Errorf("%q does not round-trip", s.String())
		}
	}
	for _, in := range []string{"zscore", "minmax+minmax01", "y01+y11", "none+y01"} {
		if _, err := ParseScale(in); err == nil {
			t.Errorf("ParseScale(%q): no error", in)
		}
	}
	s, _ := ParseScale("minmax11+y01")
	if !s.Features || s.FeatLo != -1 || s.FeatHi != 1 || !s.Targets || s.TargLo != 0 || s.TargHi != 1 {
		t.Errorf("minmax11+y01 = %+v", s)
	}
}

func TestApplyScaleTrainTest(t *testing.T) {
	train, test := toy(), toy()
	test.X = [][]float64{{20, 5, 0}}
	test.Y = []float64{5}
	s, _ := ParseScale("minmax01+y01")
	f := train.ApplyScale(s)
	f.Apply(test)
	if !reflect.DeepEqual(test.X[0], []float64{2, 0, 0.5}) || test.Y[0] != 1.5 {
		t.Errorf("test after train's scaling: %v %v", test.X[0], test.Y)
	}
	if p := f.UnscaleTarget(1.5); p != 5 {
		t.Errorf("UnscaleTarget = %v", p)
	}
}

// The papers' preprocessing on the real files: features and targets end up
// exactly in the requested intervals, hitting both ends.
func TestScaleRealRegression(t *testing.T) {
	for _, rel := range []string{"elevators/elevators.csv", "cpusmall/cpu_small.csv", "casp/CASP.csv", "parkinsons/parkinsons_updrs.data"} {
		d := loadShared(t, rel)
		s, _ := ParseScale("minmax11+y01")
		d.ApplyScale(s)
		ylo, yhi := slices.Min(d.Y), slices.Max(d.Y)
		if ylo != 0 || yhi != 1 {
			t.Errorf("%s: targets in [%v, %v]", rel, ylo, yhi)
		}
		for j := 0; j < d.Dim; j++ {
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, row := range d.X {
				lo, hi = min(lo, row[j]), max(hi, row[j])
			}
			if lo != -1 || hi != 1 {
				if !(lo == 0 && hi == 0) { // constant column
					t.Errorf("%s feature %d in [%v, %v]", rel, j, lo, hi)
				}
			}
		}
	}
}

func TestBinaryLabels(t *testing.T) {
	mk := func(y ...float64) *Dataset { return &Dataset{Name: "t", Y: y} }
	for _, c := range []struct {
		in, want []float64
	}{
		{[]float64{-1, 1, 1}, []float64{-1, 1, 1}},
		{[]float64{1, 1}, []float64{1, 1}},
		{[]float64{0, 1, 0}, []float64{-1, 1, -1}},
		{[]float64{1, 2, 2}, []float64{-1, 1, 1}},
		{[]float64{3, -7}, []float64{1, -1}},
	} {
		d := mk(c.in...)
		if err := d.BinaryLabels(nil); err != nil || !reflect.DeepEqual(d.Y, c.want) {
			t.Errorf("%v → %v, %v; want %v", c.in, d.Y, err, c.want)
		}
	}
	d := mk(1, 2, 3, 2)
	err := d.BinaryLabels(nil)
	if err == nil || !strings.Contains(err.Error(), "{1, 2, 3}") || !strings.Contains(err.Error(), "positive label") {
		t.Errorf("three classes: %v", err)
	}
	if !reflect.DeepEqual(d.Y, []float64{1, 2, 3, 2}) {
		t.Errorf("Y changed on error: %v", d.Y)
	}
	if err := mk(0, 0).BinaryLabels(nil); err == nil {
		t.Error("single label 0: no error")
	}
	two := 2.0
	if err := d.BinaryLabels(&two); err != nil || !reflect.DeepEqual(d.Y, []float64{-1, 1, -1, 1}) {
		t.Errorf("one-vs-rest: %v %v", d.Y, err)
	}
	five := 5.0
	if err := mk(1, 2).BinaryLabels(&five); err == nil {
		t.Error("absent positive label: no error")
	}
	if c := mk(1, 2, 2).LabelCounts(); c[1] != 1 || c[2] != 2 || len(c) != 2 {
		t.Errorf("LabelCounts %v", c)
	}
}

func TestSummary(t *testing.T) {
	d := toy()
	d.Y = []float64{-1, 1, 1}
	if s := d.Summary(); s != "toy: 3 rows × 3 features, labels -1: 1, 1: 2" {
		t.Errorf("Summary = %q", s)
	}
	d.Y = []float64{0.5, 1.5, 1}
	d.LabelName = "y"
	if s := d.Summary(); s != "toy: 3 rows × 3 features, y in [0.5, 1.5], mean 1" {
		t.Errorf("Summary = %q", s)
	}
}
