package learner

// Sharing a model across the partitions of a stream (issue 17).
//
// Each Kafka partition of the input topic has its own copy of a model (its
// own learner instance). With sharing on, the copies learn from one
// another's events through deltas exchanged at deterministic sync points of
// each partition's own offset order:
//
//  1. Partition p learns from its own events as usual. After every S of its
//     input records (its epoch e ends), it calls ShareDelta, which encodes
//     what its copy learnt from its own events since its previous sync, and
//     publishes the delta (the runtime keys it by model, p and e).
//  2. It then calls ShareMerge once with the deltas of every partition q =
//     0, 1, …, P−1 in that order (its own included, marked Own), each q's
//     deltas in epoch order, for the epochs the runtime's schedule says are
//     due (normally exactly epoch e−L of every q, a fixed lag L ≥ 1 so that
//     partitions rarely wait for one another).
//
// Because the schedule is a function of each partition's offset order and
// the deltas are deterministic, every partition's state is a function of
// the input streams alone: recovery replays the same deltas in the same
// order and reproduces the state bit for bit.
//
// What a delta means is the learner's business, and its doc comment must
// say it. For a learner whose model is a parameter vector in a basis every
// copy shares (FOGD's and DSG's random features with a common seed, the
// linear model), the delta is the change of that vector since the last
// sync, and merging adds the other partitions' changes (the own one is
// already in place): the copies then run one stochastic gradient descent
// over all partitions' events with bounded delays (Langford, Smola &
// Zinkevich, "Slow learners are fast", NIPS 2009; McDonald, Hall & Mann,
// "Distributed training strategies for the structured perceptron", NAACL
// 2010, iterative parameter mixing). A learner whose basis is built from
// its data (FORKS, NOGD) must change that basis only inside ShareMerge and
// only from what every copy receives, so that every copy keeps the same
// basis.
type Sharer interface {
	// ShareDelta encodes what this model learnt from its own events since
	// its last ShareMerge (or since it was created or restored from a state
	// taken before any merge). It does not change what the model predicts,
	// and it is deterministic: the same state gives the same bytes. The
	// bookkeeping it needs (e.g. the parameters at the last sync) is part
	// of the marshalled state.
	ShareDelta() ([]byte, error)
	// ShareMerge applies the deltas of one sync point, in the order given
	// (partition order, then epoch order), and starts a new sync period:
	// the next ShareDelta covers only learning after this call. Deltas
	// marked Own are this model's earlier ShareDelta outputs. deltas may be
	// empty. A delta that does not decode or comes from a model of another
	// spec or dimension is refused with an error wrapping state.ErrCorrupt
	// and the model is left unchanged.
	ShareMerge(deltas []SharedDelta) error
}

// Mixer is a Sharer whose merge is parameter mixing, v ← v − Σ own + M with
// M a function of the deltas alone (FOGD: M = (1/k) Σ d over the k
// partitions present). Every copy merging the same deltas needs the same
// M, so a runtime with several of a model's copies in one process computes
// it once per sync point (ShareMix) and hands it, read-only, to each copy
// (ShareApply): the merge then costs O(D) per copy instead of O(P·D).
// ShareApply(deltas, ShareMix(deltas)) is ShareMerge(deltas), bit for bit.
type Mixer interface {
	Sharer
	// ShareMix returns M for the deltas (which it checks as ShareMerge
	// does). It does not change the model and may run on any copy of the
	// same spec; the result must not be modified.
	ShareMix(deltas []SharedDelta) ([]float64, error)
	// ShareApply merges with a precomputed M (from ShareMix of the same
	// deltas): the own deltas are decoded from deltas, the others only
	// through M.
	ShareApply(deltas []SharedDelta, mix []float64) error
}

// SharedDelta is one partition's ShareDelta output, as delivered to
// ShareMerge.
type SharedDelta struct {
	Partition int    // the input partition that produced it
	Epoch     int64  // its epoch in that partition's offset order
	Own       bool   // produced by the model receiving it
	Data      []byte // the bytes ShareDelta returned
}
