package learner

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func init() {
	addContractSpecs(
		// Cap after 16 iterations (64 events): the generic cut points 7 and
		// 60 are before it (mid-batch, batch boundary), 250 after it.
		"dsg:sigma=0.7,batch=4,block=16,max_features=256",
		"dsg:sigma=0.7,loss=square,batch=4,block=16,max_features=256,predict_with=average,gamma0=2",
		// Revisit policy, paired features, a short last block (100 = 12·8 + 4).
		"dsg:kernel=laplacian,sigma=1.5,loss=logistic,batch=2,block=8,max_features=100,after_cap=revisit,features=cossin,gamma0=4",
		// Matérn, Huber, a partially cached feature set (cache holds ~80 of 250).
		"dsg:kernel=matern,smoothness=2.5,sigma=0.7,loss=huber,batch=4,block=16,max_features=250,cache_mb=0.004,gamma0=2",
		// Cauchy kernel, pinball loss, no cache at all (every feature regenerated).
		"dsg:kernel=cauchy,sigma=1,loss=quantile,tau=0.5,batch=4,block=16,max_features=128,cache_mb=0,gamma0=2",
		"dsg:sigma=0.7,loss=epsilon_insensitive,epsilon=0.05,batch=4,block=16,max_features=256,gamma0=0.5",
	)
}

func dsgOf(t testing.TB, spec string, dim int) *DSG {
	t.Helper()
	l, err := New(rawSpec(spec), dim)
	if err != nil {
		t.Fatal(err)
	}
	return l.(*DSG)
}

// dsgCore is the model part of a DSG's state (everything but the header,
// whose canonical spec names cache_mb).
func dsgCore(l *DSG) []float64 {
	out := []float64{float64(l.iters), float64(l.inBatch), float64(l.nf), l.scale, float64(l.accLo), float64(l.accHi)}
	out = append(out, l.coef...)
	out = append(out, l.avg...)
	return append(out, l.acc...)
}

// The frequency cache is invisible: no cache, a partial cache and a full
// cache give bit-identical scores and model states, for every family and
// both feature forms.
func TestDSGCacheInvisible(t *testing.T) {
	for _, base := range []string{
		"dsg:sigma=0.7,batch=3,block=10,max_features=120,predict_with=average",
		"dsg:kernel=matern,smoothness=0.5,sigma=1,loss=square,batch=3,block=10,max_features=120,features=cossin",
		"dsg:kernel=laplacian,sigma=1,loss=logistic,batch=2,block=10,max_features=95,after_cap=revisit",
	} {
		xs, ys := stream(taskOf(t, base), 400, 5, 31)
		// cache_mb=0.0005 holds 10 features of dimension 5.
		var ls []*DSG
		for _, c := range []string{",cache_mb=0", ",cache_mb=0.0005", ""} {
			ls = append(ls, dsgOf(t, base+c, 5))
		}
		for i := range xs {
			var first float64
			for j, l := range ls {
				var f float64
				if i%5 == 0 {
					f = l.Predict(xs[i])
				} else {
					f = l.Learn(xs[i], ys[i])
				}
				if j == 0 {
					first = f
				} else if math.Float64bits(f) != math.Float64bits(first) {
					t.Fatalf("%s event %d: cache variant %d scores %v, uncached %v", base, i, j, f, first)
				}
			}
		}
		if n := ls[1].cache.Cached(); n != 10 {
			t.Fatalf("partial cache holds %d features, want 10", n)
		}
		for j := 1; j < len(ls); j++ {
			a, b := dsgCore(ls[0]), dsgCore(ls[j])
			if len(a) != len(b) {
				t.Fatal("states differ in size")
			}
			for k := range a {
				if math.Float64bits(a[k]) != math.Float64bits(b[k]) {
					t.Fatalf("%s: cache variant %d state differs at %d", base, j, k)
				}
			}
		}
	}
}

// Restore at many cut points — mid-batch and at batch boundaries, before,
// at and after the feature cap — into a fresh learner (empty cache, so
// every feature is regenerated from its seed): every later score is
// bit-identical, and so is the final state.
func TestDSGRestoreAcrossCap(t *testing.T) {
	for _, spec := range []string{
		"dsg:sigma=0.7,batch=4,block=16,max_features=100,predict_with=average",
		"dsg:kernel=cauchy,sigma=1,loss=huber,batch=3,block=16,max_features=100,after_cap=revisit,features=cossin",
	} {
		xs, ys := stream(taskOf(t, spec), 160, 5, 32)
		ref := dsgOf(t, spec, 5)
		var states [][]byte
		var scores []float64
		for i := range xs {
			st, _ := ref.MarshalBinary()
			states = append(states, st)
			scores = append(scores, ref.Learn(xs[i], ys[i]))
		}
		final, _ := ref.MarshalBinary()
		capAt := -1
		for cut := range xs {
			l := dsgOf(t, spec, 5)
			if err := l.UnmarshalBinary(states[cut]); err != nil {
				t.Fatalf("%s cut %d: %v", spec, cut, err)
			}
			if capAt < 0 && l.nf == 100 {
				capAt = cut
			}
			for i := cut; i < len(xs); i++ {
				if i%7 == 3 {
					l.Predict(xs[i]) // interleaved predictions change nothing
				}
				if f := l.Learn(xs[i], ys[i]); math.Float64bits(f) != math.Float64bits(scores[i]) {
					t.Fatalf("%s cut %d, event %d: score %v after restore, %v uninterrupted", spec, cut, i, f, scores[i])
				}
			}
			if st, _ := l.MarshalBinary(); !bytes.Equal(st, final) {
				t.Fatalf("%s cut %d: final state differs", spec, cut)
			}
		}
		if capAt <= 0 || capAt > 100 {
			t.Fatalf("%s: cap reached at event %d; the cut points must straddle it", spec, capAt)
		}
	}
}

