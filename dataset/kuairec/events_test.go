package kuairec

import (
	"testing"
)

// TestReplayOrder: the sample's small matrix in replay order is sorted by
// (timestamp, user_id, video_id), excludes exactly the untimed rows, and
// has unique ids.
func TestReplayOrder(t *testing.T) {
	dir, sum := sampleDir(t)
	d, _ := Locate(dir)
	ev, st, err := LoadEvents(d.Path(SmallMatrixFile), OrderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if int64(st.Rows) != sum.SmallRows || int64(st.Untimed) != sum.SmallUntimed || st.Events != len(ev) ||
		int64(len(ev)) != sum.SmallRows-sum.SmallUntimed || int64(st.Positive) != sum.SmallPositive {
		t.Fatalf("stats %+v, generator %+v", st, sum)
	}
	t.Log(st)
	ids := map[string]bool{}
	for i := range ev {
		e := &ev[i]
		if i > 0 && Compare(&ev[i-1], e) >= 0 {
			t.Fatalf("events %d and %d out of order: %+v, %+v", i-1, i, ev[i-1], *e)
		}
		if i > 0 && e.TS < ev[i-1].TS {
			t.Fatalf("timestamps not monotone at %d", i)
		}
		if ids[e.ID()] || e.Dup != 0 {
			t.Fatalf("repeated id %s in the small matrix", e.ID())
		}
		ids[e.ID()] = true
		if int(e.Day) != DayOf(e.TS) {
			t.Fatalf("event %d: day %d", i, e.Day)
		}
	}
	if st.First != ev[0].TS || st.Last != ev[len(ev)-1].TS {
		t.Fatal("first/last")
	}
}

// TestReplayOrderBig: the big matrix's exact duplicates get distinct ids
// ("#1"), and Dedup drops them.
func TestReplayOrderBig(t *testing.T) {
	dir, sum := sampleDir(t)
	d, _ := Locate(dir)
	ev, st, err := LoadEvents(d.Path(BigMatrixFile), OrderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	dups := 0
	for i := range ev {
		id := ev[i].ID()
		if ids[id] {
			t.Fatalf("repeated id %s", id)
		}
		ids[id] = true
		if ev[i].Dup > 0 {
			dups++
		}
	}
	if int64(dups) != sum.BigDuplicates || st.Untimed != 0 {
		t.Fatalf("%d repeated pairs, generator made %d duplicates; %d untimed", dups, sum.BigDuplicates, st.Untimed)
	}
	dd, dst, err := LoadEvents(d.Path(BigMatrixFile), OrderOptions{Dedup: true})
	if err != nil {
		t.Fatal(err)
	}
	if int64(dst.Duplicates) != sum.BigDuplicates || len(dd) != len(ev)-dups {
		t.Fatalf("dedup dropped %d of %d", dst.Duplicates, sum.BigDuplicates)
	}
}

func TestLabel(t *testing.T) {
	for _, c := range []struct{ wr, th, want float64 }{{0.75, 0.75, -1}, {0.7500001, 0.75, 1}, {0, 0.75, -1}, {3, 2, 1}, {2, 2, -1}} {
		if got := Label(c.wr, c.th); got != c.want {
			t.Errorf("Label(%v, %v) = %v", c.wr, c.th, got)
		}
	}
	e := Event{User: 7, Video: 9, Dup: 2}
	if e.ID() != "7-9#2" || e.Key() != "7" {
		t.Errorf("id %q key %q", e.ID(), e.Key())
	}
}

func TestParseDataArg(t *testing.T) {
	dir, o, ok, err := ParseDataArg("kuairec:/data/KuaiRec 2.0")
	if !ok || err != nil || dir != "/data/KuaiRec 2.0" || o != (Options{}) {
		t.Fatalf("%q %+v %v %v", dir, o, ok, err)
	}
	dir, o, ok, err = ParseDataArg("kuairec,matrix=big,threshold=2,profile=compact,same-day,dedup,limit=100:x:y")
	want := Options{Matrix: "big", Threshold: 2, Features: FeatureOptions{Profile: ProfileCompact, SameDay: true}, Dedup: true, Limit: 100}
	if !ok || err != nil || dir != "x:y" || o != want {
		t.Fatalf("%q %+v %v %v", dir, o, ok, err)
	}
	for _, a := range []string{"german", "C:/data", "kuairecx:d", "/tmp/kuairec:d"} {
		if _, _, ok, _ := ParseDataArg(a); ok {
			t.Errorf("%q parsed as a KuaiRec argument", a)
		}
	}
	for _, a := range []string{"kuairec:", "kuairec,matrix=huge:d", "kuairec,bogus:d", "kuairec,threshold=x:d", "kuairec,limit=-1:d"} {
		if _, _, ok, err := ParseDataArg(a); !ok || err == nil {
			t.Errorf("%q: ok %v err %v", a, ok, err)
		}
	}
}
