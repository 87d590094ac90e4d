package kuairec

import (
	"bufio"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"okstream/learner/rng"
)

const (
	dayMS   = 86400000
	hourMS  = 3600000
	utcOff8 = 8 * hourMS
)

// localMidnight returns the Unix ms of Beijing midnight starting day number dn.
func localMidnight(dn int) int64 { return int64(dn)*dayMS - utcOff8 }

// isWeekendDay reports whether day number dn is a Saturday or Sunday.
func isWeekendDay(dn int) bool {
	wd := ((dn+4)%7 + 7) % 7
	return wd == 0 || wd == 6
}

// genRow is one generated matrix row.
type genRow struct {
	it Interaction
	ms int64
}

// stamp fills the time fields of it for event time ms (and the date
// quirk: an event in the last four minutes of a day is filed under the
// next date with probability mLateDateP).
func stamp(r *rng.Source, it *Interaction, ms int64) {
	it.Timed = true
	it.Timestamp = float64(ms) / 1000
	it.Time = FormatTime(ms)
	it.Date = DayOf(ms)
	local := ms + utcOff8
	msOfDay := ((local % dayMS) + dayMS) % dayMS
	if msOfDay >= dayMS-4*60000 && r.Float64() < mLateDateP {
		it.Date = DateOfDay(DayNumber(it.Date) + 1)
	}
}

// drawTime draws a local hour and ms within day number dn.
func (w *world) drawTime(r *rng.Source, dn int) int64 {
	h := categorical(r, w.hourCum)
	return localMidnight(dn) + int64(h)*hourMS + int64(r.IntN(hourMS))
}

