package kuairec

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"okstream/dataset"
)

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMatrixQuirks reads the small matrix's quirks (doc.go, "Readers"): float
// dates, trimmed fractions in time, untimed stage-2 rows with all three
// time fields empty, play_duration 0, a BOM, CRLF line ends, and columns
// in another order.
func TestMatrixQuirks(t *testing.T) {
	src := "\xef\xbb\xbfuser_id,video_id,play_duration,video_duration,time,date,timestamp,watch_ratio\r\n" +
		"14,148,4381,6067,2020-07-05 05:27:48.378,20200705.0,1593898068.378,0.722103\r\n" +
		"14,149,0,6067,2020-07-05 14:42:01.74,20200705.0,1593931321.74,0.0\r\n" +
		"14,150,1000,6067,,,,0.16482610845557935\r\n"
	rows, f, err := ReadMatrix(writeTemp(t, "small_matrix.csv", src))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || !f.FloatDate {
		t.Fatalf("%d rows, format %+v", len(rows), f)
	}
	r := rows[0]
	if r.UserID != 14 || r.VideoID != 148 || r.PlayDuration != 4381 || r.VideoDuration != 6067 ||
		r.Time != "2020-07-05 05:27:48.378" || r.Date != 20200705 || !r.Timed || r.TimestampMS() != 1593898068378 || r.WatchRatio != 0.722103 {
		t.Fatalf("row 0: %+v", r)
	}
	if r.Day() != 20200705 || FormatTime(r.TimestampMS()) != r.Time {
		t.Fatalf("day %d, time %q", r.Day(), FormatTime(r.TimestampMS()))
	}
	if rows[1].PlayDuration != 0 || rows[1].WatchRatio != 0 || FormatTime(rows[1].TimestampMS()) != "2020-07-05 14:42:01.74" {
		t.Fatalf("row 1: %+v", rows[1])
	}
	u := rows[2]
	if u.Timed || !math.IsNaN(u.Timestamp) || u.Date != 0 || u.Time != "" || u.TimestampMS() != 0 || u.Day() != 0 {
		t.Fatalf("untimed row: %+v", u)
	}
	// The README's example: 1593878903.438 is 2020-07-05 00:08:23.438 in Beijing.
	if got := FormatTime(1593878903438); got != "2020-07-05 00:08:23.438" {
		t.Fatalf("FormatTime = %q", got)
	}
	if got := FormatTime(1593878903000); got != "2020-07-05 00:08:23" {
		t.Fatalf("FormatTime of a whole second = %q", got)
	}

	// Big-matrix style (integer dates), columns reordered.
	src2 := "watch_ratio,user_id,video_id,play_duration,video_duration,time,date,timestamp\n" +
		"1.273397,0,3650,13838,10867,2020-07-05 00:08:23.438,20200705,1593878903.438\n"
	rows, f, err = ReadMatrix(writeTemp(t, "big_matrix.csv", src2))
	if err != nil {
		t.Fatal(err)
	}
	if f.FloatDate || rows[0].VideoID != 3650 || rows[0].WatchRatio != 1.273397 || rows[0].Date != 20200705 {
		t.Fatalf("reordered: %+v %+v", rows[0], f)
	}
}

