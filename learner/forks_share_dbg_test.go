package learner

import (
	"fmt"
	"math"
	"testing"

	"okstream/dataset"
)

func TestForksShareDbg(t *testing.T) {
	path, opts, err := dataset.Resolve("cod-rna")
	if err != nil {
		t.Skip()
	}
	ds, _ := dataset.Load(path, opts)
	ds.BinaryLabels(nil)
	perm := dataset.Permutation(len(ds.Y), 1, 0)
	spec := fmt.Sprintf("forks:budget=100,buffer=200,sp=100,sm=20,k=10,blocks=1,theta=0.3,sigma=2^7,horizon=%d,shared=true", len(ds.Y))
	P, S := 16, 100
	ls := make([]*FORKS, P)
	for p := range ls {
		l, _ := New(spec, ds.Dim)
		ls[p] = l.(*FORKS)
	}
	var prev [][]byte
	for e := 0; (e+1)*S*P <= len(perm); e++ {
		cur := make([][]byte, P)
		mis := 0
		for p := range P {
			for i := range S {
				j := perm[(e*S+i)*P+p]
				if ls[p].Learn(ds.X[j], ds.Y[j])*ds.Y[j] <= 0 {
					mis++
				}
			}
			cur[p], _ = ls[p].ShareDelta()
		}
		for p := range P {
			var ds []SharedDelta
			if prev != nil {
				for q := range P {
					ds = append(ds, SharedDelta{Partition: q, Own: q == p, Data: prev[q]})
				}
			}
			if err := ls[p].ShareMerge(ds); err != nil {
				t.Fatal(err)
			}
		}
		prev = cur
		l := ls[0]
		if l.sk.ready {
			k := l.sh.k
			t.Logf("epoch %d mis %.1f%% nUpd %d global %d |v| %.3g Adiag %.3g %.3g", e, 100*float64(mis)/float64(P*S), l.sk.nUpd, l.sh.global, math.Sqrt(dot(l.ons.v[:k], l.ons.v[:k])), l.sh.aSnap[0], l.sh.aSnap[k*k-1])
		}
	}
}
