package kuairec

// Statistics of generated data against KuaiRec 2.0's published files and statistics (Gao et al., CIKM 2022),
// with the tolerances stated per check. Samples are drawn from the
// generator's internals where writing files would only cost time.

import (
	"math"
	"slices"
	"testing"
)

// committedSampleConfig is the configuration of testdata/kuairec-synthetic
// (its README records the equivalent command line).
var committedSampleConfig = GenConfig{Users: 40, Videos: 80, BigUsers: 60, BigVideos: 120, Seed: 1}

// within reports got against want ± tol.
func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.4f, want %.4f ± %.4f", what, got, want, tol)
	} else {
		t.Logf("%s = %.4f (spec %.4f ± %.4f)", what, got, want, tol)
	}
}

func sortedCopy(v []float64) []float64 {
	c := slices.Clone(v)
	slices.Sort(c)
	return c
}

// smallRows draws the small matrix of cfg without writing files.
func smallRows(cfg GenConfig) (w *world, timed []Interaction, untimed []Interaction) {
	w = newWorld(cfg.withDefaults())
	var rows []genRow
	var un []Interaction
	for _, uid := range w.smallUsers {
		rows, un = w.smallUserRows(uid, rows[:0], un[:0])
		for _, r := range rows {
			timed = append(timed, r.it)
		}
		untimed = append(untimed, un...)
	}
	return w, timed, untimed
}

// TestStatsWatchRatio checks the label source: P(label) = 0.51 ± 0.03
// (the generator's target), the quartiles of watch_ratio ≤ 5 (0.4658 / 0.7662 /
// 1.1141, KR-STATS), P(wr ≥ 1) = 32.4 % (KRAFT-1) and the share above 5
// (0.49 %), on 60 users × 1,500 videos (90 k rows).
func TestStatsWatchRatio(t *testing.T) {
	_, timed, untimed := smallRows(GenConfig{Users: 60, Videos: 1500, BigUsers: 60, BigVideos: 1500, Seed: 3})
	all := append(slices.Clone(timed), untimed...)
	var wr, wr5 []float64
	pos, ge1, gt5 := 0, 0, 0
	for i, it := range all {
		wr = append(wr, it.WatchRatio)
		if it.WatchRatio <= 5 {
			wr5 = append(wr5, it.WatchRatio)
		} else {
			gt5++
		}
		if it.WatchRatio >= 1 {
			ge1++
		}
		if i < len(timed) && it.WatchRatio > DefaultThreshold {
			pos++
		}
		if got := float64(it.PlayDuration) / float64(it.VideoDuration); got != it.WatchRatio {
			t.Fatalf("watch_ratio %v is not play_duration / video_duration = %v", it.WatchRatio, got)
		}
	}
	n := float64(len(all))
	within(t, "P(watch_ratio > 0.75) over timed rows", float64(pos)/float64(len(timed)), 0.51, 0.03)
	w5 := sortedCopy(wr5)
	within(t, "Q1 of wr ≤ 5", quantileSorted(w5, 0.25), 0.4658, 0.04)
	within(t, "median of wr ≤ 5", quantileSorted(w5, 0.5), 0.7662, 0.04)
	within(t, "Q3 of wr ≤ 5", quantileSorted(w5, 0.75), 1.1141, 0.07)
	within(t, "median of all wr", quantileSorted(sortedCopy(wr), 0.5), 0.7692, 0.04)
	within(t, "P(wr ≥ 1)", float64(ge1)/n, 0.324, 0.03)
	within(t, "P(wr > 5)", float64(gt5)/n, 0.0049, 0.003)
	within(t, "untimed share", float64(len(untimed))/n, 0.0389, 0.006)
}

// TestStatsDurations checks video_duration per row (KR-STATS small matrix:
// Q1 7,523, median 9,600, Q3 11,934, mean 14,486, min 3,067 ms) with ±5 %
// on the quartiles and ±12 % on the mean.
func TestStatsDurations(t *testing.T) {
	w := newWorld(GenConfig{Users: 1, Videos: 3327, BigUsers: 1, BigVideos: 3327, Seed: 4}.withDefaults())
	var d []float64
	sum := 0.0
	for _, v := range w.videos {
		d = append(d, float64(v.durMS))
		sum += float64(v.durMS)
		if v.durMS < 3067 {
			t.Fatalf("video %d is %d ms long, below the small matrix's minimum 3,067", v.id, v.durMS)
		}
		if v.durMS > 315072 {
			t.Fatalf("video %d is %d ms long, above the maximum 315,072", v.id, v.durMS)
		}
	}
	d = sortedCopy(d)
	within(t, "Q1 video_duration (ms)", quantileSorted(d, 0.25), 7523, 0.05*7523)
	within(t, "median video_duration (ms)", quantileSorted(d, 0.5), 9600, 0.05*9600)
	within(t, "Q3 video_duration (ms)", quantileSorted(d, 0.75), 11934, 0.05*11934)
	within(t, "mean video_duration (ms)", sum/float64(len(d)), 14486, 0.12*14486)
}

