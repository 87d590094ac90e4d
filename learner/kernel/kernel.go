// Package kernel holds okstream's kernel functions, the stored-example matrix
// that kernel rows are computed against, and random Fourier features.
//
// There is exactly one kernel-row routine (Kernel.Row): every learner that
// needs κ(x, x_i) for its stored examples x_1..x_n calls it, and it computes
// the whole row in one pass over the matrix (a matrix–vector product plus
// cached squared norms for the Gaussian kernel), skipping the zero features
// of sparse inputs.
//
// Determinism: every routine here is a fixed sequence of floating-point
// operations, so the same inputs give bit-identical outputs on the same
// platform. (gonum's assembly dot product is used on amd64, so last-bit
// agreement across architectures is not promised, except for the random
// features' sampling, which uses the portable functions of package rng.)
package kernel

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Kind is a kernel family.
type Kind int

const (
	// Gaussian is exp(−‖x−y‖² / (2σ²)).
	Gaussian Kind = iota + 1
	// Laplacian is exp(−‖x−y‖₁ / σ).
	Laplacian
	// Cauchy is ∏_j 1 / (1 + (x_j−y_j)²/σ²).
	Cauchy
	// Polynomial is (xᵀy + c)^p.
	Polynomial
	// Linear is xᵀy.
	Linear
)

var kindNames = []string{Gaussian: "gaussian", Laplacian: "laplacian", Cauchy: "cauchy", Polynomial: "polynomial", Linear: "linear"}

// Names lists the kernel names accepted by ParseKind.
func Names() []string { return []string{"gaussian", "laplacian", "cauchy", "polynomial", "linear"} }

// ParseKind maps a name to a Kind.
func ParseKind(s string) (Kind, error) {
	for k, n := range kindNames {
		if n != "" && n == s {
			return Kind(k), nil
		}
	}
	return 0, fmt.Errorf("unknown kernel %q (known: gaussian, laplacian, cauchy, polynomial, linear)", s)
}

