package main

import (
	"bytes"
	"okstream/eval/paper"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// section returns the text between an experiment's BEGIN and END markers.
func section(t *testing.T, md, id string) string {
	t.Helper()
	b, e := "<!-- BEGIN "+id+" -->", "<!-- END "+id+" -->"
	i, j := strings.Index(md, b), strings.Index(md, e)
	if i < 0 || j < i {
		t.Fatalf("no section %s", id)
	}
	return md[i : j+len(e)]
}

// The determinism guard of the committed results: re-rendering a section
// from its committed raw JSON (reproduce --rerender) gives the committed
// section byte for byte — numbers, ≈maj marks, commands and all — and
// rewrites the JSON unchanged.
func TestReproduceRerenderMatchesCommittedSections(t *testing.T) {
	committed, err := os.ReadFile("../../docs/results.md")
	if err != nil {
		t.Fatal(err)
	}
	// drift's section shows River's recorded numbers, read from the
	// repository's docs/data (the test runs in cmd/okstream).
	defer func(p string) { paper.DriftRiverPath = p }(paper.DriftRiverPath)
	paper.DriftRiverPath = "../../docs/data/drift_river.json"
	for _, id := range []string{"forks-table1", "forks-table2", "forks-table3", "dsg-classification", "forks-kuairec", "auto-vs-grid", "drift"} {
		t.Run(id, func(t *testing.T) {
			want := section(t, string(committed), id)
			dir := t.TempDir()
			raw, err := os.ReadFile(filepath.Join("../../docs/data", id+".json"))
			if err != nil {
				t.Fatal(err)
			}
			jsonDir := filepath.Join(dir, "data")
			if err := os.MkdirAll(jsonDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(jsonDir, id+".json"), raw, 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "results.md")
			if err := os.WriteFile(out, []byte(want+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			if code := run([]string{"reproduce", id, "--rerender", "--quiet", "--out", out, "--json", jsonDir, "--img", filepath.Join(dir, "img")}, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			got, _ := os.ReadFile(out)
			if g := section(t, string(got), id); g != want {
				t.Fatalf("re-rendered section differs from docs/results.md:\n%s", g)
			}
			back, _ := os.ReadFile(filepath.Join(jsonDir, id+".json"))
			if !bytes.Equal(back, raw) {
				t.Fatal("re-rendering rewrote the JSON differently")
			}
		})
	}
}
