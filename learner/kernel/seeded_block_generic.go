//go:build !amd64 || purego

package kernel

// projectGroupRun does nothing here (it returns 0, so ProjectGroup's
// projectBlock loop does all the work, with the same bits); on amd64 it is
// an AVX2 register-blocked loop (seeded_block_amd64.s).
func projectGroupRun(p []float64, ld int, w, phase []float64, g *SparseGroup, n int) int { return 0 }
