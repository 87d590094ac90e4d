package kuairec

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"okstream/learner/rng"
)

// FeatureSchemaVersion names the feature construction of Features with the
// full profile: the 86 features of docs/algorithms/kuairec-features.md, in the
// order of FeatureNames(ProfileFull). Any change to a feature, its order,
// its scaling or its join rule must change this string; producers write it
// next to the events, and checkpoints record it.
const FeatureSchemaVersion = "kuairec-v1"

// CompactSchemaVersion names the compact profile's construction.
const CompactSchemaVersion = "kuairec-v1-compact"

// Profile selects a feature set.
type Profile int

// Profiles.
const (
	// ProfileFull is kuairec-v1: d = 86 (A 4 + B 30 + C 31 + D 21).
	ProfileFull Profile = iota
	// ProfileCompact is kuairec-v1-compact: d = 44, our compact
	// profile: A1–A4, B1–B19, the 12 most frequent tags of KuaiRec 2.0 plus
	// an "other tags" weight, D1, D7–D12 and D21.
	ProfileCompact
)

// String returns "full" or "compact".
func (p Profile) String() string {
	switch p {
	case ProfileFull:
		return "full"
	case ProfileCompact:
		return "compact"
	}
	return "Profile(" + strconv.Itoa(int(p)) + ")"
}

// ParseProfile reads "full" or "compact".
func ParseProfile(s string) (Profile, error) {
	switch s {
	case "", "full", "v1", "kuairec-v1":
		return ProfileFull, nil
	case "compact", "kuairec-v1-compact":
		return ProfileCompact, nil
	}
	return 0, fmt.Errorf("unknown feature profile %q: use full (kuairec-v1, d=86) or compact (d=44)", s)
}

// SchemaVersion returns the profile's versioned name.
func (p Profile) SchemaVersion() string {
	if p == ProfileCompact {
		return CompactSchemaVersion
	}
	return FeatureSchemaVersion
}

// Constants of the construction (docs/algorithms/kuairec-features.md).
const (
	// FullDim is kuairec-v1's dimension.
	FullDim = 86
	// CompactDim is the compact profile's dimension.
	CompactDim = 44
	// NumTags is the number of item tags (IDs 0..30).
	NumTags = 31
	// rateAlpha is the additive smoothing weight α of the rates.
	rateAlpha = 20.0
	// boundLo and boundHi are the quantiles that bound min–max scaling.
	boundLo, boundHi = 0.005, 0.995
)

// Block offsets in the full vector.
const (
	offA = 0
	offB = 4
	offC = 34
	offD = 65
	nD   = 21
)

// compactTags are the 12 most frequent tags of the real item_categories.csv
// (shares 16.0 … 3.6 %), in decreasing share: fixed by the
// schema, not fitted, so that the compact features mean the same on every
// data set.
var compactTags = [12]int{11, 28, 8, 5, 6, 9, 19, 12, 7, 26, 25, 1}

// FeatureNames returns the names of a profile's features, in order.
func FeatureNames(p Profile) []string {
	full := fullNames()
	if p != ProfileCompact {
		return full
	}
	out := make([]string, 0, CompactDim)
	for _, j := range compactIndex() {
		if j < 0 {
			out = append(out, "C_other_tags")
			continue
		}
		out = append(out, full[j])
	}
	return out
}

