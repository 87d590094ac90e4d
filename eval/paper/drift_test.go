package paper

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"okstream/dataset/drift"
	"okstream/eval"
)

func TestDriftRecovery(t *testing.T) {
	ts := []int{1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000}
	cases := []struct {
		name    string
		win     []float64
		changes []int
		task    string
		want    []driftChange
	}{
		{"abrupt then back", []float64{10, 10, 10, 30, 20, 11, 10, 10}, []int{3000}, "classification",
			[]driftChange{{At: 3000, Before: 10, First: 30, Peak: 30, Recovery: 3000}}},
		{"never back", []float64{10, 10, 10, 30, 25, 20, 15, 13}, []int{3000}, "classification",
			[]driftChange{{At: 3000, Before: 10, First: 30, Peak: 30, Recovery: -1}}},
		{"not disturbed", []float64{10, 10, 10, 11, 10.5, 11.9, 10, 10}, []int{3000}, "classification",
			[]driftChange{{At: 3000, Before: 10, First: 11, Peak: 11.9, Recovery: 0}}},
		// The second change bounds the first's search: the rise after 6000
		// is not the first change's peak.
		{"two changes", []float64{10, 10, 30, 11, 10, 10, 50, 13}, []int{2000, 6000}, "classification",
			[]driftChange{{At: 2000, Before: 10, First: 30, Peak: 30, Recovery: 2000}, {At: 6000, Before: 10, First: 50, Peak: 50, Recovery: -1}}},
		// Regression: 10 % of the pre-change MSE (2 → within 2.2).
		{"regression relative", []float64{2, 2, 2, 5, 2.3, 2.15, 2, 2}, []int{3000}, "regression",
			[]driftChange{{At: 3000, Before: 2, First: 5, Peak: 5, Recovery: 3000}}},
	}
	for _, c := range cases {
		m := driftModel{Window: c.win}
		driftRecovery(ts, c.changes, c.task, &m)
		if len(m.Changes) != len(c.want) {
			t.Fatalf("%s: %d changes, want %d", c.name, len(m.Changes), len(c.want))
		}
		for i, g := range m.Changes {
			if g != c.want[i] {
				t.Errorf("%s: change %d = %+v, want %+v", c.name, i, g, c.want[i])
			}
		}
	}
}

// driftTs must be the curve points eval records with CurvePoints =
// n/DriftWindow, also when n is not a multiple of the window (Elec2).
func TestDriftTsMatchesEval(t *testing.T) {
	for _, n := range []int{3000, 4500} {
		spec := "drift:sea,n=" + strconv.Itoa(n)
		ds, _, err := drift.Load(spec)
		if err != nil {
			t.Fatal(err)
		}
		r, err := eval.Run(ds, []string{"linear"}, nil, eval.Config{Runs: 1, NoPermute: true, CurvePoints: n / DriftWindow})
		if err != nil {
			t.Fatal(err)
		}
		want := driftTs(n)
		c := r.Models[0].Curve
		if len(c) != len(want) {
			t.Fatalf("n=%d: eval has %d points, driftTs %d", n, len(c), len(want))
		}
		for i := range c {
			if c[i].T != want[i] {
				t.Errorf("n=%d: point %d: eval %d, driftTs %d", n, i, c[i].T, want[i])
			}
		}
	}
}

