package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A config file is bounded: 1 MiB in all, 64 KiB per line, each refused
// with the file (and line) named.
func TestConfigFileLimits(t *testing.T) {
	dir := t.TempDir()
	newFS := func() *flag.FlagSet {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var f runFlags
		f.register(fs)
		return fs
	}
	for _, c := range []struct{ name, content, want string }{
		{"big.conf", strings.Repeat("# padding padding padding padding\n", maxConfigBytes/34+10) + "dim = 3\n", "more than the limit of 1048576"},
		{"line.conf", "dim = 3\ninput = " + strings.Repeat("x", maxConfigLine) + "\n", "line.conf:2: line longer than the limit of 65536"},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := readConfigFile(path, newFS())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// Just under the limits is read.
	path := filepath.Join(dir, "ok.conf")
	os.WriteFile(path, []byte("input = "+strings.Repeat("x", maxConfigLine-9)+"\n"), 0o644)
	if m, err := readConfigFile(path, newFS()); err != nil || len(m["input"][0]) != maxConfigLine-9 {
		t.Errorf("line at the limit: %v", err)
	}
}

// The 15-byte LIBSVM file through the command-line data flags: a
// clear error that says to give --dim; --dim reads it, --max-dense-mib
// bounds the rows.
func TestDataFlagsHostileDimension(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.libsvm")
	os.WriteFile(path, []byte("1 2147483647:1\n"), 0o644)
	load := func(args ...string) error {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var d dataFlags
		d.register(fs)
		if err := fs.Parse(append([]string{"--data", path}, args...)); err != nil {
			t.Fatal(err)
		}
		_, _, err := d.load(true)
		return err
	}
	if err := load(); err == nil || !strings.Contains(err.Error(), "tiny.libsvm:1: feature index 2147483647 is above the limit 1048576") || !strings.Contains(err.Error(), "--dim") {
		t.Errorf("inferred: %v", err)
	}
	if err := load("--dim", "2147483647"); err == nil || !strings.Contains(err.Error(), "above the limit of 2 GiB") || !strings.Contains(err.Error(), "--max-dense-mib") {
		t.Errorf("--dim 2^31-1: %v", err)
	}
	if err := load("--dim", "2147483647", "--max-dense-mib", "0"); err == nil || !strings.Contains(err.Error(), "must be positive") {
		t.Errorf("--max-dense-mib 0: %v", err)
	}
}
