package paper

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The KuaiRec experiment runs end to end on the committed SYNTHETIC sample:
// a σ per algorithm and loss from the prefix grid, one point per (budget,
// algorithm) — PROS-N-KONS once, at its B_max — for both losses, a plot per
// loss, and a majority-class rate that matches the labels.
func TestForksKuaiRecOnTheSyntheticSample(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six learners at five budgets and two losses over 3,054 events")
	}
	e, err := Get("forks-kuairec")
	if err != nil {
		t.Fatal(err)
	}
	img := t.TempDir()
	rep, err := e.Run(Options{Runs: 1, Workers: 1, Data: "../../testdata/kuairec-synthetic", ImgDir: img, ImgRel: "img"})
	if err != nil {
		t.Fatal(err)
	}
	res := rep.Data.(*kuairecResult)
	if !res.Synthetic || !strings.Contains(res.Data, "synthetic") || res.N != 3054 || res.Dim != 86 {
		t.Fatalf("data %q synthetic %v n %d d %d", res.Data, res.Synthetic, res.N, res.Dim)
	}
	if res.Majority <= 40 || res.Majority > 50 || res.Majority != 100*min(res.Positive, 1-res.Positive) {
		t.Fatalf("majority %v for P(+1) = %v", res.Majority, res.Positive)
	}
	for _, loss := range []string{"hinge", "squared_hinge"} {
		if len(res.Sigma[loss]) != 6 {
			t.Fatalf("%s: σ chosen for %v", loss, res.Sigma[loss])
		}
		pts := res.Points[loss]
		if len(pts) != 5*5+1 {
			t.Fatalf("%s: %d points, want 26", loss, len(pts))
		}
		for _, p := range pts {
			if p.Algorithm == "PROS-N-KONS" && p.B != 100 {
				t.Fatalf("PROS-N-KONS run at B = %d", p.B)
			}
			if !strings.Contains(p.Spec, "loss="+loss) || !strings.Contains(p.Spec, "sigma="+res.Sigma[loss][p.Algorithm]) {
				t.Fatalf("%s %s: spec %q", loss, p.Algorithm, p.Spec)
			}
			if p.Mistake <= 0 || p.Mistake >= 100 || p.Seconds <= 0 || p.N != 3054 {
				t.Fatalf("%+v", p)
			}
		}
		if _, err := os.Stat(filepath.Join(img, "forks-kuairec-"+loss+".png")); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(rep.Body, "](img/forks-kuairec-"+loss+".png)") {
			t.Fatalf("body does not show the %s plot", loss)
		}
	}
	// The section re-rendered from the JSON is the run's.
	path := filepath.Join(t.TempDir(), "kr.json")
	if err := rep.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.Rerender(e, raw, Options{ImgDir: img, ImgRel: "img"})
	if err != nil {
		t.Fatal(err)
	}
	if again.Body != rep.Body {
		t.Fatalf("re-rendered body differs:\n%s\nwant:\n%s", again.Body, rep.Body)
	}
	t1, _ := Get("forks-table1")
	if _, err := t1.Run(Options{Data: "x"}); err == nil || !strings.Contains(err.Error(), "takes no --data") {
		t.Fatalf("forks-table1 with Data: %v", err)
	}
}
