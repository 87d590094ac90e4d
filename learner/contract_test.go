package learner

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"testing"

	"okstream/learner/rng"
	"okstream/learner/state"
)

// stream is a synthetic nonlinear problem: classification by the sign of a
// circle/sine boundary in d dimensions (a linear model gets ~50%), or
// regression on a smooth nonlinear target in [0, 1].
func stream(task Task, n, d int, seed uint64) (xs [][]float64, ys []float64) {
	src := rng.New(seed)
	for i := 0; i < n; i++ {
		x := make([]float64, d)
		for j := range x {
			x[j] = 2*src.Float64() - 1
		}
		r := x[0]*x[0] + x[1]*x[1]
		var y float64
		if task == Classification {
			y = -1
			if r < 0.5+0.2*math.Sin(3*x[2]) {
				y = 1
			}
			if src.Float64() < 0.03 {
				y = -y
			}
		} else {
			y = 0.5 + 0.4*math.Sin(2*x[0])*math.Cos(x[1]) + 0.05*src.Normal()
		}
		xs = append(xs, x)
		ys = append(ys, y)
	}
	return xs, ys
}

// contractSpecs are the configurations every contract test runs on. Each
// learner's test file adds its own with addContractSpecs in an init
// function: a classification and (where the learner has one) a regression
// configuration, with budgets small enough that every phase (e.g. NOGD's
// switch to the primal form) is reached within the 500–4000-event test
// streams. Every spec must learn the synthetic problem of stream() clearly
// better than a trivial predictor (TestLearnsNonlinearProblem).
var contractSpecs []string

func addContractSpecs(specs ...string) { contractSpecs = append(contractSpecs, specs...) }

func init() {
	addContractSpecs("linear", "linear:loss=square", "linear:loss=square,solver=rls", "linear:loss=hinge,eta=0.1",
		"linear:loss=square,solver=rls,features=16,sigma=1")
	addContractSpecs(
		"fogd:sigma=0.7,budget=20",
		"fogd:sigma=0.7,budget=20,loss=square",
		"fogd:sigma=0.7,budget=20,mix=own",
		"fogd:kernel=laplacian,sigma=1,budget=10,loss=logistic",
		"nogd:sigma=0.7,budget=30,k=20",
		"nogd:sigma=0.7,budget=30,loss=square,horizon=600",
		"nogd:kernel=polynomial,degree=2,budget=40,k=21,loss=squared_hinge,eta=0.05",
	)
}

func taskOf(t *testing.T, spec string) Task {
	l, err := New(spec, 5)
	if err != nil {
		t.Fatalf("%s: %v", spec, err)
	}
	return l.Info().Task
}

// Every registered learner is covered by contractSpecs.
func TestContractCoversRegistry(t *testing.T) {
	covered := map[string]bool{}
	for _, s := range contractSpecs {
		n, _, _ := ParseSpec(s)
		covered[n] = true
	}
	for _, n := range Names() {
		if !covered[n] {
			t.Errorf("learner %q has no entry in contractSpecs", n)
		}
	}
}

// Same spec + same seed + same input ⇒ bit-identical scores and state.
// continueIdentically feeds xs[from:] to a and b (two learners that should
// be in the same state: built alike, or b restored from a's state) and fails
// unless every score — and, with predict, every Predict before the Learn —
// and the final marshalled states are bit-identical. what prefixes the
// messages (e.g. "cut 7").
func continueIdentically(t *testing.T, what string, a, b Learner, xs [][]float64, ys []float64, from int, predict bool) {
	t.Helper()
	for i := from; i < len(xs); i++ {
		if predict {
			if p := b.Predict(xs[i]); math.Float64bits(p) != math.Float64bits(a.Predict(xs[i])) {
				t.Fatalf("%s, event %d: Predict differs", what, i)
			}
		}
		fa, fb := a.Learn(xs[i], ys[i]), b.Learn(xs[i], ys[i])
		if math.Float64bits(fa) != math.Float64bits(fb) {
			t.Fatalf("%s, event %d: scores %v vs %v", what, i, fa, fb)
		}
	}
	sa, _ := a.MarshalBinary()
	sb, _ := b.MarshalBinary()
	if !bytes.Equal(sa, sb) {
		t.Fatalf("%s: final states differ", what)
	}
}

func TestDeterminism(t *testing.T) {
	for _, spec := range contractSpecs {
		t.Run(spec, func(t *testing.T) {
			xs, ys := stream(taskOf(t, spec), 600, 5, 1)
			a, _ := New(spec, 5)
			b, _ := New(spec, 5)
			continueIdentically(t, "same seed", a, b, xs, ys, 0, false)
		})
	}
}

