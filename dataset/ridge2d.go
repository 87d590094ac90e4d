package dataset

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"

	"okstream/learner/kernel"
	"okstream/learner/rng"
)

// The 2-D synthetic kernel ridge regression problem of the doubly
// stochastic gradients paper (Dai et al., NIPS 2014, §7.1, Fig. 4(2)):
// x ~ U[−5,5]², y = f(x) + 0.1e with f(x) = cos(0.5π‖x‖)·exp(−0.1π‖x‖) and
// e ~ N(0, 1). It lives here, with its closed-form regularized optimum and
// the log-log slope its convergence is judged by, so that the experiment
// (okstream reproduce dsg-synthetic) and the learner's paper test use one
// definition.

// Ridge2DTarget is the noise-free target f(x) of the problem.
func Ridge2DTarget(x []float64) float64 {
	r := math.Hypot(x[0], x[1])
	return math.Cos(0.5*math.Pi*r) * math.Exp(-0.1*math.Pi*r)
}

// Ridge2D draws n examples: inputs, noisy labels and noise-free targets.
func Ridge2D(src *rng.Source, n int) (xs [][]float64, ys, fs []float64) {
	for i := 0; i < n; i++ {
		x := []float64{10*src.Float64() - 5, 10*src.Float64() - 5}
		f := Ridge2DTarget(x)
		xs = append(xs, x)
		fs = append(fs, f)
		ys = append(ys, f+0.1*src.Normal())
	}
	return xs, ys, fs
}

// Ridge2DMedianDistance is the median of the pairwise Euclidean distances
// of n points drawn with seed (the paper's median trick for σ).
func Ridge2DMedianDistance(seed uint64, n int) float64 {
	xs, _, _ := Ridge2D(rng.New(seed), n)
	ds := make([]float64, 0, n*(n-1)/2)
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			ds = append(ds, math.Hypot(xs[i][0]-xs[j][0], xs[i][1]-xs[j][1]))
		}
	}
	sort.Float64s(ds)
	return ds[len(ds)/2]
}

// Ridge2DOptimum returns f*_ν at the points tx: the minimizer over the
// Gaussian RKHS of width sigma of ½E(f(x)−y)² + (ν/2)‖f‖², i.e.
// (C + ν)⁻¹C f, with the expectation over U[−5,5]² replaced by a g×g
// midpoint grid — kernel ridge regression on the grid with noise-free
// targets and regularization g²ν. (For σ ≈ 0.5, 48×48 agrees with 64×64 to
// ~1e-10.) This is the target of the paper's Thm 4 and Cor. 11.
func Ridge2DOptimum(sigma, nu float64, g int, tx [][]float64) ([]float64, error) {
	n := g * g
	h := 10 / float64(g)
	pts := make([][]float64, 0, n)
	ft := make([]float64, 0, n)
	for i := 0; i < g; i++ {
		for j := 0; j < g; j++ {
			x := []float64{-5 + h*(float64(i)+0.5), -5 + h*(float64(j)+0.5)}
			pts = append(pts, x)
			ft = append(ft, Ridge2DTarget(x))
		}
	}
	k, err := kernel.New(kernel.Gaussian, sigma, 0, 0)
	if err != nil {
		return nil, err
	}
	K := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := k.Eval(pts[i], pts[j])
			if i == j {
				v += float64(n) * nu
			}
			K.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(K) {
		return nil, fmt.Errorf("ridge2d: grid kernel matrix not positive definite (ν = %g)", nu)
	}
	var alpha mat.VecDense
	if err := ch.SolveVecTo(&alpha, mat.NewVecDense(n, ft)); err != nil {
		return nil, err
	}
	out := make([]float64, len(tx))
	for i, x := range tx {
		for j, p := range pts {
			out[i] += alpha.AtVec(j) * k.Eval(p, x)
		}
	}
	return out, nil
}

// LogLogSlope is the least-squares slope of log y on log t over the points
// with lo ≤ t ≤ hi and y > 0 (an O(1/t) decay has slope −1).
func LogLogSlope(ts []int, ys []float64, lo, hi int) float64 {
	var sx, sy, sxx, sxy, n float64
	for i, t := range ts {
		if t < lo || t > hi || !(ys[i] > 0) {
			continue
		}
		lx, ly := math.Log(float64(t)), math.Log(ys[i])
		sx += lx
		sy += ly
		sxx += lx * lx
		sxy += lx * ly
		n++
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}