// After the cap the state, memory and feature count stay fixed however
// long the stream: Used = K_max, the state size is constant and Info.Bytes
// does not grow.
func TestDSGCapBoundsState(t *testing.T) {
	spec := "dsg:sigma=0.7,batch=4,block=16,max_features=200,predict_with=average,features=cos"
	xs, ys := stream(Classification, 4000, 5, 33)
	l := dsgOf(t, spec, 5)
	var size, bytesAtCap int
	for i := range xs {
		l.Learn(xs[i], ys[i])
		if i == 400 {
			st, _ := l.MarshalBinary()
			size, bytesAtCap = len(st), l.Info().Bytes
		}
		if i > 400 && i%500 == 0 {
			st, _ := l.MarshalBinary()
			if info := l.Info(); info.Used != 200 || info.Budget != 200 || len(st) > size || info.Bytes != bytesAtCap {
				t.Fatalf("event %d: used %d, state %d bytes (was %d), memory %d (was %d)", i, info.Used, len(st), size, info.Bytes, bytesAtCap)
			}
		}
	}
	// State = coefficients + averaged coefficients + counters; no features.
	if want := 8 * 3 * 200; size > want+400 { // coef, avg, open-batch accumulator
		t.Fatalf("state of %d bytes for 200 features: frequencies stored?", size)
	}
}

func TestDSGRejects(t *testing.T) {
	for _, spec := range []string{
		"dsg:max_features=10,block=20",
		"dsg:kernel=matern,smoothness=1",
		"dsg:kernel=polynomial",
		"dsg:loss=quantile,tau=1",
		"dsg:smoothness=1.5", // only with kernel=matern
		"dsg:delta=2",        // only with loss=huber
		"dsg:kappa=2",
		"dsg:predict_with=best",
		"dsg:after_cap=fifo",
	} {
		if _, err := New(spec, 3); err == nil {
			t.Errorf("%s accepted", spec)
		}
	}
	l := dsgOf(t, "dsg:sigma=0.7,batch=4,block=16,max_features=100", 3)
	xs, ys := stream(Classification, 30, 3, 34)
	for i := range xs {
		l.Learn(xs[i], ys[i])
	}
	st, _ := l.MarshalBinary()
	// A feature count that is not a block boundary.
	bad := append([]byte(nil), st...)
	header := 4 + 2 + 4 + len(l.name) + 4 + len(l.spec) + 8
	off := header + 8 + 8 + 8 // updates, iterations, batch position
	if got := int(bad[off]) | int(bad[off+1])<<8; got != l.nf {
		t.Fatalf("layout: feature count %d at offset %d, want %d", got, off, l.nf)
	}
	bad[off]++
	fresh := dsgOf(t, "dsg:sigma=0.7,batch=4,block=16,max_features=100", 3)
	if err := fresh.UnmarshalBinary(bad); err == nil {
		t.Fatal("state with an impossible feature count accepted")
	}
	if fresh.nf != 0 || fresh.iters != 0 {
		t.Fatal("failed restore changed the learner")
	}
}

// cache_mb changes only memory use: a state restores across cache sizes
// and the canonical spec does not mention it.
func TestDSGCacheSizeIsNotIdentity(t *testing.T) {
	xs, ys := stream(Classification, 600, 5, 21)
	a, err := New("dsg:sigma=1,max_features=128,block=32,cache_mb=64", 5)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		a.Learn(xs[i], ys[i])
	}
	st, _ := a.MarshalBinary()
	b, err := New("dsg:sigma=1,max_features=128,block=32,cache_mb=0", 5)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.Info().Spec, "cache_mb") {
		t.Fatalf("canonical spec mentions cache_mb: %s", b.Info().Spec)
	}
	if err := b.UnmarshalBinary(st); err != nil {
		t.Fatalf("restore across cache sizes: %v", err)
	}
	for i := 300; i < 600; i++ {
		if fa, fb := a.Learn(xs[i], ys[i]), b.Learn(xs[i], ys[i]); math.Float64bits(fa) != math.Float64bits(fb) {
			t.Fatalf("event %d: %v vs %v", i, fa, fb)
		}
	}
}
