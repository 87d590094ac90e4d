package kuairec

import (
	"errors"
	"io"
	"math"
	"strconv"
)

// DailyCol is a column of item_daily_features.csv, numbered in file order.
type DailyCol int

// The 58 columns of item_daily_features.csv, in file order.
const (
	DVideoID DailyCol = iota
	DDate
	DAuthorID
	DVideoType
	DUploadDT
	DUploadType
	DVisibleStatus
	DVideoDuration
	DVideoWidth
	DVideoHeight
	DMusicID
	DVideoTagID
	DVideoTagName
	DShowCnt
	DShowUserNum
	DPlayCnt
	DPlayUserNum
	DPlayDuration
	DCompletePlayCnt
	DCompletePlayUserNum
	DValidPlayCnt
	DValidPlayUserNum
	DLongTimePlayCnt
	DLongTimePlayUserNum
	DShortTimePlayCnt
	DShortTimePlayUserNum
	DPlayProgress
	DCommentStayDuration
	DLikeCnt
	DLikeUserNum
	DClickLikeCnt
	DDoubleClickCnt
	DCancelLikeCnt
	DCancelLikeUserNum
	DCommentCnt
	DCommentUserNum
	DDirectCommentCnt
	DReplyCommentCnt
	DDeleteCommentCnt
	DDeleteCommentUserNum
	DCommentLikeCnt
	DCommentLikeUserNum
	DFollowCnt
	DFollowUserNum
	DCancelFollowCnt
	DCancelFollowUserNum
	DShareCnt
	DShareUserNum
	DDownloadCnt
	DDownloadUserNum
	DReportCnt
	DReportUserNum
	DReduceSimilarCnt
	DReduceSimilarUserNum
	DCollectCnt
	DCollectUserNum
	DCancelCollectCnt
	DCancelCollectUserNum
	NumDailyCols // 58
)

// DailyColumns are the column names of item_daily_features.csv, in file
// order (index by DailyCol).
var DailyColumns = []string{
	"video_id", "date", "author_id", "video_type", "upload_dt", "upload_type", "visible_status",
	"video_duration", "video_width", "video_height", "music_id", "video_tag_id", "video_tag_name",
	"show_cnt", "show_user_num", "play_cnt", "play_user_num", "play_duration",
	"complete_play_cnt", "complete_play_user_num", "valid_play_cnt", "valid_play_user_num",
	"long_time_play_cnt", "long_time_play_user_num", "short_time_play_cnt", "short_time_play_user_num",
	"play_progress", "comment_stay_duration",
	"like_cnt", "like_user_num", "click_like_cnt", "double_click_cnt", "cancel_like_cnt", "cancel_like_user_num",
	"comment_cnt", "comment_user_num", "direct_comment_cnt", "reply_comment_cnt", "delete_comment_cnt", "delete_comment_user_num",
	"comment_like_cnt", "comment_like_user_num",
	"follow_cnt", "follow_user_num", "cancel_follow_cnt", "cancel_follow_user_num",
	"share_cnt", "share_user_num", "download_cnt", "download_user_num",
	"report_cnt", "report_user_num", "reduce_similar_cnt", "reduce_similar_user_num",
	"collect_cnt", "collect_user_num", "cancel_collect_cnt", "cancel_collect_user_num",
}

// String returns the column's name.
func (c DailyCol) String() string {
	if c >= 0 && c < NumDailyCols {
		return DailyColumns[c]
	}
	return "DailyCol(" + strconv.Itoa(int(c)) + ")"
}

// IsText reports whether the column holds text.
func (c DailyCol) IsText() bool {
	switch c {
	case DVideoType, DUploadDT, DUploadType, DVisibleStatus, DVideoTagName:
		return true
	}
	return false
}

// DailyRow is one row of item_daily_features.csv: one video on one day.
// Num holds the numeric columns by DailyCol (NaN for an empty field; the
// text columns' and VideoID's/Date's slots are unused). The counters are for
// the whole day, so they include events later that day than any given one.
type DailyRow struct {
	VideoID       int
	Date          int // YYYYMMDD
	VideoType     string
	UploadDT      string // YYYY-MM-DD
	UploadType    string
	VisibleStatus string
	VideoTagName  string
	Num           [NumDailyCols]float64
}

// Get returns a numeric column (NaN if empty).
func (d *DailyRow) Get(c DailyCol) float64 { return d.Num[c] }

