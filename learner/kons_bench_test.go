package learner

import (
	"fmt"
	"slices"
	"testing"
)

// konsBenchState builds a PROS-N-KONS or CON-KONS learner on benchStream(d)
// whose dictionary holds the first n distinct events (inserted directly,
// with one epoch change at the end, so that the set-up does not pay n
// eigendecompositions), runs 500 events through it, and returns it with its
// marshalled state. With bmax = n the dictionary is full: every later round
// is a within-epoch round. (The first 2048 events feed the dictionary; the
// timed loops use all 4096, so some Learn rounds score dictionary points.)
func konsBenchState(b *testing.B, name string, d, n, bmax int) (*kons, []byte) {
	b.Helper()
	loss := "hinge"
	if name == "con-kons" {
		loss = "square"
	}
	lr, err := New(fmt.Sprintf("%s:sigma=2,loss=%s,bmax=%d", name, loss, bmax), d)
	if err != nil {
		b.Fatal(err)
	}
	l := konsOf(lr)
	xs, ys := benchStream(d)
	for i := 0; l.dict.Len() < n; i++ {
		x := xs[i]
		kr := l.kern.Row(make([]float64, l.dict.Len()), l.dict.Points(), x)
		if len(kr) > 0 && slices.Max(kr) > 1-1e-9 { // a duplicate (sparse binary inputs)
			continue
		}
		if err := l.dict.Insert(x, kr, 1, 1); err != nil {
			b.Fatal(err)
		}
	}
	l.newEpoch()
	// Within-epoch rounds on other events, without KORS (which could insert
	// when bmax > n, or re-insert a dictionary point: a duplicate's ridge
	// leverage score is not 0).
	for i := 2048; i < 2548; i++ {
		f := lr.Predict(xs[i])
		_ = l.ons.update(l.phi[:l.r], l.loss.Deriv(f, ys[i]), 0, l.curv/2, l.newInv)
	}
	st, err := lr.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	return l, st
}

// BenchmarkKONSLearn times steady-state Learn within an epoch (dictionary
// of n points, capped, so no epoch changes): O(nd) for the kernel row,
// O(n²) for the map, the projection and the Sherman–Morrison step. d = 123
// uses sparse binary inputs, d = 8 dense Gaussian ones (benchStream).
func BenchmarkKONSLearn(b *testing.B) {
	for _, name := range []string{"pros-n-kons", "con-kons"} {
		for _, d := range []int{8, 123} {
			for _, n := range []int{50, 100, 200, 400} {
				b.Run(fmt.Sprintf("%s/d=%d/n=%d", name, d, n), func(b *testing.B) {
					l, _ := konsBenchState(b, name, d, n, n)
					xs, ys := benchStream(d)
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						j := i % len(xs)
						l.Learn(xs[j], ys[j])
					}
					b.StopTimer()
					if l.dict.Len() != n {
						b.Fatalf("dictionary of %d points, want %d", l.dict.Len(), n)
					}
				})
			}
		}
	}
}

// BenchmarkKONSEpochChange times one dictionary change from n−1 to n
// points: the Gram matrix, the eigendecomposition, the new map and the
// restart (PROS-N-KONS) or the transition of w and A (CON-KONS: Q, two
// inversions). It allocates (the map, the eigensolver's work). The KORS
// insertion itself (O(n²)) is done once before timing; each iteration
// restores the previous epoch's map and ONS state by copying (O(n²)).
func BenchmarkKONSEpochChange(b *testing.B) {
	for _, name := range []string{"pros-n-kons", "con-kons"} {
		for _, d := range []int{8, 123} {
			for _, n := range []int{50, 100, 200, 400} {
				b.Run(fmt.Sprintf("%s/d=%d/n=%d", name, d, n), func(b *testing.B) {
					l, _ := konsBenchState(b, name, d, n-1, 0)
					xs, _ := benchStream(d)
					x := xs[len(xs)-1]
					l.Predict(x) // κ(I, x) and the scoring iterate, as in Learn
					m := l.dict.Len()
					if err := l.dict.Insert(x, l.krow[:m], 1, 0.5); err != nil {
						b.Fatal(err)
					}
					r, mp, raw := l.r, l.m, l.raw
					k := l.ons.k
					v := append([]float64(nil), l.ons.v[:k]...)
					w := append([]float64(nil), l.ons.w[:k]...)
					ainv := append([]float64(nil), l.ons.ainv[:k*k]...)
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						l.r, l.m, l.raw = r, mp, raw
						l.ons.konsSet(k, v, ainv)
						copy(l.ons.w, w)
						l.newEpoch()
					}
					b.StopTimer()
					if l.dict.Len() != n || l.r != n {
						b.Fatalf("dictionary %d, rank %d, want %d", l.dict.Len(), l.r, n)
					}
				})
			}
		}
	}
}
