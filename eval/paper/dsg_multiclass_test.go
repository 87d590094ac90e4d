package paper

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"okstream/dataset"
	"okstream/learner"
)

// needShared skips the test when a shared dataset is absent.
func needShared(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, _, err := dataset.Resolve(n); err != nil {
			t.Skipf("shared dataset %s not available (../shared/datasets): %v", n, err)
		}
	}
}

// mdRows returns the markdown table rows of body (lines starting with
// "| " that are not the header or its rule), split into trimmed cells.
func mdRows(body string) (header []string, rows [][]string) {
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case strings.HasPrefix(line, "|---"):
		case header == nil:
			header = cells
		case cells[0] == header[0] && cells[1] == header[1]: // a later table's header
		default:
			rows = append(rows, cells)
		}
	}
	return header, rows
}

// meanOf parses "12.34 ± 0.56" (or "12.34").
func meanOf(t *testing.T, cell string) float64 {
	t.Helper()
	f := strings.Fields(cell)
	if len(f) == 0 {
		t.Fatalf("empty cell")
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		t.Fatalf("cell %q: %v", cell, err)
	}
	return v
}

// A scaled-down dsg-multiclass (3,000 letter rows, 1,500 mnist rows with
// PCA to 20 and a second pass): the table is well formed, every DSG row is
// at least 40 points below the class prior on the test rows, the (σ, γ)
// grid's one-pass winner is what the multi-pass row runs, and a second run
// gives the same table up to the µs/event column.
func TestDSGMulticlassSmall(t *testing.T) {
	needShared(t, "letter", "mnist")
	setups := []dsgMCSetup{
		{Title: "letter", Key: "letter", Train: 3000, Test: 1000, Paper: "–", Note: "test"},
		{Title: "mnist", Key: "mnist", Train: 1500, Test: 500, PCA: 20, Passes: 2, Paper: "0.5", Note: "test"},
	}
	algos := []dsgMCAlgo{
		{label: "DSG small", spec: func(s float64, _, _ string) string {
			return fmt.Sprintf("dsg:sigma=%s,max_features=1024", learner.FormatNumber(s))
		}},
		{label: "DSG grid", grid: true, spec: func(_ float64, sg, g string) string {
			return fmt.Sprintf("dsg:sigma=%s,max_features=1024,gamma0=%s,kappa=0", sg, g)
		}},
	}
	o := Options{Seed: 1, Workers: 2}
	body, data, err := dsgMulticlass(setups, algos, 2, o)
	if err != nil {
		t.Fatal(err)
	}
	header, rows := mdRows(body)
	if len(header) != 9 {
		t.Fatalf("header %q", header)
	}
	// letter ×1 pass, mnist ×2 pass counts; 2 models + linear + prior each.
	if len(rows) != 3*4 || len(data.Datasets) != 3 {
		t.Fatalf("%d rows, %d results:\n%s", len(rows), len(data.Datasets), body)
	}
	prior := map[string]float64{}
	for _, r := range rows {
		if len(r) != len(header) {
			t.Fatalf("row %q has %d cells, header %d", r, len(r), len(header))
		}
		if r[2] == "class prior of the training stream" {
			prior[r[0]+"/"+r[1]] = meanOf(t, r[4])
		}
	}
	if len(prior) != 3 {
		t.Fatalf("class prior rows: %v", prior)
	}
	param := func(spec, key string) string {
		i := strings.Index(spec, ","+key+"=")
		if i < 0 {
			t.Fatalf("spec %s has no %s", spec, key)
		}
		return strings.SplitN(spec[i+len(key)+2:], ",", 2)[0]
	}
	var pick string
	for _, r := range rows {
		key := r[0] + "/" + r[1]
		if !strings.HasPrefix(r[2], "DSG") {
			continue
		}
		if te := meanOf(t, r[4]); !(te < prior[key]-40) || math.IsNaN(te) {
			t.Errorf("%s %s: test error %v, class prior %v: not 40 points better", key, r[2], te, prior[key])
		}
		if r[0] == "mnist" && r[1] == "1" && r[2] == "DSG grid" {
			spec := strings.Trim(r[8], "`")
			name := dsgMCSigmaName(data.Datasets[1].Sigma, param(spec, "sigma"))
			if !strings.HasPrefix(name, "σ̂") {
				t.Errorf("picked σ %s is not one of the grid's", param(spec, "sigma"))
			}
			pick = "σ = " + name + ", constant step γ = " + param(spec, "gamma0")
		}
	}
	if pick == "" || !strings.Contains(body, "| mnist | 2 | DSG, "+pick+" (the one-pass picks) |") {
		t.Errorf("the two-pass row does not use the one-pass picks %q:\n%s", pick, body)
	}
	body2, _, err := dsgMulticlass(setups, algos, 2, o)
	if err != nil {
		t.Fatal(err)
	}
	_, rows2 := mdRows(body2)
	for i := range rows {
		a, b := append([]string(nil), rows[i]...), append([]string(nil), rows2[i]...)
		a[7], b[7] = "", "" // µs/event
		if strings.Join(a, "|") != strings.Join(b, "|") {
			t.Errorf("run 2 differs:\n%q\n%q", rows[i], rows2[i])
		}
	}
}

