package paper

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// UpdateSection replaces a section in place and refuses a file above
// maxSectionFile before reading it.
func TestUpdateSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.md")
	if err := UpdateSection(path, "a", "one"); err != nil {
		t.Fatal(err)
	}
	if err := UpdateSection(path, "a", "two"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "<!-- BEGIN a -->\ntwo\n<!-- END a -->\n" {
		t.Fatalf("file:\n%s", b)
	}
	if err := os.Truncate(path, maxSectionFile+1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	if err := UpdateSection(path, "a", "three"); err == nil || !strings.Contains(err.Error(), "more than the 67108864") {
		t.Fatalf("oversized file: %v", err)
	}
}
