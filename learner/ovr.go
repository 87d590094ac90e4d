package learner

// One-vs-rest (OvR) — a multi-class learner made of binary learners, for
// every registered binary classifier without a native multi-class form
// (bogd, bpas, projectron, kons, ...). NewMulti falls back to it.
//
// Reference: R. Rifkin and A. Klautau, "In defense of one-vs-all
// classification", JMLR 5, 2004, §2 (one binary classifier per class, the
// class of the largest output); per-class probabilities by Platt scaling
// (J. Platt, 1999, §2.1; online form in platt.go), normalised over the
// classes (the normalisation of Zadrozny & Elkan, KDD 2002, §4.1).
//
// Model: for each class k < K a binary learner f_k (built from the same
// spec: same seed, same parameters) learns y = +1 on the events of class k
// and y = −1 on every other event; an online Platt calibration q_k =
// σ(A_k f_k(x) + B_k) turns its score into P(y = +1 | x), and
// P(k | x) = q_k / Σ_j q_j (uniform if every q_j underflows to 0).
//
// Choices and limits:
//   - Classes grow online. When class K first appears, a fresh learner is
//     built for it and learns from that event on; nothing is replayed, so
//     it has not seen the events before its class appeared (they were all
//     negatives for it): early in its life it is a model of "class K vs
//     the events since K appeared". Replaying would need the stream kept.
//   - Memory and time: one binary learner per class, so K× the binary
//     learner's memory (K budgets of support vectors for a budgeted
//     kernel learner) and K× its time per event. A learner with a native
//     multi-class form (MultiNames) shares its feature map across classes
//     and is cheaper.
//   - The binary learners must be classifiers (a regression loss is
//     refused). Each learner's score is calibrated by its own Platt
//     (PlattEta, starting at A = 1, B = 0), updated with the pre-update
//     score, so the probabilities are progressive like the scores.
//   - State: the header (the binary learner's name and canonical spec, so
//     a state of another spec or dimension is refused), K, and for every
//     class A_k, B_k and the binary learner's own state. A binary state
//     of the same spec is refused too (the body starts with a tag).
//   - Determinism: each member is deterministic and the members never
//     share a generator, so the whole is.

import "fmt"

// ovrTag opens an OvR state's body (after the common header), so a binary
// learner's state of the same spec is not mistaken for one.
const ovrTag = "ovr/1"

// OvR is a one-vs-rest multi-class learner (see above). Build it with
// NewMulti on a binary learner's spec.
type OvR struct {
	base
	build   string // the spec members are built from
	members []Learner
	calib   []Platt
	s, q    []float64     // scratch: scores, calibrated probabilities (K)
	kinds   []FeatureKind // the feature kinds last declared (SetFeatureKinds); not state: the runtime declares them again after a restore
}

// SetFeatureKinds (KindAware) declares the feature kinds to every member
// that takes them, and to every member built later (a new class's).
func (o *OvR) SetFeatureKinds(kinds []FeatureKind) error {
	for _, m := range o.members {
		if ka, ok := m.(KindAware); ok {
			if err := ka.SetFeatureKinds(kinds); err != nil {
				return err
			}
		}
	}
	o.kinds = append(o.kinds[:0], kinds...)
	return nil
}

// newOvR builds a one-vs-rest learner over the binary learner of spec.
func newOvR(spec string, dim int) (*OvR, error) {
	proto, err := New(spec, dim)
	if err != nil {
		return nil, err
	}
	info := proto.Info()
	if info.Task != Classification {
		return nil, fmt.Errorf("learner %s is a %v learner with this spec: one-vs-rest needs a binary classifier (a classification loss)", info.Name, info.Task)
	}
	return &OvR{base: base{name: info.Name, spec: info.Spec, dim: dim, task: MultiClass}, build: spec}, nil
}

// Classes returns the number of classes learnt so far.
func (o *OvR) Classes() int { return len(o.members) }

// scratch sizes the scratch to k classes.
func (o *OvR) scratch(k int) {
	if cap(o.s) < k {
		o.s = make([]float64, k, 2*k)
		o.q = make([]float64, k, 2*k)
	}
	o.s, o.q = o.s[:k], o.q[:k]
}

// PredictProba writes the normalised calibrated one-vs-rest probabilities
// into p[:K].
func (o *OvR) PredictProba(x, p []float64) []float64 {
	o.checkDim(x)
	K := len(o.members)
	o.scratch(K)
	for k, m := range o.members {
		o.s[k] = m.Predict(x)
	}
	return o.normalise(p[:K])
}

