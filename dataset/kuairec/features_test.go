package kuairec

import (
	"math"
	"slices"
	"testing"
	"time"
)

// sideFixture is a small in-memory side-table set: two users (one with a
// missing code), video 10 with tags [27, 9] and daily rows on three
// consecutive days, video 11 with no daily rows.
func sideFixture() ([]User, []IDList, []DailyRow) {
	mk := func(id int, follow int64) User {
		u := User{UserID: id, ActiveDegree: "high_active", IsVideoAuthor: 1, FollowUserNum: follow, FansUserNum: 3,
			FriendUserNum: 2, RegisterDays: 400}
		for k := range u.OneHot {
			u.OneHot[k] = k % 3
		}
		return u
	}
	users := []User{mk(1, 10), mk(2, 1000), mk(3, 0)}
	users[2].OneHot[13] = Missing
	cats := []IDList{{ID: 10, List: []int{27, 9}}, {ID: 11, List: []int{3}}}
	day := func(date int, progress, show float64) DailyRow {
		d := DailyRow{VideoID: 10, Date: date, VideoType: "NORMAL", UploadDT: "2020-07-01", VisibleStatus: "public"}
		for c := range d.Num {
			d.Num[c] = 1
		}
		d.Num[DVideoDuration] = 9000
		d.Num[DVideoWidth], d.Num[DVideoHeight] = 720, 1280
		d.Num[DShowCnt], d.Num[DPlayCnt] = show, show/2
		d.Num[DPlayDuration] = show / 2 * 7000
		d.Num[DPlayProgress] = progress
		d.Num[DCollectCnt] = math.NaN()
		return d
	}
	daily := []DailyRow{day(20200710, 0.3, 100), day(20200711, 0.6, 200), day(20200712, 0.9, 400)}
	return users, cats, daily
}