// TestListQuirks reads tag and friend lists written with and without
// blanks, quoted or not, as the real files do.
func TestListQuirks(t *testing.T) {
	src := "video_id,feat\n0,[8]\n1,\"[27, 9]\"\n2,\"[27,9]\"\n3,\"[ 1 ,2, 3 ]\"\n4,[]\n"
	rows, f, err := ReadCategories(writeTemp(t, "item_categories.csv", src))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{8}, {27, 9}, {27, 9}, {1, 2, 3}, {}}
	for i, r := range rows {
		if r.ID != i || !equalInts(r.List, want[i]) {
			t.Fatalf("row %d: %+v, want %v", i, r, want[i])
		}
	}
	if !f.Space {
		t.Fatalf("format %+v: the first multi-tag list has blanks", f)
	}
	social, f, err := ReadSocial(writeTemp(t, "social_network.csv", "user_id,friend_list\n5352,\"[4202,7126]\"\n9,[2975]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Space || social[0].ID != 5352 || !equalInts(social[0].List, []int{4202, 7126}) || !equalInts(social[1].List, []int{2975}) {
		t.Fatalf("social: %+v %+v", social, f)
	}
	for _, bad := range []string{"[a]", "8", "\"[1, 2\"", "[1;2]"} {
		_, _, err := ReadCategories(writeTemp(t, "item_categories.csv", "video_id,feat\n0,"+bad+"\n"))
		var pe *dataset.ParseError
		if !errors.As(err, &pe) || pe.Line != 2 || !strings.Contains(pe.Column, "feat") {
			t.Errorf("list %q: error %v, want a ParseError on line 2, column feat", bad, err)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestUserQuirks reads empty onehot codes and float-typed code columns
// ("1.0"), and quoted range strings with commas, as the real user_features.csv has.
func TestUserQuirks(t *testing.T) {
	head := strings.Join(UserColumns, ",") + "\n"
	row := func(feat4, feat12 string) string {
		return "7,full_active,0,0,1,12,\"(10,50]\",0,0,3,\"[1,5)\",100,91-180,1,2,3,4," + feat4 + ",5,1,6,7,2,1,0," + feat12 + ",1.0,0.0,1.0,0.0,1.0\n"
	}
	users, f, err := ReadUsers(writeTemp(t, "user_features.csv", head+row("3.0", "1.0")+row("", "")))
	if err != nil {
		t.Fatal(err)
	}
	u := users[0]
	if u.UserID != 7 || u.FollowUserNumRange != "(10,50]" || u.FriendUserNumRange != "[1,5)" || u.OneHot[4] != 3 || u.OneHot[12] != 1 || u.OneHot[3] != 4 {
		t.Fatalf("user 0: %+v", u)
	}
	if users[1].OneHot[4] != Missing || users[1].OneHot[12] != Missing {
		t.Fatalf("empty codes not Missing: %+v", users[1].OneHot)
	}
	if f != DefaultUserFormat() {
		t.Fatalf("detected float columns %v, want feat4 and feat12..17", f.FloatCols)
	}
	if err := u.checkRanges(); err != nil {
		t.Fatal(err)
	}
}

// TestDailyQuirks reads empty counters (collect_* before 2020-07-28, an
// empty video_duration), a float play_progress, a Chinese tag name with a
// comma, a quote and a stray '\r' (quoted), and a quoted field spanning two
// lines.
func TestDailyQuirks(t *testing.T) {
	head := strings.Join(DailyColumns, ",") + "\n"
	counters := func(progress, collect string) string {
		var parts []string
		for c := DShowCnt; c < NumDailyCols; c++ {
			switch {
			case c == DPlayProgress:
				parts = append(parts, progress)
			case c >= DCollectCnt:
				parts = append(parts, collect)
			default:
				parts = append(parts, "7")
			}
		}
		return strings.Join(parts, ",")
	}
	src := head +
		"3784,20200727,441,NORMAL,2020-03-30,ShortImport,public,17200.0,720,1280,989206467,2522,祝福," + counters("0.579695", "") + "\n" +
		"3784,20200730,441,AD,2020-03-30,LongImport,public,,720,1280,989206467,2522,\"祝,福\"\"\r\n二\"," + counters("1.5", "0.0") + "\n"
	rows, f, err := ReadDaily(writeTemp(t, "item_daily_features.csv", src))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	a, b := rows[0], rows[1]
	if a.VideoID != 3784 || a.Date != 20200727 || a.Num[DAuthorID] != 441 || a.UploadDT != "2020-03-30" || a.Num[DVideoDuration] != 17200 ||
		a.VideoTagName != "祝福" || a.Num[DPlayProgress] != 0.579695 || !math.IsNaN(a.Num[DCollectCnt]) || a.Num[DShowCnt] != 7 {
		t.Fatalf("row 0: %+v", a)
	}
	if b.VideoType != "AD" || !math.IsNaN(b.Num[DVideoDuration]) || b.VideoTagName != "祝,福\"\r\n二" || b.Num[DCollectCnt] != 0 {
		t.Fatalf("row 1: %+v (tag %q)", b, b.VideoTagName)
	}
	if f != DefaultDailyFormat() {
		t.Fatalf("float columns %v", f.FloatCols)
	}
}

// TestParseErrors: malformed rows are *dataset.ParseErrors naming the file,
// the line and the column; the header must have the KuaiRec columns.
func TestParseErrors(t *testing.T) {
	head := strings.Join(MatrixColumns, ",") + "\n"
	ok := "1,2,3,4,2020-07-05 05:27:48.378,20200705.0,1593898068.378,0.75\n"
	for _, c := range []struct {
		row, col, msg string
	}{
		{"x,2,3,4,,,,0.5\n", "user_id", "bad integer"},
		{"1,2,-3,4,,,,0.5\n", "play_duration", "negative"},
		{"1,2,3,4,,,,\n", "watch_ratio", "empty watch_ratio"},
		{"1,2,3,4,,,,nan\n", "watch_ratio", "not a finite number"},
		{"1,2,3,4,,20201301,,0.5\n", "date", "bad date"},
		{"1,2,3,4,,,abc,0.5\n", "timestamp", "bad number"},
		{"1,2,3\n", "", "3 fields, want 8"},
	} {
		path := writeTemp(t, "small_matrix.csv", head+ok+c.row)
		_, _, err := ReadMatrix(path)
		var pe *dataset.ParseError
		if !errors.As(err, &pe) || pe.Line != 3 || !strings.Contains(pe.Column, c.col) || !strings.Contains(pe.Msg, c.msg) || pe.File != path {
			t.Errorf("row %q: error %v, want a ParseError at %s:3 column %q with %q", c.row, err, path, c.col, c.msg)
		}
	}
	// A bad row can be skipped: Next continues after it.
	m, err := NewMatrixReader("m.csv", strings.NewReader(head+"x,2,3,4,,,,0.5\n"+ok))
	if err != nil {
		t.Fatal(err)
	}
	var it Interaction
	if err := m.Next(&it); err == nil {
		t.Fatal("no error for a bad row")
	}
	if err := m.Next(&it); err != nil || it.UserID != 1 {
		t.Fatalf("after a bad row: %v %+v", err, it)
	}
	_, _, err = ReadMatrix(writeTemp(t, "small_matrix.csv", "user_id,video_id,time\n1,2,x\n"))
	if err == nil || !strings.Contains(err.Error(), "header lacks column(s) play_duration") {
		t.Errorf("bad header: %v", err)
	}
	_, _, err = ReadMatrix(writeTemp(t, "small_matrix.csv", head+"1,2,3,4,\"unterminated,,,0.5\n"))
	if err == nil || !strings.Contains(err.Error(), "unterminated") {
		t.Errorf("unterminated quote: %v", err)
	}
}

// TestPyFloat pins the float formatting to Python's repr (and so pandas'
// to_csv).
func TestPyFloat(t *testing.T) {
	a, b := 0.1, 0.2 // not constants: Go would add those exactly
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0.0"}, {3, "3.0"}, {17200, "17200.0"}, {0.722103, "0.722103"}, {1593898068.378, "1593898068.378"},
		{1593898068, "1593898068.0"}, {1e-5, "1e-05"}, {0.0001, "0.0001"}, {1.5e16, "1.5e+16"}, {1e15, "1000000000000000.0"},
		{20200705, "20200705.0"}, {math.NaN(), ""}, {math.Inf(1), "inf"}, {-2.5, "-2.5"}, {a + b, "0.30000000000000004"},
	} {
		if got := string(AppendPyFloat(nil, c.v)); got != c.want {
			t.Errorf("AppendPyFloat(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestLocate finds the files in the unpacked zip's layout and in a bare
// folder, and tells synthetic from real by the marker.
func TestLocate(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, ArchiveDir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, SmallMatrixFile), []byte(strings.Join(MatrixColumns, ",")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{root, filepath.Join(root, ArchiveDir), data} {
		d, err := Locate(dir)
		if err != nil || d.Data != data || d.Synthetic {
			t.Fatalf("Locate(%s) = %+v, %v", dir, d, err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, ArchiveDir, SyntheticMarker), []byte("synthetic\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := Locate(root); err != nil || !d.Synthetic {
		t.Fatalf("marker not found: %+v %v", d, err)
	}
	if _, err := Locate(t.TempDir()); err == nil || !strings.Contains(err.Error(), "kuairec-gen") {
		t.Fatalf("empty folder: %v", err)
	}
}