// normalise fills o.q from the scores o.s and writes q/Σq into p.
func (o *OvR) normalise(p []float64) []float64 {
	var sum float64
	for k, s := range o.s {
		o.q[k] = o.calib[k].Prob(s)
		sum += o.q[k]
	}
	for k := range p {
		if sum > 0 {
			p[k] = o.q[k] / sum
		} else {
			p[k] = 1 / float64(len(p))
		}
	}
	return p
}

// LearnClass writes the pre-update distribution into p, teaches every
// class's learner its ±1 label and steps the calibrations; c == K adds a
// fresh learner for the new class.
func (o *OvR) LearnClass(x []float64, c int, p []float64) []float64 {
	o.checkDim(x)
	K := len(o.members)
	if c < 0 || c > K || c >= MaxClasses {
		panic("learner: class index out of range")
	}
	o.scratch(K)
	for k, m := range o.members { // each learner's pre-update score; learners are independent
		y := -1.0
		if k == c {
			y = 1
		}
		o.s[k] = m.Learn(x, y)
	}
	p = o.normalise(p[:K])
	for k := range o.members {
		y := -1.0
		if k == c {
			y = 1
		}
		o.calib[k].Update(o.s[k], o.q[k], y)
	}
	if c == K {
		m, err := New(o.build, o.dim)
		if err != nil { // the spec was accepted at construction; New is deterministic
			panic("learner ovr: rebuilding a member: " + err.Error())
		}
		if ka, ok := m.(KindAware); ok && o.kinds != nil {
			if err := ka.SetFeatureKinds(o.kinds); err != nil { // accepted by every member before; a fresh one takes them
				panic("learner ovr: declaring the feature kinds to a new member: " + err.Error())
			}
		}
		pl := NewPlatt()
		s := m.Learn(x, 1)
		pl.Update(s, pl.Prob(s), 1)
		o.members = append(o.members, m)
		o.calib = append(o.calib, pl)
	}
	o.updates++
	return p
}

// MarshalBinary encodes K, and per class the calibration and the binary
// learner's state.
func (o *OvR) MarshalBinary() ([]byte, error) {
	states := make([][]byte, len(o.members))
	n := 0
	for k, m := range o.members {
		b, err := m.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("learner ovr: class %d: %w", k, err)
		}
		states[k] = b
		n += len(b) + 24
	}
	e := o.encoder(n + 16)
	e.String(ovrTag)
	e.Int(len(o.members))
	for k, b := range states {
		e.F64(o.calib[k].A)
		e.F64(o.calib[k].B)
		e.Blob(b)
	}
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state of a one-vs-rest learner of the same
// canonical spec and dimension; on error the learner is unchanged. A
// claimed K is checked against the bytes left (every member's state holds
// at least its spec) before any member is built.
func (o *OvR) UnmarshalBinary(data []byte) error {
	d, updates := o.decoder(data)
	if tag := d.String(); d.Err() == nil && tag != ovrTag {
		d.Fail("ovr: not a one-vs-rest state (tag %q)", tag)
	}
	K := d.IntIn(0, MaxClasses, "classes")
	if !d.Need(K, 16+8+len(o.spec), "one-vs-rest members") {
		return d.Done()
	}
	members := make([]Learner, 0, K)
	calib := make([]Platt, 0, K)
	for k := 0; k < K && d.Err() == nil; k++ {
		pl := Platt{A: d.F64(), B: d.F64()}
		b := d.Blob()
		if d.Err() != nil {
			break
		}
		if !finiteF(pl.A) || !finiteF(pl.B) {
			d.Fail("ovr: class %d: non-finite calibration", k)
			break
		}
		m, err := New(o.build, o.dim)
		if err != nil {
			return fmt.Errorf("learner ovr: rebuilding a member: %w", err)
		}
		if err := m.UnmarshalBinary(b); err != nil {
			return fmt.Errorf("learner ovr: class %d: %w", k, err)
		}
		members = append(members, m)
		calib = append(calib, pl)
	}
	if err := d.Done(); err != nil {
		return err
	}
	o.members, o.calib, o.updates = members, calib, updates
	return nil
}

// Info reports the members' budgets, use and memory summed (K learners).
func (o *OvR) Info() Info {
	var budget, used, bytes int
	for _, m := range o.members {
		i := m.Info()
		budget += i.Budget
		used += i.Used
		bytes += i.Bytes
	}
	return o.info(budget, used, bytes+16*len(o.calib)+16*cap(o.s))
}

var _ Multi = (*OvR)(nil)