// pcaProject: on rows spread along one direction (plus a smaller second
// one) the first component recovers the direction up to sign, the
// projected training rows are centred with the component's variance, and
// a test row is projected with the training mean.
func TestPCAProject(t *testing.T) {
	dir := []float64{3, 0, 4} // |dir| = 5
	sec := []float64{0, 1, 0}
	mean := []float64{10, -2, 7}
	var X [][]float64
	var Y []float64
	for i := range 50 {
		a := float64(i%10) - 4.5   // variance of a along dir
		b := float64(i/10-2) * 0.1 // small, along sec, uncorrelated with a
		x := make([]float64, 3)
		for j := range x {
			x[j] = mean[j] + a*dir[j]/5 + b*sec[j]
		}
		X = append(X, x)
		Y = append(Y, float64(i%2))
	}
	train := &dataset.Dataset{Name: "t", X: X, Y: Y, Dim: 3}
	test := &dataset.Dataset{Name: "q", X: [][]float64{{10 + 3, -2, 7 + 4}}, Y: []float64{1}, Dim: 3}
	tr, te, err := pcaProject(train, test, 2)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Dim != 2 || te.Dim != 2 || len(tr.X) != 50 || len(tr.Y) != 50 {
		t.Fatalf("shapes: %d/%d dims, %d rows", tr.Dim, te.Dim, len(tr.X))
	}
	var s, ss float64
	for i, z := range tr.X {
		a := float64(i%10) - 4.5
		if math.Abs(math.Abs(z[0])-math.Abs(a)) > 1e-9 {
			t.Fatalf("row %d: first component %v, want ±%v", i, z[0], a)
		}
		s += z[0]
		ss += z[0] * z[0]
	}
	if math.Abs(s) > 1e-9 {
		t.Errorf("projected training rows not centred: sum %v", s)
	}
	if got := math.Abs(te.X[0][0]); math.Abs(got-5) > 1e-9 {
		t.Errorf("test row's first component %v, want ±5 (mean + dir)", te.X[0][0])
	}
	if math.Abs(te.X[0][1]) > 1e-9 {
		t.Errorf("test row's second component %v, want 0", te.X[0][1])
	}
	if &tr.X[0][0] == &X[0][0] {
		t.Error("the projection writes into the input rows")
	}
	for _, k := range []int{0, 4} {
		if _, _, err := pcaProject(train, test, k); err == nil {
			t.Errorf("k = %d accepted", k)
		}
	}
}

// loadSplit refuses a split larger than the file and splits in file order.
func TestLoadSplit(t *testing.T) {
	needShared(t, "letter")
	if _, _, err := loadSplit("letter", 16000, 4001); err == nil || !strings.Contains(err.Error(), "20000 rows") {
		t.Fatalf("oversized split: %v", err)
	}
	tr, te, err := loadSplit("letter", 16000, 4000)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Len() != 16000 || te.Len() != 4000 || len(tr.Classes) != 26 {
		t.Fatalf("%d + %d rows, %d classes", tr.Len(), te.Len(), len(tr.Classes))
	}
	// Row 1 of the file is T,2,8,3,5,1,8,13,0,6,6,10,8,0,8,0,8 (SOURCE.md).
	if tr.Classes[int(tr.Y[0])] != "T" || tr.X[0][0] != 2 || tr.X[0][15] != 8 {
		t.Errorf("first training row: class %s, x %v", tr.Classes[int(tr.Y[0])], tr.X[0])
	}
}