// TestStatsUserDays checks a full-width user (3,327 videos): rows per user
// ≈ 3,314 (99.6 % density), active days ≈ 61.4 of 63 (97 %), events per
// active day mean 51.9 ± 5 and sd 32.6 ± 6 (negative binomial), median 47,
// untimed rows last; the peak hour's share ≈ 5.9 % at 09–11 h Beijing;
// times within [2020-07-05, 2020-09-06) Beijing.
func TestStatsUserDays(t *testing.T) {
	w, timed, untimed := smallRows(GenConfig{Users: 12, Videos: 3327, BigUsers: 12, BigVideos: 3327, Seed: 5})
	rows := float64(len(timed)+len(untimed)) / 12
	within(t, "rows per user", rows, 3314.4, 25)
	perDay := map[[2]int]int{}
	var hours [24]int
	lo, hi := localMidnight(w.d0), localMidnight(w.d0+numDays)
	for _, it := range timed {
		ms := it.TimestampMS()
		if ms < lo || ms >= hi {
			t.Fatalf("event at %s outside the window", it.Time)
		}
		perDay[[2]int{it.UserID, DayOf(ms)}]++
		hours[(ms+utcOff8)%dayMS/hourMS]++
		if it.Time != FormatTime(ms) {
			t.Fatalf("time %q does not render timestamp %v (%q)", it.Time, it.Timestamp, FormatTime(ms))
		}
	}
	var counts []float64
	for _, c := range perDay {
		counts = append(counts, float64(c))
	}
	within(t, "active days per user", float64(len(perDay))/12, 61.4, 1.5)
	mean, sd := meanSD(counts)
	within(t, "events per active user-day: mean", mean, 51.9, 5)
	within(t, "events per active user-day: sd", sd, 32.6, 6)
	within(t, "events per active user-day: median", quantileSorted(sortedCopy(counts), 0.5), 47, 6)
	peak, at := 0, 0
	for h, c := range hours {
		if c > peak {
			peak, at = c, h
		}
	}
	within(t, "peak hour share", float64(peak)/float64(len(timed)), 0.059, 0.006)
	if at < 8 || at > 12 {
		t.Errorf("peak hour %d h, want 9–11 h Beijing", at)
	}
}

func meanSD(v []float64) (float64, float64) {
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return m, math.Sqrt(s / float64(len(v)-1))
}

// TestStatsUsers checks user_features over the real population size (7,176
// users): active-degree mix 0.849 / 0.131 / 0.016 / 0.004 (± 1.2 pp),
// is_video_author 16.96 % (± 1.5 pp), is_live_streamer 0.68 %, NaN rates of
// onehot_feat4 (2.8 %) and onehot_feat12…17 (≈ 1.04 %), users with any NaN
// 3.86 % (277 / 7,176), codes within their cardinalities, range columns
// equal to their buckets.
func TestStatsUsers(t *testing.T) {
	w := newWorld(GenConfig{Users: 1, Videos: 1, BigUsers: RealBigUsers, BigVideos: 1, Seed: 6}.withDefaults())
	deg := map[string]int{}
	author, live, nan4, nan12, anyNaN := 0, 0, 0, 0, 0
	for _, id := range w.bigUsers {
		u := &w.users[id].row
		deg[u.ActiveDegree]++
		author += u.IsVideoAuthor
		live += u.IsLiveStreamer
		if u.OneHot[4] == Missing {
			nan4++
		}
		if u.OneHot[13] == Missing {
			nan12++
		}
		has := false
		for k, c := range u.OneHot {
			if c == Missing {
				has = true
				continue
			}
			if c < 0 || c >= oneHotCard[k] {
				t.Fatalf("user %d: onehot_feat%d = %d outside 0..%d", id, k, c, oneHotCard[k]-1)
			}
		}
		if has {
			anyNaN++
		}
		if err := u.checkRanges(); err != nil {
			t.Fatal(err)
		}
	}
	n := float64(len(w.bigUsers))
	within(t, "full_active share", float64(deg["full_active"])/n, 0.849, 0.012)
	within(t, "high_active share", float64(deg["high_active"])/n, 0.131, 0.012)
	within(t, "UNKNOWN share", float64(deg["UNKNOWN"])/n, 0.016, 0.005)
	within(t, "middle_active share", float64(deg["middle_active"])/n, 0.004, 0.003)
	within(t, "is_video_author share", float64(author)/n, 0.1696, 0.015)
	within(t, "is_live_streamer share", float64(live)/n, 0.0068, 0.003)
	within(t, "onehot_feat4 NaN share", float64(nan4)/n, 0.028, 0.006)
	within(t, "onehot_feat13 NaN share", float64(nan12)/n, 0.0104, 0.004)
	within(t, "users with a NaN code", float64(anyNaN)/n, 277.0/7176, 0.008)
}

