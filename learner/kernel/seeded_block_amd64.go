//go:build amd64 && !purego

package kernel

// projectGroupRun sets p[e·ld+i] = phase[i] (0 if phase is empty) +
// Σ_k vals[k]·w[rows[k]+i], summed over input e's entries k (g.ends) in
// order, every product rounded, for i < n rounded down to a multiple of 32,
// and returns that number: strips of 32 features
// in eight AVX2 accumulators (seeded_block_amd64.s), only where the CPU has
// AVX2 (useAVX2, fourier_amd64.go); 0 otherwise (ProjectGroup's Go loop does
// the rest). The caller guarantees rows[k]+n ≤ len(w) and
// (g.Len()−1)·ld+n ≤ len(p).
func projectGroupRun(p []float64, ld int, w, phase []float64, g *SparseGroup, n int) int {
	done := 0
	if useAVX512 && n >= 64 {
		done = 64 * (n / 64)
		projectStrips64(p, ld, w, phase, g.rows, g.vals, g.ones, g.ends, n/64)
	}
	strips := (n - done) / 32
	if !useAVX2 || strips == 0 {
		return done
	}
	if len(phase) > 0 {
		phase = phase[done:]
	}
	projectStrips(p[done:], ld, w[done:], phase, g.rows, g.vals, g.ones, g.ends, strips)
	return done + 32*strips
}

// projectStrips is projectGroupRun's AVX2 loop: for each strip of 32
// features, for each input e, the strip's sums of input e in Y0–Y7 (from
// the phases, or zero), one VMULPD
// and one VADDPD per register and entry (one VADDPD where ones[k] = 1:
// x_j = 1), stored back.
//
//go:noescape
func projectStrips(p []float64, ld int, w, phase []float64, rows []int, vals []float64, ones []uint8, ends []int, strips int)

// projectStrips64 is projectStrips with strips of 64 features in eight
// AVX-512 registers (only for CPUs with AVX-512F: useAVX512).
//
//go:noescape
func projectStrips64(p []float64, ld int, w, phase []float64, rows []int, vals []float64, ones []uint8, ends []int, strips int)
