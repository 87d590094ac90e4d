package kuairec

import (
	"errors"
	"fmt"
	"io"
	"time"

	"okstream/dataset"
)

func isParseError(err error) bool {
	var pe *dataset.ParseError
	return errors.As(err, &pe)
}

func orMissing(msg string) string {
	if msg == "" {
		return "empty value (missing)"
	}
	return msg
}

func orNegative(msg string, b []byte) string {
	if msg != "" {
		return msg
	}
	if len(b) == 0 {
		return "empty value (missing)"
	}
	return fmt.Sprintf("negative value %q", b)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// validDate reports whether d is a real calendar day YYYYMMDD.
func validDate(d int) bool {
	y, m, dd := d/10000, d/100%100, d%100
	if y < 1900 || y > 2200 || m < 1 || m > 12 || dd < 1 || dd > 31 {
		return false
	}
	t := time.Date(y, time.Month(m), dd, 0, 0, 0, 0, time.UTC)
	return t.Day() == dd
}

// DayNumber returns the days since 1970-01-01 of a YYYYMMDD date.
func DayNumber(d int) int {
	t := time.Date(d/10000, time.Month(d/100%100), d%100, 0, 0, 0, 0, time.UTC)
	return int(t.Unix() / 86400)
}

// DateOfDay is the inverse of DayNumber.
func DateOfDay(n int) int {
	t := time.Unix(int64(n)*86400, 0).UTC()
	y, m, d := t.Date()
	return y*10000 + int(m)*100 + d
}

// parseISODate parses "YYYY-MM-DD" to YYYYMMDD; ok is false otherwise.
func parseISODate(s string) (int, bool) {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return 0, false
	}
	y, m, d := t.Date()
	return y*10000 + int(m)*100 + d, true
}

// formatISODate renders YYYYMMDD as "YYYY-MM-DD".
func formatISODate(d int) string {
	return fmt.Sprintf("%04d-%02d-%02d", d/10000, d/100%100, d%100)
}

func appendHeader(b []byte, cols []string) []byte {
	for i, c := range cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendField(b, c)
	}
	return append(b, '\n')
}

// rowReader is a streaming reader of one file's rows.
type rowReader[R, F any] interface {
	Next(*R) error
	Format() F
	Close() error
}

// readAll reads every row of a reader just opened (err is the open's).
func readAll[R, F any, T rowReader[R, F]](r T, err error) ([]R, F, error) {
	var zero F
	if err != nil {
		return nil, zero, err
	}
	defer r.Close()
	var out []R
	for {
		var row R
		err := r.Next(&row)
		if errors.Is(err, io.EOF) {
			return out, r.Format(), nil
		}
		if err != nil {
			return nil, zero, err
		}
		out = append(out, row)
	}
}

// writeRows writes the header and the rows with app, in chunks of about
// 1 MiB.
func writeRows[R, F any](w io.Writer, cols []string, rows []R, f F, app func([]byte, *R, F) []byte) error {
	b := appendHeader(nil, cols)
	for i := range rows {
		b = app(b, &rows[i], f)
		if len(b) > 1<<20 {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	_, err := w.Write(b)
	return err
}
