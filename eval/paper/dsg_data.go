package paper

// Data helpers of the DSG paper's experiments on the shared multi-class
// files (dsg-svm's MNIST 8 vs 6 block, dsg-multiclass): the train/test
// splits of letter and mnist, the test-error lookup of an eval.Result, and
// the PCA the paper applies to MNIST (§7.3: "we first reduce the dimension
// to 50 by PCA").

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"okstream/dataset"
	"okstream/eval"
	"okstream/learner/linalg"
)

// loadSplit reads a shared multi-class file by its short name (dataset.
// Shared: "letter", "mnist") with the catalog's options and class names
// kept, and splits it in file order: the first train rows for training
// and the last test rows for testing (train + test ≤ rows; the UCI
// convention for letter is 16,000 + 4,000). The rows are shared, not
// copied. It fails with a message naming ../shared/datasets when the file
// is absent.
func loadSplit(name string, train, test int) (tr, te *dataset.Dataset, err error) {
	path, opts, err := dataset.Resolve(name)
	if err != nil {
		return nil, nil, fmt.Errorf("needs the shared %s (../shared/datasets): %w", name, err)
	}
	opts.ClassNames = true
	ds, err := dataset.Load(path, opts)
	if err != nil {
		return nil, nil, err
	}
	n := ds.Len()
	if train <= 0 || test <= 0 || train+test > n {
		return nil, nil, fmt.Errorf("%s has %d rows: cannot split %d training + %d test rows", name, n, train, test)
	}
	return ds.Subset(seq(0, train)), ds.Subset(seq(n-test, n)), nil
}

// seq returns lo, lo+1, ..., hi−1.
func seq(lo, hi int) []int {
	out := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// testError returns the test mistake rate (mean, std over the runs) of the
// model labelled label in res, and false when res has no test result or
// no such model.
func testError(res *eval.Result, label string) (eval.Stat, bool) {
	if res == nil || res.Test == nil {
		return eval.Stat{}, false
	}
	for _, m := range res.Test.Models {
		if m.Label == label {
			return m.Measures[eval.MeasureMistakeRate], true
		}
	}
	return eval.Stat{}, false
}

// pcaProject fits PCA on train (centred by train's mean; the top k
// eigenvectors of train's covariance) and returns train and test projected
// on it (new rows, k coordinates each; names and labels kept). The
// projection is a deterministic function of the training rows (linalg.
// SymTopK: no randomness). It fails if k is not in [1, Dim], train has
// fewer than 2 rows, or the eigendecomposition fails.
func pcaProject(train, test *dataset.Dataset, k int) (*dataset.Dataset, *dataset.Dataset, error) {
	d, n := train.Dim, train.Len()
	if k < 1 || k > d || n < 2 {
		return nil, nil, fmt.Errorf("pca: %d components of %d rows of dimension %d", k, n, d)
	}
	mean := make([]float64, d)
	for _, x := range train.X {
		for j, v := range x {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	xc := mat.NewDense(n, d, nil)
	for i, x := range train.X {
		row := xc.RawRowView(i)
		for j, v := range x {
			row[j] = v - mean[j]
		}
	}
	var cov mat.SymDense
	cov.SymOuterK(1/float64(n-1), xc.T())
	a := make([]float64, d*d)
	for i := range d {
		for j := range d {
			a[i*d+j] = cov.At(i, j)
		}
	}
	vals, vecs := make([]float64, k), make([]float64, d*k)
	if err := linalg.SymTopK(vals, vecs, a, d, k, nil); err != nil {
		return nil, nil, fmt.Errorf("pca: %w", err)
	}
	project := func(ds *dataset.Dataset) *dataset.Dataset {
		out := *ds
		out.Dim = k
		out.X = make([][]float64, ds.Len())
		out.Named = nil
		out.FeatureNames = nil
		for i, x := range ds.X {
			z := make([]float64, k)
			for j, v := range x {
				if c := v - mean[j]; c != 0 {
					row := vecs[j*k : (j+1)*k]
					for c2, u := range row {
						z[c2] += c * u
					}
				}
			}
			out.X[i] = z
		}
		out.Y = append([]float64(nil), ds.Y...)
		return &out
	}
	return project(train), project(test), nil
}