func fullNames() []string {
	n := []string{"A1_log_video_length", "A2_hour_sin", "A3_hour_cos", "A4_weekend",
		"B1_active_full", "B2_active_high", "B3_active_middle", "B4_active_unknown",
		"B5_is_lowactive_period", "B6_is_live_streamer", "B7_is_video_author",
		"B8_log_follow_user_num", "B9_log_fans_user_num", "B10_log_friend_user_num", "B11_log_register_days",
		"B12_onehot_feat0"}
	for k := 12; k <= 17; k++ {
		n = append(n, fmt.Sprintf("B%d_onehot_feat%d", k+1, k))
	}
	n = append(n, "B19_user_missing")
	for k := 1; k <= 11; k++ {
		n = append(n, fmt.Sprintf("B%d_freq_onehot_feat%d", k+19, k))
	}
	for t := range NumTags {
		n = append(n, fmt.Sprintf("C%d_tag%d", t+1, t))
	}
	n = append(n, "D1_log_video_age", "D2_ad", "D3_public", "D4_portrait",
		"D5_log_show_cnt", "D6_log_play_cnt", "D7_play_rate",
		"D8_complete_rate", "D9_valid_rate", "D10_long_time_rate", "D11_short_time_rate",
		"D12_play_progress", "D13_like_rate", "D14_comment_rate", "D15_share_rate", "D16_follow_rate",
		"D17_download_rate", "D18_collect_rate", "D19_negative_rate", "D20_log_seconds_per_play",
		"D21_daily_missing")
	return n
}

// compactIndex maps each compact feature to its full index (−1: the
// "other tags" weight).
func compactIndex() []int {
	idx := []int{0, 1, 2, 3}
	for j := offB; j < offB+19; j++ {
		idx = append(idx, j)
	}
	for _, t := range compactTags {
		idx = append(idx, offC+t)
	}
	idx = append(idx, -1)
	idx = append(idx, offD+0)
	for k := 6; k <= 11; k++ { // D7..D12
		idx = append(idx, offD+k)
	}
	return append(idx, offD+20)
}

// FeatureOptions configure Features.
type FeatureOptions struct {
	Profile Profile
	// SameDay joins item_daily_features on the event's own day (KRAFT's
	// join) instead of the previous day. The day's counters include the
	// rest of that day, so this looks ahead: use it only to measure how
	// much the look-ahead is worth.
	SameDay bool
}

// Features builds kuairec-v1 feature vectors for interactions. Everything
// it needs is fitted on the three side tables when it is built — quantile
// bounds on user_features and item_daily_features, tag weights on
// item_categories, code frequencies on user_features — never on the
// interactions, so the features are stationary and carry no label
// information.
//
// Join rules: users by user_id (absent: zeros and the missing
// flag B19); tags by video_id (absent: zeros); daily statistics by
// (video_id, d−1) where d is the event's Beijing day, falling back to the
// latest earlier row of that video, and to zeros plus the flag D21 when
// there is none (with SameDay: the latest row with date ≤ d).
//
// The arithmetic is portable (rng's Log and Sincos, no fused
// multiply-add), so a vector is bit-identical on every platform, as the
// learners' exact-recovery guarantee assumes of its input.
//
// A Features is safe for concurrent use once built.
type Features struct {
	opts FeatureOptions
	dim  int

	users map[int]*[30]float64 // block B per user
	tags  map[int]*[NumTags]float64
	daily map[int]*videoSeries

	durLo, durHi float64 // A1 bounds (ln seconds)
	ageLo, ageHi float64 // D1 bounds (log1p days)

	cidx []int // compact: full indices; nil for full

	// Fitting summary, for reports.
	NumUsers, NumVideosTagged, NumDailyRows int
}

// videoSeries is one video's daily rows, sorted by day.
type videoSeries struct {
	days   []int32       // day numbers (days since 1970-01-01), increasing
	upload []int32       // upload day number per row; math.MinInt32 if unknown
	feat   [][19]float64 // D2..D20 per row
}

// SideTables are the three side files the features use.
type SideTables struct {
	Users      []User
	Categories []IDList
	Daily      DailySource
}

// DailySource yields item_daily_features rows; *DailyReader is one, and
// DailyRows adapts a slice.
type DailySource interface {
	Next(*DailyRow) error // io.EOF at the end
}

// DailyRows is a DailySource over rows in memory.
type DailyRows struct {
	Rows []DailyRow
	i    int
}

// Next implements DailySource.
func (s *DailyRows) Next(d *DailyRow) error {
	if s.i >= len(s.Rows) {
		return io.EOF
	}
	*d = s.Rows[s.i]
	s.i++
	return nil
}

