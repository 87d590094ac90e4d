package paper

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"okstream/dataset"
	"okstream/dataset/drift"
)

// DriftManifest describes the streams WriteDriftStreams writes
// (DIR/streams.json), for an external script that must score the same
// events in the same order (scripts/river_drift.py).
type DriftManifest struct {
	Experiment string              `json:"experiment"`
	Seed       uint64              `json:"seed"`
	Window     int                 `json:"window"`
	TolPoints  float64             `json:"tol_points"`
	TolRel     float64             `json:"tol_rel"`
	Streams    []DriftManifestItem `json:"streams"`
}

// DriftManifestItem is one stream: its runs' CSV files (in run order),
// the window ends Ts of the windowed error and the change points.
type DriftManifestItem struct {
	Key     string   `json:"key"`
	Title   string   `json:"title"`
	Spec    string   `json:"spec"`
	Task    string   `json:"task"`
	N       int      `json:"n"`
	Dim     int      `json:"dim"`
	Gradual bool     `json:"gradual,omitempty"`
	Changes []int    `json:"changes,omitempty"`
	Ts      []int    `json:"ts"`
	Files   []string `json:"files"`
}

// WriteDriftStreams writes the experiment's streams, exactly as the
// experiment's runs see them, as CSV files in dir: one file per stream
// and run (KEY-runR.csv; header x1..xd,y; one row per event in stream
// order; features in Go's shortest round-trip form, so a reader parses
// back the same float64; labels −1/+1 or real), and streams.json
// (DriftManifest). Elec2 is written once (its order is fixed; runs differ
// only by the learners' seeds) when elec (a path, or "" for Elec2Path) is
// found. datasets restricts the streams by key (nil: all). Files are
// overwritten; the function fails on the first I/O error.
func WriteDriftStreams(dir string, runs int, seed uint64, elec string, datasets []string) (*DriftManifest, error) {
	if runs <= 0 {
		runs = 3
	}
	if seed == 0 {
		seed = 1
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	man := &DriftManifest{Experiment: "drift", Seed: seed, Window: DriftWindow, TolPoints: DriftTolPoints, TolRel: DriftTolRel}
	for _, s := range driftStreams {
		if !keep(datasets, s.Key) {
			continue
		}
		spec := driftSpec(s, seed)
		ds, g, err := drift.Load(spec)
		if err != nil {
			return nil, err
		}
		it := DriftManifestItem{Key: s.Key, Title: s.Title, Spec: fmt.Sprintf("%s,n=%d", ds.Name, ds.Len()), Task: s.Task, N: ds.Len(), Dim: ds.Dim,
			Gradual: s.Gradual, Changes: g.Changes(), Ts: driftTs(ds.Len())}
		for r := range runs {
			d, err := drift.LoadRun(spec, r)
			if err != nil {
				return nil, err
			}
			name := fmt.Sprintf("%s-run%d.csv", s.Key, r)
			if err := writeStreamCSV(filepath.Join(dir, name), d); err != nil {
				return nil, err
			}
			it.Files = append(it.Files, name)
		}
		man.Streams = append(man.Streams, it)
	}
	if keep(datasets, elec2Key) {
		path := elec
		if path == "" {
			path = Elec2Path()
		}
		if ds, err := loadElec2(path); err == nil {
			name := elec2Key + "-run0.csv"
			if err := writeStreamCSV(filepath.Join(dir, name), ds); err != nil {
				return nil, err
			}
			man.Streams = append(man.Streams, DriftManifestItem{Key: elec2Key, Title: "Elec2", Spec: filepath.Base(path), Task: "classification", N: ds.Len(), Dim: ds.Dim,
				Ts: driftTs(ds.Len()), Files: []string{name}})
		} else if elec != "" {
			return nil, err
		}
	}
	b, err := json.MarshalIndent(man, "", " ")
	if err != nil {
		return nil, err
	}
	return man, os.WriteFile(filepath.Join(dir, "streams.json"), append(b, '\n'), 0o644)
}

// driftTs are the window ends eval's curve has for n events with
// CurvePoints = n/DriftWindow (eval's curveTimes: ⌈n·k/p⌉, k = 1..p).
func driftTs(n int) []int {
	p := max(n/DriftWindow, 1)
	var out []int
	for k := 1; k <= p; k++ {
		t := (n*k + p - 1) / p
		if len(out) == 0 || t > out[len(out)-1] {
			out = append(out, t)
		}
	}
	return out
}

// writeStreamCSV writes a dataset's rows in order as CSV.
func writeStreamCSV(path string, d *dataset.Dataset) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	for j := 0; j < d.Dim; j++ {
		fmt.Fprintf(w, "x%d,", j+1)
	}
	w.WriteString("y\n")
	buf := make([]byte, 0, 32)
	for i, x := range d.X {
		for _, v := range x {
			w.Write(strconv.AppendFloat(buf[:0], v, 'g', -1, 64))
			w.WriteByte(',')
		}
		w.Write(strconv.AppendFloat(buf[:0], d.Y[i], 'g', -1, 64))
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