// The CSV files are exactly the events the experiment's runs see.
func TestWriteDriftStreamsSameEvents(t *testing.T) {
	dir := t.TempDir()
	man, err := WriteDriftStreams(dir, 2, 7, "", []string{"sea", "friedman-lea"})
	if err != nil {
		t.Fatal(err)
	}
	if len(man.Streams) != 2 {
		t.Fatalf("%d streams, want 2", len(man.Streams))
	}
	var onDisk DriftManifest
	b, err := os.ReadFile(filepath.Join(dir, "streams.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &onDisk); err != nil {
		t.Fatal(err)
	}
	for _, it := range onDisk.Streams {
		s := driftStreamByKey(t, it.Key)
		spec := driftSpec(s, 7)
		_, g, err := drift.Load(spec)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(it.Changes, g.Changes()) || len(it.Files) != 2 {
			t.Fatalf("%s: changes %v files %v, want %v and 2 files", it.Key, it.Changes, it.Files, g.Changes())
		}
		for r, name := range it.Files {
			d, err := drift.LoadRun(spec, r)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(f)
			sc.Scan() // header
			i := 0
			for sc.Scan() {
				cells := strings.Split(sc.Text(), ",")
				if len(cells) != d.Dim+1 {
					t.Fatalf("%s row %d: %d cells", name, i, len(cells))
				}
				for j, cell := range cells {
					v, err := strconv.ParseFloat(cell, 64)
					want := d.Y[i]
					if j < d.Dim {
						want = d.X[i][j]
					}
					if err != nil || v != want {
						t.Fatalf("%s row %d col %d: %q, want %v", name, i, j, cell, want)
					}
				}
				i++
			}
			f.Close()
			if i != d.Len() || i != it.N {
				t.Fatalf("%s: %d rows, want %d", name, i, d.Len())
			}
		}
		// Runs differ by their draw.
		d0, _ := drift.LoadRun(spec, 0)
		d1, _ := drift.LoadRun(spec, 1)
		if d0.X[0][0] == d1.X[0][0] {
			t.Errorf("%s: runs 0 and 1 start with the same event", it.Key)
		}
	}
}

func driftStreamByKey(t *testing.T, key string) driftStream {
	for _, s := range driftStreams {
		if s.Key == key {
			return s
		}
	}
	t.Fatalf("no stream %q", key)
	return driftStream{}
}

// The stream definitions parse, have the task they claim, and put their
// change points on window boundaries inside the stream.
func TestDriftStreamDefinitions(t *testing.T) {
	for _, s := range driftStreams {
		g, n, err := drift.Parse(driftSpec(s, 1))
		if err != nil {
			t.Fatalf("%s: %v", s.Key, err)
		}
		if g.Regression() != (s.Task == "regression") || n%DriftWindow != 0 {
			t.Errorf("%s: regression %v, n %d", s.Key, g.Regression(), n)
		}
		for _, c := range g.Changes() {
			if c <= 0 || c >= n || c%DriftWindow != 0 {
				t.Errorf("%s: change at %d (n %d)", s.Key, c, n)
			}
		}
		if s.Key != "hyperplane" && len(g.Changes()) == 0 {
			t.Errorf("%s: no change point", s.Key)
		}
	}
}

// One stream end to end: the section has the change columns, the JSON
// re-renders to the same section, and River results are shown only for
// the stream (spec, n, windows) they were computed on.
func TestDriftExperimentSEA(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three learners on 48,000 events")
	}
	e, err := Get("drift")
	if err != nil {
		t.Fatal(err)
	}
	old := DriftRiverPath
	DriftRiverPath = filepath.Join(t.TempDir(), "none.json")
	defer func() { DriftRiverPath = old }()
	img := t.TempDir()
	o := Options{Runs: 1, Datasets: []string{"sea"}, ImgDir: img, ImgRel: "img"}
	rep, err := e.Run(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| auto |", "| linear |", "| class prior |", "@12000 recovery", "@36000", "img/drift-sea.svg", "No recorded River results"} {
		if !strings.Contains(rep.Body, want) {
			t.Errorf("section lacks %q:\n%s", want, rep.Body)
		}
	}
	if _, err := os.Stat(filepath.Join(img, "drift-sea.svg")); err != nil {
		t.Error(err)
	}
	raw, err := json.Marshal(rep.Data)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.Rerender(e, raw, o)
	if err != nil {
		t.Fatal(err)
	}
	if again.Body != rep.Body {
		t.Errorf("re-rendered section differs")
	}
	res := rep.Data.(*driftResult)
	sr := &res.Streams[0]
	// A River result on the same stream is shown; one on another length,
	// or time-boxed, is not.
	rv := riverResult{River: "0.21.2", Date: "2026-11-28", Script: "scripts/river_drift.py"}
	add := func(spec string, n, events int) {
		rv.Streams = append(rv.Streams, riverStream{Key: "sea", Spec: spec, N: n, Runs: 1, Ts: sr.Ts,
			Models: []riverModel{{Label: "HAT", Overall: 13, Window: sr.Models[0].Window, Events: events}}})
	}
	add(sr.Spec, sr.N, sr.N)
	if got := riverModels(&rv, sr); len(got) != 1 || got[0].Label != "River HAT" || len(got[0].Changes) != 3 || got[0].Changes[0] != sr.Models[0].Changes[0] {
		t.Errorf("matching River result: %+v", got)
	}
	rv.Streams = nil
	add(sr.Spec, sr.N, 3000)
	if got := riverModels(&rv, sr); len(got) != 0 {
		t.Errorf("time-boxed River result shown: %+v", got)
	}
	rv.Streams = nil
	add(strings.Replace(sr.Spec, "seed=1", "seed=2", 1), sr.N, sr.N)
	if got := riverModels(&rv, sr); len(got) != 0 {
		t.Errorf("River result of another stream shown: %+v", got)
	}
	for _, m := range sr.Models {
		if math.IsNaN(m.Overall) || len(m.Window) != 48 {
			t.Errorf("%s: overall %v, %d windows", m.Label, m.Overall, len(m.Window))
		}
	}
}

