package learner

// FeatureONS is FORKS' Stage 2 — the Online Newton Step with the
// generalized (slab) projection of ons.go (Wen et al., arXiv 2410.11188v2,
// §3.4 Eq. 10) — run on feature vectors the caller supplies instead of on
// FORKS' sketched Nyström map. It separates the learner from the map for
// analyses such as eval/paper's forks-ceiling (the same update on exact
// Nyström features), and it is the same code FORKS runs: the update is
// FORKS' with λ = 0, η_i = 0 and the inverse that includes the current
// gradient (its defaults), and there are no resets.
//
// It is not a registered learner: it has no kernel, no state encoding and
// no dimension check beyond a panic when len(phi) < k.
type FeatureONS struct {
	o     *ons
	loss  Loss
	sigma float64
}

// NewFeatureONS returns the ONS on k features with A = αI at the start,
// slab level c (≤ 0: no projection), curvature weight sigma (σ_i) and the
// given loss; FORKS' paper values are α = 0.01, c = 1, σ_i = 0.5, hinge.
// It panics if k < 1.
func NewFeatureONS(k int, alpha, c, sigma float64, loss Loss) *FeatureONS {
	if k < 1 {
		panic("learner: NewFeatureONS with k < 1")
	}
	o := newONS(k, alpha, c)
	o.reset(k)
	return &FeatureONS{o: o, loss: loss, sigma: sigma}
}

// Learn predicts phi (length ≥ k; the first k entries are used), then takes
// the ONS step with label y, and returns the pre-update score
// clip(φᵀv, −C, C). A step that Sherman–Morrison refuses (non-finite) is
// skipped, as in FORKS.
func (f *FeatureONS) Learn(phi []float64, y float64) float64 {
	s := f.o.predict(phi)
	_ = f.o.update(phi, f.loss.Deriv(s, y), 0, f.sigma, true)
	return s
}
