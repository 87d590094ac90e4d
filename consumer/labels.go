package consumer

// ReasonInvalidLabel is the dead-letter reason of an event whose label does
// not fit its partition's task: a number other than -1/+1, 0/1 on a binary
// stream (or the second of -1 and 0), a third string class, a bool or string
// on a regression stream, a label of another kind than the partition's
// earlier labels. Package label has the rules; each partition's mapping
// (task, class dictionary) is checkpointed with its models.
const ReasonInvalidLabel = reasonBadLabel
