package progress

import (
	"bytes"
	"strings"
	"testing"
)

func TestBarPlainOutput(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, "eval", 100, "events")
	b.Add(40)
	b.Add(60)
	b.Finish()
	out := buf.String()
	if !strings.Contains(out, "100%") || !strings.Contains(out, "eval") {
		t.Fatalf("unexpected output %q", out)
	}
	var nb *Bar
	nb.Add(1) // nil bar is a no-op
	nb.Finish()
}
