package kuairec

// The synthetic generator: KuaiRec 2.0's seven files, byte-for-byte in the
// real format, with the population structure, value distributions and
// user/video effects of a model calibrated to KuaiRec 2.0's published files and statistics (Gao et al., CIKM 2022), for tests and demos (docs/algorithms/kuairec-features.md).
// The data are SYNTHETIC: nothing in them comes from the real KuaiRec
// files, and Generate writes SYNTHETIC.md beside data/ to say so (Locate
// then labels the folder synthetic).
//
// Generative model (all randomness from okstream's rng, seeded; see
// portable.go for why a seed gives the same bytes on every machine):
//
//   - Population: user IDs sampled from 0..7175 and video IDs from
//     0..10727; the small matrix's users and videos are subsets of the big
//     matrix's. Small-matrix videos were uploaded before 2020-07-05;
//     big-only videos mostly during the window, skewed late.
//   - A user has the attributes of user_features.csv and an effect
//     b = g(attributes) + residual (g from the active degree, onehot codes,
//     authorship, register days, follows; sd ≈ 0.2 in log play time), plus
//     a taste over the 31 tags that depends on onehot_feat0 and
//     onehot_feat6 (a user × item interaction only a non-linear learner can
//     use).
//   - A video has a length (lognormal, median ≈ 9.6 s, IQR ≈ 7.5–11.9 s,
//     min 3.07 s in the small matrix, a 6 % long tail up to 315 s), 1–4
//     tags, and a quality q = mean tag effect + own effect (−0.2 for ads),
//     which drifts from day to day (AR(1)).
//   - One view: with probability logistic(a0 − a1·(b + q)) a skip
//     (play 0–0.5 s); else ln play = ln 7.5 s + b + taste·tags + q_day +
//     hour and weekend effects + noise, with rare long replays; play time
//     does not depend on the video's length, so watch_ratio falls as 1 /
//     length (KuaiRec's duration bias). watch_ratio =
//     play_duration / video_duration.
//   - item_daily_features is label-free: each day's counters are drawn from
//     the model's expectations for that video and day (complete / valid /
//     long / short plays from the play-time distribution, play_progress
//     near the video's expected watch ratio that day) with their own noise,
//     never from the generated interactions.

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"okstream/learner/rng"
)

// Real population sizes (KuaiRec 2.0's files).
const (
	RealSmallUsers  = 1411
	RealSmallVideos = 3327
	RealBigUsers    = 7176
	RealBigVideos   = 10728
	// DefaultBigDensity is the mean share of the big matrix's videos a user
	// watched (12,530,806 / (7,176 · 10,728) ≈ 0.163, duplicates included).
	DefaultBigDensity = 0.15
)

// Collection window: 2020-07-05 .. 2020-09-05 (63 days).
const (
	firstDate = 20200705
	lastDate  = 20200905
	numDays   = 63
	// collectFrom is the first day with collect_* counters in the real item_daily_features.csv.
	collectFrom = 20200728
)

// GenConfig configures Generate.
type GenConfig struct {
	// Users × Videos is the small matrix (the real one is 1,411 × 3,327,
	// 4.68 M rows).
	Users, Videos int
	// BigUsers and BigVideos are the big matrix's populations, supersets of
	// the small one's (0: scaled from Users and Videos as in the real data,
	// 7,176 / 1,411 and 10,728 / 3,327, capped at 7,176 and 10,728).
	BigUsers, BigVideos int
	// BigDensity is the median share of the big videos a big-matrix user
	// watched (0: DefaultBigDensity).
	BigDensity float64
	// Seed determines every byte of the output.
	Seed uint64
	// Progress, if not nil, is called with the number of matrix rows
	// written so far (small, then big) and the expected total.
	Progress func(done, total int64)
	// Command is the command line recorded in SYNTHETIC.md (optional).
	Command string
}