// LoadFeatures reads user_features.csv, item_categories.csv and
// item_daily_features.csv from d (the daily file streamed) and builds the
// features.
func LoadFeatures(d Dir, opts FeatureOptions) (*Features, error) {
	users, _, err := ReadUsers(d.Path(UserFeaturesFile))
	if err != nil {
		return nil, err
	}
	cats, _, err := ReadCategories(d.Path(CategoriesFile))
	if err != nil {
		return nil, err
	}
	dr, err := OpenDaily(d.Path(DailyFile))
	if err != nil {
		return nil, err
	}
	defer dr.Close()
	return NewFeatures(SideTables{Users: users, Categories: cats, Daily: dr}, opts)
}

// dailyRaw is what the features need of one daily row.
type dailyRaw struct {
	video    int
	day      int32
	upload   int32
	ad, pub  bool
	portrait bool
	show     float64
	play     float64
	complete float64
	valid    float64
	long     float64
	short    float64
	progress float64
	like     float64
	comment  float64
	share    float64
	follow   float64
	download float64
	collect  float64 // NaN if empty
	negative float64
	playDur  float64
	vdur     float64 // NaN if empty
}

func z(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// NewFeatures fits the features on the side tables.
func NewFeatures(side SideTables, opts FeatureOptions) (*Features, error) {
	if opts.Profile != ProfileFull && opts.Profile != ProfileCompact {
		return nil, fmt.Errorf("kuairec: unknown feature profile %d", opts.Profile)
	}
	f := &Features{opts: opts, dim: FullDim}
	if opts.Profile == ProfileCompact {
		f.cidx = compactIndex()
		f.dim = CompactDim
	}
	f.fitUsers(side.Users)
	f.fitTags(side.Categories)
	if side.Daily != nil {
		if err := f.fitDaily(side.Daily); err != nil {
			return nil, err
		}
	} else {
		f.durLo, f.durHi = plog(1), plog(400)
	}
	return f, nil
}

func (f *Features) fitUsers(users []User) {
	f.NumUsers = len(users)
	var cnt [4][]float64
	var freq [11]map[int]int
	for k := range freq {
		freq[k] = map[int]int{}
	}
	for i := range users {
		u := &users[i]
		for k, v := range []int64{u.FollowUserNum, u.FansUserNum, u.FriendUserNum, u.RegisterDays} {
			if v >= 0 {
				cnt[k] = append(cnt[k], plog(1+float64(v)))
			}
		}
		for k := range freq {
			freq[k][u.OneHot[k+1]]++
		}
	}
	var lo, hi [4]float64
	for k := range cnt {
		lo[k], hi[k] = quantileBounds(cnt[k])
	}
	n := float64(len(users))
	f.users = make(map[int]*[30]float64, len(users))
	for i := range users {
		u := &users[i]
		b := new([30]float64)
		switch u.ActiveDegree {
		case "full_active":
			b[0] = 1
		case "high_active":
			b[1] = 1
		case "middle_active":
			b[2] = 1
		case "UNKNOWN":
			b[3] = 1
		}
		b[4] = bit(u.IsLowactivePeriod)
		b[5] = bit(u.IsLiveStreamer)
		b[6] = bit(u.IsVideoAuthor)
		for k, v := range []int64{u.FollowUserNum, u.FansUserNum, u.FriendUserNum, u.RegisterDays} {
			if v >= 0 {
				b[7+k] = minMax(plog(1+float64(v)), lo[k], hi[k])
			}
		}
		missing := false
		for k, code := range []int{u.OneHot[0], u.OneHot[12], u.OneHot[13], u.OneHot[14], u.OneHot[15], u.OneHot[16], u.OneHot[17]} {
			b[11+k] = bit(code)
		}
		for _, c := range u.OneHot {
			missing = missing || c < 0
		}
		if missing {
			b[18] = 1
		}
		for k := range freq {
			b[19+k] = float64(freq[k][u.OneHot[k+1]]) / n
		}
		if _, dup := f.users[u.UserID]; !dup { // the first row of a repeated user_id wins
			f.users[u.UserID] = b
		}
	}
}

// bit maps a 0/1 code to 0/1: Missing and 0 are 0, anything else 1.
func bit(v int) float64 {
	if v > 0 {
		return 1
	}
	return 0
}

func (f *Features) fitTags(cats []IDList) {
	f.tags = make(map[int]*[NumTags]float64, len(cats))
	for i := range cats {
		c := &cats[i]
		var n int
		for _, t := range c.List {
			if t >= 0 && t < NumTags {
				n++
			}
		}
		v := new([NumTags]float64)
		if n > 0 {
			w := 1 / math.Sqrt(float64(n))
			for _, t := range c.List {
				if t >= 0 && t < NumTags {
					v[t] = w
				}
			}
		}
		if _, dup := f.tags[c.ID]; !dup {
			f.tags[c.ID] = v
		}
	}
	f.NumVideosTagged = len(f.tags)
}

func (f *Features) fitDaily(src DailySource) error {
	var raws []dailyRaw
	var row DailyRow
	for {
		err := src.Next(&row)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		r := dailyRaw{video: row.VideoID, day: int32(DayNumber(row.Date)), upload: math.MinInt32}
		if up, ok := parseISODate(row.UploadDT); ok {
			r.upload = int32(DayNumber(up))
		}
		r.ad = row.VideoType == "AD"
		r.pub = row.VisibleStatus == "public"
		r.portrait = row.Num[DVideoHeight] > row.Num[DVideoWidth]
		g := func(c DailyCol) float64 { return z(row.Num[c]) }
		r.show, r.play = g(DShowCnt), g(DPlayCnt)
		r.complete, r.valid, r.long, r.short = g(DCompletePlayCnt), g(DValidPlayCnt), g(DLongTimePlayCnt), g(DShortTimePlayCnt)
		r.progress = g(DPlayProgress)
		r.like, r.comment, r.share, r.follow, r.download = g(DLikeCnt), g(DCommentCnt), g(DShareCnt), g(DFollowCnt), g(DDownloadCnt)
		r.collect = row.Num[DCollectCnt]
		r.negative = g(DReduceSimilarCnt) + g(DReportCnt) + g(DCancelLikeCnt) + g(DCancelFollowCnt)
		r.playDur = g(DPlayDuration)
		r.vdur = row.Num[DVideoDuration]
		raws = append(raws, r)
	}
	f.NumDailyRows = len(raws)

	// Bounds and global rates, over the table.
	var durs, ages, shows, plays, secs []float64
	var sum struct{ show, play, complete, valid, long, short, like, comment, share, follow, download, collect, collectPlay, negative float64 }
	for i := range raws {
		r := &raws[i]
		if r.vdur > 0 {
			durs = append(durs, plog(r.vdur/1000))
		}
		if r.upload != math.MinInt32 {
			ages = append(ages, plog(1+math.Max(0, float64(r.day-r.upload))))
		}
		shows = append(shows, plog(1+r.show))
		plays = append(plays, plog(1+r.play))
		secs = append(secs, secondsPerPlay(r))
		sum.show += r.show
		sum.play += r.play
		sum.complete += r.complete
		sum.valid += r.valid
		sum.long += r.long
		sum.short += r.short
		sum.like += r.like
		sum.comment += r.comment
		sum.share += r.share
		sum.follow += r.follow
		sum.download += r.download
		sum.negative += r.negative
		if !math.IsNaN(r.collect) {
			sum.collect += r.collect
			sum.collectPlay += r.play
		}
	}
	if len(durs) >= 2 {
		f.durLo, f.durHi = quantileBounds(durs)
	} else {
		f.durLo, f.durHi = plog(1), plog(400)
	}
	f.ageLo, f.ageHi = quantileBounds(ages)
	showLo, showHi := quantileBounds(shows)
	playLo, playHi := quantileBounds(plays)
	secLo, secHi := quantileBounds(secs)
	ratio := func(a, b float64) float64 {
		if b <= 0 {
			return 0
		}
		return a / b
	}
	pShow := ratio(sum.play, sum.show)
	pC, pV, pL, pS := ratio(sum.complete, sum.play), ratio(sum.valid, sum.play), ratio(sum.long, sum.play), ratio(sum.short, sum.play)
	pLike, pCom, pShare, pFol, pDown := ratio(sum.like, sum.play), ratio(sum.comment, sum.play), ratio(sum.share, sum.play), ratio(sum.follow, sum.play), ratio(sum.download, sum.play)
	pCol, pNeg := ratio(sum.collect, sum.collectPlay), ratio(sum.negative, sum.play)

	// Group by video, sort by day; a repeated (video, day) keeps its first row.
	order := make([]int, len(raws))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ra, rb := &raws[a], &raws[b]
		if ra.video != rb.video {
			return ra.video - rb.video
		}
		return int(ra.day - rb.day)
	})
	f.daily = make(map[int]*videoSeries)
	for _, i := range order {
		r := &raws[i]
		s := f.daily[r.video]
		if s == nil {
			s = &videoSeries{}
			f.daily[r.video] = s
		}
		if n := len(s.days); n > 0 && s.days[n-1] == r.day {
			continue
		}
		var v [19]float64 // D2..D20
		v[0] = b2f(r.ad)
		v[1] = b2f(r.pub)
		v[2] = b2f(r.portrait)
		v[3] = minMax(plog(1+r.show), showLo, showHi)
		v[4] = minMax(plog(1+r.play), playLo, playHi)
		v[5] = smoothRate(r.play, r.show, pShow)
		v[6] = smoothRate(r.complete, r.play, pC)
		v[7] = smoothRate(r.valid, r.play, pV)
		v[8] = smoothRate(r.long, r.play, pL)
		v[9] = smoothRate(r.short, r.play, pS)
		v[10] = math.Min(math.Max(r.progress, 0), 3) / 3
		v[11] = smoothRate(r.like, r.play, pLike)
		v[12] = smoothRate(r.comment, r.play, pCom)
		v[13] = smoothRate(r.share, r.play, pShare)
		v[14] = smoothRate(r.follow, r.play, pFol)
		v[15] = smoothRate(r.download, r.play, pDown)
		if !math.IsNaN(r.collect) {
			v[16] = smoothRate(r.collect, r.play, pCol)
		}
		v[17] = smoothRate(r.negative, r.play, pNeg)
		v[18] = minMax(secondsPerPlay(r), secLo, secHi)
		s.days = append(s.days, r.day)
		s.upload = append(s.upload, r.upload)
		s.feat = append(s.feat, v)
	}
	return nil
}

