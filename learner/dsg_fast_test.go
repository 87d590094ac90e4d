package learner

import (
	"encoding/hex"
	"fmt"
	"math"
	"testing"

	"okstream/learner/rng"
	"okstream/learner/state"
)

// dsgFastStream is a sparse stream with indicator, signed and real
// coordinates (the shortcuts of the block projection all taken).
func dsgFastStream(n, d int, seed uint64) ([][]float64, []float64) {
	src := rng.New(seed)
	xs := make([][]float64, n)
	ys := make([]float64, n)
	for i := range xs {
		x := make([]float64, d)
		var s float64
		for j := range x {
			switch u := src.Float64(); {
			case u < 0.2:
				x[j] = 1
			case u < 0.3:
				x[j] = -1
			case u < 0.45:
				x[j] = src.Normal()
			}
			s += x[j] * float64(j%3-1)
		}
		xs[i] = x
		ys[i] = math.Copysign(1, s+0.3*src.Normal())
	}
	return xs, ys
}

// TestDSGThreadsAndBatchesBitIdentical: any thread count, and LearnBatch
// with any grouping of the events, give the scores and the final state of
// one-thread Learn bit for bit — before and after the cap, for both
// updates (all: the defaults of hinge and logistic; new: Algorithm 1) and
// both after_cap policies, cos and cossin features, the averaged model, a
// partial frequency cache and none; Predict too. More features than one
// chunk (dsgChunk) so that the threads split the work.
func TestDSGThreadsAndBatchesBitIdentical(t *testing.T) {
	const d, n = 9, 700
	xs, ys := dsgFastStream(n, d, 7)
	for _, spec := range []string{
		"dsg:sigma=2,batch=8,block=96,max_features=1500",
		"dsg:sigma=2,batch=5,block=100,max_features=1300,after_cap=revisit,predict_with=average",
		"dsg:sigma=2,batch=8,block=64,max_features=1100,features=cossin,loss=square,cache_mb=0.03",
		"dsg:kernel=laplacian,sigma=2,batch=7,block=128,max_features=1200,loss=logistic,cache_mb=0",
		"dsg:sigma=2,batch=8,block=96,max_features=1500,update=new",
		"dsg:sigma=2,batch=6,block=200,max_features=1000,update=all,features=cos,predict_with=average",
	} {
		ref := dsgOf(t, spec, d)
		want := make([]float64, n)
		wantP := make([]float64, n)
		for i := range xs {
			wantP[i] = ref.Predict(xs[i])
			want[i] = ref.Learn(xs[i], ys[i])
		}
		wantState, _ := ref.MarshalBinary()
		for _, threads := range []int{1, 2, 3} {
			for _, grouping := range []string{"learn", "batch1", "batch13", "batch64", "random"} {
				name := fmt.Sprintf("%s,threads=%d %s", spec, threads, grouping)
				l := dsgOf(t, fmt.Sprintf("%s,threads=%d", spec, threads), d)
				got := make([]float64, n)
				src := rng.New(uint64(threads))
				for i := 0; i < n; {
					k := 1
					switch grouping {
					case "batch13":
						k = 13
					case "batch64":
						k = 64
					case "random":
						k = 1 + src.IntN(40)
					}
					k = min(k, n-i)
					if grouping == "learn" {
						if p := l.Predict(xs[i]); math.Float64bits(p) != math.Float64bits(wantP[i]) {
							t.Fatalf("%s: Predict %d: %v, want %v", name, i, p, wantP[i])
						}
						got[i] = l.Learn(xs[i], ys[i])
					} else {
						l.LearnBatch(xs[i:i+k], ys[i:i+k], got[i:i+k])
					}
					i += k
				}
				for i := range got {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("%s: event %d scores %v, want %v", name, i, got[i], want[i])
					}
				}
				state, _ := l.MarshalBinary()
				if string(state) != string(wantState) {
					t.Fatalf("%s: final state differs", name)
				}
			}
		}
	}
}

// TestDSGLearnBatchRestore: a state marshalled between LearnBatch calls
// (mid mini-batch) restores into a learner with another thread count and
// continues bit for bit.
func TestDSGLearnBatchRestore(t *testing.T) {
	const d, n = 6, 400
	xs, ys := dsgFastStream(n, d, 3)
	spec := "dsg:sigma=1.5,batch=16,block=80,max_features=900"
	a := dsgOf(t, spec, d)
	sa := make([]float64, n)
	a.LearnBatch(xs[:150], ys[:150], sa[:150])
	st, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b := dsgOf(t, spec+",threads=2", d)
	if err := b.UnmarshalBinary(st); err != nil {
		t.Fatal(err)
	}
	sb := make([]float64, n)
	a.LearnBatch(xs[150:], ys[150:], sa[150:])
	b.LearnBatch(xs[150:], ys[150:], sb[150:])
	for i := 150; i < n; i++ {
		if math.Float64bits(sa[i]) != math.Float64bits(sb[i]) {
			t.Fatalf("event %d: restored %v, original %v", i, sb[i], sa[i])
		}
	}
}

