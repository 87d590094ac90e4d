package learner

import (
	"strings"
	"testing"
)

// Contract configurations of Kernel-AWV (kawv.go) and PKAWV (pkawv.go,
// pkawvnystrom.go). Small enough for the 500–4000-event contract streams
// (d = 5) to cross every phase: kawv reaches its point cap (after which
// labels are ignored) within the mid-stream marshal test's cuts; the
// Nyström configurations see KORS additions, a refused or capped
// dictionary, and the freeze (max_points or max_history) that releases
// the history, before the steady-state allocation test starts at event
// 1500.
func init() {
	addContractSpecs(
		"kawv:max_points=200",
		"kawv:max_points=120,task=classification,variant=ridge",
		"kawv:kernel=laplacian,sigma=2,max_points=300,clip=1",
		"pkawv:order=3",
		"pkawv:order=2,task=classification",
		"pkawv:order=2,sigma=1.5,variant=ridge,clip=1",
		"pkawv:basis=nystrom,max_points=40,max_history=1000",
		"pkawv:basis=nystrom,max_points=0,max_history=300,task=classification",
		"pkawv:basis=nystrom,max_points=60,max_history=0,weight=inv_sqrt_p,prob=paper,variant=ridge,mu=0.5",
	)
}

// The Nyström contract configurations do cross their phases: dictionary
// additions before the mid-stream marshal test's last cut (event 250) and
// after its first cuts, and the freeze (history released) before the
// steady-state allocation test starts (event 1500).
func TestPKAWVContractSpecsCrossPhases(t *testing.T) {
	for _, spec := range contractSpecs {
		if !strings.HasPrefix(spec, "pkawv:basis=nystrom") {
			continue
		}
		xs, ys := stream(taskOf(t, spec), 2000, 5, 2)
		l := pkawvNew(t, spec, 5).(*PKAWV)
		var addsBefore, addsAfter, frozenAt int
		for i := range xs {
			m := l.ny.dict.Len()
			l.Learn(xs[i], ys[i])
			if l.ny.dict.Len() > m {
				if i < 250 {
					addsBefore++
				}
				if i >= 7 {
					addsAfter++
				}
			}
			if l.ny.frozen && frozenAt == 0 {
				frozenAt = i + 1
			}
		}
		t.Logf("%s: %d additions before event 250, %d after event 7, frozen at event %d with %d points", spec, addsBefore, addsAfter, frozenAt, l.ny.dict.Len())
		if addsBefore < 5 || addsAfter < 5 || frozenAt == 0 || frozenAt > 1500 {
			t.Errorf("%s does not cross its phases", spec)
		}
	}
}
