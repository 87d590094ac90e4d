package kernel

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"okstream/learner/rng"
)

// Map puts cos(u_jᵀx) at j and sin(u_jᵀx) at D+j, scaled; MapDot returns
// the same z and wᵀz. (The kernel approximation cannot see a swap of the
// two halves, so this checks the layout directly, against math.Sincos of
// the projection.)
func TestFourierMapLayout(t *testing.T) {
	const d, D = 5, 37 // D not a multiple of 4: the projection's tail loop
	src := rng.New(8)
	for _, scale := range []float64{1, 1 / math.Sqrt(D)} {
		f, err := NewFourier(Gaussian, 1.3, d, D, scale, 4)
		if err != nil {
			t.Fatal(err)
		}
		w := make([]float64, 2*D)
		for i := range w {
			w[i] = src.Normal()
		}
		for trial := 0; trial < 20; trial++ {
			x := make([]float64, d)
			for i := range x {
				if trial%2 == 0 || src.Float64() < 0.5 { // odd trials sparse
					x[i] = src.Normal()
				}
			}
			z := f.Map(make([]float64, 2*D), x)
			z2, score := f.MapDot(make([]float64, 2*D), w, x)
			var want float64
			for j := 0; j < D; j++ {
				var p float64
				for i := 0; i < d; i++ {
					p += f.w[i*D+j] * x[i]
				}
				s, c := math.Sincos(p)
				if math.Abs(z[j]-scale*c) > 1e-12 || math.Abs(z[D+j]-scale*s) > 1e-12 {
					t.Fatalf("z[%d], z[D+%d] = %v, %v; want %v, %v", j, j, z[j], z[D+j], scale*c, scale*s)
				}
				want += w[j]*z[j] + w[D+j]*z[D+j]
			}
			for i := range z {
				if math.Float64bits(z[i]) != math.Float64bits(z2[i]) {
					t.Fatalf("Map and MapDot differ at %d", i)
				}
			}
			if math.Abs(score-want) > 1e-9 {
				t.Fatalf("MapDot score %v, want %v", score, want)
			}
		}
	}
}

// fmaProbe is fused into one FMADDD by the arm64 compiler: it shows that
// TestFeatureCodeNoFMA's pattern does detect fusion.
//
//go:noinline
func fmaProbe(x, y, z float64) float64 { return x*y + z }

// Project and CosFeature are inlined into their callers; these keep a copy
// of each in the binary for TestFeatureCodeNoFMA.
//
//go:noinline
func projectProbe(w, x []float64, nz []int, b float64) float64 { return Project(w, x, nz, b) }

//go:noinline
func cosFeatureProbe(p float64) float64 { return CosFeature(p) }

// AxpyRounded is inlined too (into FOGD's Learn, for one); this keeps a copy.
//
//go:noinline
func axpyRoundedProbe(a float64, x, y []float64) { AxpyRounded(a, x, y) }

var fusedInstr = regexp.MustCompile(`(?i)\b(FMADD|FMSUB|FNMADD|FNMSUB)[SD]?\b`)

// Random features must have the same bits on every platform. The arm64
// compiler fuses x*y+z into one instruction unless the product is rounded
// explicitly (float64(x*y)); this cross-compiles the package's tests for
// arm64 and checks that the disassembly of the feature code (rng.FastSincos,
// its Payne–Hanek reduction and its slice form, Fourier's projection, map,
// evaluation and scores (auto's bank), AxpyRounded, the seeded
// features' Project, block and group projections (DSG), Dot4 and
// CosFeature) has no fused multiply-add.
func TestFeatureCodeNoFMA(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the package for arm64")
	}
	_ = fmaProbe(1, 2, 3)
	_ = cosFeatureProbe(projectProbe([]float64{1}, []float64{1}, []int{0}, 0))
	axpyRoundedProbe(2, []float64{1}, []float64{1})
	goTool, err := exec.LookPath("go") // go test puts its own GOROOT/bin first in PATH
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "kernel.arm64.test")
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
			t.Fatalf("objdump found no code for %s (inlined away or renamed?)", sym)
		}
		return string(out)
	}
	if !fusedInstr.MatchString(objdump("okstream/learner/kernel.fmaProbe")) {
		t.Fatal("the arm64 build of fmaProbe (x*y + z) shows no fused instruction: the check cannot detect fusion")
	}
	for _, sym := range []string{
		"okstream/learner/rng.FastSincos",
		"okstream/learner/rng.payneHanek",
		"okstream/learner/rng.fastSincosRun",
		"okstream/learner/kernel.(*Fourier).mapDot",
		"okstream/learner/kernel.(*Fourier).evaluate",
		"okstream/learner/kernel.(*Fourier).project",
		"okstream/learner/kernel.(*Fourier).Scores",
		"okstream/learner/kernel.(*Fourier).Score",
		"okstream/learner/kernel.projectBlock",
		"okstream/learner/kernel.(*SeededBlocks).ProjectGroup",
		"okstream/learner/kernel.Dot4",
		"okstream/learner/kernel.Dot4x4",
		"okstream/learner/kernel.dot4Finish",
		"okstream/learner/kernel.axpyRoundedProbe",
		"okstream/learner/kernel.projectProbe",
		"okstream/learner/kernel.cosFeatureProbe",
	} {
		if m := fusedInstr.FindAllString(objdump(sym), -1); len(m) > 0 {
			t.Errorf("arm64 code of %s has fused multiply-adds %v: its bits would differ from amd64", sym, m)
		}
	}
}

