package kernel

// Seeded features in coordinate-major blocks: the frequency cache of the
// doubly stochastic gradient learner (Dai et al., NIPS 2014), laid out so
// that the projections ω_iᵀx of a block of features onto a sparse x are
// nnz(x) unit-stride multiply-adds over the block (an AXPY per non-zero
// coordinate of x, a GEMV with the block), not K gathers of nnz(x) scattered
// coordinates. Every projection has the bits of Project(ω_i, x, nz, b_i)
// with ω_i, b_i from Seeded.Frequency: the same products, rounded
// explicitly, added in the same order (the phase, then the coordinates of
// nz in increasing order). Only the memory layout differs.

import "fmt"

// SeededBlocks caches the frequency vectors and phases of features
// 0, 1, …, Cached()−1 of a Seeded generator in blocks of Block() features,
// block b holding coordinate j of feature b·Block()+k at W[b][j·Block()+k].
// Features beyond the cache budget are regenerated on every use.
//
// Grow must not run concurrently with anything else; Project and
// ProjectInto only read the cache, so several goroutines may call them at
// once, each with its own scratch.
type SeededBlocks struct {
	s     *Seeded
	size  int         // features per block
	limit int         // most features cached
	n     int         // features cached
	w     [][]float64 // blocks, d·size each
	phase []float64   // phases of the cached features
	tmp   []float64   // Grow's scratch frequency vector
}

// NewSeededBlocks returns an empty cache of at most limit features (0: no
// cache, every feature regenerated) in blocks of size features.
func NewSeededBlocks(s *Seeded, size, limit int) *SeededBlocks {
	if size <= 0 {
		panic(fmt.Sprintf("kernel: SeededBlocks block size %d", size))
	}
	return &SeededBlocks{s: s, size: size, limit: max(limit, 0), tmp: make([]float64, s.d)}
}

// Block returns the number of features per block.
func (c *SeededBlocks) Block() int { return c.size }

// Cached returns the number of cached features (a prefix 0..Cached()−1).
func (c *SeededBlocks) Cached() int { return c.n }

// Bytes returns the memory held by the cache.
func (c *SeededBlocks) Bytes() int {
	n := 8 * (cap(c.phase) + cap(c.tmp))
	for _, b := range c.w {
		n += 8 * cap(b)
	}
	return n
}

// Grow caches features up to min(n, the limit), generating each once.
func (c *SeededBlocks) Grow(n int) {
	d, size := c.s.d, c.size
	for ; c.n < n && c.n < c.limit; c.n++ {
		b, k := c.n/size, c.n%size
		if b == len(c.w) {
			c.w = append(c.w, make([]float64, d*size))
		}
		c.phase = append(c.phase, c.s.Frequency(c.tmp, uint64(c.n)))
		blk := c.w[b]
		for j, v := range c.tmp {
			blk[j*size+k] = v
		}
	}
}

// Project writes p[i−lo] = ω_iᵀx + b_i (withPhase) or ω_iᵀx for the
// features i in [lo, hi), summed over the coordinates nz of x (increasing,
// the non-zero ones: NonZero), with the bits of Project. w (len ≥ d) is
// scratch for regenerating the features that are not cached. It returns
// p[:hi−lo].
func (c *SeededBlocks) Project(p, w, x []float64, nz []int, lo, hi int, withPhase bool) []float64 {
	p = p[:hi-lo]
	size := c.size
	for i := lo; i < hi; {
		if i >= c.n { // regenerated
			for ; i < hi; i++ {
				b := c.s.Frequency(w, uint64(i))
				if !withPhase {
					b = 0
				}
				p[i-lo] = Project(w, x, nz, b)
			}
			break
		}
		b := i / size
		end := min(hi, (b+1)*size, c.n)
		dst := p[i-lo : end-lo]
		if withPhase {
			copy(dst, c.phase[i:end])
		} else {
			clear(dst)
		}
		projectBlock(dst, c.w[b], x, nz, size, i-b*size)
		i = end
	}
	return p
}

// projectBlock adds Σ_{j∈nz} x_j·W[j·size+off+k] to dst[k], coordinate by
// coordinate in the order of nz, every product rounded: four coordinates per
// pass over dst, then one at a time (Fourier's projection kernels,
// axpy4Rounded and AxpyRounded: AVX2 or SSE2 on amd64, the same bits), each
// element's sum in the same order as Project's.
func projectBlock(dst, W []float64, x []float64, nz []int, size, off int) {
	n := len(dst)
	row := func(j int) []float64 { return W[j*size+off : j*size+off+n] }
	k := 0
	for ; k+4 <= len(nz); k += 4 {
		j0, j1, j2, j3 := nz[k], nz[k+1], nz[k+2], nz[k+3]
		xs := [4]float64{x[j0], x[j1], x[j2], x[j3]}
		axpy4Rounded(dst, row(j0), row(j1), row(j2), row(j3), &xs)
	}
	for ; k < len(nz); k++ {
		AxpyRounded(x[nz[k]], row(nz[k]), dst)
	}
}