// TestDSGLearnBatchNoAlloc: LearnBatch allocates nothing in steady state
// (one thread; the goroutines of threads > 1 are the runtime's).
func TestDSGLearnBatchNoAlloc(t *testing.T) {
	const d = 7
	xs, ys := dsgFastStream(256, d, 5)
	l := dsgOf(t, "dsg:sigma=2,batch=16,block=64,max_features=640,after_cap=revisit", d)
	scores := make([]float64, len(xs))
	l.LearnBatch(xs, ys, scores)
	l.LearnBatch(xs, ys, scores)
	if a := testing.AllocsPerRun(5, func() { l.LearnBatch(xs, ys, scores) }); a != 0 {
		t.Fatalf("%v allocations per LearnBatch", a)
	}
}

// TestDSGRestoresOldCheckpoints: states written by DSG before issue 42
// (main at 3c84c50: the same state format; the canonical spec carries every
// parameter, so they name the old defaults gamma0=1, t0=100, features=cos
// explicitly) restore into a learner built from the state's own spec, and
// it continues as the old code did: to the last bits of the sums only (the
// score's summation order changed to per-chunk sums with four
// accumulators).
func TestDSGRestoresOldCheckpoints(t *testing.T) {
	cases := []struct {
		state  string
		scores []float64
	}{
		{
			"4f534b4c010003000000647367aa0000006473673a61667465725f6361703d726566696e652c62617463683d342c626c" +
				"6f636b3d382c66656174757265733d636f732c67616d6d61303d312c67616d6d615f6d696e3d302c6b617070613d312c" +
				"6b65726e656c3d676175737369616e2c6c6f73733d68696e67652c6d61785f66656174757265733d32342c6e753d3165" +
				"2d30352c707265646963745f776974683d6c6173742c736565643d332c7369676d613d312c74303d3130300300000000" +
				"0000002a000000000000000a0000000000000002000000000000001800000000000000b4c2242c37ffef3f1800000042" +
				"5f1c6afbfaa7bf719111c8252da03f044c0adeb9e5b93fbec9de903b75a8bffa9f0a67bd15a53fe189aa3e10f3a03f06" +
				"973e075d20a73fc30f822404a5a5bf1ac9db3d762db6bf019fb74f3fbfc03f79977a686acbc6bf092c1330cc4188bfd2" +
				"e8bd90d304c03fcec3cbfea437aabf5a0262078db3a6bf82c0b7de66a8c1bff91918a0d375b3bf11b9255299ed88bf9c" +
				"3ee1ccf58c6dbfb1a2f904dce7afbf9e399baa2e11933fbc41e150fc75b23f9eed85d64e6982bfb4aeb104cd907b3f00" +
				"000000000000000000000018000000000000001800000008fceccce704b4bf75df54c25304e13f667c7ed02fb4f33f50" +
				"de990bd7f2bfbfed31b00c4cd2d03f82bd4c904c51f63fa8f91b80dad1f43f9e69fdb403a3edbf7472880bf586d03ff0" +
				"7a8a628421f43f971a78ed6b82bbbf3d8f2c9b6663d2bf8a2e574546b2f33f7f10c3c9d83aeebf809f1f4fefa3ca3f5e" +
				"1f466787ffe6bf8d95a13bcb79debf90a17aab0324eebf6013246c279ef6bfa466459ad754d83fe786f0019e1ddc3fde" +
				"ab13ce776cf5bf55a9294e25e5f4bf821e44adf6a0de3f9d5bc60a8a19370557163cf7355058ac",
			[]float64{0.7284567353676913, 0.8693313401257894, 0.7018330689027922, 1.1076498070840706, 0.3903488776886768, 1.0413778856673506, 1.0812642347228132, 0.6647474570324882},
		},
		{
			"4f534b4c010003000000647367b10000006473673a61667465725f6361703d726576697369742c62617463683d342c62" +
				"6c6f636b3d382c66656174757265733d636f7373696e2c67616d6d61303d312c67616d6d615f6d696e3d302c6b617070" +
				"613d312c6b65726e656c3d676175737369616e2c6c6f73733d68696e67652c6d61785f66656174757265733d32342c6e" +
				"753d31652d30352c707265646963745f776974683d617665726167652c736565643d332c7369676d613d312c74303d31" +
				"303003000000000000002a000000000000000a0000000000000002000000000000001800000000000000b4c2242c37ff" +
				"ef3f300000003c57741d9cb3af3fc40958a5e5c4a13f073f7edcbb40a03f13dd1dae8159b1bf4e1cc188d8d1bb3f54a3" +
				"f1602725ac3fccb9d49c7e18ad3f079a966edbfeacbfc0f3ccad36d6723f19baf8ec9a3d793f06f3b5d66e5a9b3fd06a" +
				"430aa28ba63f4677b8991bcdbb3fb23f53ea0144973f06cda9b29353b5bfefbd2e607617bcbf8617eeb10526b03f7561" +
				"764ff0418a3fed1cec25ce67a93f2bb454300dada6bf26628180cb69c03fddbe388eabc99fbffdd14bc9ebb5a73f4aa1" +
				"ba11af26ac3f9477d6535195a23fc5aeb37bfd22a8bf74436eafc7e66b3f063ae97fa2f5b5bf3cba985976f4b43f338a" +
				"10f1c0e3933fad5d7aef035eae3fdafe68441471863fe8af5dbbea0c6ebfa8e7479c3adab03f6e218d64b9b1ac3f1865" +
				"a16fd4cba2bf4d4dad626ade953f48d389b57e90bb3fe88de516c04d8a3f843b1b450f41b1bfecc10f7c871ba83fb061" +
				"49cebf05a2bfc0fe52a3a05ca33fe4cd368fb350bbbff41a64e3ef4aa93fd0b6769c0ee8a13f00843d2bd340aa3f9b19" +
				"b0e1cde9753f30000000e7ce1383db0f9b3f14f8291d6b5f8f3f6e38672ce1537f3fb9ae0505d091afbfb0088c83f5f3" +
				"ac3f4fed03a7e79ead3fdb680341eb8f943f4e0b3240196da2bfa920501b8617763f79e6c57ef6f3853f1c34f9489b4b" +
				"863f62627a1289fa8c3f8296a1b287b0ab3f635f3a3a0f1a933f1c3228442945a8bf24c9a70c4f2bbbbfb71529da067f" +
				"a93f1f0e21273c997d3fd7388c07221da63f12d39dbedefa9ebf6c43f2233b7db93f9eb0271618c694bf08166dcbb180" +
				"9d3f716b0d4bce3ea63f40eb35fb5c24a23f74c7f48aae3a95bff736c5d3a209303f0fab5e07ec91a2bf1c7687454315" +
				"b23f4b90acf39114963f5684940081c7a93f14416979b53a733f1b1b01cf624091bf971b8a220e4fa23fa2caefd8ba33" +
				"773fce31af1660a18ebf265d5a0d532983bf5dda5919b1aba73feb332a6fe5e090bf743bd94f9492a0bf3876ade9262a" +
				"443f2658de7869748cbfc69464b6840c5e3f3b5ead492c2eaabf54419ac1ad7ba53f96348855e94482bfb90d35257be9" +
				"643ffacfd64b7859673f100000000000000018000000000000001000000067c884cc91feef3feb2feb26b322933f2d07" +
				"97565ef5ee3ff21f60850832d03f8e25001f3149ed3fa69e066853cbd9bfa70d19b64f7bd1bfc172059177c8ee3f56ce" +
				"38d4905cef3faceff184c070c9bf688ed7231edcc53f2352e224a787ef3fa30c0ab36071ec3f054cd4da6f53dd3fdf0f" +
				"b8f4aca7ee3f7ca04e4b265cd23f007dc977a6ff01837fc49a3a7d2c09a7",
			[]float64{0.0963587168037296, 0.23463697854095633, 0.4961747349561654, 0.6834689772459922, 0.6074414405718725, 0.5979608905648216, 0.25581907540942367, 0.16520004805732538},
		},
	}
	for _, c := range cases {
		st, err := hex.DecodeString(c.state)
		if err != nil {
			t.Fatal(err)
		}
		_, spec, dim, err := state.PeekHeader(st)
		if err != nil {
			t.Fatal(err)
		}
		l, err := New(spec, dim)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if err := l.UnmarshalBinary(st); err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		for i := 42; i < 50; i++ {
			x := []float64{math.Sin(float64(i)), 0, math.Cos(float64(3 * i))}
			if i%3 == 0 {
				x[1] = 1
			}
			y := 1.0
			if (i*7)%5 < 2 {
				y = -1
			}
			got, want := l.Learn(x, y), c.scores[i-42]
			if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Fatalf("%s: event %d scores %v, the old code %v", spec, i, got, want)
			}
		}
	}
}
