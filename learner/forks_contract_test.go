package learner

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// Contract configurations of FORKS and SkeGD (sketchmap.go's machinery).
// Small sketches so that INIT (after about 70 events: buffer 60) and
// update rounds (every 300 Stage-2 events) happen within the contract
// streams. They use k = s_m: with k < s_m the rank-k truncation of Φ_pp
// discards landmark directions and the synthetic circle is not learnt
// clearly (ratio to the trivial predictor 0.97 at k = 20, s_m = 30). FORKS
// runs with its default λ = 0: λ = 0.01 in the preconditioned gradient
// decays w by λ/α = 1 per step in directions an epoch has not seen (ratio
// 0.82 vs 0.69; see forks.go); the λ > 0 path is in forksPhaseSpecs. SkeGD uses carry=transfer (0.75 vs 0.96 with keep: an SVD
// recomputed from scratch scrambles the coordinates w refers to).
const forksContractBase = "sigma=1.2,budget=30,buffer=60,sp=60,sm=30,k=30,rho=300"

func init() {
	b := forksContractBase
	addContractSpecs(
		"forks:"+b,
		"forks:"+b+",loss=squared_hinge,ons_sigma=0.1",
		"forks:"+b+",decomp=svd,max_stored=100,landmarks=replace,warm=lsq",
		"forks:"+b+",loss=square",
		"forks:"+b+",carry=true,eta=1",
		"skegd:"+b+",carry=transfer",
		"skegd:"+b+",carry=transfer,loss=squared_hinge,eta=0.05,decomp=rsvd",
		"skegd:"+b+",carry=transfer,loss=square",
	)
}

// forksPhaseSpecs cover every code path of the two learners with small
// ρ, so that a 400-event stream crosses INIT and dozens of update rounds
// (and, with max_stored, the replacement path).
var forksPhaseSpecs = []string{
	"forks:sigma=1,budget=10,sm=4,k=3,rho=7,lambda=0.01",
	"forks:sigma=1,budget=10,sm=4,k=3,rho=7,literal=true,ons_eta_schedule=sqrt,new_inverse=false",
	"forks:sigma=1,budget=10,sp=10,sm=4,k=3,blocks=2,rho=5,max_stored=24,landmarks=replace,warm=lsq,stage1_lambda=0.1",
	"forks:sigma=1,budget=10,sm=4,k=3,rho=6,decomp=svd,max_stored=25",
	"forks:sigma=1,budget=10,sm=4,k=3,rho=6,decomp=rsvd,reorth_every=3,loss=square",
	"forks:sigma=1,budget=10,sm=4,k=4,rho=7,carry=true,eta=1",
	"skegd:sigma=1,budget=10,sm=4,k=3,rho=7",
	"skegd:sigma=1,budget=10,sm=4,k=3,rho=5,decomp=rsvd,carry=transfer,max_stored=22,landmarks=replace",
	"skegd:sigma=1,budget=10,sm=4,k=3,rho=6,decomp=tisvd,carry=reset,loss=logistic",
}

// forksPhaseEvents returns the 0-based events after which a learner's phase
// changes: the INIT event and every update-round event.
func forksPhaseEvents(t *testing.T, spec string, xs [][]float64, ys []float64) (initAt int, updates []int) {
	t.Helper()
	l, err := New(spec, len(xs[0]))
	if err != nil {
		t.Fatal(err)
	}
	sk := forksSketchOf(l)
	initAt = -1
	for i := range xs {
		ready, nu := sk.ready, sk.nUpd
		l.Learn(xs[i], ys[i])
		if !ready && sk.ready {
			initAt = i
		}
		if sk.ready && sk.nUpd > nu {
			updates = append(updates, i)
		}
	}
	return initAt, updates
}

// Restoring a state marshalled exactly before or after INIT, right after
// an update round, right before one and between two continues
// bit-identically (scores and final state), for every code path.
func TestForksMarshalAtPhaseBoundaries(t *testing.T) {
	for _, spec := range forksPhaseSpecs {
		t.Run(spec, func(t *testing.T) {
			task := taskOf(t, spec)
			xs, ys := stream(task, 400, 5, 21)
			initAt, ups := forksPhaseEvents(t, spec, xs, ys)
			if initAt < 0 || len(ups) < 10 {
				t.Fatalf("INIT at %d and %d update rounds in 400 events: the spec does not exercise the phases", initAt, len(ups))
			}
			// A cut c means: c events learnt, then marshal.
			cuts := []int{initAt, initAt + 1, initAt + 2, ups[0], ups[0] + 1, ups[0] + 2, ups[3] + 1, (ups[3] + ups[4]) / 2, ups[len(ups)-1] + 1}
			for _, cut := range cuts {
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
					t.Fatalf("cut %d: %v", cut, err)
				}
				st2, _ := b.MarshalBinary()
				if !bytes.Equal(st, st2) {
					t.Fatalf("cut %d: restored state re-marshals differently", cut)
				}
				continueIdentically(t, fmt.Sprintf("cut %d, after restore", cut), a, b, xs, ys, cut, true)
			}
		})
	}
}

