package learner

// linear (multi-class) — online multinomial logistic regression: the
// softmax head (softmax.go) on the raw features x.
//
// Reference: the multinomial logistic model (Bishop, Pattern Recognition
// and Machine Learning, 2006, §4.3.4) trained by per-coordinate AdaGrad
// (Duchi, Hazan & Singer, JMLR 12, 2011). It is the baseline every
// multi-class kernel model is judged against.
//
// Inputs: NewMulti standardises them by default (selftune_multi.go:
// scale=standard for a spec without σ; scale=none feeds raw features).
// Step: a per-coordinate AdaGrad step moves every weight by about η on its
// first update, so the logits of an input move by about η·‖x‖₁ ≈ 0.8·η·d
// for d standardised coordinates; the default η = 0.5·min(1, 16/d) keeps
// that near 6 logits for d ≥ 16 (measured on subsamples of 3,000 events,
// one permutation: letter, d = 16, η ∈ {0.03, 0.07, 0.1, 0.25, 0.5, 2}
// gives 47.1, 53.9, 56.6, 59.7, 60.3, 57.3 % accuracy; mnist, d = 784,
// η ∈ {0.003, 0.01, 0.03, 0.07, 0.1, 0.5}: 81.1, 83.7, 83.7, 81.9,
// 81.5, 79.8 %, log loss 0.94, 0.67, 0.69, 1.03, 1.29, 4.02: a fixed 0.5
// is over-confident on wide inputs).

import "math"

// LinearMulti is multinomial logistic regression. Build it with
// NewMulti("linear:...").
type LinearMulti struct {
	base
	head *softmaxHead
}

func init() {
	RegisterMulti(MultiRegistration{
		Name:    "linear",
		Summary: "online multinomial logistic regression (softmax, per-coordinate AdaGrad) on the raw features",
		Paper:   "Bishop 2006 §4.3.4; Duchi, Hazan & Singer, JMLR 2011 (AdaGrad)",
		Params: []ParamDoc{
			{Name: "eta", Default: "0.5·min(1, 16/d)", Doc: "AdaGrad step η (per coordinate)"},
			docSeed,
		},
		New: func(p *Params, dim int) (Multi, error) {
			eta := p.Float("eta", linearMultiEta(dim), Positive)
			if p.Has("seed") {
				p.Uint64("seed", 1) // accepted (harnesses give every learner a seed); nothing is drawn
			}
			if err := p.Err(); err != nil {
				return nil, err
			}
			return &LinearMulti{base: newBase(p, dim, MultiClass), head: newSoftmaxHead(dim, eta)}, nil
		},
	})
}

// Classes returns the number of classes learnt so far.
func (l *LinearMulti) Classes() int { return l.head.k }

// PredictProba writes the class distribution of x into p.
func (l *LinearMulti) PredictProba(x, p []float64) []float64 {
	l.checkDim(x)
	return l.head.probs(x, p)
}

// LearnClass predicts x, learns class c, and returns the pre-update
// distribution.
func (l *LinearMulti) LearnClass(x []float64, c int, p []float64) []float64 {
	p = l.PredictProba(x, p)
	l.head.learn(x, p, c)
	l.updates++
	return p
}

// MarshalBinary encodes the head and counter.
func (l *LinearMulti) MarshalBinary() ([]byte, error) {
	e := l.encoder(l.head.bytes() + 16)
	l.head.encode(e)
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state of an identically configured learner.
func (l *LinearMulti) UnmarshalBinary(data []byte) error {
	d, updates := l.decoder(data)
	k, w, g2 := decodeSoftmax(d, l.dim)
	if err := d.Done(); err != nil {
		return err
	}
	l.head.set(k, w, g2)
	l.updates = updates
	return nil
}

// Info reports the classes as the use.
func (l *LinearMulti) Info() Info { return l.info(0, l.head.k, l.head.bytes()) }

// linearMultiEta is the default step of linear multi for d inputs (see the
// file comment).
func linearMultiEta(d int) float64 { return 0.5 * math.Min(1, 16/float64(d)) }
