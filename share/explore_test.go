package share

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"okstream/dataset"
)

// TestExploreCodRNA prints the simulated mistake rate of shuffled cod-rna
// split round robin into P partitions, for several epoch lengths S (S = 0:
// independent models), with the learner spec in EXPLORE and the lag given
// by the length of LAG (e.g. LAG=1): the numbers behind docs/sharing.md.
// With KEYED=f (a digit), partitions are keyed by feature f instead: the
// events with the smallest values of x_f go to partition 0, and so on, in
// P equal ranges of ranks (partitions that hold different populations).
// Skipped unless EXPLORE is set.
func TestExploreCodRNA(t *testing.T) {
	if os.Getenv("EXPLORE") == "" {
		t.Skip()
	}
	path, opts, err := dataset.Resolve("cod-rna")
	if err != nil {
		t.Skip(err)
	}
	ds, err := dataset.Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	ds = ds.Permuted(dataset.Permutation(ds.Len(), 1, 0))
	ev := make([]Event, ds.Len())
	for i := range ev {
		ev[i] = Event{X: ds.X[i], Y: ds.Y[i]}
	}
	spec := os.Getenv("EXPLORE")
	lag := int64(len(os.Getenv("LAG")))

	for _, P := range []int{1, 4, 16, 64} {
		line := fmt.Sprintf("P=%d", P)
		for _, S := range exploreS() {
			var assign func(int) int
			if f := os.Getenv("KEYED"); f != "" {
				fi := int(f[0] - '0')
				idx := make([]int, len(ev))
				for i := range idx {
					idx[i] = i
				}
				sort.SliceStable(idx, func(a, b int) bool { return ev[idx[a]].X[fi] < ev[idx[b]].X[fi] })
				part := make([]int, len(ev))
				for r, i := range idx {
					part[i] = r * P / len(ev)
				}
				assign = func(i int) int { return part[i] }
			}
			r, err := Simulate(spec, ds.Dim, Config{Every: S, Lag: lag, Partitions: P}, ev, assign)
			if err != nil {
				t.Fatal(err)
			}
			var m uint64
			for _, v := range r.Mistakes {
				m += v
			}
			line += fmt.Sprintf("  S=%d: %.2f%%", S, 100*float64(m)/float64(len(ev)))
		}
		fmt.Println(line)
	}
}

// exploreS is the epoch lengths TestExploreCodRNA tries: EXPLORE_S (a
// comma-separated list) or 0 (independent), 16, 32, 64, 128.
func exploreS() []int64 {
	s := os.Getenv("EXPLORE_S")
	if s == "" {
		return []int64{0, 16, 32, 64, 128}
	}
	var out []int64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseInt(f, 10, 64)
		if err == nil {
			out = append(out, v)
		}
	}
	return out
}