// Marshal in the middle of a stream, restore into a fresh learner, continue
// both: scores and final state must be byte-identical. Checked at several
// cut points so that every phase is crossed.
func TestMarshalMidStream(t *testing.T) {
	for _, spec := range contractSpecs {
		t.Run(spec, func(t *testing.T) {
			xs, ys := stream(taskOf(t, spec), 500, 5, 2)
			for _, cut := range []int{0, 1, 7, 60, 250} {
				a, _ := New(spec, 5)
				for i := 0; i < cut; i++ {
					a.Learn(xs[i], ys[i])
				}
				st, err := a.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				b, _ := New(spec, 5)
				if err := b.UnmarshalBinary(st); err != nil {
					t.Fatalf("cut %d: restore: %v", cut, err)
				}
				if b.Info().Updates != uint64(cut) {
					t.Fatalf("cut %d: restored Updates = %d", cut, b.Info().Updates)
				}
				continueIdentically(t, fmt.Sprintf("cut %d, after restore", cut), a, b, xs, ys, cut, false)
			}
		})
	}
}

// A state is refused by a differently configured learner, and a corrupt or
// truncated state is refused without changing the learner.
func TestUnmarshalRejects(t *testing.T) {
	for _, spec := range contractSpecs {
		t.Run(spec, func(t *testing.T) {
			xs, ys := stream(taskOf(t, spec), 200, 5, 3)
			a, _ := New(spec, 5)
			for i := range xs {
				a.Learn(xs[i], ys[i])
			}
			st, _ := a.MarshalBinary()

			other, _ := New(spec+",horizon=12345", 5)
			if other == nil {
				other, _ = New(spec, 6)
			}
			var me *state.MismatchError
			if err := other.UnmarshalBinary(st); !errors.As(err, &me) {
				t.Fatalf("differently configured learner accepted the state: %v", err)
			}

			fresh, _ := New(spec, 5)
			before, _ := fresh.MarshalBinary()
			for _, n := range []int{len(st) - 1, len(st) / 2, 10} {
				if err := fresh.UnmarshalBinary(st[:n]); err == nil {
					t.Fatalf("truncated state (%d of %d bytes) accepted", n, len(st))
				}
			}
			after, _ := fresh.MarshalBinary()
			if !bytes.Equal(before, after) {
				t.Fatal("failed restore changed the learner")
			}
		})
	}
}

// Predict never changes the model.
func TestPredictIsPure(t *testing.T) {
	for _, spec := range contractSpecs {
		t.Run(spec, func(t *testing.T) {
			xs, ys := stream(taskOf(t, spec), 300, 5, 4)
			a, _ := New(spec, 5)
			for i := range xs {
				if i%3 == 0 {
					s1, _ := a.MarshalBinary()
					p := a.Predict(xs[i])
					s2, _ := a.MarshalBinary()
					if !bytes.Equal(s1, s2) {
						t.Fatalf("Predict changed the state at event %d", i)
					}
					if f := a.Learn(xs[i], ys[i]); math.Float64bits(f) != math.Float64bits(p) {
						t.Fatalf("Learn's pre-update score %v != Predict %v", f, p)
					}
				} else {
					a.Learn(xs[i], ys[i])
				}
			}
		})
	}
}

// Steady-state Learn and Predict do not allocate.
func TestNoAllocsSteadyState(t *testing.T) {
	for _, spec := range contractSpecs {
		t.Run(spec, func(t *testing.T) {
			xs, ys := stream(taskOf(t, spec), 2000, 5, 5)
			a, _ := New(spec, 5)
			for i := 0; i < 1500; i++ {
				a.Learn(xs[i], ys[i])
			}
			i := 1500
			allocs := testing.AllocsPerRun(400, func() {
				a.Learn(xs[i], ys[i])
				a.Predict(xs[i])
				i++
			})
			if allocs != 0 {
				t.Fatalf("%v allocations per Learn+Predict in steady state", allocs)
			}
		})
	}
}

// Every learner learns the synthetic problem: its progressive mistake rate
// (or MSE) beats a trivial predictor by a clear margin.
func TestLearnsNonlinearProblem(t *testing.T) {
	for _, spec := range contractSpecs {
		t.Run(spec, func(t *testing.T) {
			if name, kv, _ := ParseSpec(spec); name == "linear" && kv["features"] == "" {
				t.Skip("linear is the linear baseline: a nonlinear problem is what it cannot learn (TestLinearLearnsLinearProblems)")
			}
			task := taskOf(t, spec)
			xs, ys := stream(task, 4000, 5, 6)
			a, _ := New(spec, 5)
			var loss, base float64
			var mean float64
			for i := range xs {
				f := a.Learn(xs[i], ys[i])
				if task == Classification {
					if Mistake(f, ys[i]) {
						loss++
					}
					if ys[i] > 0 { // majority class is −1
						base++
					}
				} else {
					loss += (f - ys[i]) * (f - ys[i])
					base += (mean - ys[i]) * (mean - ys[i])
					mean += (ys[i] - mean) / float64(i+1)
				}
			}
			if loss > 0.8*base {
				t.Fatalf("progressive loss %.4f not clearly below the trivial predictor's %.4f", loss/4000, base/4000)
			}
		})
	}
}

func ExampleNew() {
	l, err := New("fogd:sigma=2,budget=50", 3)
	if err != nil {
		panic(err)
	}
	score := l.Learn([]float64{0.1, -0.3, 1.2}, +1) // predict, then learn the label
	fmt.Println(score, l.Info().Spec)
	// Output: 0 fogd:budget=50,eta=0.2,features=200,horizon=10000,kernel=gaussian,loss=hinge,normalize=false,seed=1,sigma=2
}