// viewAt draws a view at event time ms.
func (w *world) viewAt(r *rng.Source, u *genUser, v *genVideo, ms int64) int64 {
	local := ms + utcOff8
	dn := int(floorDiv(local, dayMS))
	h := float64(local-int64(dn)*dayMS) / hourMS
	return w.view(r, u, v, dn-w.d0, h, isWeekendDay(dn))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// finish sets the durations and watch ratio of a row.
func finish(r *rng.Source, it *Interaction, v *genVideo, play int64) {
	it.VideoID = v.id
	it.PlayDuration = play
	it.VideoDuration = v.durMS
	if r.Float64() < mJitterP {
		d := int64(1 + r.IntN(40))
		if r.Float64() < 0.5 {
			d = -d
		}
		it.VideoDuration = max(v.minLen, v.durMS+d)
	}
	it.WatchRatio = float64(it.PlayDuration) / float64(it.VideoDuration)
}

// nbShape is the negative binomial shape of events per active user-day.
var nbShape = mDayMean * mDayMean / (mDaySD*mDaySD - mDayMean)

func (w *world) writeSmall(bw *bufio.Writer, sum *GenSummary, progress func(int64)) error {
	f := MatrixFormat{FloatDate: true}
	buf := appendHeader(nil, MatrixColumns)
	var rows []genRow
	var untimed []Interaction
	for _, uid := range w.smallUsers {
		rows, untimed = w.smallUserRows(uid, rows[:0], untimed[:0])
		for i := range rows {
			buf = AppendInteraction(buf, &rows[i].it, f)
			if rows[i].it.WatchRatio > DefaultThreshold {
				sum.SmallPositive++
			}
		}
		for i := range untimed {
			buf = AppendInteraction(buf, &untimed[i], f)
		}
		n := int64(len(rows) + len(untimed))
		sum.SmallRows += n
		sum.SmallUntimed += int64(len(untimed))
		if len(buf) > 1<<20 {
			if _, err := bw.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
		progress(n)
	}
	_, err := bw.Write(buf)
	return err
}

// smallUserRows draws one user's block of the small matrix: the timed rows
// in time order (appended to rows) and the untimed stage-2 rows in video_id
// order (appended to untimed). Every video of the small matrix is there
// except those of the authors the user blocked.
func (w *world) smallUserRows(uid int, rows []genRow, untimed []Interaction) ([]genRow, []Interaction) {
	r := rng.New(rng.Derive(rng.Derive(w.cfg.Seed, saltSmall), uint64(uid)))
	u := w.users[uid]
	blocked := map[int]bool{}
	for range poisson(r, mBlockRate*float64(len(w.smallAuth))) {
		blocked[w.smallAuth[r.IntN(len(w.smallAuth))]] = true
	}
	// The user's active days and their intensities.
	dayW := make([]float64, numDays)
	active := false
	for i := range dayW {
		if r.Float64() < mActiveDay {
			g := gamma(r, nbShape)
			if isWeekendDay(w.d0 + i) {
				g = float64(g * 1.15)
			}
			dayW[i] = g
			active = true
		}
	}
	if !active {
		dayW[0] = 1
	}
	dayCum := cumsum(dayW)
	first := len(rows)
	for _, vid := range w.smallVid {
		v := w.videos[vid]
		if blocked[v.author] {
			continue
		}
		if r.Float64() < mUntimedP {
			// Stage 2: a forced exposure after the window, with no time.
			it := Interaction{UserID: uid, Timestamp: math.NaN()}
			play := w.view(r, u, v, numDays-1, float64(r.IntN(24)), false)
			finish(r, &it, v, play)
			untimed = append(untimed, it)
			continue
		}
		dn := w.d0 + categorical(r, dayCum)
		ms := w.drawTime(r, dn)
		it := Interaction{UserID: uid}
		stamp(r, &it, ms)
		finish(r, &it, v, w.viewAt(r, u, v, ms))
		rows = append(rows, genRow{it: it, ms: ms})
	}
	sortRows(rows[first:])
	return rows, untimed
}

// sortRows sorts a user's rows by time, then video_id.
func sortRows(rows []genRow) {
	slices.SortStableFunc(rows, func(a, b genRow) int {
		if a.ms != b.ms {
			if a.ms < b.ms {
				return -1
			}
			return 1
		}
		return a.it.VideoID - b.it.VideoID
	})
}

func (w *world) writeBig(bw *bufio.Writer, sum *GenSummary, progress func(int64)) error {
	f := MatrixFormat{}
	buf := appendHeader(nil, MatrixColumns)
	base := rng.Derive(w.cfg.Seed, saltBig)
	nonSmall := make([]int, 0, len(w.bigVideos))
	for _, vid := range w.bigVideos {
		if !w.videos[vid].small {
			nonSmall = append(nonSmall, vid)
		}
	}
	total := w.bigDayCum[numDays-1]
	minRows := max(1, int(math.Round(0.0093*float64(len(w.bigVideos)))))
	var rows []genRow
	for _, uid := range w.bigUsers {
		r := rng.New(rng.Derive(base, uint64(uid)))
		u := w.users[uid]
		pool := w.bigVideos
		if w.isSmallU[uid] {
			pool = nonSmall // no (user, video) pair of the small matrix is in the big one
		}
		if len(pool) == 0 {
			continue
		}
		n := int(math.Round(float64(w.cfg.BigDensity*float64(len(w.bigVideos))) * lognormal(r, 1, mBigSpread)))
		n = min(max(n, minRows), len(pool))
		rows = rows[:0]
		for _, k := range r.Sample(len(pool), n) {
			v := w.videos[pool[k]]
			ui := min(max(v.upload-w.d0, 0), numDays-1)
			lo := 0.0
			if ui > 0 {
				lo = w.bigDayCum[ui-1]
			}
			x := lo + float64(r.Float64()*(total-lo))
			di := ui
			for di < numDays-1 && w.bigDayCum[di] <= x {
				di++
			}
			ms := w.drawTime(r, w.d0+di)
			it := Interaction{UserID: uid}
			stamp(r, &it, ms)
			finish(r, &it, v, w.viewAt(r, u, v, ms))
			rows = append(rows, genRow{it: it, ms: ms})
			if r.Float64() < mBigDupP { // an exact duplicate row
				rows = append(rows, genRow{it: it, ms: ms})
				sum.BigDuplicates++
			}
		}
		sortRows(rows)
		for i := range rows {
			buf = AppendInteraction(buf, &rows[i].it, f)
		}
		sum.BigRows += int64(len(rows))
		if len(buf) > 1<<20 {
			if _, err := bw.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
		progress(int64(len(rows)))
	}
	_, err := bw.Write(buf)
	return err
}

func (w *world) writeUsers(bw *bufio.Writer, sum *GenSummary) error {
	f := DefaultUserFormat()
	buf := appendHeader(nil, UserColumns)
	for _, uid := range w.bigUsers {
		buf = AppendUser(buf, &w.users[uid].row, f)
	}
	sum.UserRows = len(w.bigUsers)
	_, err := bw.Write(buf)
	return err
}

func (w *world) writeCategories(bw *bufio.Writer, sum *GenSummary) error {
	f := ListFormat{Space: true}
	buf := appendHeader(nil, CategoryColumns)
	for _, vid := range w.bigVideos {
		buf = AppendIDList(buf, &IDList{ID: vid, List: w.videos[vid].tags}, f)
	}
	sum.VideoRows = len(w.bigVideos)
	_, err := bw.Write(buf)
	return err
}

// playModel is the model's play-time distribution of one video on one day,
// for the average user.
type playModel struct {
	skip   float64 // probability of a skip (< 0.5 s)
	mu, sd float64 // log play time of a non-skip view
	mean   float64 // expected play time (ms)
}

func (w *world) playModel(v *genVideo, di int) playModel {
	q := v.q + v.drift[di]
	sd := math.Sqrt(float64(mNoise*mNoise) + float64(mUserSD*mUserSD))
	pm := playModel{skip: logistic(mSkipA0 - float64(mSkipA1*q)), mu: mLnBase + q, sd: sd}
	replay := 1 + float64(mReplayP*(1/(1-mReplayRate)-1))
	pm.mean = float64(pm.skip*175) + float64(float64((1-pm.skip)*pexp(pm.mu+float64(0.5*float64(sd*sd))))*replay)
	return pm
}

// atLeast is P(play ≥ x ms).
func (pm playModel) atLeast(x float64) float64 {
	if x <= 500 {
		return 1 - pm.skip
	}
	return float64((1 - pm.skip) * (1 - phi((plog(x)-pm.mu)/pm.sd)))
}

func (w *world) writeDaily(bw *bufio.Writer, sum *GenSummary) error {
	f := DefaultDailyFormat()
	buf := appendHeader(nil, DailyColumns)
	base := rng.Derive(w.cfg.Seed, saltDaily)
	var d DailyRow
	for _, vid := range w.bigVideos {
		v := w.videos[vid]
		r := rng.New(rng.Derive(base, uint64(vid)))
		first := max(v.upload-w.d0, 0)
		for di := first; di < numDays; di++ {
			if di > first && di < numDays-1 && r.Float64() < 0.01 {
				continue // a gap: the joiner falls back to an earlier day
			}
			w.dailyRow(r, v, di, &d)
			buf = AppendDaily(buf, &d, f)
			sum.DailyRows++
		}
		if len(buf) > 1<<20 {
			if _, err := bw.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	_, err := bw.Write(buf)
	return err
}

// dailyRow draws video v's counters on day index di.
func (w *world) dailyRow(r *rng.Source, v *genVideo, di int, d *DailyRow) {
	dn := w.d0 + di
	*d = DailyRow{VideoID: v.id, Date: DateOfDay(dn)}
	for c := range d.Num {
		d.Num[c] = math.NaN()
	}
	d.VideoType = "NORMAL"
	if v.ad {
		d.VideoType = "AD"
	}
	d.UploadDT = formatISODate(DateOfDay(v.upload))
	d.UploadType = v.uploadType
	d.VisibleStatus = v.visible
	d.VideoTagName = tagWords[v.tagID%NumTags]
	set := func(c DailyCol, x int64) { d.Num[c] = float64(x) }
	set(DAuthorID, int64(v.author))
	if r.Float64() >= 0.003 {
		set(DVideoDuration, v.durMS)
	}
	set(DVideoWidth, int64(v.width))
	set(DVideoHeight, int64(v.height))
	set(DMusicID, v.music)
	set(DVideoTagID, int64(v.tagID))

	pm := w.playModel(v, di)
	dur := float64(v.durMS)
	pc := pm.atLeast(dur)
	pv, pl := pc, pc
	if dur > 7000 {
		pv = pm.atLeast(7000)
	}
	if dur > 18000 {
		pl = pm.atLeast(18000)
	}
	ps := 1 - pm.atLeast(math.Min(3000, dur))

	noisy := func(x, sd float64) float64 { return float64(x * lognormal(r, 1, sd)) }
	age := float64(dn - v.upload)
	wk := 1.0
	if isWeekendDay(dn) {
		wk = 1.1
	}
	show := stochRound(r, noisy(float64(float64(v.pop*pexp(float64(-0.5*plog(1+math.Max(age, 0)))))*wk), 0.25))
	showUser := min(show, stochRound(r, float64(float64(show)*(0.75+float64(0.05*r.Float64())))))
	play := min(show, stochRound(r, noisy(float64(float64(show)*v.rates.play), 0.05)))
	playUser := min(play, showUser, stochRound(r, float64(float64(play)*(0.7+float64(0.1*r.Float64())))))
	fp := float64(play)
	users := func(x int64, share float64) int64 {
		return min(x, playUser, stochRound(r, float64(float64(x)*share)))
	}
	// Short plays (< 3 s) and valid plays (> 7 s, or complete) are
	// disjoint; complete ⊆ long ⊆ valid.
	short := min(play, stochRound(r, noisy(float64(fp*ps), 0.05)))
	valid := min(play-short, stochRound(r, noisy(float64(fp*pv), 0.05)))
	complete := min(valid, stochRound(r, noisy(float64(fp*pc), 0.05)))
	long := min(valid, max(complete, stochRound(r, noisy(float64(fp*pl), 0.05))))
	set(DShowCnt, show)
	set(DShowUserNum, showUser)
	set(DPlayCnt, play)
	set(DPlayUserNum, playUser)
	set(DPlayDuration, stochRound(r, noisy(float64(fp*pm.mean), 0.05)))
	set(DCompletePlayCnt, complete)
	set(DCompletePlayUserNum, users(complete, 0.88))
	set(DValidPlayCnt, valid)
	set(DValidPlayUserNum, users(valid, 0.88))
	set(DLongTimePlayCnt, long)
	set(DLongTimePlayUserNum, users(long, 0.88))
	set(DShortTimePlayCnt, short)
	set(DShortTimePlayUserNum, users(short, 0.8))
	d.Num[DPlayProgress] = noisy(pm.mean/dur, 0.06)
	set(DCommentStayDuration, stochRound(r, noisy(float64(fp*v.rates.stay), 0.3)))
	like := stochRound(r, noisy(float64(fp*v.rates.like), 0.15))
	set(DLikeCnt, like)
	set(DLikeUserNum, users(like, 0.98))
	click := min(like, stochRound(r, float64(float64(like)*0.55)))
	set(DClickLikeCnt, click)
	set(DDoubleClickCnt, like-click)
	cancelLike := stochRound(r, float64(float64(like)*0.08))
	set(DCancelLikeCnt, cancelLike)
	set(DCancelLikeUserNum, users(cancelLike, 0.97))
	comment := stochRound(r, noisy(float64(fp*v.rates.comment), 0.2))
	set(DCommentCnt, comment)
	set(DCommentUserNum, users(comment, 0.9))
	direct := min(comment, stochRound(r, float64(float64(comment)*0.75)))
	set(DDirectCommentCnt, direct)
	set(DReplyCommentCnt, comment-direct)
	del := stochRound(r, float64(float64(comment)*0.01))
	set(DDeleteCommentCnt, del)
	set(DDeleteCommentUserNum, users(del, 1))
	cl := stochRound(r, noisy(float64(float64(comment)*4), 0.3))
	set(DCommentLikeCnt, cl)
	set(DCommentLikeUserNum, min(cl, stochRound(r, float64(float64(cl)*0.6))))
	follow := stochRound(r, noisy(float64(fp*v.rates.follow), 0.2))
	set(DFollowCnt, follow)
	set(DFollowUserNum, users(follow, 1))
	cf := stochRound(r, float64(float64(follow)*0.01))
	set(DCancelFollowCnt, cf)
	set(DCancelFollowUserNum, users(cf, 1))
	share := stochRound(r, noisy(float64(fp*v.rates.share), 0.2))
	set(DShareCnt, share)
	set(DShareUserNum, users(share, 0.95))
	dl := stochRound(r, noisy(float64(fp*v.rates.download), 0.2))
	set(DDownloadCnt, dl)
	set(DDownloadUserNum, users(dl, 0.97))
	rep := stochRound(r, noisy(float64(fp*v.rates.report), 0.3))
	set(DReportCnt, rep)
	set(DReportUserNum, users(rep, 0.95))
	red := stochRound(r, noisy(float64(fp*v.rates.reduce), 0.2))
	set(DReduceSimilarCnt, red)
	set(DReduceSimilarUserNum, users(red, 0.97))
	if d.Date >= collectFrom {
		col := stochRound(r, noisy(float64(fp*v.rates.collect), 0.2))
		set(DCollectCnt, col)
		set(DCollectUserNum, users(col, 0.98))
		cc := stochRound(r, float64(float64(col)*0.05))
		set(DCancelCollectCnt, cc)
		set(DCancelCollectUserNum, users(cc, 1))
	}
}

// friendCountP are the probabilities of 1..5 friends in the real social_network.csv.
var friendCountP = []float64{0.739, 0.163, 0.057, 0.019, 0.021}

func (w *world) writeSocial(bw *bufio.Writer, sum *GenSummary) error {
	f := ListFormat{Space: true}
	buf := appendHeader(nil, SocialColumns)
	r := rng.New(rng.Derive(w.cfg.Seed, saltSocial))
	cum := cumsum(friendCountP)
	for _, uid := range w.bigUsers {
		if r.Float64() >= 472.0/7176 || len(w.bigUsers) < 2 {
			continue
		}
		n := min(categorical(r, cum)+1, len(w.bigUsers)-1)
		var friends []int
		for len(friends) < n {
			fr := w.bigUsers[r.IntN(len(w.bigUsers))]
			if fr != uid && !slices.Contains(friends, fr) {
				friends = append(friends, fr)
			}
		}
		slices.Sort(friends)
		buf = AppendIDList(buf, &IDList{ID: uid, List: friends}, f)
		sum.SocialRows++
	}
	if sum.SocialRows == 0 && len(w.bigUsers) >= 3 {
		// Small samples: keep one row, so that the file is never empty.
		buf = AppendIDList(buf, &IDList{ID: w.bigUsers[0], List: []int{w.bigUsers[1], w.bigUsers[2]}}, f)
		sum.SocialRows++
	}
	_, err := bw.Write(buf)
	return err
}

func (w *world) writeCaptions(bw *bufio.Writer) error {
	buf := appendHeader(nil, CaptionColumns)
	for _, vid := range w.bigVideos {
		v := w.videos[vid]
		t := v.tags[0]
		c := Caption{VideoID: vid, Fields: [9]string{
			"",
			"synthetic sample, not KuaiRec data",
			"[synthetic," + tagWords[t] + "]",
			strconv.Itoa(t + 1), tagWords[t],
			"-124", "UNKNOWN",
			"-124", "UNKNOWN",
		}}
		buf = AppendCaption(buf, &c)
	}
	_, err := bw.Write(buf)
	return err
}

// syntheticReadme is the SYNTHETIC.md written beside data/.
func syntheticReadme(s *GenSummary) string {
	c := s.Config
	var b strings.Builder
	fmt.Fprintf(&b, "# SYNTHETIC KuaiRec 2.0-format sample — NOT the real KuaiRec data\n\n")
	fmt.Fprintf(&b, "Generated by okstream (`okstream kuairec-gen`, package okstream/dataset/kuairec). Every value in\n")
	fmt.Fprintf(&b, "data/ is drawn from a statistical model; nothing comes from the real KuaiRec files (Gao et al.,\n")
	fmt.Fprintf(&b, "CIKM 2022). The seven CSV files have the real files' names, columns and formatting, so that\n")
	fmt.Fprintf(&b, "code written against them also reads the real data; this file is what marks the folder synthetic\n")
	fmt.Fprintf(&b, "(okstream's loader reports such data as \"SYNTHETIC\"). Results obtained on it say nothing about\n")
	fmt.Fprintf(&b, "KuaiRec itself.\n\n")
	if c.Command != "" {
		fmt.Fprintf(&b, "Command:\n\n    %s\n\n", c.Command)
	}
	fmt.Fprintf(&b, "Parameters: users=%d videos=%d big-users=%d big-videos=%d big-density=%g seed=%d\n\n",
		c.Users, c.Videos, c.BigUsers, c.BigVideos, c.BigDensity, c.Seed)
	fmt.Fprintf(&b, "| file | rows |\n|---|---|\n")
	fmt.Fprintf(&b, "| %s | %d (%d untimed) |\n", SmallMatrixFile, s.SmallRows, s.SmallUntimed)
	fmt.Fprintf(&b, "| %s | %d (%d exact duplicates) |\n", BigMatrixFile, s.BigRows, s.BigDuplicates)
	fmt.Fprintf(&b, "| %s | %d |\n| %s | %d |\n| %s | %d |\n| %s | %d |\n| %s | %d |\n\n",
		UserFeaturesFile, s.UserRows, CategoriesFile, s.VideoRows, DailyFile, s.DailyRows, SocialFile, s.SocialRows, CaptionFile, s.VideoRows)
	fmt.Fprintf(&b, "P(watch_ratio > 0.75) over the timed small-matrix rows: %.4f\n", s.LabelRate())
	return b.String()
}