func (c GenConfig) withDefaults() GenConfig {
	if c.BigUsers == 0 {
		c.BigUsers = min(RealBigUsers, max(c.Users, int(math.Round(float64(c.Users)*RealBigUsers/RealSmallUsers))))
	}
	if c.BigVideos == 0 {
		c.BigVideos = min(RealBigVideos, max(c.Videos, int(math.Round(float64(c.Videos)*RealBigVideos/RealSmallVideos))))
	}
	if c.BigDensity == 0 {
		c.BigDensity = DefaultBigDensity
	}
	return c
}

func (c GenConfig) check() error {
	switch {
	case c.Users < 1 || c.Videos < 1:
		return fmt.Errorf("kuairec: generator: %d users × %d videos: both must be at least 1", c.Users, c.Videos)
	case c.BigUsers < c.Users || c.BigUsers > RealBigUsers:
		return fmt.Errorf("kuairec: generator: %d big-matrix users: need %d (the small matrix's users) to %d (KuaiRec's user ID space)", c.BigUsers, c.Users, RealBigUsers)
	case c.BigVideos < c.Videos || c.BigVideos > RealBigVideos:
		return fmt.Errorf("kuairec: generator: %d big-matrix videos: need %d (the small matrix's videos) to %d (KuaiRec 2.0's video ID space)", c.BigVideos, c.Videos, RealBigVideos)
	case !(c.BigDensity > 0 && c.BigDensity <= 1):
		return fmt.Errorf("kuairec: generator: big-matrix density %v: want a share in (0, 1]", c.BigDensity)
	}
	return nil
}

// GenSummary describes what Generate wrote.
type GenSummary struct {
	Config        GenConfig
	Dir           string // the data folder
	SmallRows     int64
	SmallUntimed  int64
	SmallPositive int64 // timed small-matrix rows with watch_ratio > 0.75
	BigRows       int64
	BigDuplicates int64
	UserRows      int
	VideoRows     int
	DailyRows     int64
	SocialRows    int
}

// LabelRate returns P(watch_ratio > 0.75) over the timed small-matrix rows.
func (s *GenSummary) LabelRate() float64 {
	t := s.SmallRows - s.SmallUntimed
	if t == 0 {
		return 0
	}
	return float64(s.SmallPositive) / float64(t)
}

// Salts of the generator's independent streams.
const (
	saltPop    = 0x706f70756c617469
	saltUser   = 0x7573657273000000
	saltVideo  = 0x766964656f730000
	saltSmall  = 0x736d616c6c000000
	saltBig    = 0x6269670000000000
	saltDaily  = 0x6461696c79000000
	saltSocial = 0x736f6369616c0000
	saltModel  = 0x6d6f64656c000000
)

// Model parameters (calibrated against KuaiRec 2.0's published statistics; see synth_test.go).
const (
	mLnBase     = 8.97 // ln 7,860 ms: median play time of a non-skip view
	mNoise      = 0.24 // sd of a view's own log play time
	mUserResid  = 0.12 // sd of the user effect not explained by attributes
	mVideoOwn   = 0.18 // sd of a video's own effect
	mTagEffect  = 0.10 // sd of a tag's effect
	mTaste      = 0.08 // sd of a taste entry (per code, per tag)
	mAdEffect   = -0.20
	mDriftPhi   = 0.9  // AR(1) coefficient of the daily drift
	mDriftSD    = 0.05 // its innovation sd
	mSkipA0     = -2.9 // skip logit intercept
	mSkipA1     = 1.2  // skip logit slope in −(b + q)
	mSwipeA0    = -2.9 // early-swipe (0.5–3.5 s) logit intercept
	mReplayP    = 0.04
	mReplayRate = 0.9 // ln play += mReplayRate·Exp(1) on a long replay
	mHourEffect = 0.06
	mWeekend    = 0.03
	mUserSD     = 0.22 // sd of b + taste over users (for the daily expectations)
	mJitterP    = 0.01 // rows whose video_duration differs slightly (re-encodes)
	mUntimedP   = 181992.0 / 4676570
	mActiveDay  = 0.974 // 61.4 of 63 days
	mDayMean    = 51.9  // events per active user-day: mean
	mDaySD      = 32.6  // and sd (negative binomial)
	mBlockRate  = 17827.0 / 4694397
	mBigDupP    = 965819.0 / 11564987
	mBigSpread  = 0.5 // sd of ln(rows per big-matrix user)
	mLateDateP  = 0.5 // events in the last 4 minutes of a day filed under the next date
)

