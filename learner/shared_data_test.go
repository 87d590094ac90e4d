package learner_test

import (
	"testing"

	"okstream/dataset"
)

// loadShared loads a shared dataset by its short name (dataset.Shared), or
// skips the test with a clear message when ../shared/datasets is absent (a
// user's clone; CI always has it). binary maps the labels to ±1
// (classification); scale is a dataset.ParseScale spec ("" or "none": as
// stored).
func loadShared(t *testing.T, name string, binary bool, scale string) *dataset.Dataset {
	t.Helper()
	path, opts, err := dataset.Resolve(name)
	if err != nil {
		t.Skipf("shared datasets not available (%v); this test needs ../shared/datasets beside the repository", err)
	}
	ds, err := dataset.Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if binary {
		if err := ds.BinaryLabels(nil); err != nil {
			t.Fatal(err)
		}
	}
	if scale != "" {
		sc, err := dataset.ParseScale(scale)
		if err != nil {
			t.Fatal(err)
		}
		ds.ApplyScale(sc)
	}
	return ds
}
