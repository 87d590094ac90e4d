package eval

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"okstream/codec"
	"okstream/dataset"
	"okstream/learner/rng"
)

// writeNamed writes a CSV file whose label depends on a categorical column
// (city) and a numeric one with missing cells (amount), plus an irrelevant
// categorical column (device) with empty cells, and the same rows as JSON
// lines events.
func writeNamed(t *testing.T, n int) (csvPath, jsonlPath string) {
	dir := t.TempDir()
	var c, j strings.Builder
	c.WriteString("city,amount,device,label\n")
	r := rng.New(7)
	cities := []string{"Paris", "Lyon", "Nice", "Lille", "Metz"}
	devices := []string{"ios", "android", "web"}
	for i := 0; i < n; i++ {
		city := cities[r.IntN(len(cities))]
		amount := r.Normal()
		score := amount
		if city == "Paris" || city == "Nice" {
			score += 1.5
		}
		y := "no"
		if score > 0.75 {
			y = "yes"
		}
		am, amJ := fmt.Sprintf("%.4f", amount), fmt.Sprintf("%.4f", amount)
		if r.IntN(10) == 0 {
			am, amJ = "", "null"
		}
		dev, devJ := devices[r.IntN(3)], ""
		devJ = `"` + dev + `"`
		if r.IntN(8) == 0 {
			dev, devJ = "?", "null"
		}
		fmt.Fprintf(&c, "%s,%s,%s,%s\n", city, am, dev, y)
		fmt.Fprintf(&j, `{"v":3,"f":{"city":"%s","amount":%s,"device":%s},"y":"%s"}`+"\n", city, amJ, devJ, y)
	}
	csvPath, jsonlPath = filepath.Join(dir, "named.csv"), filepath.Join(dir, "named.jsonl")
	if err := os.WriteFile(csvPath, []byte(c.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jsonlPath, []byte(j.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return csvPath, jsonlPath
}

func loadBinary(t *testing.T, path string, opts dataset.Options) *dataset.Dataset {
	t.Helper()
	opts.ClassNames = true
	ds, err := dataset.Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.BinaryLabels(nil); err != nil {
		t.Fatal(err)
	}
	return ds
}

// A CSV with string columns and empty cells loads with no row refused and
// the default models learn it well above the class prior; the JSON lines
// events of the same rows give the same results, bit for bit.
func TestNamedCSVLearns(t *testing.T) {
	csvPath, jsonlPath := writeNamed(t, 3000)
	ds := loadBinary(t, csvPath, dataset.Options{Label: "label"})
	if ds.Named == nil || ds.Len() != 3000 {
		t.Fatalf("named %v, %d rows", ds.Named != nil, ds.Len())
	}
	cfg := Config{Runs: 2, Seed: 1, Workers: 2}
	res, err := Run(ds, []string{"auto", "linear"}, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	prior := res.Baseline.Measures[MeasureMistakeRate].Mean
	for _, m := range res.Models {
		t.Logf("%s: %.2f %% (class prior %.2f %%)", m.Label, m.Mean, prior)
		if m.Mean > prior-10 || m.NonFinite != 0 {
			t.Errorf("%s: %.2f %% mistakes, class prior %.2f %%", m.Label, m.Mean, prior)
		}
	}
	dj := loadBinary(t, jsonlPath, dataset.Options{})
	rj, err := Run(dj, []string{"auto", "linear"}, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Models {
		a, b := res.Models[i], rj.Models[i]
		for r := range a.PerRun {
			if math.Float64bits(a.PerRun[r]) != math.Float64bits(b.PerRun[r]) || a.Measures[MeasureLogLoss] != b.Measures[MeasureLogLoss] {
				t.Errorf("%s run %d: CSV %v, JSON lines %v", a.Label, r, a.PerRun[r], b.PerRun[r])
			}
		}
	}
}

// Each run encodes its own presented order with a fresh encoder: run 0's
// result equals that of the rows of permutation 0 encoded by a fresh
// encoder, presented in that order as a plain numeric dataset. (For linear,
// which takes no feature kinds; a self-tuned learner gets the kinds on the
// named path only, features.Declarer.)
func TestNamedEncodedPerRun(t *testing.T) {
	csvPath, _ := writeNamed(t, 800)
	ds := loadBinary(t, csvPath, dataset.Options{Label: "label"})
	for _, spec := range []string{"linear"} {
		res, err := Run(ds, []string{spec}, nil, Config{Runs: 1, Seed: 5, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		perm := dataset.Permutation(ds.Len(), 5, 0)
		enc := ds.Named.NewEncoder()
		plain := &dataset.Dataset{Name: "plain", Dim: ds.Dim, X: make([][]float64, len(perm)), Y: make([]float64, len(perm))}
		for k, i := range perm {
			plain.X[k], _ = enc.Encode(ds.Named.Records[i], nil)
			plain.Y[k] = ds.Y[i]
		}
		want, err := Run(plain, []string{spec}, nil, Config{Runs: 1, Seed: 5, Workers: 1, NoPermute: true})
		if err != nil {
			t.Fatal(err)
		}
		if got, w := res.Models[0].PerRun[0], want.Models[0].PerRun[0]; got != w || res.Models[0].Measures[MeasureLogLoss] != want.Models[0].Measures[MeasureLogLoss] {
			t.Errorf("%s: eval of the named file %v %%, of its permutation encoded in order %v %%", spec, got, w)
		}
	}
}

// ReplayEvents encodes named events with a default encoder in event order:
// its scores are those of the plain replay of the file-order encoding
// (dataset X), bit for bit, and no event is dead-lettered (NaN).
func TestReplayNamedEvents(t *testing.T) {
	csvPath, _ := writeNamed(t, 500)
	ds := loadBinary(t, csvPath, dataset.Options{Label: "label"})
	events := make([]codec.Event, ds.Len())
	for i, rec := range ds.Named.Records {
		events[i] = codec.Event{Version: codec.NamedEventVersion, F: rec, Y: ds.Y[i], HasY: i%5 != 0}
	}
	got, _, err := ReplayEvents("linear", ds.Dim, events)
	if err != nil {
		t.Fatal(err)
	}
	labelled := make([]bool, ds.Len())
	for i := range labelled {
		labelled[i] = events[i].HasY
	}
	want, _, err := Replay("linear", ds.Dim, ds.X, ds.Y, labelled)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if math.IsNaN(got[i]) || math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("event %d: replay %v, plain %v", i, got[i], want[i])
		}
	}
}