func fixtureFeatures(t *testing.T, daily []DailyRow, opts FeatureOptions) *Features {
	t.Helper()
	users, cats, _ := sideFixture()
	f, err := NewFeatures(SideTables{Users: users, Categories: cats, Daily: &DailyRows{Rows: daily}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// tsAt returns the Unix ms of a Beijing local time.
func tsAt(date, hour int) int64 {
	return time.Date(date/10000, time.Month(date/100%100), date%100, hour, 0, 0, 0, Beijing).UnixMilli()
}

const (
	iD12 = offD + 11 // play_progress
	iD21 = offD + 20 // daily missing
)

// TestFeaturesNoLookAhead: by default an event on day d sees video's daily
// row of d−1, so rewriting the row of d itself changes nothing; in
// same-day mode it does (the join rules of Features).
func TestFeaturesNoLookAhead(t *testing.T) {
	_, _, daily := sideFixture()
	ts := tsAt(20200712, 15)
	build := func(rows []DailyRow, sameDay bool) []float64 {
		return fixtureFeatures(t, rows, FeatureOptions{SameDay: sameDay}).Build(nil, 1, 10, 9000, ts, true, 20200712)
	}
	changed := slices.Clone(daily)
	// The scaling bounds and smoothing priors are fitted once on the whole
	// table (a fixed normalization), so change only values that
	// no fitted constant depends on: the day's play_progress and ad flag.
	changed[2].Num[DPlayProgress] = 2.7
	changed[2].VideoType = "AD"
	base, after := build(daily, false), build(changed, false)
	if !slices.Equal(base, after) {
		t.Fatalf("default mode: changing the event day's own daily row changed the features:\n%v\n%v", base, after)
	}
	if !near(base[iD12], 0.6/3) || base[iD21] != 0 {
		t.Fatalf("default mode joins day d−1: play_progress feature %v, want %v", base[iD12], 0.6/3)
	}
	sBase, sAfter := build(daily, true), build(changed, true)
	if slices.Equal(sBase, sAfter) {
		t.Fatal("same-day mode: changing the event day's row changed nothing")
	}
	if !near(sBase[iD12], 0.9/3) || !near(sAfter[iD12], 2.7/3) || sAfter[offD+1] != 1 {
		t.Fatalf("same-day mode: play_progress %v → %v, ad %v", sBase[iD12], sAfter[iD12], sAfter[offD+1])
	}
}

// TestFeaturesDailyFallback: without a row for d−1 the latest earlier row
// is used; without any earlier row the daily block is zero and D21 = 1.
func TestFeaturesDailyFallback(t *testing.T) {
	_, _, daily := sideFixture()
	f := fixtureFeatures(t, []DailyRow{daily[0], daily[2]}, FeatureOptions{}) // no 0711 row
	x := f.Build(nil, 1, 10, 9000, tsAt(20200712, 1), true, 20200712)
	if !near(x[iD12], 0.3/3) || x[iD21] != 0 {
		t.Fatalf("fallback to 0710: play_progress %v, missing flag %v", x[iD12], x[iD21])
	}
	// Video age from upload 2020-07-01 to the event day 2020-07-12 (11 days).
	if x[offD] <= 0 || x[offD] > 1 {
		t.Fatalf("video age feature %v", x[offD])
	}
	for _, c := range []struct {
		video int
		date  int
	}{{10, 20200710}, {10, 20200705}, {11, 20200712}, {99, 20200712}} {
		x := f.Build(nil, 1, c.video, 9000, tsAt(c.date, 12), true, c.date)
		if x[iD21] != 1 {
			t.Fatalf("video %d on %d: missing flag %v", c.video, c.date, x[iD21])
		}
		for j := offD; j < offD+20; j++ {
			if x[j] != 0 {
				t.Fatalf("video %d on %d: daily feature %d = %v, want 0", c.video, c.date, j, x[j])
			}
		}
	}
}

// TestFeaturesBlocks checks blocks A–C on hand-computed values.
func TestFeaturesBlocks(t *testing.T) {
	_, _, daily := sideFixture()
	f := fixtureFeatures(t, daily, FeatureOptions{})
	// 2020-07-11 was a Saturday; 18:00 Beijing: sin(2π·18/24) = −1, cos = 0.
	x := f.Build(nil, 1, 10, 9000, tsAt(20200711, 18), true, 20200711)
	if x[3] != 1 || math.Abs(x[1]-0) > 1e-12 || math.Abs(x[2]-0.5) > 1e-12 {
		t.Fatalf("context: weekend %v, hour sin %v cos %v", x[3], x[1], x[2])
	}
	// A weekday: 2020-07-13 was a Monday.
	if y := f.Build(nil, 1, 10, 9000, tsAt(20200713, 6), true, 20200713); y[3] != 0 || math.Abs(y[1]-1) > 1e-12 {
		t.Fatalf("Monday 06:00: weekend %v, sin %v", y[3], y[1])
	}
	// User 1: high_active, author, codes k%3, follow 10 (lowest of 10, 1000, 0 → between bounds).
	if x[offB+1] != 1 || x[offB] != 0 || x[offB+6] != 1 || x[offB+18] != 0 {
		t.Fatalf("user block: %v", x[offB:offB+19])
	}
	// Frequency encoding: all three users share onehot_feat1 = 1 → share 1.
	if x[offB+19] != 1 {
		t.Fatalf("frequency of onehot_feat1: %v", x[offB+19])
	}
	// Missing user → zeros + missing flag; a missing code → flag.
	m := f.Build(nil, 42, 10, 9000, tsAt(20200711, 18), true, 20200711)
	for j := offB; j < offB+30; j++ {
		if want := b2f(j == offB+18); m[j] != want {
			t.Fatalf("missing user: feature %d = %v, want %v", j, m[j], want)
		}
	}
	if u3 := f.Build(nil, 3, 10, 9000, tsAt(20200711, 18), true, 20200711); u3[offB+18] != 1 || u3[offB+13] != 0 {
		t.Fatalf("user with a missing onehot_feat13: flag %v, B14 %v", u3[offB+18], u3[offB+13])
	}
	// Tags [27, 9]: each 1/√2, unit norm.
	if !near(x[offC+27], 1/math.Sqrt2) || !near(x[offC+9], 1/math.Sqrt2) || x[offC+3] != 0 {
		t.Fatalf("tag block: %v", x[offC:offC+NumTags])
	}
	// Video length: the daily table's only duration (9 s) is both bounds →
	// a constant column maps to 0.
	if x[0] != 0 {
		t.Fatalf("A1 with constant bounds: %v", x[0])
	}
}

// TestFeaturesSample builds every event of the generated sample: values in
// [0, 1], unit tag blocks, dimensions and names of both profiles, and a
// compact vector that is a projection of the full one.
func TestFeaturesSample(t *testing.T) {
	dir, _ := sampleDir(t)
	full, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	comp, err := Open(dir, Options{Features: FeatureOptions{Profile: ProfileCompact}})
	if err != nil {
		t.Fatal(err)
	}
	if full.Features.Dim() != 86 || len(full.Features.Names()) != 86 || comp.Features.Dim() != 44 || len(comp.Features.Names()) != 44 {
		t.Fatalf("dims %d/%d, names %d/%d", full.Features.Dim(), comp.Features.Dim(), len(full.Features.Names()), len(comp.Features.Names()))
	}
	if full.Features.SchemaVersion() != "kuairec-v1" || comp.Features.SchemaVersion() != "kuairec-v1-compact" {
		t.Fatal("schema versions")
	}
	ds, err := full.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	cds, err := comp.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	names := full.Features.Names()
	cidx := compactIndex()
	missingDaily := 0
	for i, x := range ds.X {
		norm := 0.0
		for j, v := range x {
			if v < 0 || v > 1 || math.IsNaN(v) {
				t.Fatalf("event %d: feature %s = %v outside [0, 1]", i, names[j], v)
			}
			if j >= offC && j < offC+NumTags {
				norm += v * v
			}
		}
		if math.Abs(norm-1) > 1e-12 {
			t.Fatalf("event %d: tag block norm² %v", i, norm)
		}
		missingDaily += int(x[iD21])
		for k, j := range cidx {
			if j >= 0 && cds.X[i][k] != x[j] {
				t.Fatalf("event %d: compact feature %d differs from full %d", i, k, j)
			}
		}
	}
	// Small-matrix videos were uploaded before the window: only events on
	// 2020-07-05 (and after a rare gap at the start) lack a previous day.
	if share := float64(missingDaily) / float64(len(ds.X)); share > 0.05 {
		t.Errorf("%.1f %% of events have no daily row before their day", 100*share)
	}
	// Determinism.
	again, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds2, _ := again.Dataset()
	for i := range ds.X {
		if !slices.Equal(ds.X[i], ds2.X[i]) || ds.Y[i] != ds2.Y[i] {
			t.Fatalf("event %d differs between two loads", i)
		}
	}
	if want := "kuairec-synthetic/small_matrix [kuairec-v1]"; ds.Name != want {
		t.Fatalf("dataset name %q, want %q", ds.Name, want)
	}
}

// TestFeaturesIgnoreLabel: the features of a row do not depend on its
// play_duration or watch_ratio.
func TestFeaturesIgnoreLabel(t *testing.T) {
	_, _, daily := sideFixture()
	f := fixtureFeatures(t, daily, FeatureOptions{})
	it := Interaction{UserID: 1, VideoID: 10, PlayDuration: 100, VideoDuration: 9000, Timestamp: 1594450000.5, Timed: true, WatchRatio: 0.01}
	a := f.BuildInteraction(nil, &it)
	it.PlayDuration, it.WatchRatio = 90000, 10
	if b := f.BuildInteraction(nil, &it); !slices.Equal(a, b) {
		t.Fatal("features changed with the label's source")
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
