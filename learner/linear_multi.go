package learner

// linear (multi-class) — online multinomial logistic regression: the
// softmax head (softmax.go) on the raw features x.
//
// Reference: the multinomial logistic model (Bishop, Pattern Recognition
// and Machine Learning, 2006, §4.3.4) trained by per-coordinate AdaGrad
// (Duchi, Hazan & Singer, JMLR 12, 2011). It is the baseline every
// multi-class kernel model is judged against.

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
			{Name: "eta", Default: "0.5", Doc: "AdaGrad step η"},
			docSeed,
		},
		New: func(p *Params, dim int) (Multi, error) {
			eta := p.Float("eta", 0.5, Positive)
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
