package selfcontained

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"okstream/learner"
)

// forbidden are pointers to implementation notes that were never part of
// the repository (a sibling directory of the checkout, with one file per
// paper and numbered sections and appendices). A reader of a clone cannot
// follow them; cite the paper's section and the docs/algorithms page
// instead.
var forbidden = []*regexp.Regexp{
	regexp.MustCompile(`shared/spec`),
	regexp.MustCompile(`shared/DESIGN\.md`),
	regexp.MustCompile(`\b(forks|ald|pkawv|dsg|kafka|kuairec)\.md\b\s*(§|Appendix|App\.|item|\()`),
	regexp.MustCompile(`\b[Ss]pec(['’]s)?\s+(§|Appendix)`),
	regexp.MustCompile(`\bAppendix R\b`),
}

// self is this file, which must spell the patterns out.
const self = "internal/selfcontained/selfcontained_test.go"

// repoRoot is the directory holding go.mod above the package directory.
func repoRoot(t *testing.T) string {
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the package directory")
		}
		dir = parent
	}
}

// files lists the tracked files (git ls-files) or, outside a git checkout
// (an unpacked archive), every file under root except .git.
func files(t *testing.T, root string) []string {
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		var list []string
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				list = append(list, f)
			}
		}
		return list
	}
	var list []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			list = append(list, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// violations returns "file:line: text" for every line of data matching a
// forbidden pattern.
func violations(name string, data []byte) []string {
	var out []string
	for i, line := range bytes.Split(data, []byte("\n")) {
		for _, re := range forbidden {
			if re.Match(line) {
				out = append(out, name+":"+strconv.Itoa(i+1)+": "+strings.TrimSpace(string(line)))
				break
			}
		}
	}
	return out
}

// No tracked file refers to the external implementation notes: every
// comment, test, doc and generated result cites the paper's section and
// the repository's own docs/algorithms pages instead.
func TestNoPointersOutsideTheRepository(t *testing.T) {
	root := repoRoot(t)
	list := files(t, root)
	if len(list) < 50 {
		t.Fatalf("only %d files found under %s: not the repository", len(list), root)
	}
	var bad []string
	for _, f := range list {
		if f == self {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			if os.IsNotExist(err) { // deleted in the work tree, not yet committed
				continue
			}
			t.Fatal(err)
		}
		if bytes.IndexByte(data, 0) >= 0 { // binary (images)
			continue
		}
		bad = append(bad, violations(f, data)...)
	}
	for _, b := range bad {
		t.Error(b)
	}
	if len(bad) > 0 {
		t.Errorf("%d lines point outside the repository: cite the paper's section and docs/algorithms/ instead", len(bad))
	}
}

// The patterns catch the forms the old pointers took, and not the
// repository's own page names or ordinary words.
func TestPatterns(t *testing.T) {
	for _, s := range []string{
		"Spec: ../shared/spec/forks.md §2, §3.",
		"(forks.md §8 item 21)",
		"ald.md Appendix R",
		"spec Appendix R",
		"(spec §8 A7)",
		"the spec's §2.4 schedule",
		"pkawv.md's \"paper's trick\" (pkawv.md §4.3)",
		"Design notes: ../shared/DESIGN.md",
	} {
		if len(violations("x", []byte(s))) != 1 {
			t.Errorf("not caught: %q", s)
		}
	}
	for _, s := range []string{
		"docs/algorithms/forks-and-baselines.md",
		"FORKS paper §3.4 Eq. 10, App. B.1",
		"a learner spec such as forks:budget=100",
		"../shared/datasets (or OKSTREAM_DATA_ROOT)",
		"Appendix A.1 (experiment settings)",
	} {
		if v := violations("x", []byte(s)); len(v) != 0 {
			t.Errorf("false positive: %v", v)
		}
	}
}

// Every registered learner (okstream help learners) has its notes in
// docs/algorithms: the index names each one, and the page it lists exists.
func TestEveryLearnerIsDocumented(t *testing.T) {
	root := repoRoot(t)
	index, err := os.ReadFile(filepath.Join(root, "docs", "algorithms", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := learner.Names()
	if len(names) < 10 {
		t.Fatalf("only %d learners registered: %v", len(names), names)
	}
	for _, name := range names {
		if !bytes.Contains(index, []byte("`"+name+"`")) {
			t.Errorf("learner %s is not in docs/algorithms/README.md", name)
		}
	}
	for _, m := range regexp.MustCompile(`\]\(([a-z0-9-]+\.md)\)`).FindAllSubmatch(index, -1) {
		if _, err := os.Stat(filepath.Join(root, "docs", "algorithms", string(m[1]))); err != nil {
			t.Errorf("docs/algorithms/README.md links to a missing page: %v", err)
		}
	}
}