func (d *DailyRow) text(c DailyCol) *string {
	switch c {
	case DVideoType:
		return &d.VideoType
	case DUploadDT:
		return &d.UploadDT
	case DUploadType:
		return &d.UploadType
	case DVisibleStatus:
		return &d.VisibleStatus
	case DVideoTagName:
		return &d.VideoTagName
	}
	return nil
}

// DailyFormat holds the per-file writing choices of item_daily_features.csv:
// which numeric columns are written as floats ("17200.0").
type DailyFormat struct {
	FloatCols [NumDailyCols]bool
}

// DefaultDailyFormat is the style of the real file: video_duration,
// play_progress and the four collect columns (empty before 2020-07-28) are
// floats, every other numeric column an integer.
func DefaultDailyFormat() DailyFormat {
	var f DailyFormat
	for _, c := range []DailyCol{DVideoDuration, DPlayProgress, DCollectCnt, DCollectUserNum, DCancelCollectCnt, DCancelCollectUserNum} {
		f.FloatCols[c] = true
	}
	return f
}

// AppendDaily appends d as one line of item_daily_features.csv. An integer
// column's value must be integral (it is written with its fraction
// dropped otherwise).
func AppendDaily(b []byte, d *DailyRow, f DailyFormat) []byte {
	b = strconv.AppendInt(b, int64(d.VideoID), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(d.Date), 10)
	for c := DAuthorID; c < NumDailyCols; c++ {
		b = append(b, ',')
		if s := d.text(c); s != nil {
			b = appendField(b, *s)
			continue
		}
		b = appendNum(b, d.Num[c], f.FloatCols[c])
	}
	return append(b, '\n')
}

// DailyReader streams item_daily_features.csv (343,341 rows in the real
// file).
type DailyReader struct {
	r      *csvReader
	idx    []int
	fields [][]byte
	format DailyFormat
	err    error
}

// OpenDaily opens item_daily_features.csv and reads its header.
func OpenDaily(path string) (*DailyReader, error) {
	r, err := openCSV(path)
	if err != nil {
		return nil, err
	}
	idx, err := r.readHeader(DailyColumns)
	if err != nil {
		r.close()
		return nil, err
	}
	return &DailyReader{r: r, idx: idx}, nil
}

// Close closes the file.
func (dr *DailyReader) Close() error { return dr.r.close() }

// Format returns the float columns seen so far (final after io.EOF).
func (dr *DailyReader) Format() DailyFormat { return dr.format }

// Next reads the next row into d, or returns io.EOF. Errors are as for
// MatrixReader.Next.
func (dr *DailyReader) Next(d *DailyRow) error {
	if dr.err != nil {
		return dr.err
	}
	r := dr.r
	if err := r.next(); err != nil {
		if !errors.Is(err, io.EOF) && !isParseError(err) {
			dr.err = err
		}
		return err
	}
	var err error
	if dr.fields, err = r.record(dr.idx, dr.fields); err != nil {
		return err
	}
	f := dr.fields
	*d = DailyRow{}
	v, ok, msg := parseInt(f[DVideoID])
	if !ok {
		return r.errorf(dr.idx[DVideoID], "%s", orMissing(msg))
	}
	d.VideoID = int(v)
	v, ok, msg = parseInt(f[DDate])
	if !ok || !validDate(int(v)) {
		return r.errorf(dr.idx[DDate], "%s", firstNonEmpty(msg, "bad date "+strconv.Quote(string(f[DDate]))+": want YYYYMMDD"))
	}
	d.Date = int(v)
	d.Num[DVideoID], d.Num[DDate] = float64(d.VideoID), float64(d.Date)
	for c := DAuthorID; c < NumDailyCols; c++ {
		if s := d.text(c); s != nil {
			*s = string(f[c])
			d.Num[c] = math.NaN()
			continue
		}
		x, msg := parseFloat(f[c])
		if msg != "" {
			return r.errorf(dr.idx[c], "%s", msg)
		}
		if isFloatText(f[c]) {
			dr.format.FloatCols[c] = true
		}
		d.Num[c] = x
	}
	return nil
}

// ReadDaily reads a whole item_daily_features.csv.
func ReadDaily(path string) ([]DailyRow, DailyFormat, error) {
	dr, err := OpenDaily(path)
	return readAll[DailyRow, DailyFormat](dr, err)
}

// WriteDaily writes item_daily_features.csv.
func WriteDaily(w io.Writer, rows []DailyRow, f DailyFormat) error {
	return writeRows(w, DailyColumns, rows, f, AppendDaily)
}