// TestStatsTags checks item_categories over 10,728 videos: tags per video
// 1 / 2 / 3 / 4 = 83.6 / 14.6 / 1.7 / 0.1 % (± 1.5 pp), mean 1.183 ±
// 0.02, each tag's share of all occurrences within ± 1 pp of the real file's,
// IDs 0..30, no repeated tag.
func TestStatsTags(t *testing.T) {
	w := newWorld(GenConfig{Users: 1, Videos: 1, BigUsers: 1, BigVideos: RealBigVideos, Seed: 7}.withDefaults())
	var perCount [5]int
	var occ [NumTags]int
	total := 0
	for _, v := range w.videos {
		perCount[len(v.tags)]++
		for k, tag := range v.tags {
			if tag < 0 || tag >= NumTags || slices.Contains(v.tags[:k], tag) {
				t.Fatalf("video %d: bad tags %v", v.id, v.tags)
			}
			occ[tag]++
			total++
		}
	}
	n := float64(len(w.videos))
	for k, want := range []float64{0.836, 0.146, 0.017, 0.001} {
		within(t, "share of videos with "+string(rune('1'+k))+" tag(s)", float64(perCount[k+1])/n, want, 0.015)
	}
	within(t, "mean tags per video", float64(total)/n, 1.183, 0.02)
	sumShare := 0.0
	for _, s := range tagShare {
		sumShare += s
	}
	for tag, c := range occ {
		want := tagShare[tag] / sumShare
		if got := float64(c) / float64(total); math.Abs(got-want) > 0.01 {
			t.Errorf("tag %d: share %.4f, want %.4f ± 0.01", tag, got, want)
		}
	}
}

