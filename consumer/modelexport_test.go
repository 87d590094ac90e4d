package consumer

import (
	"strings"
	"testing"

	"okstream/codec"
	"okstream/label"
	"okstream/learner"
)

// TrainedPayload encodes through the pipeline's payload encoder: the
// payload restores as a checkpoint does (labels, models, statistics), and
// inconsistent inputs are refused.
func TestTrainedPayload(t *testing.T) {
	l, err := learner.New("fogd:budget=10,sigma=1", 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		x := []float64{float64(i%5) / 5, float64(i%3) / 3, 1}
		y := 1.0
		if x[0] < x[1] {
			y = -1
		}
		l.Learn(x, y)
	}
	strs := []codec.Event{{YKind: codec.LabelString, YStr: "no"}, {YKind: codec.LabelString, YStr: "yes"}}
	b, err := TrainedPayload(TrainedSet{Dim: 3, Task: label.Binary, Labels: strs,
		Models: []TrainedModel{{Name: "m", Learner: l, Updates: 50, Stats: Stats{Labeled: 50, Mistakes: 7}}}})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := DescribePayload(b)
	if err != nil || len(pl.Models) != 1 || pl.Models[0].Spec != l.Info().Spec || pl.Models[0].Stats.Mistakes != 7 || pl.FeatureKind != "dense" {
		t.Fatalf("payload %v %+v", err, pl)
	}
	if pl.Labels.Task != label.Binary || pl.Labels.ClassName(1) != "yes" || pl.Labels.ClassName(-1) != "no" {
		t.Fatalf("labels %s", pl.Labels)
	}
	ms, err := newModelSetTask([]Model{{Name: "m", Spec: l.Info().Spec}}, 3, pendingLimits{}, label.Binary, "")
	if err != nil {
		t.Fatal(err)
	}
	if fresh, err := ms.restore(b, false); err != nil || len(fresh) != 0 {
		t.Fatalf("a pipeline's restore: fresh %v, %v", fresh, err)
	}
	x := []float64{0.2, 0.6, 1}
	if got, want := ms.models[0].l.Predict(x), l.Predict(x); got != want {
		t.Fatalf("restored model predicts %v, the trained one %v", got, want)
	}
	m, _ := learner.NewMulti("fogd:budget=10,sigma=1", 3)
	for _, tc := range []struct {
		set  TrainedSet
		want string
	}{
		{TrainedSet{Dim: 3, Task: label.Binary, Models: []TrainedModel{{Name: "m"}}}, "give a binary/regression learner"},
		{TrainedSet{Dim: 3, Task: label.Binary, Models: []TrainedModel{{Name: "m", Multi: m}}}, "is multi-class"},
		{TrainedSet{Dim: 3, Task: label.Regression, Models: []TrainedModel{{Name: "m", Learner: l}}}, "the task is regression"},
		{TrainedSet{Dim: 3, Task: label.Binary, Models: []TrainedModel{{Name: "m", Learner: l}, {Name: "m", Learner: l}}}, "repeated"},
		{TrainedSet{Dim: 3, Task: label.Binary, Labels: []codec.Event{{Y: 1}, {Y: 2}}, Models: []TrainedModel{{Name: "m", Learner: l}}}, "labels"},
		{TrainedSet{Dim: 0, Task: label.Binary}, "dimension 0"},
	} {
		if _, err := TrainedPayload(tc.set); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.set.Task, err, tc.want)
		}
	}
}
