package kuairec

import (
	"errors"
	"io"
	"math"
	"strconv"
	"time"
)

// MatrixColumns are the columns of small_matrix.csv and big_matrix.csv, in
// file order.
var MatrixColumns = []string{"user_id", "video_id", "play_duration", "video_duration", "time", "date", "timestamp", "watch_ratio"}

// Interaction is one row of small_matrix.csv or big_matrix.csv.
//
// A row of the small matrix's second stage (a forced exposure, see the
// package documentation) has empty time, date and timestamp: Timed is false,
// Time is "", Date is 0 and Timestamp is NaN.
type Interaction struct {
	UserID        int
	VideoID       int
	PlayDuration  int64  // ms watched; 0 occurs
	VideoDuration int64  // ms
	Time          string // Beijing local time as written ("2020-07-05 00:08:23.438"); "" if untimed
	Date          int    // YYYYMMDD as written; 0 if empty
	Timestamp     float64
	Timed         bool    // Timestamp is set
	WatchRatio    float64 // play_duration / video_duration as written
}

// TimestampMS returns the event time in whole ms since the Unix epoch,
// round(Timestamp·1000); 0 for an untimed row.
func (it *Interaction) TimestampMS() int64 {
	if !it.Timed {
		return 0
	}
	return int64(math.Round(it.Timestamp * 1000))
}

// Day returns the event's Beijing calendar day as YYYYMMDD: the local date
// of Timestamp, or the Date column if the row has no timestamp (0 if it has
// neither). The Date column is a log-partition label that disagrees with
// the event's own date in about 0.1 % of the real rows, so the timestamp
// wins.
func (it *Interaction) Day() int {
	if it.Timed {
		return DayOf(it.TimestampMS())
	}
	return it.Date
}

// Beijing is the fixed UTC+8 zone of the KuaiRec time fields (China has
// had no daylight saving time since 1991).
var Beijing = time.FixedZone("UTC+8", 8*3600)

// DayOf returns the Beijing calendar day of a Unix time in ms, as YYYYMMDD.
func DayOf(ms int64) int {
	t := time.UnixMilli(ms).In(Beijing)
	y, m, d := t.Date()
	return y*10000 + int(m)*100 + d
}

// FormatTime renders a Unix time in ms as the time column writes it:
// Beijing time, "2006-01-02 15:04:05.fff" with the fraction's trailing
// zeros (and a bare dot) trimmed.
func FormatTime(ms int64) string {
	return time.UnixMilli(ms).In(Beijing).Format("2006-01-02 15:04:05.999")
}

// MatrixFormat holds the per-file writing choices of a matrix file that a
// reader detects, so that a file re-emits byte for byte.
type MatrixFormat struct {
	// FloatDate writes the date as "20200705.0" (the small matrix, whose
	// date column pandas reads as float because of the empty rows) instead
	// of "20200705" (the big matrix).
	FloatDate bool
}

// AppendInteraction appends it as one line of a matrix file (with its
// '\n').
func AppendInteraction(b []byte, it *Interaction, f MatrixFormat) []byte {
	b = strconv.AppendInt(b, int64(it.UserID), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(it.VideoID), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, it.PlayDuration, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, it.VideoDuration, 10)
	b = append(b, ',')
	b = appendField(b, it.Time)
	b = append(b, ',')
	if it.Date != 0 {
		b = strconv.AppendInt(b, int64(it.Date), 10)
		if f.FloatDate {
			b = append(b, ".0"...)
		}
	}
	b = append(b, ',')
	if it.Timed {
		b = AppendPyFloat(b, it.Timestamp)
	}
	b = append(b, ',')
	b = AppendPyFloat(b, it.WatchRatio)
	return append(b, '\n')
}

// MatrixReader streams the rows of a matrix file in file order, in memory
// independent of the file's length.
type MatrixReader struct {
	r      *csvReader
	idx    []int
	fields [][]byte
	format MatrixFormat
	seen   bool // a dated row was read (format.FloatDate is known)
	err    error
}

// OpenMatrix opens small_matrix.csv or big_matrix.csv (any path) and reads
// its header. Close it when done.
func OpenMatrix(path string) (*MatrixReader, error) {
	r, err := openCSV(path)
	if err != nil {
		return nil, err
	}
	m, err := newMatrixReader(r)
	if err != nil {
		r.close()
		return nil, err
	}
	return m, nil
}

