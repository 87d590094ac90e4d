package share

import (
	"bytes"
	"errors"
	"io"
	"math"
	"testing"

	"okstream/learner"
)

var (
	secretA = []byte("0123456789abcdef0123456789abcdef-a")
	secretB = []byte("0123456789abcdef0123456789abcdef-b")
)

// A MAC verifies under its secret (and under a rotation that keeps it),
// never under another, nor for another key, value or record kind; a short
// secret is refused; the streamed verifier agrees with the whole one.
func TestAuth(t *testing.T) {
	if _, err := NewAuth([]byte("short")); !errors.Is(err, ErrSecretTooShort) {
		t.Fatalf("short secret: %v", err)
	}
	if a, err := NewAuth(nil); err != nil || a.Enabled() {
		t.Fatalf("no secret: %v %v", a, err)
	}
	a, _ := NewAuth(secretA)
	b, _ := NewAuth(secretB)
	rotated, _ := NewAuth(secretB, secretA)
	key, val := []byte("g/in/0/d/3"), []byte("value bytes")
	mac := a.SyncMAC(nil, key, val)
	if len(mac) != MACLen || !bytes.Equal(mac, a.SyncMAC(nil, key, val)) {
		t.Fatalf("MAC %q not deterministic or of length %d", mac, MACLen)
	}
	switch {
	case !a.VerifySync(mac, key, val):
		t.Fatal("own MAC refused")
	case b.VerifySync(mac, key, val):
		t.Fatal("verified under another secret")
	case !rotated.VerifySync(mac, key, val):
		t.Fatal("refused under a rotation keeping the secret")
	case a.VerifySync(mac, []byte("g/in/0/d/4"), val), a.VerifySync(mac, key, []byte("value byteS")):
		t.Fatal("verified for another key or value")
	case a.VerifySync(mac, append(key, val[0]), val[1:]): // the boundary between key and value counts
		t.Fatal("verified with the key/value boundary moved")
	case a.VerifyOutput(mac, []byte("g"), 0, 'p', nil, val):
		t.Fatal("a sync MAC verified as an output MAC")
	}
	w, ok := a.SyncVerifier(key, len(val))
	io.Copy(w, bytes.NewReader(val))
	if !ok(mac) {
		t.Fatal("streamed verification refused")
	}
	om := a.OutputMAC(nil, []byte("g"), 7, 'd', []byte("in/0/9"))
	if !a.VerifyOutput(om, []byte("g"), 7, 'd', []byte("in/0/9"), []byte("ignored")) || a.VerifyOutput(om, []byte("g"), 8, 'd', []byte("in/0/9"), nil) ||
		a.VerifyOutput(om, []byte("h"), 7, 'd', []byte("in/0/9"), nil) || a.VerifyOutput(om, []byte("g"), 7, 'p', nil, []byte("in/0/9")) {
		t.Fatal("output MAC")
	}
}

// validationLimits are the limits of a pipeline of 3 partitions sharing
// one FOGD model, S = 16, L = 1.
func validationLimits(t testing.TB) (Limits, []byte) {
	l, err := learner.New("fogd:sigma=1,budget=4", 2)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := l.(learner.Sharer).ShareDelta()
	return Limits{Partitions: 3, Every: 16, Lag: 1, Models: []string{"m"},
		Check: func(_ int, d []byte) error { return l.(learner.DeltaChecker).CheckDelta(d) }}, good
}

// Validate's rules, each with its reason.
func TestValidate(t *testing.T) {
	lim, good := validationLimits(t)
	delta := func(q int, e, off int64) Record {
		return Record{Kind: KindDelta, Partition: q, Epoch: e, Partitions: 3, Offset: off, Deltas: []ModelDelta{{Model: "m", Data: good}}}
	}
	dec := func(e int64, f ...int64) Record {
		return Record{Kind: KindDecision, Partition: 1, Epoch: e, Partitions: 3, Offset: (e + 1) * 16, Frontier: f}
	}
	for _, c := range []struct {
		r      Record
		reason string
	}{
		{delta(0, 0, 16), ""},
		{delta(2, 4, 80), ""},
		{delta(3, 0, 16), ReasonPartitionRange},
		{func() Record { r := delta(0, 0, 16); r.Partitions = 4; return r }(), ReasonPartitionRange},
		{delta(0, 4, 79), ReasonEpochRange},
		{delta(0, math.MaxInt64/2, math.MaxInt64), ReasonEpochRange},
		{func() Record { r := delta(0, 0, 16); r.Deltas[0].Model = "x"; return r }(), ReasonDeltaInvalid},
		{func() Record { r := delta(0, 0, 16); r.Deltas = nil; return r }(), ReasonDeltaInvalid},
		{func() Record {
			r := delta(0, 0, 16)
			r.Deltas = []ModelDelta{{Model: "m", Data: good[:len(good)-1]}}
			return r
		}(), ReasonDeltaInvalid},
		{dec(5, 4, -1, 0), ""},
		{dec(5, 5, -1, 0), ReasonFrontierRange},
		{dec(5, 4, -2, 0), ReasonFrontierRange},
		{dec(2, 2+1e6, 0, 0), ReasonFrontierRange},
		{dec(0, -1, -1, -1), ""},
		{dec(0, 0, -1, -1), ReasonFrontierRange},
	} {
		err := c.r.Validate(lim)
		var inv *Invalid
		switch {
		case c.reason == "" && err != nil:
			t.Errorf("%+v: refused: %v", c.r, err)
		case c.reason != "" && (!errors.As(err, &inv) || inv.Reason != c.reason):
			t.Errorf("%+v: %v, want reason %s", c.r, err, c.reason)
		}
	}
}

