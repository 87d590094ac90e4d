package learner_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"okstream/dataset"
	"okstream/learner"
)

// shareSim is the offline simulation of the strict sharing schedule.
type shareSim struct {
	spec    string
	P, S, L int
	share   bool // false: independent copies, no sync
	timing  *shareTiming
}

// shareTiming accumulates wall-clock time (reported, never asserted).
type shareTiming struct{ learn, sync time.Duration }

// run returns the number of mistakes over all events of ds in the order
// perm, split round-robin into sim.P partitions.
func (sim shareSim) run(t testing.TB, ds *dataset.Dataset, perm []int) (mistakes int, merges int) {
	m, mg, _ := sim.runBuckets(t, ds, perm, 1)
	return m, mg
}

// runBuckets also counts the mistakes in nb buckets of the stream position
// (position of an event: its index in the round-robin order).
func (sim shareSim) runBuckets(t testing.TB, ds *dataset.Dataset, perm []int, nb int) (mistakes int, merges int, buckets []int) {
	buckets = make([]int, nb)
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
			t0 := time.Now()
			for i, j := range parts[p][pos[p]:end] {
				f := ls[p].Learn(ds.X[j], ds.Y[j])
				if f*ds.Y[j] <= 0 {
					mistakes++
					buckets[((pos[p]+i)*P+p)*nb/len(perm)]++
				}
			}
			if sim.timing != nil {
				sim.timing.learn += time.Since(t0)
			}
			pos[p] = end
			if end < len(parts[p]) {
				more = true
			}
		}
		if !sim.share || !full {
			if !more {
				return mistakes, merges, buckets
			}
			continue
		}
		t0 := time.Now()
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
		if sim.timing != nil {
			sim.timing.sync += time.Since(t0)
		}
		if e >= sim.L {
			merges++
			deltas[e-sim.L] = nil
		}
		if !more {
			return mistakes, merges, buckets
		}
	}
}

// TestForksShareTable prints the P × S × L table of docs/algorithms
// (FORKS and NOGD shared vs independent copies on shuffled cod-rna,
// unscaled, the Table 1 settings: B = 100, FORKS σ = 2^7, ρ = ⌊0.3N⌋;
// NOGD k = 0.2B, σ = 2^6). It takes about a minute, so it runs only with
// OKSTREAM_SHARE_TABLE=1.
func TestForksShareTable(t *testing.T) {
	if os.Getenv("OKSTREAM_SHARE_TABLE") == "" {
		t.Skip("set OKSTREAM_SHARE_TABLE=1 to print the sharing table")
	}
	ds := loadShared(t, "cod-rna", true, "")
	n := len(ds.Y)
	// shared=true defaults to c=0 (no slab); c=1 is the paper's default.
	for _, base := range []string{
		fmt.Sprintf("forks:budget=100,buffer=200,sp=100,sm=20,k=10,blocks=1,theta=0.3,sigma=2^7,horizon=%d,c=0", n),
		fmt.Sprintf("forks:budget=100,buffer=200,sp=100,sm=20,k=10,blocks=1,theta=0.3,sigma=2^7,horizon=%d,c=1", n),
		"nogd:budget=100,k=20,eta=0.2,sigma=2^6",
	} {
		if f := os.Getenv("OKSTREAM_SHARE_TABLE"); f != "1" && !strings.HasPrefix(base, f) {
			continue
		}
		shareTable(t, ds, base)
	}
}

// shareTable logs independent copies and shared copies (base +
// ",shared=true") for P ∈ {1, 4, 16, 64}, S ∈ {25, 50, 100, 250, 1000}, L ∈ {1, 2},
// mean over permutations 0–2 of seed 1.
func shareTable(t *testing.T, ds *dataset.Dataset, base string) {
	n := len(ds.Y)
	const runs = 3
	t.Logf("%s", base)
	for _, P := range []int{1, 4, 16, 64} {
		tot := 0
		start := time.Now()
		for run := range runs {
			m, _ := shareSim{spec: base, P: P, S: 100, L: 1}.run(t, ds, dataset.Permutation(n, 1, run))
			tot += m
		}
		t.Logf("P=%-2d independent            %6.2f %%  %.2f µs/event", P, 100*float64(tot)/float64(runs*n), float64(time.Since(start).Microseconds())/float64(runs*n))
		for _, S := range []int{25, 50, 100, 250, 1000} {
			for _, L := range []int{1, 2} {
				tot, merges := 0, 0
				var tm shareTiming
				for run := range runs {
					sim := shareSim{spec: base + ",shared=true", P: P, S: S, L: L, share: true, timing: &tm}
					m, mg := sim.run(t, ds, dataset.Permutation(n, 1, run))
					tot, merges = tot+m, merges+mg
				}
				t.Logf("P=%-2d S=%-4d L=%d shared     %6.2f %%  %.2f µs/event, %d syncs, %.1f µs per delta+merge per copy", P, S, L, 100*float64(tot)/float64(runs*n),
					float64(tm.learn.Microseconds())/float64(runs*n), merges/runs, float64(tm.sync.Microseconds())/float64(max(1, merges*P)))
			}
		}
	}
}