// NewMatrixReader reads a matrix file from rd; name is used in errors.
func NewMatrixReader(name string, rd io.Reader) (*MatrixReader, error) {
	return newMatrixReader(newCSVReader(name, rd))
}

func newMatrixReader(r *csvReader) (*MatrixReader, error) {
	idx, err := r.readHeader(MatrixColumns)
	if err != nil {
		return nil, err
	}
	return &MatrixReader{r: r, idx: idx}, nil
}

// Format returns the writing style detected so far (from the first row
// with a date).
func (m *MatrixReader) Format() MatrixFormat { return m.format }

// Close closes the file.
func (m *MatrixReader) Close() error { return m.r.close() }

// Next reads the next row into it. It returns io.EOF after the last row.
// A malformed row is a *dataset.ParseError naming the file, line and
// column; Next may be called again to continue after it. Other errors are
// final.
func (m *MatrixReader) Next(it *Interaction) error {
	if m.err != nil {
		return m.err
	}
	r := m.r
	if err := r.next(); err != nil {
		if !errors.Is(err, io.EOF) && !isParseError(err) {
			m.err = err
		}
		return err
	}
	var err error
	if m.fields, err = r.record(m.idx, m.fields); err != nil {
		return err
	}
	f := m.fields
	*it = Interaction{}
	var ok bool
	var msg string
	var v int64
	if v, ok, msg = parseInt(f[0]); !ok {
		return r.errorf(m.idx[0], "%s", orMissing(msg))
	}
	it.UserID = int(v)
	if v, ok, msg = parseInt(f[1]); !ok {
		return r.errorf(m.idx[1], "%s", orMissing(msg))
	}
	it.VideoID = int(v)
	if it.PlayDuration, ok, msg = parseInt(f[2]); !ok || it.PlayDuration < 0 {
		return r.errorf(m.idx[2], "%s", orNegative(msg, f[2]))
	}
	if it.VideoDuration, ok, msg = parseInt(f[3]); !ok || it.VideoDuration < 0 {
		return r.errorf(m.idx[3], "%s", orNegative(msg, f[3]))
	}
	it.Time = string(f[4])
	if len(f[5]) > 0 {
		if v, ok, msg = parseInt(f[5]); !ok {
			return r.errorf(m.idx[5], "%s", msg)
		}
		if !validDate(int(v)) {
			return r.errorf(m.idx[5], "bad date %q: want YYYYMMDD", f[5])
		}
		it.Date = int(v)
		if !m.seen {
			m.seen = true
			m.format.FloatDate = isFloatText(f[5])
		}
	}
	if len(f[6]) > 0 {
		ts, msg := parseFloat(f[6])
		if msg != "" || math.IsNaN(ts) || math.IsInf(ts, 0) {
			return r.errorf(m.idx[6], "%s", firstNonEmpty(msg, "timestamp is not a finite number"))
		}
		it.Timestamp, it.Timed = ts, true
	} else {
		it.Timestamp = math.NaN()
	}
	wr, msg := parseFloat(f[7])
	switch {
	case msg != "":
		return r.errorf(m.idx[7], "%s", msg)
	case math.IsNaN(wr) && len(f[7]) == 0:
		return r.errorf(m.idx[7], "empty watch_ratio (the label source cannot be missing)")
	case math.IsNaN(wr) || math.IsInf(wr, 0) || wr < 0:
		return r.errorf(m.idx[7], "watch_ratio %q is not a finite number >= 0", f[7])
	}
	it.WatchRatio = wr
	return nil
}

// Line returns the line on which the last row read started.
func (m *MatrixReader) Line() int { return m.r.start }

// ReadMatrix reads a whole matrix file.
func ReadMatrix(path string) ([]Interaction, MatrixFormat, error) {
	m, err := OpenMatrix(path)
	return readAll[Interaction, MatrixFormat](m, err)
}

// WriteMatrix writes rows as a matrix file (header first).
func WriteMatrix(w io.Writer, rows []Interaction, f MatrixFormat) error {
	return writeRows(w, MatrixColumns, rows, f, AppendInteraction)
}
