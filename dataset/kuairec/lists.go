package kuairec

import (
	"errors"
	"io"
	"strconv"
)

// CategoryColumns are the columns of item_categories.csv.
var CategoryColumns = []string{"video_id", "feat"}

// SocialColumns are the columns of social_network.csv.
var SocialColumns = []string{"user_id", "friend_list"}

// IDList is one row of item_categories.csv (ID = video_id, List = the tag
// IDs of feat) or of social_network.csv (ID = user_id, List = friend_list).
type IDList struct {
	ID   int
	List []int
}

// ListFormat holds the per-file writing choice of a list file: whether a
// blank follows each comma inside the list ("[27, 9]", Python's str of a
// list, which the files use) or not ("[27,9]", as the KuaiRec README shows).
type ListFormat struct {
	Space bool
}

// AppendIDList appends one line of a list file; a list with more than one
// element is CSV-quoted, since it contains a comma.
func AppendIDList(b []byte, row *IDList, f ListFormat) []byte {
	b = strconv.AppendInt(b, int64(row.ID), 10)
	b = append(b, ',')
	b = appendIntList(b, row.List, f.Space)
	return append(b, '\n')
}

// ReadCategories reads item_categories.csv: video_id and its tag list
// (1–4 tags from 0..30 in the real file).
func ReadCategories(path string) ([]IDList, ListFormat, error) {
	return readIDListFile(path, CategoryColumns)
}

// ReadSocial reads social_network.csv: user_id and its friends' user IDs.
func ReadSocial(path string) ([]IDList, ListFormat, error) {
	return readIDListFile(path, SocialColumns)
}

func readIDListFile(path string, cols []string) ([]IDList, ListFormat, error) {
	r, err := openCSV(path)
	if err != nil {
		return nil, ListFormat{}, err
	}
	defer r.close()
	return readIDLists(r, cols)
}

func readIDLists(r *csvReader, cols []string) ([]IDList, ListFormat, error) {
	var f ListFormat
	idx, err := r.readHeader(cols)
	if err != nil {
		return nil, f, err
	}
	var out []IDList
	var fields [][]byte
	detected := false
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
		id, ok, msg := parseInt(fields[0])
		if !ok {
			return nil, f, r.errorf(idx[0], "%s", orMissing(msg))
		}
		list, space, msg := parseIntList(fields[1])
		if msg != "" {
			return nil, f, r.errorf(idx[1], "%s", msg)
		}
		if !detected && len(list) > 1 {
			f.Space, detected = space, true
		}
		out = append(out, IDList{ID: int(id), List: list})
	}
}

// WriteIDLists writes a list file with the given header (CategoryColumns or
// SocialColumns).
func WriteIDLists(w io.Writer, cols []string, rows []IDList, f ListFormat) error {
	b := appendHeader(nil, cols)
	for i := range rows {
		b = AppendIDList(b, &rows[i], f)
	}
	_, err := w.Write(b)
	return err
}
