package dataset

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"okstream/internal/memtest"
)

// allocBound is what any of the small hostile files below may make the
// readers allocate in total; a long line may cost a few times its length
// on top (the scanner's buffer grows by doubling, CSV fields take 24 bytes
// each, up to MaxDim of them).
const allocBound = 16 << 20

// allocated returns the bytes f allocates (the test must not run in
// parallel with others).
var allocated = memtest.Allocated

// readAll runs both readers on path: Load, and Open + Next to the end. It
// returns their errors.
func readAll(path string, opts Options) (loadErr, streamErr error) {
	_, loadErr = Load(path, opts)
	r, err := Open(path, opts)
	if err != nil {
		return loadErr, err
	}
	defer r.Close()
	for {
		if _, err := r.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return loadErr, nil
			}
			return loadErr, err
		}
	}
}

// checkRefused runs both readers on content under opts and checks that each
// fails with a *ParseError at line that mentions every part, allocating at
// most allocBound.
func checkRefused(t *testing.T, name, content string, opts Options, line int, parts ...string) {
	t.Helper()
	path := writeFile(t, name, content)
	var loadErr, streamErr error
	n := allocated(func() { loadErr, streamErr = readAll(path, opts) })
	if bound := allocBound + 24*uint64(len(content)); n > bound {
		t.Errorf("reading %d bytes allocated %d bytes, bound %d", len(content), n, bound)
	}
	for _, err := range []error{loadErr, streamErr} {
		if err == nil {
			t.Fatalf("%s was accepted", name)
		}
		wantParseError(t, err, path, line, parts...)
		if len(err.Error()) > 700 {
			t.Errorf("error message of %d bytes: %.200s...", len(err.Error()), err)
		}
	}
}

// The case: 15 bytes used to make the reader infer dimension
// 2^31−1 and allocate 16 GiB per row.
func TestHostileIndexInferredDim(t *testing.T) {
	content := "1 2147483647:1\n"
	if len(content) != 15 {
		t.Fatalf("%d bytes", len(content))
	}
	checkRefused(t, "tiny.libsvm", content, Options{}, 1,
		"feature index 2147483647 is above the limit 1048576", "Options.MaxDim", "--dim")
	// An index past int32 and past any int is reported the same way, clipped.
	checkRefused(t, "huge.libsvm", "1 1:1\n-1 "+strings.Repeat("9", 5000)+":1\n", Options{}, 2,
		"feature index 99999999999999999999... (5000 digits) is above the limit")
	// Sniffed (no extension) goes through the same limit.
	checkRefused(t, "tiny", content, Options{}, 1, "above the limit 1048576")
}