// tagShare is each tag's share of all tag occurrences (the real item_categories.csv; tag 29,
// 0.0 % there, gets a token share).
var tagShare = [NumTags]float64{0.2, 3.6, 1.7, 0.8, 1.3, 7.6, 7.2, 4.0, 8.8, 5.5, 1.3, 16.0, 4.2, 1.9, 0.5, 2.9,
	1.7, 2.8, 1.0, 5.4, 2.1, 0.2, 0.2, 0.3, 0.1, 3.7, 3.9, 0.2, 10.7, 0.02, 0.2}

// tagCountP are the probabilities of 1, 2, 3 and 4 tags per video.
var tagCountP = []float64{0.836, 0.146, 0.017, 0.001}

// oneHotCard are the cardinalities of onehot_feat0..17 in the real user_features.csv.
var oneHotCard = [18]int{2, 8, 30, 1076, 12, 10, 3, 47, 340, 7, 5, 3, 2, 2, 2, 2, 2, 2}

// tagWords name the synthetic video tags and categories (one per tag).
var tagWords = [NumTags]string{"美食", "搞笑", "萌宠", "音乐", "舞蹈", "游戏", "体育", "旅行", "时尚", "美妆", "教育",
	"科技", "汽车", "影视", "亲子", "三农", "健身", "情感", "生活", "摄影", "动漫", "历史", "军事", "财经", "房产", "家居",
	"手工", "读书", "宠物", "祝福", "风景"}

// world is the drawn population and the model's fixed draws.
type world struct {
	cfg        GenConfig
	bigUsers   []int // sorted
	smallUsers []int // sorted subset
	bigVideos  []int
	smallVid   []int
	isSmallU   map[int]bool
	users      map[int]*genUser
	videos     map[int]*genVideo
	smallAuth  []int // distinct authors of small videos

	tagEff    [NumTags]float64
	taste0    [2][NumTags]float64 // by onehot_feat0
	taste6    [3][NumTags]float64 // by onehot_feat6
	codeEff1  []float64           // by onehot_feat1
	codeEff2  []float64           // by onehot_feat2
	codeProbs [18][]float64       // cumulative code distributions

	hourCum    []float64 // 24 hours
	bigDayCum  []float64 // big matrix: day weights (windows)
	d0         int       // day number of firstDate
	cumTagP    []float64
	cumTagCnt  []float64
	uploadPool int
}

type genUser struct {
	row   User
	b     float64
	taste *[NumTags]float64
}

type genVideo struct {
	id         int
	small      bool
	author     int
	durMS      int64
	minLen     int64 // shortest length a re-encode may give
	tags       []int
	tagW       float64 // 1/√n
	q          float64
	drift      [numDays]float64
	ad         bool
	visible    string
	width      int
	height     int
	music      int64
	tagID      int
	upload     int // day number
	uploadType string
	pop        float64
	rates      videoRates
}

type videoRates struct {
	play, like, comment, follow, share, download, report, reduce, collect, stay float64
}

