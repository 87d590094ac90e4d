// Package features encodes an event's named features (codec.Field: numbers,
// bools, strings and missing values, package codec's "f") as the dense
// vector of a fixed dimension D that the learners take. An Encoder is a
// deterministic state machine whose state (MarshalBinary) is checkpointed
// with the models.
//
// # Coordinates: a dictionary learned online, not feature hashing
//
// A name, or a name=value pair for a string, gets the next free coordinate
// the first time it is seen, in the order of the record's fields (then, for
// missing indicators of names the record leaves out, in dictionary order),
// until all D are in use. Later names find no coordinate: their occurrences
// are dropped and counted (Stats.Dropped). Why not hashing (Weinberger et
// al. 2009): the learners here are kernel machines on dense vectors, so D
// is the cost of every kernel evaluation and is in the hundreds, not VW's
// 2^18. At that size hashing collides heavily: with FNV-1a 64 modulo D the
// share of coordinates that share a bucket with another is 64 % (D = 128)
// and 35 % (D = 256) for Adult's 123 name=value keys, 61 % and 40 % for the
// 175 keys of a 30-field event (TestHashCollisionRate; the birthday rule
// 1 − (1 − 1/D)^(k−1) gives 62/38 % and 75/49 %). A collision adds two
// unrelated features into one coordinate for good; the dictionary has none
// while it has room, and its names are exact, which `okstream inspect`
// shows (Names). Its price is the state (about 60 bytes plus the name per
// name, 12 bytes plus the value per value; a few KB for Adult) and a cap
// that must be planned (Stats.Coords against D; drops are counted, never
// silent). Hashing's one advantage, no state, matters little here: the
// models' state is checkpointed anyway.
//
// A number or a bool takes one coordinate ("name"), holding the value as
// it is. A string is a categorical value: one indicator coordinate per
// name=value, at most Config.MaxValuesPerName (default 64) per name; later
// values share one "name=<other>" indicator (Stats.Folded counts them). A
// name can carry numbers in some records and strings in others; it then
// has both kinds of coordinates (a string value counts as a missing
// number).
//
// # Missing values
//
// A value is missing when it is nil or NaN (codec.FieldMissing) or when a
// name the dictionary knows is absent from the record. Config.Missing:
//
//   - MissingImpute (default, what a practitioner expects: no event lost):
//     a numeric feature takes its running mean — the mean of its values in
//     the events encoded before, kept in the state — and its missing
//     indicator "name=<missing>" (allocated at its first missing value) is
//     1. Why the mean and not 0: 0 is a value with a meaning (an amount of
//     0, a count of 0) and can be far from every observed value (a feature
//     around 10^4), where it would look like an outlier to a kernel and be
//     clipped by the standardiser; the mean is the least-informative point,
//     it maps to ≈ 0 after standardisation (the standardiser's centre is
//     the warm-up median, close to the mean), and the indicator tells the
//     model the value was missing, so "missing" can still be informative
//     (Little & Rubin §3.4.3). The standardiser's centre itself is not
//     available to the encoder (it lives in the learner, frozen after its
//     warm-up), and a running mean needs no warm-up. A feature missing
//     before any value was seen takes 0; a name first seen missing (its
//     kind unknown yet) gets its missing indicator then. A categorical
//     feature has all its
//     indicators 0; with Config.MissingCategory it also gets a
//     "name=<missing>" indicator (for a linear model with a bias it is
//     redundant; for a kernel it moves missing away from every value).
//   - MissingRefuse: Encode returns a *MissingError (Reason()
//     "missing_feature") and changes nothing; the runtime dead-letters the
//     event. A name seen for the first time is not missing; once known, a
//     record without it is refused.
//
// # Order of the state updates
//
// Encode changes the state (new coordinates, running means, counters), so
// the runtime encodes each event exactly once, in offset order, before the
// models see it, and checkpoints the encoder with the models. The vector of
// an event uses the state before the event's own contribution: a present
// value is used as it is, and a missing one is imputed from the earlier
// events only (an event never sees its own values in an imputation).
//
// # Scaling of indicators (what the learners must do)
//
// The self-tuning wrapper (learner/scale.go) standardises every coordinate
// to unit variance with its warm-up statistics. For an indicator with rate
// p that gives a centre 0 and a scale sqrt(p), so a 1 becomes 1/sqrt(p)
// (10, the clip, for p ≤ 1 %), and the expected squared distance that a
// one-hot field with K values adds between two events becomes
// Σ_v 2·p_v(1 − p_v)/p_v ≈ 2(K − 1) instead of 2·(1 − Σ p_v²) ≤ 2 for raw
// 0/1 — Adult's native-country (41 values) weighs like 40 standardised
// numeric features in the distance and in the median heuristic's σ̂, and
// an indicator allocated after the warm-up (constant during it) gets the
// scale 1/sqrt(W) and is clipped at 10. Raw 0/1 indicators need no
// scaling: a one-hot field already adds at most 2 to a squared distance,
// the expected contribution of one standardised numeric feature, however
// many values it has; that is also why the encoder does not scale
// indicators by 1/sqrt(K) (K grows online, so a fixed event's vector would
// change with time, which breaks the models that store examples; and any
// constant factor is undone by the standardiser anyway).
//
// So the encoder emits indicators as 0/1 and says which coordinates are
// indicators: Kinds (and Kind(j), Group(j)). The learners take them through
// learner.KindAware (docs/algorithms/selftune.md, "Indicators and late
// numbers"): the self-tuning wrapper leaves an indicator or missing
// indicator unstandardised (centre 0, scale 1), standardises a numeric
// coordinate as before, and feeds a numeric coordinate that appears after
// the warm-up 0 until it has W values of its own, then freezes its centre
// and scale from them; σ̂ is the median heuristic on those inputs.
// Measured (experiment_test.go, FEATURES_EXPERIMENT=1): on a synthetic
// stream whose label is a nonlinear function of 4 unit-normal numeric
// features, adding an irrelevant 200-value "user" field (Zipf-like) takes
// auto from 13.57 % mistakes to 41.83 % when its indicators are
// standardised (majority rate 48.43 %; linear 34.03 → 39.30 %), but only
// to 16.25 % with scale=none (13.00 % without the field), and to 17.17 %
// with the kinds declared (learner.KindAware; learner/indicator_test.go,
// LEARNER_EXPERIMENT=1; a numeric field appearing at event 1000: 23.15 %
// blind, 15.45 % with the kinds). On Adult, where every field
// has at most 41 values and every column is an indicator or a bin number
// 0–4, it makes no difference: auto 15.64 % standardised vs 15.62 % with
// scale=none (linear 15.56 %, majority 24.08 %).
//
// # Schema drift
//
// A name that appears mid-stream gets a coordinate at once (while there is
// room); one that disappears is missing from then on (imputed, with its
// indicator). Neither needs a restart. Stats gives the metrics: Coords in
// use, Names, Dropped (cap), Folded (<other>), Imputed.
//
// # State
//
// MarshalBinary writes the configuration, the counters and the dictionary
// (names, coordinates, values, running statistics) in the conventions of
// package learner/state; equal states give equal bytes. UnmarshalBinary
// treats the bytes as untrusted: errors wrap state.ErrCorrupt (ErrMismatch
// for a state of another Config), no input panics, every count is checked
// against Dim, MaxValuesPerName and the bytes remaining before anything is
// sized by it, and the encoder is unchanged on error. The caches that
// speed up Encode (the entry of each field position, the last value of
// each name) are not state: they change no output.
//
// # Cost
//
// Encode does O(fields + names) work and no allocation in steady state (a
// new name or value allocates once); a 30-field event (20 numeric, 10
// string) takes about 0.5 µs on the development machine (BenchmarkEncode30;
// decoding the same named event costs about as much in package codec).
// Memory is O(D) plus the names and values, at most D of them. Measured
// (BenchmarkDecodeEncode30, 2 shared cores): decoding the dense 30-value
// event 360 ns; decoding the named one (10 string values) 630–730 ns;
// decoding and encoding it 1.0–1.26 µs. The learners pay for D, not for
// the coordinates in use (an unused coordinate is a 0 in every kernel
// evaluation), so D should be set near the expected count (numeric names
// + the values of the string names + missing indicators, with headroom
// for drift), not at a large round number.
package features