// Golden bits of the Fourier map: an FNV-1a hash of every bit of z(x) and of
// wᵀz(x) for the three kernels, dense and sparse inputs (d = 8, D = 400 as in
// FOGD's benchmark). CI runs this on arm64 under qemu-user too, so it pins
// that FOGD's features are the same on both platforms.
func TestFourierGolden(t *testing.T) {
	golden := map[Kind]uint64{Gaussian: 0x243fa13dbfca6df9, Laplacian: 0xf91df654311c57e4, Cauchy: 0x1530e058d8b1f23d}
	for _, kind := range []Kind{Gaussian, Laplacian, Cauchy} {
		f, err := NewFourier(kind, 2, 8, 400, 1/math.Sqrt(400), 2024)
		if err != nil {
			t.Fatal(err)
		}
		src := rng.New(31)
		w := make([]float64, 800)
		for i := range w {
			w[i] = src.Normal()
		}
		h := uint64(14695981039346656037)
		mix := func(v float64) {
			b := math.Float64bits(v)
			for k := 0; k < 8; k++ {
				h ^= b >> (8 * k) & 0xff
				h *= 1099511628211
			}
		}
		z := make([]float64, 800)
		for trial := 0; trial < 16; trial++ {
			x := make([]float64, 8)
			for i := range x {
				if trial < 8 || src.Float64() < 0.4 {
					x[i] = src.Normal() * float64(1+trial)
				}
			}
			zz, score := f.MapDot(z, w, x)
			for _, v := range zz {
				mix(v)
			}
			mix(score)
		}
		if h != golden[kind] {
			t.Errorf("%s: Fourier map hash %#x, golden %#x", kind, h, golden[kind])
		}
	}
}

// TestFourierAsmBits checks the projection and AxpyRounded against plain
// loops with every product rounded (the Go code of every platform without
// the amd64 assembly): D from 1 to 9 and larger (the assembly does four
// then two at a time, an odd last frequency is Go's), 1 to 9 non-zero coordinates (groups of four and the
// single ones), and y shorter than x. On amd64 it runs once more with the
// SSE2 loops alone (fourier_amd64_test.go).
func TestFourierAsmBits(t *testing.T) { checkFourierAsm(t) }

func checkFourierAsm(t *testing.T) {
	src := rng.New(5)
	for _, D := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 33, 400} {
		for d := 1; d <= 9; d++ {
			f, err := NewFourier(Gaussian, 1.5, d, D, 1, uint64(100*D+d))
			if err != nil {
				t.Fatal(err)
			}
			x := make([]float64, d)
			for i := range x {
				if src.Float64() < 0.8 {
					x[i] = src.Normal() * 3
				}
			}
			want := make([]float64, D)
			for i, xi := range x {
				if xi == 0 {
					continue
				}
				for j := range want {
					want[j] += float64(xi * f.w[i*D+j])
				}
			}
			got := f.Project(make([]float64, D+1), x)
			for j := range want {
				if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
					t.Fatalf("D=%d d=%d: projection %d = %x, want %x", D, d, j, math.Float64bits(got[j]), math.Float64bits(want[j]))
				}
			}
		}
		a := src.Normal()
		xs, y := make([]float64, D+2), make([]float64, D)
		for j := range xs {
			xs[j] = src.Normal()
		}
		for j := range y {
			y[j] = src.Normal()
		}
		want := append([]float64(nil), y...)
		for j := range want {
			want[j] += float64(a * xs[j])
		}
		AxpyRounded(a, xs, y)
		for j := range want {
			if math.Float64bits(y[j]) != math.Float64bits(want[j]) {
				t.Fatalf("D=%d: AxpyRounded %d = %x, want %x", D, j, math.Float64bits(y[j]), math.Float64bits(want[j]))
			}
		}
	}
}