// FuzzSyncRecord feeds arbitrary bytes to the sync record's decoder and
// validation (what the tailer runs on every record it reads): neither
// panics; a record that decodes encodes back to the same bytes; one that
// validates names a partition the input has, for its partition count, an
// epoch its offset covers, a frontier within the lag and exactly the
// configured models with deltas their learner accepts.
func FuzzSyncRecord(f *testing.F) {
	lim, good := validationLimits(f)
	for _, r := range []Record{
		{Kind: KindDelta, Partition: 1, Epoch: 3, Partitions: 3, Offset: 64, Deltas: []ModelDelta{{Model: "m", Data: good}}},
		{Kind: KindDecision, Partition: 2, Epoch: 5, Partitions: 3, Offset: 96, Frontier: []int64{4, -1, 3}},
		{Kind: KindDecision, Partition: 0, Epoch: 2, Partitions: 3, Offset: 48, Frontier: []int64{2 + 1e6, 0, 0}},
		{Kind: KindDelta, Partition: 7, Epoch: 0, Partitions: 8, Offset: 16, Deltas: []ModelDelta{{Model: "m", Data: good[:len(good)-3]}}},
	} {
		f.Add(r.Encode())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			return
		}
		if !bytes.Equal(r.Encode(), b) {
			t.Fatal("decode then encode changed the bytes")
		}
		if err := r.Validate(lim); err != nil {
			var inv *Invalid
			if !errors.As(err, &inv) {
				t.Fatalf("error without a reason: %v", err)
			}
			return
		}
		if r.Partition >= lim.Partitions || r.Partitions != lim.Partitions || (r.Epoch+1)*lim.Every > r.Offset {
			t.Fatalf("accepted %+v", r)
		}
		for _, v := range r.Frontier {
			if v < -1 || v > max(r.Epoch-lim.Lag, -1) {
				t.Fatalf("accepted frontier %v at epoch %d", r.Frontier, r.Epoch)
			}
		}
		if r.Kind == KindDelta && (len(r.Deltas) != 1 || lim.Check(0, r.Deltas[0].Data) != nil) {
			t.Fatalf("accepted deltas %+v", r.Deltas)
		}
	})
}

// The cost of signing: a sync record of a FOGD B = 100 delta (≈ 0.9 KB)
// and an output record's claim (a prediction of ≈ 150 bytes).
func BenchmarkSyncMAC(b *testing.B) {
	a, _ := NewAuth(secretA)
	key, val := []byte("okstream/events/3/d/17"), bytes.Repeat([]byte{7}, 900)
	buf := make([]byte, 0, MACLen)
	b.SetBytes(int64(len(val)))
	for b.Loop() {
		buf = a.SyncMAC(buf[:0], key, val)
	}
}

func BenchmarkOutputMAC(b *testing.B) {
	a, _ := NewAuth(secretA)
	val := bytes.Repeat([]byte{7}, 150)
	buf := make([]byte, 0, MACLen)
	for b.Loop() {
		buf = a.OutputMAC(buf[:0], []byte("okstream"), 123456, 'p', val)
	}
}

func BenchmarkVerifyOutput(b *testing.B) {
	a, _ := NewAuth(secretA)
	val := bytes.Repeat([]byte{7}, 150)
	mac := a.OutputMAC(nil, []byte("okstream"), 123456, 'p', val)
	for b.Loop() {
		if !a.VerifyOutput(mac, []byte("okstream"), 123456, 'p', nil, val) {
			b.Fatal("refused")
		}
	}
}