// SparseGroup holds the non-zero coordinates and values of a group of
// inputs (the events of a mini-batch) in the form ProjectGroup reads:
// one list of (row offset, value) pairs per input, all the lists
// concatenated. It keeps references to the inputs and their index lists
// (not copies): they must not change while the group is in use.
type SparseGroup struct {
	xs   [][]float64
	nzs  [][]int
	rows []int     // j·size for each non-zero coordinate j, inputs concatenated
	vals []float64 // x_j for the same entries
	ones []uint8   // 1 where x_j = 1 (the product 1·ω_ij = ω_ij is exact: added without a multiply)
	ends []int     // ends[e]: the end of input e's entries
	size int       // the block size the row offsets were computed for
	dim  int       // 1 + the largest coordinate added (ProjectGroup checks it against d)
}

// Reset empties the group for blocks of size features (SeededBlocks.Block).
func (g *SparseGroup) Reset(size int) {
	clear(g.xs)
	clear(g.nzs)
	g.xs, g.nzs = g.xs[:0], g.nzs[:0]
	g.rows, g.vals, g.ones, g.ends = g.rows[:0], g.vals[:0], g.ones[:0], g.ends[:0]
	g.size, g.dim = size, 0
}

// Add appends input x with its non-zero coordinates nz (increasing, as
// NonZero returns them).
func (g *SparseGroup) Add(x []float64, nz []int) {
	for _, j := range nz {
		g.dim = max(g.dim, j+1)
		g.rows = append(g.rows, j*g.size)
		g.vals = append(g.vals, x[j])
		var one uint8
		if x[j] == 1 {
			one = 1
		}
		g.ones = append(g.ones, one)
	}
	g.ends = append(g.ends, len(g.rows))
	g.xs = append(g.xs, x)
	g.nzs = append(g.nzs, nz)
}

// Len returns the number of inputs in the group.
func (g *SparseGroup) Len() int { return len(g.xs) }

// ProjectGroup is Project for every input e of g at once: it writes
// p[e·ld + i−lo] = ω_iᵀx_e + b_i (withPhase) or ω_iᵀx_e for the features i
// in [lo, hi), with the bits of Project (the phase, then the coordinates
// of nz_e in increasing order, every product rounded, no fused
// multiply-add). On amd64 with AVX2 the cached features are done in strips
// of 32 held in eight registers while the strip's frequencies (at most
// d·32 values) are read for every input of the group — a register-blocked
// sparse GEMM — and a coordinate x_j = 1 (indicator inputs) is added
// without its multiply (1·ω_ij is exactly ω_ij, so the bits stay); elsewhere, and for a strip's remainder, it is projectBlock
// input by input (the same bits, TestSeededBlocksProjectGroup). A
// regenerated feature (beyond the cache) is generated once for the whole
// group into w (len ≥ d). g must have been Reset with Block() and hold
// coordinates below d; ld ≥ hi−lo and len(p) ≥ (g.Len()−1)·ld + hi−lo; it
// panics otherwise (before any memory is read).
func (c *SeededBlocks) ProjectGroup(p []float64, ld int, w []float64, g *SparseGroup, lo, hi int, withPhase bool) {
	ne := g.Len()
	if ne == 0 || hi <= lo {
		return
	}
	if g.size != c.size || g.dim > c.s.d || ld < hi-lo {
		panic(fmt.Sprintf("kernel: ProjectGroup with block %d (cache %d), coordinates below %d (d = %d), ld %d for %d features",
			g.size, c.size, g.dim, c.s.d, ld, hi-lo))
	}
	_ = p[(ne-1)*ld+hi-lo-1]
	size := c.size
	for i := lo; i < hi; {
		if i >= c.n { // regenerated, once for the group
			for ; i < hi; i++ {
				b := c.s.Frequency(w, uint64(i))
				if !withPhase {
					b = 0
				}
				for e := range ne {
					p[e*ld+i-lo] = Project(w, g.xs[e], g.nzs[e], b)
				}
			}
			break
		}
		b := i / size
		end := min(hi, (b+1)*size, c.n)
		var phase []float64
		if withPhase {
			phase = c.phase[i:end]
		}
		off := i - b*size
		done := projectGroupRun(p[i-lo:], ld, c.w[b][off:], phase, g, end-i)
		for e := range ne { // the rest: projectBlock, input by input
			dst := p[e*ld+i-lo+done : e*ld+end-lo]
			if withPhase {
				copy(dst, phase[done:])
			} else {
				clear(dst)
			}
			projectBlock(dst, c.w[b], g.xs[e], g.nzs[e], size, off+done)
		}
		i = end
	}
}
