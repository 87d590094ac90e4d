package producer

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"okstream/codec"
	"okstream/dataset"
)

func mustPlan(t *testing.T, ds *dataset.Dataset, cfg Config) *Plan {
	t.Helper()
	p, err := NewPlan(ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlanLen(t *testing.T) {
	ds := synth(10, 3)
	for _, c := range []struct {
		loop  bool
		limit int64
		want  int64
	}{
		{false, 0, 10}, {false, 4, 4}, {false, 25, 10}, {true, 0, -1}, {true, 25, 25},
	} {
		p := mustPlan(t, ds, Config{Loop: c.loop, Limit: c.limit})
		if got := p.Len(); got != c.want {
			t.Errorf("Loop=%v Limit=%d: Len = %d, want %d", c.loop, c.limit, got, c.want)
		}
	}
}

func TestPlanOrder(t *testing.T) {
	const n = 50
	ds := synth(n, 4)
	p := mustPlan(t, ds, Config{Loop: true})
	for i := int64(0); i < 3*n; i++ {
		pass, row := p.Row(i)
		if pass != int(i/n) || row != int(i%n) {
			t.Fatalf("file order: event %d is (%d, %d)", i, pass, row)
		}
	}
	p = mustPlan(t, ds, Config{Loop: true, Permute: true, Seed: 7})
	for pass := range 3 {
		want := dataset.Permutation(n, 7, pass)
		got := make([]int, n)
		for k := range n {
			ps, row := p.Row(int64(pass*n + k))
			if ps != pass {
				t.Fatalf("event %d: pass %d, want %d", pass*n+k, ps, pass)
			}
			got[k] = row
		}
		if !slices.Equal(got, want) {
			t.Fatalf("pass %d is not dataset.Permutation(n, seed, %d)", pass, pass)
		}
	}
	a, b := dataset.Permutation(n, 7, 0), dataset.Permutation(n, 7, 1)
	if slices.Equal(a, b) {
		t.Fatal("passes 0 and 1 have the same permutation")
	}
	// Random access in any order gives the same rows.
	for _, i := range []int64{170, 3, 99, 120, 3} {
		pass, row := p.Row(i)
		if want := dataset.Permutation(n, 7, int(i/n))[i%n]; row != want || pass != int(i/n) {
			t.Fatalf("Row(%d) = (%d, %d), want row %d", i, pass, row, want)
		}
	}
}

func TestPlanIDsAndKeys(t *testing.T) {
	const n = 30
	ds := synth(n, 3)
	rowKeys := make([]string, n)
	for i := range rowKeys {
		rowKeys[i] = "user-" + strconv.Itoa(i%7)
	}
	for _, mode := range []KeyMode{KeyRow, KeyColumn, KeyRandom} {
		cfg := Config{Loop: true, Limit: 3 * n, Permute: true, Seed: 3, Keys: mode, RowKeys: rowKeys, KeySpace: 5, IDPrefix: "s:"}
		p := mustPlan(t, ds, cfg)
		ids := map[string]bool{}
		keys := map[string]bool{}
		for i := range p.Len() {
			id := p.ID(i)
			if ids[id] {
				t.Fatalf("%s: duplicate id %q", mode, id)
			}
			ids[id] = true
			pass, row := parseID(t, id, "s:")
			if wp, wr := p.Row(i); wp != pass || wr != row {
				t.Fatalf("%s: id %q for event (%d, %d)", mode, id, wp, wr)
			}
			key := p.Key(i)
			keys[key] = true
			switch mode {
			case KeyRow:
				if key != strconv.Itoa(row) {
					t.Fatalf("row key %q for row %d", key, row)
				}
			case KeyColumn:
				if key != rowKeys[row] {
					t.Fatalf("column key %q for row %d, want %q", key, row, rowKeys[row])
				}
			case KeyRandom:
				j, err := strconv.Atoi(strings.TrimPrefix(key, "k-"))
				if err != nil || !strings.HasPrefix(key, "k-") || j < 0 || j >= 5 {
					t.Fatalf("random key %q outside k-0..k-4", key)
				}
			}
		}
		if mode == KeyRandom && len(keys) != 5 {
			t.Errorf("random keys: %d distinct of 5 in %d events", len(keys), p.Len())
		}
		// Deterministic: a second plan agrees; another seed differs for random keys.
		q := mustPlan(t, ds, cfg)
		cfg.Seed = 4
		r := mustPlan(t, ds, cfg)
		differ := false
		for i := range p.Len() {
			if p.Key(i) != q.Key(i) || p.ID(i) != q.ID(i) {
				t.Fatalf("%s: event %d differs between equal plans", mode, i)
			}
			differ = differ || p.Key(i) != r.Key(i)
		}
		if !differ {
			t.Errorf("%s: seeds 3 and 4 give the same keys", mode)
		}
	}
}

func TestPlanEventsDenseSparse(t *testing.T) {
	const n, dim = 40, 9
	ds := synth(n, dim)
	now := time.UnixMilli(1_700_000_000_123)
	for _, sparse := range []bool{false, true} {
		p := mustPlan(t, ds, Config{Sparse: sparse})
		for i := range p.Len() {
			_, row := p.Row(i)
			msg, err := p.Message(i, now)
			if err != nil {
				t.Fatal(err)
			}
			ev := decode(t, msg.Value, dim)
			if sparse != (ev.X == nil) {
				t.Fatalf("sparse=%v but event has X=%v", sparse, ev.X != nil)
			}
			if got := ev.Dense(nil, dim); !sameBits(got, ds.X[row]) {
				t.Fatalf("sparse=%v row %d: features %v, want %v", sparse, row, got, ds.X[row])
			}
			if !ev.HasY || ev.Y != ds.Y[row] || !ev.HasTS || ev.TS != now.UnixMilli() || !msg.Time.Equal(now) {
				t.Fatalf("row %d: y=%v/%v ts=%v/%v", row, ev.HasY, ev.Y, ev.HasTS, ev.TS)
			}
			if string(msg.Key) != ev.Key || ev.Key != strconv.Itoa(row) || ev.Version != 1 {
				t.Fatalf("row %d: record key %q, event key %q", row, msg.Key, ev.Key)
			}
			if sparse {
				for k, v := range ev.XV {
					if math.Float64bits(v) == 0 && !(row == 0 && k == 0) {
						t.Fatalf("row %d: sparse event carries a +0 at index %d", row, ev.XI[k])
					}
				}
			}
			// Event and Message agree.
			e2 := p.Event(i, now)
			b, err := codec.AppendEvent(nil, &e2)
			if err != nil || string(b) != string(msg.Value) {
				t.Fatalf("row %d: Event and Message disagree (%v)", row, err)
			}
		}
	}
	// The all-zero row is one explicit zero; -0.0 is kept.
	p := mustPlan(t, ds, Config{Sparse: true})
	if ev := p.Event(0, now); !slices.Equal(ev.XI, []uint32{0}) || ev.XV[0] != 0 {
		t.Fatalf("all-zero row: xi=%v xv=%v", ev.XI, ev.XV)
	}
	if ev := p.Event(1, now); ev.XI[0] != 0 || !math.Signbit(ev.XV[0]) {
		t.Fatalf("row with -0.0: xi=%v xv=%v", ev.XI, ev.XV)
	}
}

func TestPlanLabelsAndTimes(t *testing.T) {
	const n = 1000
	ds := synth(n, 2)
	p := mustPlan(t, ds, Config{Unlabelled: 1, Time: TimeNone})
	for i := range p.Len() {
		ev := p.Event(i, time.Time{})
		if ev.HasY || ev.HasTS {
			t.Fatalf("event %d: HasY=%v HasTS=%v, want neither", i, ev.HasY, ev.HasTS)
		}
	}
	cfg := Config{Unlabelled: 0.3, Seed: 5, Loop: true, Limit: 3 * n, Time: TimeSynthetic, TimeStart: 1_600_000_000_000, TimeStep: 10}
	p = mustPlan(t, ds, cfg)
	q := mustPlan(t, ds, cfg)
	unl := 0
	for i := range p.Len() {
		ev := p.Event(i, time.Time{})
		if ev.HasY != q.Labelled(i) {
			t.Fatal("label draws are not deterministic")
		}
		if !ev.HasY {
			unl++
		}
		if ev.TS != cfg.TimeStart+10*i {
			t.Fatalf("event %d: ts %d", i, ev.TS)
		}
	}
	// 3000 draws with p = 0.3: the count is within 6 standard deviations.
	if frac := float64(unl) / 3000; math.Abs(frac-0.3) > 0.05 {
		t.Errorf("unlabelled fraction %.3f, want about 0.3", frac)
	}
	times := make([]int64, n)
	for i := range times {
		times[i] = int64(1000 * i)
	}
	p = mustPlan(t, ds, Config{Time: TimeColumn, RowTimes: times, Permute: true, Seed: 2})
	for i := range p.Len() {
		_, row := p.Row(i)
		msg, _ := p.Message(i, time.Time{})
		if ev := p.Event(i, time.Time{}); ev.TS != times[row] || msg.Time.UnixMilli() != times[row] {
			t.Fatalf("row %d: ts %d, record time %v, want %d", row, ev.TS, msg.Time, times[row])
		}
	}
}

func TestConfigErrors(t *testing.T) {
	ds := synth(5, 2)
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Unlabelled: 1.5}, "Unlabelled"},
		{Config{Rate: -1}, "Rate"},
		{Config{Limit: -2}, "Limit"},
		{Config{Keys: KeyColumn, RowKeys: []string{"a"}}, "one key per row"},
		{Config{Keys: KeyColumn, RowKeys: []string{"a", "b", "", "d", "e"}}, "row 2 is empty"},
		{Config{Time: TimeColumn}, "one timestamp per row"},
		{Config{Time: TimeSynthetic}, "TimeStart"},
		{Config{Keys: KeyMode(9)}, "KeyMode"},
	} {
		_, err := NewPlan(ds, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one mentioning %q", c.cfg, err, c.want)
		}
	}
	if _, err := NewPlan(&dataset.Dataset{Name: "empty"}, Config{}); err == nil {
		t.Error("empty dataset accepted")
	}
	if _, err := NewPlan(&dataset.Dataset{Name: "nofeat", X: [][]float64{{}}, Y: []float64{1}}, Config{}); err == nil {
		t.Error("dataset without features accepted")
	}
	for _, s := range []string{"row", "column", "random"} {
		m, err := ParseKeyMode(s)
		if err != nil || m.String() != s {
			t.Errorf("ParseKeyMode(%q) = %v, %v", s, m, err)
		}
	}
	if _, err := ParseKeyMode("bogus"); err == nil || !strings.Contains(err.Error(), "row, column or random") {
		t.Errorf("ParseKeyMode(bogus): %v", err)
	}
}