// A given Dim bounds the indices instead of MaxDim; a Dim whose one row
// exceeds MaxDenseBytes is refused before any row is allocated.
func TestHostileIndexGivenDim(t *testing.T) {
	checkRefused(t, "a.libsvm", "1 1:1\n1 2147483647:1\n", Options{Dim: 100}, 2, "feature index 2147483647 exceeds the dimension 100")

	path := writeFile(t, "b.libsvm", "1 1:1\n")
	var loadErr, openErr error
	n := allocated(func() {
		_, loadErr = Load(path, Options{Dim: MaxIndex})
		_, openErr = Open(path, Options{Dim: MaxIndex})
	})
	if n > allocBound {
		t.Errorf("allocated %d bytes", n)
	}
	for _, err := range []error{loadErr, openErr} {
		if err == nil || !strings.Contains(err.Error(), "16 GiB as dense float64 rows, above the limit of 2 GiB") {
			t.Errorf("Dim %d: %v", MaxIndex, err)
		}
	}
	if _, err := Load(path, Options{Dim: MaxIndex + 1}); err == nil || !strings.Contains(err.Error(), "above the largest dimension") {
		t.Errorf("Dim above MaxIndex: %v", err)
	}
	for _, o := range []Options{{MaxDim: -1}, {MaxLine: -1}, {MaxDenseBytes: -1}} {
		if _, err := Load(path, o); err == nil || !strings.Contains(err.Error(), "negative limit") {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// Many rows at the largest allowed index: each row is 8 MiB dense, so the
// 257th crosses 2 GiB; Load stops there, before allocating the rows, and
// says which line set the dimension and how to fix it.
func TestHostileRowsTimesDim(t *testing.T) {
	content := "1 1:1\n" + strings.Repeat("1 1048576:1\n", 300)
	path := writeFile(t, "wide.libsvm", content)
	var err error
	n := allocated(func() { _, err = Load(path, Options{}) })
	if n > allocBound {
		t.Errorf("allocated %d bytes", n)
	}
	wantParseError(t, err, path, 257, "257 rows × 1048576 features take 2 GiB", "above the limit of 2 GiB",
		"inferred from the feature index at line 2", "--dim", "--max-dense-mib")

	// With a given Dim the message does not blame an inferred index.
	_, err = Load(path, Options{Dim: 1 << 20, MaxDenseBytes: 10 << 20})
	wantParseError(t, err, path, 2, "2 rows × 1048576 features take 16 MiB", "above the limit of 10 MiB")
	if strings.Contains(err.Error(), "inferred") {
		t.Errorf("given Dim reported as inferred: %v", err)
	}

	// CSV rows count the same way.
	csv := writeFile(t, "rows.csv", "y,a,b\n"+strings.Repeat("1,2,3\n", 10))
	_, err = Load(csv, Options{Label: "y", MaxDenseBytes: 5 * 16})
	wantParseError(t, err, csv, 7, "6 rows × 2 features take 96 B", "above the limit of 80 B")

	// Raising the limit reads the file; the streaming reader needs one row.
	if d, err := Load(csv, Options{Label: "y", MaxDenseBytes: 1 << 10}); err != nil || d.Len() != 10 {
		t.Errorf("raised limit: %v", err)
	}
}

// MaxDim is the documented default and can be raised, or replaced by Dim.
func TestMaxDimOverride(t *testing.T) {
	path := writeFile(t, "big.libsvm", "1 2000000:1\n-1 3:2\n")
	_, err := Load(path, Options{})
	wantParseError(t, err, path, 1, "above the limit 1048576")
	for _, o := range []Options{{MaxDim: 2000000}, {Dim: 2000000}} {
		d, err := Load(path, o)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		if d.Dim != 2000000 || d.X[0][1999999] != 1 || d.X[1][2] != 2 {
			t.Errorf("%+v: dim %d", o, d.Dim)
		}
		r, err := Open(path, o)
		if err != nil {
			t.Fatalf("Open %+v: %v", o, err)
		}
		if r.Dim() != 2000000 {
			t.Errorf("Open %+v: dim %d", o, r.Dim())
		}
		r.Close()
	}
	if _, err := Load(path, Options{MaxDim: 1999999}); err == nil {
		t.Error("MaxDim 1999999 accepted index 2000000")
	}
}

// A CSV row with more feature columns than MaxDim is refused at split time,
// so that a long line of delimiters cannot size the per-row slices.
func TestHostileCSVWidth(t *testing.T) {
	row := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = "1"
		}
		return strings.Join(s, ",") + "\n"
	}
	checkRefused(t, "wide.csv", row(12), Options{Label: "0", MaxDim: 10}, 1,
		"more than 11 fields: above the limit of 10 feature columns", "--dim")
	// Dim replaces MaxDim (and must match the columns).
	path := writeFile(t, "wide.csv", row(12))
	if d, err := Load(path, Options{Label: "0", MaxDim: 10, Dim: 11}); err != nil || d.Dim != 11 {
		t.Errorf("Dim 11: %v", err)
	}
	// With the default limit, a 4 MiB line of commas stays cheap.
	checkRefused(t, "commas.csv", "1"+strings.Repeat(",", 4<<20)+"\n", Options{Label: "0"}, 1, "more than 1048577 fields")
	// A later row with far more fields than the header stops early.
	checkRefused(t, "later.csv", "a,b\n1,2\n"+strings.Repeat("3,", 1<<20)+"\n", Options{Label: "a"}, 3, "more than 3 fields, want 2")
}

// A line longer than MaxLine is a *ParseError at file:line that names the
// limit; the buffer never grows past it.
func TestLineLimit(t *testing.T) {
	long := "1 1:" + strings.Repeat("1", 5000) + "\n"
	checkRefused(t, "long.libsvm", "1 1:1\n"+long, Options{MaxLine: 4096}, 2, "line longer than 4 KiB", "Options.MaxLine")
	checkRefused(t, "long.csv", "a,b\n1,2\n1,"+strings.Repeat("2", 5000)+"\n", Options{Label: "a", MaxLine: 4096}, 3, "line longer than 4 KiB")
	// The default is 16 MiB: a 17 MiB line fails without a 17 MiB buffer...
	big := "1 1:" + strings.Repeat("1", 17<<20) + "\n"
	path := writeFile(t, "big.libsvm", big)
	var err error
	n := allocated(func() { _, err = Load(path, Options{}) })
	wantParseError(t, err, path, 1, "line longer than 16 MiB")
	if n > 3*DefaultMaxLine {
		t.Errorf("allocated %d bytes for a line above the %d-byte limit", n, DefaultMaxLine)
	}
}

// Error messages quote at most a clip of a hostile token, however long.
func TestErrorsClipped(t *testing.T) {
	tok := strings.Repeat("x", 1<<20)
	for _, c := range []struct{ name, content string }{
		{"a.libsvm", "1 " + tok + "\n"},
		{"b.libsvm", tok + ":1\n"},
		{"c.libsvm", "1 1:" + tok + "\n"},
		{"d.libsvm", "1 " + tok + ":1\n"},
		{"e.csv", "a,b\n1," + tok + "\n"},
	} {
		path := writeFile(t, c.name, c.content)
		_, err := Load(path, Options{Label: "0"})
		if err == nil {
			t.Fatalf("%s accepted", c.name)
		}
		if len(err.Error()) > 400 || !strings.Contains(err.Error(), fmt.Sprintf("(%d bytes)", len(tok))) && !strings.Contains(err.Error(), "bytes)") {
			t.Errorf("%s: message of %d bytes: %.300s", c.name, len(err.Error()), err)
		}
	}
	// A header of many columns is listed only in part.
	hdr := make([]string, 200)
	for i := range hdr {
		hdr[i] = fmt.Sprintf("c%d", i)
	}
	path := writeFile(t, "h.csv", strings.Join(hdr, ",")+"\n"+strings.Repeat("1,", 199)+"1\n")
	_, err := Load(path, Options{Label: "nope"})
	if err == nil || !strings.Contains(err.Error(), `"c49", ... (150 more)`) {
		t.Errorf("column list: %v", err)
	}
}