// TestStatsFiles checks the written sample: the side tables' structure
// (one daily row per video and day from max(upload, 2020-07-05), rare gaps,
// counters ordered show ≥ play ≥ valid ≥ long ≥ complete, collect_* empty
// exactly before 2020-07-28, play_progress following the video's mean watch
// ratio in the matrix), the big matrix (no small-matrix pair, ≈ 7.7 %
// exact duplicates, integer dates, no untimed rows), user-major storage
// with untimed rows last, and the date column's ≈ 0.1 % disagreement with
// the local date.
func TestStatsFiles(t *testing.T) {
	dir, sum := sampleDir(t)
	d, err := Locate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Synthetic || d.Label() != "KuaiRec 2.0 (SYNTHETIC sample)" {
		t.Fatalf("generated folder not labelled synthetic: %+v", d)
	}
	small, sf, err := ReadMatrix(d.Path(SmallMatrixFile))
	if err != nil {
		t.Fatal(err)
	}
	if !sf.FloatDate {
		t.Errorf("small matrix dates are not written as floats (20200705.0)")
	}
	// User-major; time-sorted within a user; untimed rows last.
	pairs := map[[2]int]bool{}
	videoWR := map[int][]float64{}
	lateDate, timedN := 0, 0
	for i, it := range small {
		pairs[[2]int{it.UserID, it.VideoID}] = true
		videoWR[it.VideoID] = append(videoWR[it.VideoID], it.WatchRatio)
		if i == 0 {
			continue
		}
		p := small[i-1]
		switch {
		case it.UserID < p.UserID:
			t.Fatalf("row %d: user %d after user %d (not user-major)", i, it.UserID, p.UserID)
		case it.UserID == p.UserID && !p.Timed && it.Timed:
			t.Fatalf("row %d: timed row after an untimed one of user %d", i, it.UserID)
		case it.UserID == p.UserID && p.Timed && it.Timed && it.Timestamp < p.Timestamp:
			t.Fatalf("row %d: user %d's rows not in time order", i, it.UserID)
		}
		if it.Timed {
			timedN++
			if it.Date != DayOf(it.TimestampMS()) {
				lateDate++
			}
		} else if it.Time != "" || it.Date != 0 {
			t.Fatalf("row %d: untimed row with time %q date %d", i, it.Time, it.Date)
		}
	}
	if len(pairs) != len(small) {
		t.Errorf("the small matrix repeats (user, video) pairs")
	}
	if share := float64(lateDate) / float64(timedN); share > 0.004 {
		t.Errorf("date disagrees with the local day in %.2f %% of rows, want ≈ 0.1 %%", 100*share)
	}
	// Big matrix.
	big, bf, err := ReadMatrix(d.Path(BigMatrixFile))
	if err != nil {
		t.Fatal(err)
	}
	if bf.FloatDate {
		t.Errorf("big matrix dates written as floats")
	}
	type ev struct {
		u, v    int
		p, d    int64
		ts, wr2 float64
	}
	seen := map[ev]bool{}
	dups := 0
	for _, it := range big {
		if !it.Timed {
			t.Fatalf("big matrix has an untimed row")
		}
		if pairs[[2]int{it.UserID, it.VideoID}] {
			t.Fatalf("big matrix holds small-matrix pair (%d, %d)", it.UserID, it.VideoID)
		}
		k := ev{it.UserID, it.VideoID, it.PlayDuration, it.VideoDuration, it.Timestamp, it.WatchRatio}
		if seen[k] {
			dups++
		}
		seen[k] = true
	}
	if int64(dups) != sum.BigDuplicates {
		t.Errorf("%d exact duplicates in the big matrix, the generator reports %d", dups, sum.BigDuplicates)
	}
	within(t, "big-matrix duplicate share", float64(dups)/float64(len(big)), 965819.0/12530806, 0.03)

	// Daily table.
	rows, df, err := ReadDaily(d.Path(DailyFile))
	if err != nil {
		t.Fatal(err)
	}
	if df != DefaultDailyFormat() {
		t.Errorf("daily float columns %v, want the real file's", df)
	}
	byVideo := map[int][]DailyRow{}
	for _, r := range rows {
		byVideo[r.VideoID] = append(byVideo[r.VideoID], r)
		g := func(c DailyCol) float64 { return r.Num[c] }
		if !(g(DShowCnt) >= g(DPlayCnt) && g(DPlayCnt) >= g(DValidPlayCnt) && g(DValidPlayCnt) >= g(DLongTimePlayCnt) &&
			g(DLongTimePlayCnt) >= g(DCompletePlayCnt) && g(DCompletePlayCnt) >= 0) {
			t.Fatalf("video %d on %d: counters not ordered: show %v play %v valid %v long %v complete %v",
				r.VideoID, r.Date, g(DShowCnt), g(DPlayCnt), g(DValidPlayCnt), g(DLongTimePlayCnt), g(DCompletePlayCnt))
		}
		if g(DValidPlayCnt)+g(DShortTimePlayCnt) > g(DPlayCnt) || g(DPlayUserNum) > g(DPlayCnt) || g(DShowUserNum) > g(DShowCnt) {
			t.Fatalf("video %d on %d: inconsistent counters", r.VideoID, r.Date)
		}
		empty := math.IsNaN(g(DCollectCnt))
		if empty != (r.Date < collectFrom) {
			t.Fatalf("video %d on %d: collect_cnt empty = %v", r.VideoID, r.Date, empty)
		}
		if r.VideoType != "NORMAL" && r.VideoType != "AD" {
			t.Fatalf("video_type %q", r.VideoType)
		}
		up, ok := parseISODate(r.UploadDT)
		if !ok || up > r.Date {
			t.Fatalf("video %d: row on %d before its upload %q", r.VideoID, r.Date, r.UploadDT)
		}
	}
	cats, _, err := ReadCategories(d.Path(CategoriesFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(byVideo) != len(cats) {
		t.Errorf("%d videos in the daily table, %d in item_categories", len(byVideo), len(cats))
	}
	gaps, total := 0, 0
	var prog, mwr []float64
	for vid, rs := range byVideo {
		up, _ := parseISODate(rs[0].UploadDT)
		first := max(DayNumber(up), DayNumber(firstDate))
		if DayNumber(rs[0].Date) != first {
			t.Fatalf("video %d: first daily row on %d, want %d", vid, rs[0].Date, DateOfDay(first))
		}
		if rs[len(rs)-1].Date != lastDate {
			t.Fatalf("video %d: last daily row on %d", vid, rs[len(rs)-1].Date)
		}
		span := DayNumber(lastDate) - first + 1
		gaps += span - len(rs)
		total += span
		if w := videoWR[vid]; len(w) > 0 {
			p := 0.0
			for _, r := range rs {
				p += r.Num[DPlayProgress]
			}
			m, _ := meanSD(w)
			prog = append(prog, math.Log(p/float64(len(rs))))
			mwr = append(mwr, math.Log(m))
		}
	}
	within(t, "daily gap share", float64(gaps)/float64(total), 0.01, 0.008)
	if c := corr(prog, mwr); c < 0.6 {
		t.Errorf("correlation of log mean play_progress with the video's log mean watch ratio in the matrix = %.3f, want > 0.6", c)
	} else {
		t.Logf("corr(log play_progress, log mean wr) = %.3f over %d videos", c, len(prog))
	}
}

func corr(a, b []float64) float64 {
	ma, sa := meanSD(a)
	mb, sb := meanSD(b)
	s := 0.0
	for i := range a {
		s += (a[i] - ma) * (b[i] - mb)
	}
	return s / float64(len(a)-1) / sa / sb
}
