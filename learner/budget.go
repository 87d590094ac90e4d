package learner

// Shared building block of the budgeted kernel-expansion baselines (RBP,
// BPA-S, BOGD, Projectron): a support-vector set of at most B stored
// examples with their coefficients, f(x) = Σ_i a_i κ(x_i, x).

import (
	"fmt"

	"okstream/learner/kernel"
	"okstream/learner/rng"
	"okstream/learner/state"
)

// budgetSV is a kernel expansion over at most budget stored examples. The
// rows of sv and the coefficients a are kept in sync: a[i] belongs to row i.
// All storage is allocated up front, so add, replace and score never
// allocate.
type budgetSV struct {
	budget int
	sv     *kernel.Matrix
	a      []float64 // len == sv.Len()
	krow   []float64 // scratch (cap budget): κ(x_i, x) from the last score call
}

func newBudgetSV(dim, budget int) budgetSV {
	return budgetSV{
		budget: budget,
		sv:     kernel.NewMatrix(dim, budget),
		a:      make([]float64, 0, budget),
		krow:   make([]float64, budget),
	}
}

// len returns the number of stored examples.
func (s *budgetSV) len() int { return len(s.a) }

// full reports whether the budget is used up.
func (s *budgetSV) full() bool { return len(s.a) >= s.budget }

// score returns f(x) = Σ_i a_i κ(x_i, x) (0 for an empty set) and leaves
// the kernel row κ(x_i, x) in s.row() until the next call. It computes the
// row with the one kernel-row routine, kernel.Kernel.Row.
func (s *budgetSV) score(k *kernel.Kernel, x []float64) float64 {
	if len(s.a) == 0 {
		return 0
	}
	return dot(s.a, k.Row(s.krow, s.sv, x))
}

// row returns κ(x_i, x) of the last score call (length len()).
func (s *budgetSV) row() []float64 { return s.krow[:len(s.a)] }

// add appends (x, c). It panics if the set is full.
func (s *budgetSV) add(x []float64, c float64) {
	if s.full() {
		panic("learner: budgetSV.add on a full set")
	}
	s.sv.Append(x)
	s.a = append(s.a, c)
}

// replace overwrites stored example i with (x, c). Note that s.row() still
// holds the kernel values of the old row i.
func (s *budgetSV) replace(i int, x []float64, c float64) {
	s.sv.Set(i, x)
	s.a[i] = c
}

// scale multiplies every coefficient by c.
func (s *budgetSV) scale(c float64) {
	for i := range s.a {
		s.a[i] *= c
	}
}

// bytes is the memory held by the set (rows, norms, coefficients, scratch).
func (s *budgetSV) bytes() int { return s.sv.Bytes() + 8*(cap(s.a)+cap(s.krow)) }

// encode appends the stored rows and the coefficients.
func (s *budgetSV) encode(e *state.Encoder) {
	e.F64s(s.sv.Data())
	e.F64s(s.a)
}

// budgetSVState is a decoded, validated but not yet installed budgetSV.
type budgetSVState struct{ rows, a []float64 }

// decodeBudgetSV reads what encode wrote and checks it against the
// dimension and budget; problems are reported through d.
func decodeBudgetSV(d *state.Decoder, dim, budget int) budgetSVState {
	rows := d.F64s(nil)
	a := d.F64s(nil)
	if d.Err() == nil && (len(rows)%dim != 0 || len(rows)/dim != len(a) || len(a) > budget) {
		d.Fail("support-vector set: %d stored values and %d coefficients for dimension %d, budget %d", len(rows), len(a), dim, budget)
	}
	return budgetSVState{rows, a}
}

// install replaces the contents with a decoded state (which must have come
// through decodeBudgetSV without error).
func (s *budgetSV) install(st budgetSVState) {
	if err := s.sv.SetData(st.rows); err != nil {
		panic(fmt.Sprintf("learner: budgetSV.install after validation: %v", err))
	}
	s.a = append(s.a[:0], st.a...)
}

// encodeRNG appends a generator's complete state.
func encodeRNG(e *state.Encoder, r *rng.Source) {
	hi, lo := r.State()
	e.U64(hi)
	e.U64(lo)
}

// randomBudget is the state RBP and BOGD share: a budget of support vectors
// with coefficients and the seeded generator that picks which one to
// discard, with their marshalling and Info.
type randomBudget struct {
	base
	budget int
	set    budgetSV
	rnd    *rng.Source
}

func newRandomBudget(b base, dim, budget int, seed uint64) randomBudget {
	return randomBudget{base: b, budget: budget, set: newBudgetSV(dim, budget), rnd: rng.New(seed)}
}

// MarshalBinary encodes the support vectors, their coefficients and the
// generator state.
func (l *randomBudget) MarshalBinary() ([]byte, error) {
	e := l.encoder(8*(len(l.set.sv.Data())+l.set.len()) + 32)
	l.set.encode(e)
	encodeRNG(e, l.rnd)
	return e.Bytes(), nil
}

// UnmarshalBinary restores a state of an identically configured learner.
func (l *randomBudget) UnmarshalBinary(data []byte) error {
	d, updates := l.decoder(data)
	st := decodeBudgetSV(d, l.dim, l.budget)
	hi, lo := d.U64(), d.U64()
	if err := d.Done(); err != nil {
		return err
	}
	l.set.install(st)
	l.rnd.Restore(hi, lo)
	l.updates = updates
	return nil
}

// Info reports the budget B and the number of stored examples.
func (l *randomBudget) Info() Info {
	return l.info(l.budget, l.set.len(), l.set.bytes()+16)
}
