package eval

import (
	"okstream/features"
	"okstream/learner"
)

// FinalModel is a run's model at the end of its training (Config.Final):
// what okstream eval --save writes as a model file.
type FinalModel struct {
	Run  int    // the run (0: the first reported permutation; selection runs from 1<<20)
	Spec string // the learner's canonical spec (ModelResult.Chosen for run 0 of the reported configuration)
	// Learner is a binary or regression run's learner, Multi a multi-class
	// run's (the other is nil).
	Learner learner.Learner
	Multi   learner.Multi
	// Calib is the online Platt calibration that gave a classifier's
	// probabilities (Binary; the learner's own probability, if it has one,
	// left it untouched).
	Calib Platt
	// Classes maps a multi-class learner's class j to the reported class
	// Classes[j] (an index into Result.Classes), in the order the run met
	// them.
	Classes []int
	// Encoder is the run's named-feature encoder (nil: dense rows).
	Encoder *features.Encoder
	// Events is the number of events learnt; Mistakes the progressive
	// mistakes (classification, multi-class) and SqErr the progressive
	// squared error (regression).
	Events   int
	Mistakes int
	SqErr    float64
}

// final hands a run's final model to Config.Final, if set.
func (ex *executor) final(m FinalModel) {
	if ex.cfg.Final != nil {
		ex.cfg.Final(m)
	}
}