// Generate writes a synthetic KuaiRec 2.0 folder under root: root/"KuaiRec
// 2.0"/data/ with the seven files, and root/"KuaiRec 2.0"/SYNTHETIC.md. The
// same GenConfig (Progress and Command aside) gives the same bytes.
func Generate(root string, cfg GenConfig) (*GenSummary, error) {
	cfg = cfg.withDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	base := filepath.Join(root, ArchiveDir)
	data := filepath.Join(base, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, fmt.Errorf("kuairec: generator: %w", err)
	}
	w := newWorld(cfg)
	sum := &GenSummary{Config: cfg, Dir: data}
	total := w.expectedRows()
	var done int64
	progress := func(n int64) {
		done += n
		if cfg.Progress != nil {
			cfg.Progress(done, total)
		}
	}
	steps := []struct {
		file string
		fn   func(*bufio.Writer) error
	}{
		{SmallMatrixFile, func(b *bufio.Writer) error { return w.writeSmall(b, sum, progress) }},
		{BigMatrixFile, func(b *bufio.Writer) error { return w.writeBig(b, sum, progress) }},
		{UserFeaturesFile, func(b *bufio.Writer) error { return w.writeUsers(b, sum) }},
		{CategoriesFile, func(b *bufio.Writer) error { return w.writeCategories(b, sum) }},
		{DailyFile, func(b *bufio.Writer) error { return w.writeDaily(b, sum) }},
		{SocialFile, func(b *bufio.Writer) error { return w.writeSocial(b, sum) }},
		{CaptionFile, func(b *bufio.Writer) error { return w.writeCaptions(b) }},
	}
	for _, s := range steps {
		if err := writeFile(filepath.Join(data, s.file), s.fn); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(base, SyntheticMarker), []byte(syntheticReadme(sum)), 0o644); err != nil {
		return nil, fmt.Errorf("kuairec: generator: %w", err)
	}
	return sum, nil
}

