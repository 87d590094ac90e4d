package paper

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

var updateDefinitions = flag.Bool("update-definitions", false, "rewrite testdata/definitions.golden from the registered experiments")

// dumpDefinitions renders every registered experiment's definition as
// text: its fields, its datasets and variants, and for every algorithm its
// resolved learner spec on every dataset, the paper's and the reference
// code's numbers and its note. Custom experiments contribute their fields
// (their runs are configured inside their code and checked by the
// re-rendering test of cmd/okstream).
func dumpDefinitions() string {
	var b strings.Builder
	val := func(m map[string]*Value) string {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s=%#v", k, *m[k]))
		}
		return strings.Join(parts, " ")
	}
	for _, id := range IDs() {
		e := experiments[id]
		fmt.Fprintf(&b, "== %s\ntitle: %s\npaper: %s\ntask: %s runs: %d select: %d tolerance: %g relative: %t size: %q data: %t custom: %t rerender: %t\n",
			e.ID, e.Title, e.Paper, e.Task, e.Runs, e.SelectRuns, e.Tolerance, e.Relative, e.SizeColumn, e.AcceptsData, e.Custom != nil, e.Rerender != nil)
		fmt.Fprintf(&b, "intro:\n%s\ndiscussion:\n%s\n", e.Intro, e.Discussion)
		for _, d := range e.Datasets {
			game := "none"
			if d.Game != nil {
				game = fmt.Sprintf("%+v", *d.Game)
			}
			fmt.Fprintf(&b, "dataset %q title %q B %d sigma %q limit %d game %s note %q variants %+v\n",
				d.Key, d.Title, d.B, d.Sigma, d.Limit, game, d.Note, d.Variants)
		}
		for _, a := range e.Algos {
			fmt.Fprintf(&b, "algo %q tolerance %g note %q\n  paper: %s\n  reference: %s\n", a.Label, a.Tolerance, a.Note, val(a.Paper), val(a.Reference))
			for _, d := range e.Datasets {
				fmt.Fprintf(&b, "  spec[%s]: %s\n", d.Title, a.Spec(d))
			}
		}
	}
	return b.String()
}

// The experiment definitions are data; refactoring how they are written
// (helpers, tables) must not change them. The golden file is every
// experiment's definition as dumpDefinitions renders it; regenerate it
// with -update-definitions only when a definition is meant to change.
func TestExperimentDefinitionsGolden(t *testing.T) {
	got := dumpDefinitions()
	const path = "testdata/definitions.golden"
	if *updateDefinitions {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("experiment definitions differ from %s at line %d:\n got: %s\nwant: %s\n(run with -update-definitions if the change is intended)", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("experiment definitions differ from %s in length: %d vs %d lines", path, len(gl), len(wl))
	}
}