// TestPartitionJavaCompatible checks Partition against partitions the Java
// client's default partitioner (murmur2) gives for 1000 partitions, as
// listed in kafka-python's partitioner tests.
func TestPartitionJavaCompatible(t *testing.T) {
	for key, want := range map[string]int{"": 681, "a": 524, "ab": 434, "abc": 107, "123456789": 566} {
		if got := Partition(key, 1000); got != want {
			t.Errorf("Partition(%q, 1000) = %d, want %d", key, got, want)
		}
	}
}

func TestPartitionSpread(t *testing.T) {
	counts := make([]int, 3)
	for i := range 3000 {
		p := Partition(strconv.Itoa(i), 3)
		if p != Partition(strconv.Itoa(i), 3) {
			t.Fatal("Partition is not deterministic")
		}
		counts[p]++
	}
	for p, c := range counts {
		if c < 800 {
			t.Errorf("partition %d got %d of 3000 keys", p, c)
		}
	}
}

// A named dataset is replayed as named events: version 3, the row's fields
// as read, no x; the runtime's decoder reads them back equal.
func TestPlanNamedEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "n.csv")
	if err := os.WriteFile(path, []byte("amount,country,y\n1.5,FR,1\n,DE,-1\n2,,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Load(path, dataset.Options{Label: "y"})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Named == nil {
		t.Fatal("not read as named")
	}
	p, err := NewPlan(ds, Config{Topic: "t"})
	if err != nil {
		t.Fatal(err)
	}
	dec := codec.NewDecoder(codec.Limits{})
	for i := int64(0); i < 3; i++ {
		m, err := p.Message(i, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		var ev codec.Event
		if err := dec.DecodeEvent(m.Value, &ev); err != nil {
			t.Fatal(err)
		}
		_, row := p.Row(i)
		if !ev.Named() || ev.X != nil || !reflect.DeepEqual(ev.F, ds.Named.Records[row]) || ev.Y != ds.Y[row] {
			t.Fatalf("event %d: %+v, want the fields %+v of row %d", i, ev, ds.Named.Records[row], row)
		}
	}
}