func writeFile(path string, fn func(*bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("kuairec: generator: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	err = fn(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("kuairec: generator: writing %s: %w", path, err)
	}
	return nil
}

func newWorld(cfg GenConfig) *world {
	w := &world{cfg: cfg, d0: DayNumber(firstDate)}
	pop := rng.New(rng.Derive(cfg.Seed, saltPop))
	w.bigUsers = sortedSample(pop, RealBigUsers, cfg.BigUsers)
	w.smallUsers = sortedSubset(pop, w.bigUsers, cfg.Users)
	w.bigVideos = sortedSample(pop, RealBigVideos, cfg.BigVideos)
	w.smallVid = sortedSubset(pop, w.bigVideos, cfg.Videos)
	w.isSmallU = make(map[int]bool, len(w.smallUsers))
	for _, u := range w.smallUsers {
		w.isSmallU[u] = true
	}

	// Fixed model draws.
	m := rng.New(rng.Derive(cfg.Seed, saltModel))
	for t := range w.tagEff {
		w.tagEff[t] = gauss(m, 0, mTagEffect)
	}
	for c := range w.taste0 {
		for t := range NumTags {
			w.taste0[c][t] = gauss(m, 0, mTaste)
		}
	}
	for c := range w.taste6 {
		for t := range NumTags {
			w.taste6[c][t] = gauss(m, 0, mTaste)
		}
	}
	for f, card := range oneHotCard {
		p := make([]float64, card)
		if card == 2 {
			p1 := 0.1 + float64(0.5*m.Float64())
			p[0], p[1] = 1-p1, p1
		} else {
			// Zipf-like over a random order of the codes.
			perm := m.Perm(card)
			for k, c := range perm {
				p[c] = pexp(float64(-1.1 * plog(float64(k+1))))
			}
		}
		w.codeProbs[f] = cumsum(p)
	}
	w.codeEff1 = codeEffects(m, w.codeProbs[1], 0.08)
	w.codeEff2 = codeEffects(m, w.codeProbs[2], 0.05)
	// Center the shared effects, so that the population's mean play time
	// (and so the label rate) does not move with the seed: tag effects and
	// every taste vector average to 0 over the tag shares.
	centerShares(w.tagEff[:])
	for c := range w.taste0 {
		centerShares(w.taste0[c][:])
	}
	for c := range w.taste6 {
		centerShares(w.taste6[c][:])
	}
	hours := make([]float64, 24)
	for h := range hours {
		hours[h] = 1 + float64(0.416*rng.Cos(2*math.Pi*float64(h-10)/24))
	}
	w.hourCum = cumsum(hours)
	bd := make([]float64, numDays)
	for i := range bd {
		date := DateOfDay(w.d0 + i)
		switch {
		case date >= 20200705 && date <= 20200712, date >= 20200801 && date <= 20200810, date >= 20200827 && date <= 20200905:
			bd[i] = 1
		default:
			bd[i] = 0.02
		}
	}
	w.bigDayCum = cumsum(bd)
	w.cumTagP = cumsum(tagShare[:])
	w.cumTagCnt = cumsum(tagCountP)

	// Videos.
	small := map[int]bool{}
	for _, v := range w.smallVid {
		small[v] = true
	}
	w.uploadPool = max(1, int(math.Ceil(float64(cfg.BigVideos)/1.5)))
	w.videos = make(map[int]*genVideo, len(w.bigVideos))
	authors := map[int]bool{}
	for _, id := range w.bigVideos {
		v := w.newVideo(id, small[id])
		w.videos[id] = v
		if v.small && !authors[v.author] {
			authors[v.author] = true
			w.smallAuth = append(w.smallAuth, v.author)
		}
	}
	slices.Sort(w.smallAuth)
	// Users.
	w.users = make(map[int]*genUser, len(w.bigUsers))
	for _, id := range w.bigUsers {
		w.users[id] = w.newUser(id)
	}
	return w
}

// codeEffects draws an effect per code (sd s) and centers them on the
// codes' distribution (cum: cumulative probabilities).
func codeEffects(r *rng.Source, cum []float64, s float64) []float64 {
	e := make([]float64, len(cum))
	mean, prev := 0.0, 0.0
	for k := range e {
		e[k] = gauss(r, 0, s)
		mean += float64(e[k] * (cum[k] - prev))
		prev = cum[k]
	}
	mean /= cum[len(cum)-1]
	for k := range e {
		e[k] -= mean
	}
	return e
}

// centerShares subtracts from v (one value per tag) its mean weighted by
// the tag shares.
func centerShares(v []float64) {
	mean, tot := 0.0, 0.0
	for t, x := range v {
		mean += float64(x * tagShare[t])
		tot += tagShare[t]
	}
	mean /= tot
	for t := range v {
		v[t] -= mean
	}
}

// sortedSample draws k of 0..n-1, sorted.
func sortedSample(r *rng.Source, n, k int) []int {
	s := r.Sample(n, k)
	slices.Sort(s)
	return s
}

// sortedSubset draws k elements of the sorted slice from, sorted.
func sortedSubset(r *rng.Source, from []int, k int) []int {
	idx := r.Sample(len(from), k)
	slices.Sort(idx)
	out := make([]int, k)
	for i, j := range idx {
		out[i] = from[j]
	}
	return out
}

func (w *world) newVideo(id int, small bool) *genVideo {
	r := rng.New(rng.Derive(rng.Derive(w.cfg.Seed, saltVideo), uint64(id)))
	v := &genVideo{id: id, small: small}
	v.author = r.IntN(w.uploadPool)
	// Length: a lognormal core, a bump near one minute and a long tail.
	var d float64
	switch u := r.Float64(); {
	case u < 0.94:
		d = lognormal(r, 9300, 0.30)
	case u < 0.97:
		d = math.Min(math.Max(gauss(r, 58000, 2500), 50000), 62000)
	default:
		d = math.Min(lognormal(r, 100000, 0.5), 315072)
	}
	minLen := 1000.0
	if small {
		minLen = 3067
	}
	v.minLen = int64(minLen)
	v.durMS = int64(math.Round(math.Max(d, minLen)))
	// Tags.
	n := categorical(r, w.cumTagCnt) + 1
	for len(v.tags) < n {
		t := categorical(r, w.cumTagP)
		if !slices.Contains(v.tags, t) {
			v.tags = append(v.tags, t)
		}
	}
	v.tagW = 1 / math.Sqrt(float64(n))
	q := 0.0
	for _, t := range v.tags {
		q += w.tagEff[t]
	}
	q = q/float64(n) + gauss(r, 0, mVideoOwn)
	v.ad = r.Float64() < 0.02
	if v.ad {
		q += mAdEffect
	}
	v.q = q
	x := gauss(r, 0, mDriftSD/math.Sqrt(1-float64(mDriftPhi*mDriftPhi)))
	for i := range v.drift {
		v.drift[i] = x
		x = float64(mDriftPhi*x) + gauss(r, 0, mDriftSD)
	}
	v.visible = "public"
	if r.Float64() < 0.015 {
		v.visible = "private"
	}
	switch u := r.Float64(); {
	case u < 0.72:
		v.width, v.height = 720, 1280
	case u < 0.90:
		v.width, v.height = 1280, 720
	case u < 0.96:
		v.width, v.height = 540, 960
	default:
		v.width, v.height = 720, 720
	}
	v.music = 100000000 + int64(r.Uint64N(4000000000))
	v.tagID = r.IntN(3000)
	// Upload day.
	switch {
	case small:
		v.upload = DayNumber(20200101) + r.IntN(w.d0-DayNumber(20200101))
	case r.Float64() < 0.05:
		v.upload = DayNumber(20190601) + r.IntN(w.d0-DayNumber(20190601))
	default:
		u := pexp(plog(r.OpenFloat64()) / 3) // U^(1/3): later days more likely
		v.upload = w.d0 + min(numDays-1, int(float64(numDays)*u))
	}
	switch u := r.Float64(); {
	case u < 0.45:
		v.uploadType = "ShortImport"
	case u < 0.72:
		v.uploadType = "ShortCamera"
	case u < 0.92:
		v.uploadType = "LongImport"
	default:
		v.uploadType = "LongCamera"
	}
	if small {
		v.pop = lognormal(r, 20000, 1.0)
	} else {
		v.pop = lognormal(r, 3000, 1.3)
	}
	v.rates = videoRates{
		play:     logistic(1.2 + float64(0.8*q) + gauss(r, 0, 0.3)),
		like:     float64(0.025 * pexp(float64(1.5*q)+gauss(r, 0, 0.4))),
		comment:  float64(0.0015 * pexp(q+gauss(r, 0, 0.5))),
		follow:   float64(0.004 * pexp(q+gauss(r, 0, 0.5))),
		share:    float64(0.002 * pexp(q+gauss(r, 0, 0.5))),
		download: float64(0.001 * pexp(q+gauss(r, 0, 0.5))),
		report:   float64(0.0002 * pexp(-q+gauss(r, 0, 0.5))),
		reduce:   float64(0.003 * pexp(float64(-1.5*q)+gauss(r, 0, 0.4))),
		collect:  float64(0.003 * pexp(q+gauss(r, 0, 0.5))),
		stay:     lognormal(r, 600, 0.5),
	}
	return v
}

func (w *world) newUser(id int) *genUser {
	r := rng.New(rng.Derive(rng.Derive(w.cfg.Seed, saltUser), uint64(id)))
	u := User{UserID: id}
	b := 0.0
	switch p := r.Float64(); {
	case p < 0.849:
		u.ActiveDegree = "full_active"
	case p < 0.849+0.131:
		u.ActiveDegree = "high_active"
		b -= 0.06
	case p < 0.849+0.131+0.016:
		u.ActiveDegree = "UNKNOWN"
		b += 0.05
	default:
		u.ActiveDegree = "middle_active"
		b -= 0.12
	}
	u.IsLowactivePeriod = flag(r, 0.0004)
	u.IsLiveStreamer = flag(r, 0.0068)
	u.IsVideoAuthor = flag(r, 0.1696)
	if r.Float64() >= 0.04 {
		u.FollowUserNum = max(1, int64(math.Round(lognormal(r, 35, 1.2))))
	}
	fans0, fansMed, fansSD := 0.25, 4.0, 1.6
	if u.IsVideoAuthor == 1 {
		fans0, fansMed, fansSD = 0.05, 30, 2.0
	}
	if r.Float64() >= fans0 {
		u.FansUserNum = min(99999, max(1, int64(math.Round(lognormal(r, fansMed, fansSD)))))
	}
	if r.Float64() >= 0.3 {
		u.FriendUserNum = min(2000, max(1, int64(math.Round(lognormal(r, 5, 1.1)))))
	}
	u.RegisterDays = max(15, int64(math.Round(lognormal(r, 400, 0.85))))
	u.FollowUserNumRange = FollowRange(u.FollowUserNum)
	u.FansUserNumRange = FansRange(u.FansUserNum)
	u.FriendUserNumRange = FriendRange(u.FriendUserNum)
	u.RegisterDaysRange = RegisterRange(u.RegisterDays)
	for k := range u.OneHot {
		u.OneHot[k] = categorical(r, w.codeProbs[k])
	}
	// Missing codes: feat4 alone (≈ 2.8 %), feat12..17 together (≈ 1.04 %),
	// feat12 alone a little more often.
	if r.Float64() < 0.028 {
		u.OneHot[4] = Missing
	}
	if r.Float64() < 0.0104 {
		for k := 12; k <= 17; k++ {
			u.OneHot[k] = Missing
		}
	} else if r.Float64() < 0.0003 {
		u.OneHot[12] = Missing
	}
	// Effect of the attributes.
	b += float64(0.10 * (bit(u.OneHot[0]) - w.share1(0)))
	b += w.codeEff1[u.OneHot[1]] + w.codeEff2[u.OneHot[2]]
	if u.IsVideoAuthor == 1 {
		b += 0.05
	}
	b += float64(0.04 * (plog(float64(1+u.RegisterDays)) - 6))
	b += float64(0.02 * (plog(float64(1+u.FollowUserNum)) - 3.5))
	b += float64(0.06 * (bit(u.OneHot[12]) - w.share1(12)))
	b += gauss(r, 0, mUserResid)
	taste := new([NumTags]float64)
	t0 := &w.taste0[max(u.OneHot[0], 0)]
	t6 := &w.taste6[max(u.OneHot[6], 0)]
	for t := range taste {
		taste[t] = t0[t] + t6[t]
	}
	return &genUser{row: u, b: b, taste: taste}
}

// share1 is the probability of code 1 of a binary onehot feature.
func (w *world) share1(f int) float64 {
	c := w.codeProbs[f]
	return (c[1] - c[0]) / c[1]
}

func flag(r *rng.Source, p float64) int {
	if r.Float64() < p {
		return 1
	}
	return 0
}

// view draws one view's play time (ms) of video v by user u on day index
// di (0 = 2020-07-05) at local hour h.
func (w *world) view(r *rng.Source, u *genUser, v *genVideo, di int, h float64, weekend bool) int64 {
	q := v.q + v.drift[min(max(di, 0), numDays-1)]
	skip := logistic(mSkipA0 - float64(mSkipA1*(u.b+q)))
	if r.Float64() < skip {
		if r.Float64() < 0.3 {
			return 0
		}
		return int64(r.IntN(500))
	}
	if r.Float64() < logistic(mSwipeA0-float64(mSkipA1*(u.b+q))) {
		return 500 + int64(r.IntN(3000)) // an early swipe
	}
	taste := 0.0
	for _, t := range v.tags {
		taste += u.taste[t]
	}
	taste = float64(taste * v.tagW)
	lp := mLnBase + u.b + taste + q + float64(mHourEffect*rng.Cos(2*math.Pi*(h-21)/24)) + float64(mNoise*r.Normal())
	if weekend {
		lp += mWeekend
	}
	if r.Float64() < mReplayP {
		lp += float64(mReplayRate * r.Exp())
	}
	// The real maximum watch ratio is 571.5 (small matrix).
	return min(int64(math.Round(pexp(lp))), 571*v.durMS)
}

// expectedRows estimates the matrix rows, for progress.
func (w *world) expectedRows() int64 {
	small := int64(w.cfg.Users) * int64(w.cfg.Videos)
	big := int64(float64(w.cfg.BigUsers) * w.cfg.BigDensity * float64(w.cfg.BigVideos) * 1.2)
	return small + big
}
