package kuairec

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"okstream/dataset"
	"okstream/internal/memtest"
)

// syntheticDir is the committed synthetic KuaiRec sample.
const syntheticDir = "../../testdata/kuairec-synthetic/KuaiRec 2.0/data"

// fuzzFiles are the files FuzzKuaiRecCSV reads, by mode.
var fuzzFiles = []string{SmallMatrixFile, UserFeaturesFile, CategoriesFile, SocialFile}

// readFuzzed reads data as the file fuzzFiles[mode%4] with its reader, from
// memory, and returns the first error that is not a row's *ParseError
// (io.EOF at the end).
func readFuzzed(name string, data []byte) error {
	r := newCSVReader(name, bytes.NewReader(data))
	switch name {
	case SmallMatrixFile:
		m, err := newMatrixReader(r)
		if err != nil {
			return err
		}
		var it Interaction
		for {
			err := m.Next(&it)
			var pe *dataset.ParseError
			if err != nil && !errors.As(err, &pe) {
				return err
			}
		}
	case UserFeaturesFile:
		_, _, err := readUsers(r)
		return err
	case CategoriesFile:
		_, _, err := readIDLists(r, CategoryColumns)
		return err
	default:
		_, _, err := readIDLists(r, SocialColumns)
		return err
	}
}

// FuzzKuaiRecCSV feeds the KuaiRec CSV readers (matrix, users, categories,
// social network) arbitrary bytes: they never panic, and every error is a
// *dataset.ParseError (or io.EOF after the last matrix row).
func FuzzKuaiRecCSV(f *testing.F) {
	for k, name := range fuzzFiles {
		if b, err := os.ReadFile(filepath.Join(syntheticDir, name)); err == nil {
			lines := bytes.SplitAfter(b, []byte("\n"))
			f.Add(bytes.Join(lines[:min(len(lines), 5)], nil), byte(k))
		}
	}
	f.Add([]byte("user_id,video_id\n\"1\n2\",\"3\"\"\"x\r\n"), byte(0))
	f.Add([]byte("\xEF\xBB\xBFvideo_id,feat\n1,\"[1, 2,3]\"\n2,[]\n3,\"[x]\"\n"), byte(2))
	f.Add([]byte("user_id,friend_list\n1,\"[\n"), byte(3))
	f.Fuzz(func(t *testing.T, data []byte, mode byte) {
		name := fuzzFiles[int(mode)%len(fuzzFiles)]
		err := readFuzzed(name, data)
		var pe *dataset.ParseError
		switch {
		case err == nil || errors.Is(err, io.EOF) || errors.As(err, &pe):
		default:
			t.Fatalf("%s: %v (%T) is not a *dataset.ParseError", name, err, err)
		}
	})
}

// A record longer than MaxRecordBytes (here a quoted field left open) or
// with more than MaxRecordFields fields is a *ParseError at its first line,
// and the reader allocates about the limit, not the file.
func TestRecordLimits(t *testing.T) {
	for _, c := range []struct {
		name, data, want string
	}{
		{"open quote", "user_id,friend_list\n1,[1]\n2,\"[" + strings.Repeat("1,\n", MaxRecordBytes/2) + "]\"\n", "record longer than 1048576 bytes"},
		{"long line", "user_id,friend_list\n1,[1]\n2," + strings.Repeat("9", MaxRecordBytes+1) + "\n", "record longer than 1048576 bytes"},
		{"many fields", "user_id,friend_list\n1,[1]\n2" + strings.Repeat(",", MaxRecordFields) + "\n", "more than 4096 fields"},
	} {
		var err error
		n := memtest.Allocated(func() {
			_, _, err = readIDLists(newCSVReader("social_network.csv", strings.NewReader(c.data)), SocialColumns)
		})
		var pe *dataset.ParseError
		if !errors.As(err, &pe) || pe.Line != 3 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a *ParseError at line 3 saying %q", c.name, err, c.want)
		}
		if n > 8*MaxRecordBytes {
			t.Errorf("%s: allocated %d bytes", c.name, n)
		}
	}
	// At the limit, a record is read.
	rows, _, err := readIDLists(newCSVReader("social_network.csv",
		strings.NewReader("user_id,friend_list\n1,\"["+strings.Repeat(" ", MaxRecordBytes-8)+"]\"\n")), SocialColumns)
	if err != nil || len(rows) != 1 {
		t.Errorf("record at the limit: %v", err)
	}
}
