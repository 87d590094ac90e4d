package kuairec

import (
	"errors"
	"fmt"
	"io"
	"strconv"
)

// UserColumns are the 31 columns of user_features.csv, in file order.
var UserColumns = func() []string {
	c := []string{"user_id", "user_active_degree", "is_lowactive_period", "is_live_streamer", "is_video_author",
		"follow_user_num", "follow_user_num_range", "fans_user_num", "fans_user_num_range",
		"friend_user_num", "friend_user_num_range", "register_days", "register_days_range"}
	for k := range 18 {
		c = append(c, "onehot_feat"+strconv.Itoa(k))
	}
	return c
}()

// Missing marks an empty integer field (pandas' NaN) in User and
// elsewhere; real values are never negative.
const Missing = -1

// Canonical column indices of user_features.csv (positions in UserColumns).
const (
	ucUserID = iota
	ucActiveDegree
	ucLowactive
	ucLiveStreamer
	ucVideoAuthor
	ucFollow
	ucFollowRange
	ucFans
	ucFansRange
	ucFriend
	ucFriendRange
	ucRegister
	ucRegisterRange
	ucOneHot0
)

// User is one row of user_features.csv. Integer fields hold Missing when
// the file leaves them empty (in the real file only onehot_feat4 and
// onehot_feat12…17 do).
type User struct {
	UserID             int
	ActiveDegree       string // full_active, high_active, middle_active or UNKNOWN
	IsLowactivePeriod  int    // 0/1
	IsLiveStreamer     int    // 0/1
	IsVideoAuthor      int    // 0/1
	FollowUserNum      int64
	FollowUserNumRange string // "0", "(0,10]", ..., "500+"
	FansUserNum        int64
	FansUserNumRange   string // "0", "[1,10)", ..., "[1w,10w)"
	FriendUserNum      int64
	FriendUserNumRange string // "0", "[1,5)", ..., "250+"
	RegisterDays       int64
	RegisterDaysRange  string // "15-30", ..., "730+"
	OneHot             [18]int
}

// UserFormat holds the per-file writing choices of user_features.csv: which
// numeric columns (by index into UserColumns) are written as floats
// ("1.0"), as pandas writes a column that has missing values.
type UserFormat struct {
	FloatCols [31]bool
}

// DefaultUserFormat is the style of the real file: onehot_feat4 and
// onehot_feat12…17, the columns with missing values, are floats.
func DefaultUserFormat() UserFormat {
	var f UserFormat
	f.FloatCols[ucOneHot0+4] = true
	for k := 12; k <= 17; k++ {
		f.FloatCols[ucOneHot0+k] = true
	}
	return f
}

func (u *User) ints() [31]int64 {
	var v [31]int64
	v[ucUserID] = int64(u.UserID)
	v[ucLowactive] = int64(u.IsLowactivePeriod)
	v[ucLiveStreamer] = int64(u.IsLiveStreamer)
	v[ucVideoAuthor] = int64(u.IsVideoAuthor)
	v[ucFollow] = u.FollowUserNum
	v[ucFans] = u.FansUserNum
	v[ucFriend] = u.FriendUserNum
	v[ucRegister] = u.RegisterDays
	for k, c := range u.OneHot {
		v[ucOneHot0+k] = int64(c)
	}
	return v
}

// AppendUser appends u as one line of user_features.csv.
func AppendUser(b []byte, u *User, f UserFormat) []byte {
	v := u.ints()
	for j := range UserColumns {
		if j > 0 {
			b = append(b, ',')
		}
		switch j {
		case ucActiveDegree:
			b = appendField(b, u.ActiveDegree)
		case ucFollowRange:
			b = appendField(b, u.FollowUserNumRange)
		case ucFansRange:
			b = appendField(b, u.FansUserNumRange)
		case ucFriendRange:
			b = appendField(b, u.FriendUserNumRange)
		case ucRegisterRange:
			b = appendField(b, u.RegisterDaysRange)
		default:
			b = appendInt(b, v[j], f.FloatCols[j])
		}
	}
	return append(b, '\n')
}

// appendInt appends an integer column value: empty for Missing (or any
// negative value), "3.0" in float style, else "3".
func appendInt(b []byte, v int64, float bool) []byte {
	if v < 0 {
		return b
	}
	b = strconv.AppendInt(b, v, 10)
	if float {
		b = append(b, ".0"...)
	}
	return b
}

// ReadUsers reads user_features.csv.
func ReadUsers(path string) ([]User, UserFormat, error) {
	r, err := openCSV(path)
	if err != nil {
		return nil, UserFormat{}, err
	}
	defer r.close()
	return readUsers(r)
}

