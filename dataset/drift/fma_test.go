package drift

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fmaProbe is x·y + z, which the arm64 compiler fuses: it shows that
// TestNoFMA's pattern does detect fusion.
//
//go:noinline
func fmaProbe(x, y, z float64) float64 { return x*y + z }

var fusedInstr = regexp.MustCompile(`(?i)\b(FMADD|FMSUB|FNMADD|FNMSUB)[SD]?\b`)

// TestNoFMA: the streams must have the same bits on every platform, so no
// generator may let the compiler fuse a product into an addition (arm64,
// ppc64le, s390x and riscv64 would). It cross-compiles the package's tests
// for arm64 and disassembles the generators.
func TestNoFMA(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the package for arm64")
	}
	_ = fmaProbe(1, 2, 3)
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "drift.arm64.test")
	build := exec.Command(goTool, "test", "-c", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Skipf("cannot cross-compile for arm64: %v\n%s", err, out)
	}
	objdump := func(sym string) string {
		out, err := exec.Command(goTool, "tool", "objdump", "-s", "^"+regexp.QuoteMeta(sym)+"$", bin).CombinedOutput()
		if err != nil {
			t.Fatalf("objdump %s: %v\n%s", sym, err, out)
		}
		if !strings.Contains(string(out), "TEXT") {
			t.Fatalf("objdump found no code for %s", sym)
		}
		return string(out)
	}
	const pkg = "okstream/dataset/drift."
	if !fusedInstr.MatchString(objdump(pkg + "fmaProbe")) {
		t.Fatal("the arm64 build of fmaProbe shows no fused instruction: the check cannot detect fusion")
	}
	// The helpers (HyperplaneLabel, FriedmanConcept, perturb, mixNew) are
	// inlined into the Next methods, whose code is checked with theirs.
	for _, sym := range []string{
		"(*SEA).Next", "(*Hyperplane).Next", "(*Agrawal).Next", "AgrawalFunction",
		"(*Friedman).Next", "FriedmanLEA",
	} {
		if m := fusedInstr.FindString(objdump(pkg + sym)); m != "" {
			t.Errorf("%s: the arm64 build fuses a product (%s)", sym, m)
		}
	}
}
