package consumer

import (
	"errors"
	"fmt"

	"okstream/codec"
	"okstream/eval"
	"okstream/features"
	"okstream/label"
	"okstream/learner"
)

// TrainedModel is one model trained outside the pipeline (okstream eval
// --save), to be written as the pipeline would checkpoint it.
type TrainedModel struct {
	Name string
	// Learner is a binary or regression model's learner; Multi a
	// multi-class one's (exactly one is set). Its model classes are the
	// partition's dictionary classes in order (class j is
	// TrainedSet.Labels' j-th class).
	Learner learner.Learner
	Multi   learner.Multi
	Updates uint64
	Stats   Stats
	// Calib is a classifier's probability calibration (eval.Platt) as it
	// learnt beside the learner; the zero value means eval.NewPlatt().
	Calib eval.Platt
}

// TrainedSet is one partition's worth of trained models and the state of
// its label mapping and feature encoder.
type TrainedSet struct {
	Dim    int
	Task   label.Task // Binary, Regression or MultiClass
	Models []TrainedModel
	// Labels are the stream's labels as its events carry them (Y, YKind,
	// YStr), each class once, in the order the models' classes were
	// numbered (binary: the label mapped to −1 first, then the one mapped
	// to +1); they are replayed through the partition's label.Map, which
	// then holds the class dictionary the pipeline would have built.
	Labels []codec.Event
	// Features is the named-feature encoder the models' inputs came from
	// (nil: the events carry dense features, x or xi/xv). Its configuration
	// must be the pipeline's (--dim, --max-values-per-name, --missing,
	// --missing-category) for a pipeline to restore it.
	Features *features.Encoder
}

// TrainedPayload encodes t as the checkpoint payload the pipeline writes
// for a partition holding those models, through the pipeline's own encoder
// (modelSet.marshal): consumer.DescribePayload, consumer.NewScorer and a
// pipeline's restore read it like any checkpoint. No pending impressions,
// no sharing state. Errors: a model with no learner or both, a multi-class
// model in a task that is not, a label that does not fit the task, or a
// multi-class model with more classes than Labels name.
func TrainedPayload(t TrainedSet) ([]byte, error) {
	if t.Task != label.Binary && t.Task != label.Regression && t.Task != label.MultiClass {
		return nil, fmt.Errorf("consumer: trained models of task %s: want binary, regression or multiclass", t.Task)
	}
	if t.Dim < 1 {
		return nil, fmt.Errorf("consumer: trained models of dimension %d", t.Dim)
	}
	ms := &modelSet{dim: t.Dim, pend: newPending(pendingLimits{}, t.Dim), topK: DefaultTopK, rawC: -1, labels: label.New(t.Task, "")}
	for i := range t.Labels {
		ev := t.Labels[i]
		ev.HasY = true
		if _, err := ms.labels.Apply(&ev); err != nil {
			return nil, fmt.Errorf("consumer: trained models' labels: %w", err)
		}
	}
	seen := map[string]bool{}
	for _, tm := range t.Models {
		if seen[tm.Name] || tm.Name == "" {
			return nil, fmt.Errorf("consumer: trained model name %q empty or repeated", tm.Name)
		}
		seen[tm.Name] = true
		m := &model{name: tm.Name, updates: tm.Updates, stats: tm.Stats, calib: tm.Calib}
		if m.calib == (eval.Platt{}) {
			m.calib = eval.NewPlatt()
		}
		switch {
		case (tm.Learner == nil) == (tm.Multi == nil):
			return nil, fmt.Errorf("consumer: trained model %s: give a binary/regression learner or a multi-class one", tm.Name)
		case tm.Multi != nil:
			if t.Task != label.MultiClass {
				return nil, fmt.Errorf("consumer: trained model %s is multi-class, the task is %s", tm.Name, t.Task)
			}
			k := tm.Multi.Classes()
			if k > ms.classes() {
				return nil, fmt.Errorf("consumer: trained model %s knows %d classes, the labels name %d", tm.Name, k, ms.classes())
			}
			m.mc, m.spec, m.classify = tm.Multi, tm.Multi.Info().Spec, true
			cls := make([]int, k)
			for j := range cls {
				cls[j] = j
			}
			m.setClasses(cls)
		default:
			if t.Task == label.MultiClass {
				return nil, fmt.Errorf("consumer: trained model %s is not multi-class, the task is multiclass", tm.Name)
			}
			info := tm.Learner.Info()
			if label.OfLearner(info.Task) != t.Task {
				return nil, fmt.Errorf("consumer: trained model %s is %s, the task is %s", tm.Name, info.Task, t.Task)
			}
			m.l, m.spec, m.classify = tm.Learner, info.Spec, info.Task == learner.Classification
		}
		ms.models = append(ms.models, m)
	}
	ms.fkind = featDense
	if t.Features != nil {
		if t.Features.Config().Dim != t.Dim {
			return nil, errors.New("consumer: trained models' feature encoder is not of their dimension")
		}
		ms.enc, ms.fcfg, ms.fkind = t.Features, t.Features.Config(), featNamed
	}
	return ms.marshal()
}