func (k Kind) String() string {
	if int(k) > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ShiftInvariant reports whether κ(x, y) depends on x−y only, so κ(x, x) = 1.
func (k Kind) ShiftInvariant() bool { return k == Gaussian || k == Laplacian || k == Cauchy }

// Kernel is a positive semidefinite kernel function. Build it with New.
type Kernel struct {
	Kind   Kind
	Sigma  float64 // width of Gaussian, Laplacian and Cauchy kernels
	Degree int     // polynomial degree
	Coef0  float64 // polynomial offset c

	inv2s2 float64 // 1/(2σ²)
	invS   float64 // 1/σ
	invS2  float64 // 1/σ²
}

// New returns a kernel; sigma is used by the shift-invariant kinds, degree
// and coef0 by the polynomial kernel.
func New(kind Kind, sigma float64, degree int, coef0 float64) (Kernel, error) {
	k := Kernel{Kind: kind, Sigma: sigma, Degree: degree, Coef0: coef0}
	switch kind {
	case Gaussian, Laplacian, Cauchy:
		if !(sigma > 0) || math.IsInf(sigma, 0) {
			return Kernel{}, fmt.Errorf("kernel %s: width sigma must be a positive finite number, got %v", kind, sigma)
		}
		k.inv2s2 = 1 / (2 * sigma * sigma)
		k.invS = 1 / sigma
		k.invS2 = 1 / (sigma * sigma)
	case Polynomial:
		if degree < 1 {
			return Kernel{}, fmt.Errorf("kernel polynomial: degree must be >= 1, got %d", degree)
		}
		if coef0 < 0 {
			return Kernel{}, fmt.Errorf("kernel polynomial: coef0 must be >= 0 (for positive semidefiniteness), got %v", coef0)
		}
	case Linear:
	default:
		return Kernel{}, fmt.Errorf("kernel: unknown kind %d", int(kind))
	}
	return k, nil
}

// MustNew is New that panics on error (for tests and fixed configurations).
func MustNew(kind Kind, sigma float64, degree int, coef0 float64) Kernel {
	k, err := New(kind, sigma, degree, coef0)
	if err != nil {
		panic(err)
	}
	return k
}

// Eval returns κ(x, y). x and y must have the same length.
func (k *Kernel) Eval(x, y []float64) float64 {
	switch k.Kind {
	case Gaussian:
		var s float64
		for i, xi := range x {
			d := xi - y[i]
			s += d * d
		}
		return math.Exp(-s * k.inv2s2)
	case Laplacian:
		var s float64
		for i, xi := range x {
			s += math.Abs(xi - y[i])
		}
		return math.Exp(-s * k.invS)
	case Cauchy:
		p := 1.0
		for i, xi := range x {
			d := xi - y[i]
			p /= 1 + d*d*k.invS2
		}
		return p
	case Polynomial:
		return ipow(dot(x, y)+k.Coef0, k.Degree)
	case Linear:
		return dot(x, y)
	}
	panic("kernel: unknown kind")
}

// Diag returns κ(x, x): 1 for the shift-invariant kernels.
func (k *Kernel) Diag(x []float64) float64 {
	switch k.Kind {
	case Gaussian, Laplacian, Cauchy:
		return 1
	case Polynomial:
		return ipow(dot(x, x)+k.Coef0, k.Degree)
	default:
		return dot(x, x)
	}
}

// Row writes κ(x_i, x) for every stored row x_i of m into dst[:m.Len()] and
// returns that slice. It panics if len(x) != m.Dim() or dst is too short.
//
// Gaussian rows use ‖x_i−x‖² = ‖x_i‖² + ‖x‖² − 2x_iᵀx with the squared norms
// cached in m (clamped at 0 against round-off), which turns the row into one
// matrix–vector product. When fewer than a quarter of x's features are
// non-zero the dot products gather only those columns.
func (k *Kernel) Row(dst []float64, m *Matrix, x []float64) []float64 {
	n := m.n
	if len(x) != m.d {
		panic(fmt.Sprintf("kernel: Row with len(x)=%d, matrix dim %d", len(x), m.d))
	}
	dst = dst[:n]
	if n == 0 {
		return dst
	}
	switch k.Kind {
	case Gaussian:
		xx := m.dots(dst, x)
		for i, dt := range dst {
			s := m.sq[i] + xx - 2*dt
			if s < 0 {
				s = 0
			}
			dst[i] = math.Exp(-s * k.inv2s2)
		}
	case Laplacian:
		for i := range dst {
			r := m.data[i*m.d : (i+1)*m.d]
			var s float64
			for j, xj := range x {
				s += math.Abs(r[j] - xj)
			}
			dst[i] = math.Exp(-s * k.invS)
		}
	case Cauchy:
		for i := range dst {
			r := m.data[i*m.d : (i+1)*m.d]
			p := 1.0
			for j, xj := range x {
				d := r[j] - xj
				p /= 1 + d*d*k.invS2
			}
			dst[i] = p
		}
	case Polynomial:
		m.dots(dst, x)
		for i, dt := range dst {
			dst[i] = ipow(dt+k.Coef0, k.Degree)
		}
	case Linear:
		m.dots(dst, x)
	default:
		panic("kernel: unknown kind")
	}
	return dst
}

// Gram writes the n×n kernel matrix of m's rows into dst (row-major, len ≥
// n²) and returns it. It is exactly symmetric: the upper triangle is computed
// with Row and mirrored.
func (k *Kernel) Gram(dst []float64, m *Matrix) []float64 {
	n := m.n
	dst = dst[:n*n]
	row := make([]float64, n)
	for i := 0; i < n; i++ {
		k.Row(row, m, m.Row(i))
		for j := i; j < n; j++ {
			dst[i*n+j] = row[j]
			dst[j*n+i] = row[j]
		}
	}
	return dst
}

func dot(x, y []float64) float64 {
	return blas64.Dot(blas64.Vector{N: len(x), Inc: 1, Data: x}, blas64.Vector{N: len(y), Inc: 1, Data: y})
}

func ipow(b float64, p int) float64 {
	r := 1.0
	for p > 0 {
		if p&1 == 1 {
			r *= b
		}
		b *= b
		p >>= 1
	}
	return r
}

// Matrix stores examples as rows of a dense row-major n×d matrix, with their
// squared norms cached. It is the "stored matrix" kernel rows are computed
// against (support vectors, landmarks, dictionaries). Kernel rows use
// scratch space inside the Matrix, so a Matrix must not be used by several
// goroutines at once, not even for Row or Gram; give each its own copy.
type Matrix struct {
	d    int
	n    int
	data []float64 // n×d, row-major
	sq   []float64 // ‖x_i‖²
	nz   []int     // scratch: non-zero positions of the query
}

// NewMatrix returns an empty matrix for d-dimensional rows with room for
// capRows rows before it reallocates.
func NewMatrix(d, capRows int) *Matrix {
	return &Matrix{d: d, data: make([]float64, 0, d*capRows), sq: make([]float64, 0, capRows), nz: make([]int, 0, d)}
}

// Len returns the number of rows.
func (m *Matrix) Len() int { return m.n }

// Dim returns the row dimension d.
func (m *Matrix) Dim() int { return m.d }

// Row returns row i (aliasing the matrix's storage; do not modify).
func (m *Matrix) Row(i int) []float64 { return m.data[i*m.d : (i+1)*m.d : (i+1)*m.d] }

// Data returns the n×d row-major storage (aliasing; do not modify).
func (m *Matrix) Data() []float64 { return m.data[:m.n*m.d] }

// Append adds a copy of x as the last row.
func (m *Matrix) Append(x []float64) {
	if len(x) != m.d {
		panic(fmt.Sprintf("kernel: Append with len(x)=%d, matrix dim %d", len(x), m.d))
	}
	m.data = append(m.data, x...)
	m.sq = append(m.sq, dot(x, x))
	m.n++
}

// Set overwrites row i with a copy of x.
func (m *Matrix) Set(i int, x []float64) {
	copy(m.data[i*m.d:(i+1)*m.d], x)
	m.sq[i] = dot(x, x)
}

// SwapRemove removes row i by moving the last row into its place (O(d)).
// Callers that keep per-row data must mirror the move: the former last row
// is now row i.
func (m *Matrix) SwapRemove(i int) {
	last := m.n - 1
	if i != last {
		copy(m.data[i*m.d:(i+1)*m.d], m.data[last*m.d:(last+1)*m.d])
		m.sq[i] = m.sq[last]
	}
	m.data = m.data[:last*m.d]
	m.sq = m.sq[:last]
	m.n = last
}

// Reset removes all rows, keeping the storage.
func (m *Matrix) Reset() {
	m.data = m.data[:0]
	m.sq = m.sq[:0]
	m.n = 0
}

// SetData replaces the contents with the n×d row-major data (copied), as
// read back from a marshalled state.
func (m *Matrix) SetData(data []float64) error {
	if m.d == 0 || len(data)%m.d != 0 {
		return fmt.Errorf("kernel: %d values do not form rows of dimension %d", len(data), m.d)
	}
	m.Reset()
	for i := 0; i+m.d <= len(data); i += m.d {
		m.Append(data[i : i+m.d])
	}
	return nil
}

// Bytes is the memory held by the matrix's rows and norms.
func (m *Matrix) Bytes() int { return 8 * (cap(m.data) + cap(m.sq)) }

// dots writes x_iᵀx into dst (len n) and returns ‖x‖².
func (m *Matrix) dots(dst []float64, x []float64) float64 {
	nz := m.nz[:0]
	var xx float64
	for j, v := range x {
		if v != 0 {
			nz = append(nz, j)
			xx += v * v
		}
	}
	m.nz = nz
	if 4*len(nz) <= m.d {
		d := m.d
		for i := range dst {
			r := m.data[i*d : (i+1)*d]
			var s float64
			for _, j := range nz {
				s += r[j] * x[j]
			}
			dst[i] = s
		}
		return xx
	}
	blas64.Implementation().Dgemv(blas.NoTrans, m.n, m.d, 1, m.data, m.d, x, 1, 0, dst, 1)
	return xx
}