func secondsPerPlay(r *dailyRaw) float64 {
	if r.play <= 0 {
		return 0
	}
	return plog(1 + r.playDur/r.play/1000)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// smoothRate is (num + α·p) / (den + α), clipped to [0, 1].
func smoothRate(num, den, p float64) float64 {
	return math.Min(math.Max((num+float64(rateAlpha*p))/(den+rateAlpha), 0), 1)
}

// minMax maps v from [lo, hi] to [0, 1], clipped; a constant range maps to 0.
func minMax(v, lo, hi float64) float64 {
	if !(hi > lo) || math.IsNaN(v) {
		return 0
	}
	return math.Min(math.Max((v-lo)/(hi-lo), 0), 1)
}

// quantileBounds returns the 0.5 % and 99.5 % quantiles of v (linear
// interpolation between order statistics); 0, 0 for no values. v is
// sorted in place.
func quantileBounds(v []float64) (lo, hi float64) {
	if len(v) == 0 {
		return 0, 0
	}
	slices.Sort(v)
	return quantileSorted(v, boundLo), quantileSorted(v, boundHi)
}

func quantileSorted(v []float64, q float64) float64 {
	pos := q * float64(len(v)-1)
	i := int(pos)
	if i >= len(v)-1 {
		return v[len(v)-1]
	}
	fr := pos - float64(i)
	return v[i] + float64(fr*(v[i+1]-v[i]))
}

// Dim returns the feature dimension (86, or 44 for the compact profile).
func (f *Features) Dim() int { return f.dim }

// Options returns the options the features were built with.
func (f *Features) Options() FeatureOptions { return f.opts }

// SchemaVersion returns the versioned name of the construction.
func (f *Features) SchemaVersion() string { return f.opts.Profile.SchemaVersion() }

// Names returns the feature names, in order.
func (f *Features) Names() []string { return FeatureNames(f.opts.Profile) }

// Build writes the features of one interaction into dst (reused if it has
// the capacity) and returns it. Only user_id, video_id, video_duration and
// the time fields are read — never play_duration or watch_ratio, the
// label's source.
func (f *Features) Build(dst []float64, user, video int, videoDurationMS int64, tsMS int64, timed bool, date int) []float64 {
	var full [FullDim]float64
	f.build(&full, user, video, videoDurationMS, tsMS, timed, date)
	if cap(dst) >= f.dim {
		dst = dst[:f.dim]
	} else {
		dst = make([]float64, f.dim)
	}
	if f.cidx == nil {
		copy(dst, full[:])
		return dst
	}
	for k, j := range f.cidx {
		if j >= 0 {
			dst[k] = full[j]
			continue
		}
		other := 0.0
		for t := range NumTags {
			if !slices.Contains(compactTags[:], t) {
				other += full[offC+t]
			}
		}
		dst[k] = other
	}
	return dst
}

// BuildInteraction is Build for a matrix row.
func (f *Features) BuildInteraction(dst []float64, it *Interaction) []float64 {
	return f.Build(dst, it.UserID, it.VideoID, it.VideoDuration, it.TimestampMS(), it.Timed, it.Date)
}

// BuildEvent is Build for an event of the replay order.
func (f *Features) BuildEvent(dst []float64, e *Event) []float64 {
	return f.Build(dst, int(e.User), int(e.Video), e.DurationMS, e.TS, true, int(e.Day))
}

func (f *Features) build(x *[FullDim]float64, user, video int, vdur int64, ts int64, timed bool, date int) {
	// A. context.
	if vdur > 0 {
		x[0] = minMax(plog(float64(vdur)/1000), f.durLo, f.durHi)
	}
	day := date
	if timed {
		day = DayOf(ts)
		local := ts + 8*3600*1000
		msOfDay := ((local % 86400000) + 86400000) % 86400000
		h := float64(msOfDay) / 3600000
		s, c := rng.Sincos(2 * math.Pi * h / 24)
		x[1], x[2] = (s+1)/2, (c+1)/2
	} else {
		x[1], x[2] = 0.5, 0.5
	}
	dayNum := math.MinInt32
	if day != 0 && validDate(day) {
		dayNum = DayNumber(day)
		// 1970-01-01 was a Thursday: day 0 → weekday 4 (Sunday = 0).
		if wd := ((dayNum+4)%7 + 7) % 7; wd == 0 || wd == 6 {
			x[3] = 1
		}
	}
	// B. user.
	if b := f.users[user]; b != nil {
		copy(x[offB:offB+30], b[:])
	} else {
		x[offB+18] = 1
	}
	// C. tags.
	if t := f.tags[video]; t != nil {
		copy(x[offC:offC+NumTags], t[:])
	}
	// D. daily.
	x[offD+20] = 1
	s := f.daily[video]
	if s == nil || dayNum == math.MinInt32 {
		return
	}
	target := int32(dayNum - 1)
	if f.opts.SameDay {
		target = int32(dayNum)
	}
	// Latest row with day <= target.
	k, found := slices.BinarySearch(s.days, target)
	if !found {
		k--
	}
	if k < 0 {
		return
	}
	x[offD+20] = 0
	if up := s.upload[k]; up != math.MinInt32 {
		x[offD] = minMax(plog(1+math.Max(0, float64(int32(dayNum)-up))), f.ageLo, f.ageHi)
	}
	copy(x[offD+1:offD+20], s.feat[k][:])
}