// Elec2 is skipped with a note when its file is absent at the default
// place, refused when a named file is absent, and run in file order when
// present.
func TestDriftElec2(t *testing.T) {
	root := t.TempDir()
	t.Setenv("OKSTREAM_DATA_ROOT", root)
	old := DriftRiverPath
	DriftRiverPath = filepath.Join(root, "none.json")
	defer func() { DriftRiverPath = old }()
	e, _ := Get("drift")
	rep, err := e.Run(Options{Runs: 1, Datasets: []string{"elec2"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Body, "Elec2 skipped") {
		t.Errorf("no skip note:\n%s", rep.Body)
	}
	if _, err := e.Run(Options{Runs: 1, Datasets: []string{"elec2"}, Data: filepath.Join(root, "missing.csv")}); err == nil {
		t.Error("a named missing Elec2 file was not refused")
	}
	// A small stand-in with Elec2's columns at the default place.
	var b strings.Builder
	b.WriteString("feat_1,feat_2,feat_3,feat_4,feat_5,feat_6,target\n")
	for i := 0; i < 2500; i++ {
		v := float64(i%48) / 47
		y := 0
		if (i/7)%2 == 0 {
			y = 1
		}
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64) + ",0.1,0.2,0.3,0.4,0.5," + strconv.Itoa(y) + "\n")
	}
	if err := os.MkdirAll(filepath.Join(root, "elec2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(Elec2Path(), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err = e.Run(Options{Runs: 1, Datasets: []string{"elec2"}})
	if err != nil {
		t.Fatal(err)
	}
	res := rep.Data.(*driftResult)
	if len(res.Streams) != 1 || res.Streams[0].N != 2500 || !slices.Equal(res.Streams[0].Ts, driftTs(2500)) || len(res.Streams[0].SHA256) != 64 {
		t.Fatalf("elec2 stand-in: %+v", res.Streams)
	}
	man, err := WriteDriftStreams(t.TempDir(), 1, 1, "", []string{"elec2"})
	if err != nil || len(man.Streams) != 1 || man.Streams[0].Spec != res.Streams[0].Spec || !slices.Equal(man.Streams[0].Ts, res.Streams[0].Ts) {
		t.Fatalf("elec2 stream file: %v %+v", err, man)
	}
}