// A state restored into a learner that had already moved on (another
// stage, more stored examples) replaces it completely; a corrupt state
// leaves it unchanged.
func TestForksUnmarshalOverwritesAndRejects(t *testing.T) {
	for _, spec := range forksPhaseSpecs {
		t.Run(spec, func(t *testing.T) {
			xs, ys := stream(taskOf(t, spec), 300, 5, 22)
			early, _ := New(spec, 5)
			for i := 0; i < 5; i++ {
				early.Learn(xs[i], ys[i])
			}
			stEarly, _ := early.MarshalBinary()
			late, _ := New(spec, 5)
			for i := range xs {
				late.Learn(xs[i], ys[i])
			}
			stLate, _ := late.MarshalBinary()
			// Corrupt: flip a hash sign / landmark / count deep inside.
			for _, off := range []int{len(stLate) / 3, len(stLate) / 2, 2 * len(stLate) / 3} {
				bad := bytes.Clone(stLate)
				bad[off] ^= 0xff
				probe, _ := New(spec, 5)
				for i := 0; i < 100; i++ {
					probe.Learn(xs[i], ys[i])
				}
				before, _ := probe.MarshalBinary()
				if err := probe.UnmarshalBinary(bad); err == nil {
					continue // the flipped byte was inside a float: still a valid state
				}
				after, _ := probe.MarshalBinary()
				if !bytes.Equal(before, after) {
					t.Fatalf("a rejected state (byte %d flipped) changed the learner", off)
				}
			}
			if err := late.UnmarshalBinary(stEarly); err != nil {
				t.Fatal(err)
			}
			if got, _ := late.MarshalBinary(); !bytes.Equal(got, stEarly) {
				t.Fatal("Stage-1 state restored over a Stage-2 learner re-marshals differently")
			}
		})
	}
}

// Invalid configurations are refused with an error naming the parameter.
func TestForksRejectsBadConfigurations(t *testing.T) {
	for _, c := range []struct{ spec, param string }{
		{"forks:budget=10,sp=30", "sp"},
		{"forks:budget=10,sm=11", "sm"},
		{"forks:budget=100,k=200", "k"},
		{"forks:budget=10,sp=10,blocks=3", "blocks"},
		{"forks:budget=10,max_stored=15", "max_stored"},
		{"forks:budget=10,rho=0", "rho"},
		{"forks:decomp=qr", "decomp"},
		{"forks:ons_sigma=0", "ons_sigma"},
		{"skegd:budget=10,carry=maybe", "carry"},
		{"skegd:lambda=10", "lambda"},
	} {
		if _, err := New(c.spec, 3); err == nil || !strings.Contains(err.Error(), c.param) {
			t.Errorf("%s: error %v, want one naming %q", c.spec, err, c.param)
		}
	}
}

// carry=true keeps what the ONS learnt over an update round: the model's
// scores on probe points move much less across the round than when the
// round resets the ONS (the paper's), which starts again from w = 0.
func TestForksCarryKeepsTheModel(t *testing.T) {
	const base = "forks:sigma=1.5,budget=10,sm=5,k=5,rho=60"
	xs, ys := stream(Classification, 600, 5, 7)
	probes, _ := stream(Classification, 50, 5, 8)
	change := func(spec string) float64 {
		_, ups := forksPhaseEvents(t, spec, xs, ys)
		if len(ups) < 3 {
			t.Fatalf("%s: %d update rounds", spec, len(ups))
		}
		l, _ := New(spec, 5)
		var num, den float64
		for i := range ups[len(ups)-1] + 1 {
			var before []float64
			if slices.Contains(ups, i) {
				for _, p := range probes {
					before = append(before, l.Predict(p))
				}
			}
			l.Learn(xs[i], ys[i])
			for j, f := range before {
				num += (l.Predict(probes[j]) - f) * (l.Predict(probes[j]) - f)
				den += f * f
			}
		}
		return math.Sqrt(num / den)
	}
	carried, reset := change(base+",carry=true"), change(base+",carry=false")
	t.Logf("relative change of the scores across update rounds: carry %.3f, reset %.3f", carried, reset)
	if !(carried < 0.5*reset) {
		t.Fatalf("carry=true changes the model across update rounds by %.3f, reset by %.3f: nothing is carried", carried, reset)
	}
}
