package kuairec

import (
	"errors"
	"io"
	"strconv"
)

// CaptionColumns are the columns of kuairec_caption_category.csv (added to
// KuaiRec 2.0 on 2024-06-02).
var CaptionColumns = []string{"video_id", "manual_cover_text", "caption", "topic_tag",
	"first_level_category_id", "first_level_category_name",
	"second_level_category_id", "second_level_category_name",
	"third_level_category_id", "third_level_category_name"}

// Caption is one row of kuairec_caption_category.csv. okstream uses none of
// it for features, so the fields after video_id are kept as the file's text
// (category IDs included: −124 is the file's "missing" code; the real file
// has encoding problems, and bytes are kept as they are).
type Caption struct {
	VideoID int
	Fields  [9]string // manual_cover_text … third_level_category_name
}

// AppendCaption appends one line of the caption file.
func AppendCaption(b []byte, c *Caption) []byte {
	b = strconv.AppendInt(b, int64(c.VideoID), 10)
	for _, s := range c.Fields {
		b = append(b, ',')
		b = appendField(b, s)
	}
	return append(b, '\n')
}

// ReadCaptions reads kuairec_caption_category.csv.
func ReadCaptions(path string) ([]Caption, error) {
	r, err := openCSV(path)
	if err != nil {
		return nil, err
	}
	defer r.close()
	idx, err := r.readHeader(CaptionColumns)
	if err != nil {
		return nil, err
	}
	var out []Caption
	var fields [][]byte
	for {
		err := r.next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if fields, err = r.record(idx, fields); err != nil {
			return nil, err
		}
		id, ok, msg := parseInt(fields[0])
		if !ok {
			return nil, r.errorf(idx[0], "%s", orMissing(msg))
		}
		c := Caption{VideoID: int(id)}
		for k := range c.Fields {
			c.Fields[k] = string(fields[k+1])
		}
		out = append(out, c)
	}
}

// WriteCaptions writes kuairec_caption_category.csv.
func WriteCaptions(w io.Writer, rows []Caption) error {
	b := appendHeader(nil, CaptionColumns)
	for i := range rows {
		b = AppendCaption(b, &rows[i])
	}
	_, err := w.Write(b)
	return err
}
