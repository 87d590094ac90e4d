package learner_test

import (
	"fmt"
	"testing"

	"okstream/dataset"
	"okstream/learner"
)

// shareSim is the offline simulation of the strict sharing schedule.
type shareSim struct {
	spec    string
	P, S, L int
	share   bool // false: independent copies, no sync
}

// run returns the number of mistakes over all events of ds in the order
// perm, split round-robin into sim.P partitions.
func (sim shareSim) run(t testing.TB, ds *dataset.Dataset, perm []int) (mistakes int, merges int) {
	t.Helper()
	P := sim.P
	parts := make([][]int, P)
	for i, j := range perm {
		parts[i%P] = append(parts[i%P], j)
	}
	ls := make([]learner.Learner, P)
	for p := range ls {
		l, err := learner.New(sim.spec, ds.Dim)
		if err != nil {
			t.Fatal(err)
		}
		ls[p] = l
	}
	pos := make([]int, P)
	var deltas [][][]byte // [epoch][partition]
	for e := 0; ; e++ {
		more := false
		full := true
		for p := range P {
			end := min(pos[p]+sim.S, len(parts[p]))
			if end-pos[p] < sim.S {
				full = false
			}
			for _, j := range parts[p][pos[p]:end] {
				f := ls[p].Learn(ds.X[j], ds.Y[j])
				if f*ds.Y[j] <= 0 {
					mistakes++
				}
			}
			pos[p] = end
			if end < len(parts[p]) {
				more = true
			}
		}
		if !sim.share || !full {
			if !more {
				return mistakes, merges
			}
			continue
		}
		row := make([][]byte, P)
		for p := range P {
			d, err := ls[p].(learner.Sharer).ShareDelta()
			if err != nil {
				t.Fatal(err)
			}
			row[p] = d
		}
		deltas = append(deltas, row)
		for p := range P {
			var ds []learner.SharedDelta // empty until epoch L
			if e >= sim.L {
				ds = make([]learner.SharedDelta, P)
				for q := range P {
					ds[q] = learner.SharedDelta{Partition: q, Epoch: int64(e - sim.L), Own: q == p, Data: deltas[e-sim.L][q]}
				}
			}
			if err := ls[p].(learner.Sharer).ShareMerge(ds); err != nil {
				t.Fatal(err)
			}
		}
		if e >= sim.L {
			merges++
			deltas[e-sim.L] = nil
		}
		if !more {
			return mistakes, merges
		}
	}
}

func TestShareSimBaseline(t *testing.T) {
	ds := loadShared(t, "cod-rna", true, "")
	base := fmt.Sprintf("forks:budget=100,buffer=200,sp=100,sm=20,k=10,blocks=1,theta=0.3,sigma=2^7,horizon=%d", len(ds.Y))
	for _, P := range []int{1, 4, 16, 64} {
		for _, S := range []int{100, 250, 1000} {
			for _, L := range []int{1, 2} {
				tot, totI := 0, 0
				for run := range 3 {
					perm := dataset.Permutation(len(ds.Y), 1, run)
					m, _ := shareSim{spec: base + ",shared=true", P: P, S: S, L: L, share: true}.run(t, ds, perm)
					tot += m
					if S == 100 && L == 1 {
						m, _ = shareSim{spec: base, P: P, S: S, L: L}.run(t, ds, perm)
						totI += m
					}
				}
				t.Logf("P=%d S=%d L=%d shared %.2f%% indep %.2f%%", P, S, L, 100*float64(tot)/float64(3*len(ds.Y)), 100*float64(totI)/float64(3*len(ds.Y)))
			}
		}
	}
}

func TestShareSimDebug(t *testing.T) {
	ds := loadShared(t, "cod-rna", true, "")
	base := fmt.Sprintf("forks:budget=100,buffer=200,sp=100,sm=20,k=10,blocks=1,theta=0.3,sigma=2^7,horizon=%d", len(ds.Y))
	perm := dataset.Permutation(len(ds.Y), 1, 0)
	for _, n := range []int{5000, 10000, 20000, 30000, 40000, 59535} {
		for _, sh := range []bool{false, true} {
			spec := base
			if sh {
				spec += ",shared=true"
			}
			m, mg := shareSim{spec: spec, P: 16, S: 100, L: 1, share: sh}.run(t, ds, perm[:n])
			t.Logf("n=%d shared=%v %.2f%% merges %d", n, sh, 100*float64(m)/float64(n), mg)
		}
	}
}