func readUsers(r *csvReader) ([]User, UserFormat, error) {
	var f UserFormat
	idx, err := r.readHeader(UserColumns)
	if err != nil {
		return nil, f, err
	}
	var out []User
	var fields [][]byte
	for {
		err := r.next()
		if errors.Is(err, io.EOF) {
			return out, f, nil
		}
		if err != nil {
			return nil, f, err
		}
		if fields, err = r.record(idx, fields); err != nil {
			return nil, f, err
		}
		var u User
		var v [31]int64
		for j, fb := range fields {
			switch j {
			case ucActiveDegree:
				u.ActiveDegree = string(fb)
			case ucFollowRange:
				u.FollowUserNumRange = string(fb)
			case ucFansRange:
				u.FansUserNumRange = string(fb)
			case ucFriendRange:
				u.FriendUserNumRange = string(fb)
			case ucRegisterRange:
				u.RegisterDaysRange = string(fb)
			default:
				x, ok, msg := parseInt(fb)
				switch {
				case msg != "":
					return nil, f, r.errorf(idx[j], "%s", msg)
				case !ok && j == ucUserID:
					return nil, f, r.errorf(idx[j], "empty user_id")
				case !ok:
					x = Missing
				case x < 0:
					return nil, f, r.errorf(idx[j], "negative value %d", x)
				}
				if isFloatText(fb) {
					f.FloatCols[j] = true
				}
				v[j] = x
			}
		}
		u.UserID = int(v[ucUserID])
		u.IsLowactivePeriod = int(v[ucLowactive])
		u.IsLiveStreamer = int(v[ucLiveStreamer])
		u.IsVideoAuthor = int(v[ucVideoAuthor])
		u.FollowUserNum = v[ucFollow]
		u.FansUserNum = v[ucFans]
		u.FriendUserNum = v[ucFriend]
		u.RegisterDays = v[ucRegister]
		for k := range u.OneHot {
			u.OneHot[k] = int(v[ucOneHot0+k])
		}
		out = append(out, u)
	}
}

// WriteUsers writes user_features.csv.
func WriteUsers(w io.Writer, users []User, f UserFormat) error {
	b := appendHeader(nil, UserColumns)
	for i := range users {
		b = AppendUser(b, &users[i], f)
	}
	_, err := w.Write(b)
	return err
}

// Range buckets of user_features.csv, as the real file writes them.

// FollowRange returns follow_user_num_range for a count.
func FollowRange(n int64) string {
	switch {
	case n <= 0:
		return "0"
	case n <= 10:
		return "(0,10]"
	case n <= 50:
		return "(10,50]"
	case n <= 100:
		return "(50,100]"
	case n <= 150:
		return "(100,150]"
	case n <= 250:
		return "(150,250]"
	case n <= 500:
		return "(250,500]"
	}
	return "500+"
}

// FansRange returns fans_user_num_range for a count (the real file's
// buckets end at 10w = 100,000; larger counts get "10w+", a bucket the
// real file does not show).
func FansRange(n int64) string {
	switch {
	case n <= 0:
		return "0"
	case n < 10:
		return "[1,10)"
	case n < 100:
		return "[10,100)"
	case n < 1000:
		return "[100,1k)"
	case n < 5000:
		return "[1k,5k)"
	case n < 10000:
		return "[5k,1w)"
	case n < 100000:
		return "[1w,10w)"
	}
	return "10w+"
}

// FriendRange returns friend_user_num_range for a count.
func FriendRange(n int64) string {
	switch {
	case n <= 0:
		return "0"
	case n < 5:
		return "[1,5)"
	case n < 30:
		return "[5,30)"
	case n < 60:
		return "[30,60)"
	case n < 120:
		return "[60,120)"
	case n < 250:
		return "[120,250)"
	}
	return "250+"
}

// RegisterRange returns register_days_range for a number of days (the
// real file has no user registered less than 15 days; such a count gets
// "15-30" too).
func RegisterRange(n int64) string {
	switch {
	case n <= 30:
		return "15-30"
	case n <= 60:
		return "31-60"
	case n <= 90:
		return "61-90"
	case n <= 180:
		return "91-180"
	case n <= 365:
		return "181-365"
	case n <= 730:
		return "366-730"
	}
	return "730+"
}

// checkRanges reports the first range column of u that disagrees with its
// count (for tests and the generator's self-check).
func (u *User) checkRanges() error {
	for _, c := range []struct {
		name, got, want string
	}{
		{"follow_user_num_range", u.FollowUserNumRange, FollowRange(u.FollowUserNum)},
		{"fans_user_num_range", u.FansUserNumRange, FansRange(u.FansUserNum)},
		{"friend_user_num_range", u.FriendUserNumRange, FriendRange(u.FriendUserNum)},
		{"register_days_range", u.RegisterDaysRange, RegisterRange(u.RegisterDays)},
	} {
		if c.got != c.want {
			return fmt.Errorf("user %d: %s is %q, want %q", u.UserID, c.name, c.got, c.want)
		}
	}
	return nil
}
