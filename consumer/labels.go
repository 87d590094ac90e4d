package consumer

import "fmt"

// ReasonInvalidLabel is the dead-letter reason of an event whose label a
// classification model cannot learn from.
const ReasonInvalidLabel = reasonBadLabel

// CheckLabel is the label check the runtime applies to a decoded event
// before scoring it: with classification models (classify) a label must be
// -1 or +1; regression takes any (finite: the codec already refused NaN and
// Inf). The error's text is the dead letter's detail. okstream inspect
// events applies it too, so that it reports what run would dead-letter.
func CheckLabel(classify, hasY bool, y float64) error {
	if classify && hasY && y != 1 && y != -1 {
		return fmt.Errorf("label %v: classification models learn from labels -1 and +1 only", y)
	}
	return nil
}
