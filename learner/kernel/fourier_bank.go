package kernel

// Helpers for a bank of Fourier maps that share one projection (binary
// auto's FOGD members, learner/auto_bank.go): MapProjected's counterparts
// for the score and for checking that two maps are one up to a
// power-of-two width ratio.

// Score returns wᵀz for z as Map writes it (len 2D) and w of length 2D,
// summed as MapDot sums it (Σ_j w_j·cos_j and Σ_j w_{D+j}·sin_j in
// increasing j, each product rounded, then their sum), so that
// Score(w, Map(dst, x)) has the bits of MapDot(dst, w, x)'s score. It
// panics on lengths other than 2D.
func (f *Fourier) Score(w, z []float64) float64 {
	D := f.nf
	if len(w) != 2*D || len(z) != 2*D {
		panic("kernel: Fourier.Score needs w and z of length 2D")
	}
	return scoreSums(w, z)
}

// scoreSums is wᵀz for w and z of length 2D as MapDot sums it: Σ_j
// w_j·cos_j and Σ_j w_{D+j}·sin_j in increasing j, each product rounded,
// then their sum.
func scoreSums(w, z []float64) float64 {
	D := len(z) / 2
	var fc, fs float64
	wc, ws := w[:D], w[D:2*D]
	cs, sn := z[:D], z[D:2*D]
	for j, c := range cs {
		fc += float64(wc[j] * c)
		fs += float64(ws[j] * sn[j])
	}
	return fc + fs
}

// ScaledOf reports whether f's frequencies are exactly g's times mult,
// with the same input dimension, D and scale: then, mult being a power of
// two, g.MapProjected(dst, g.Project(p, x), mult) has the bits of
// f.Map(dst, x) (barring subnormal products). O(d·D), no allocation.
func (f *Fourier) ScaledOf(g *Fourier, mult float64) bool {
	if f.d != g.d || f.nf != g.nf || f.scale != g.scale || len(f.w) != len(g.w) {
		return false
	}
	for i, v := range g.w {
		if f.w[i] != float64(v*mult) {
			return false
		}
	}
	return true
}

// Scaled returns a new map whose frequencies are f's times mult, sharing
// nothing with f: for mult a power of two, the map NewFourier draws at
// width σ/mult from f's kind, d, D, scale and seed, without drawing
// (O(d·D) products, exact).
func (f *Fourier) Scaled(mult float64) *Fourier {
	g := &Fourier{d: f.d, nf: f.nf, scale: f.scale, w: make([]float64, len(f.w)), nz: make([]int, 0, f.d)}
	for i, v := range f.w {
		g.w[i] = float64(v * mult)
	}
	return g
}

// Scores writes wᵀz for each w of ws into dst (Score's sums, the same
// bits), three weight vectors per pass over z: the sums of one vector are
// a chain of dependent additions, and three chains per pass keep the
// processor's adders busy where one leaves them waiting.
func (f *Fourier) Scores(dst []float64, ws [][]float64, z []float64) {
	D := f.nf
	if len(z) != 2*D || len(dst) < len(ws) {
		panic("kernel: Fourier.Scores needs z of length 2D and one score per w")
	}
	k := 0
	for ; k+3 <= len(ws); k += 3 {
		w0, w1, w2 := ws[k], ws[k+1], ws[k+2]
		if len(w0) != 2*D || len(w1) != 2*D || len(w2) != 2*D {
			panic("kernel: Fourier.Scores needs w of length 2D")
		}
		var c0, s0, c1, s1, c2, s2 float64
		cs, sn := z[:D], z[D:2*D]
		w0c, w0s, w1c, w1s, w2c, w2s := w0[:D], w0[D:2*D], w1[:D], w1[D:2*D], w2[:D], w2[D:2*D]
		for j, c := range cs {
			s := sn[j]
			c0 += float64(w0c[j] * c)
			s0 += float64(w0s[j] * s)
			c1 += float64(w1c[j] * c)
			s1 += float64(w1s[j] * s)
			c2 += float64(w2c[j] * c)
			s2 += float64(w2s[j] * s)
		}
		dst[k], dst[k+1], dst[k+2] = c0+s0, c1+s1, c2+s2
	}
	for ; k < len(ws); k++ {
		dst[k] = f.Score(ws[k], z)
	}
}
