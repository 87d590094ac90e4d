package features

// AdultGroups exports a9a's column layout (adult_test.go) to the external
// test package (experiment_test.go, which imports package dataset, and
// dataset imports features: an internal test file could not).
var AdultGroups = adultGroups

// TestRNG exports the tests' generator (encoder_test.go) to
// experiment_test.go, so that the experiments keep their streams.
type TestRNG struct{ r rng }

// NewTestRNG returns the tests' generator seeded with seed.
func NewTestRNG(seed uint64) *TestRNG { return &TestRNG{rng(seed)} }

// Float returns the next uniform value in [0, 1).
func (t *TestRNG) Float() float64 { return t.r.float() }
