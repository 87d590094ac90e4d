package kuairec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// File names of KuaiRec 2.0's data/ folder.
const (
	SmallMatrixFile  = "small_matrix.csv"
	BigMatrixFile    = "big_matrix.csv"
	UserFeaturesFile = "user_features.csv"
	CategoriesFile   = "item_categories.csv"
	DailyFile        = "item_daily_features.csv"
	SocialFile       = "social_network.csv"
	CaptionFile      = "kuairec_caption_category.csv"
)

// Files lists the seven data files in the order the generator writes them.
var Files = []string{SmallMatrixFile, BigMatrixFile, UserFeaturesFile, CategoriesFile, DailyFile, SocialFile, CaptionFile}

// ArchiveDir is the folder the KuaiRec zip unpacks to (note the space).
const ArchiveDir = "KuaiRec 2.0"

// SyntheticMarker is the file the generator writes into the "KuaiRec 2.0"
// folder (beside data/) to say that the files are synthetic; its presence
// is how Locate tells a synthetic sample from the real data. The CSV files
// themselves carry no marker, so that they stay byte-compatible with the
// real schema.
const SyntheticMarker = "SYNTHETIC.md"

// Dir is a located KuaiRec 2.0 data folder.
type Dir struct {
	Root      string // the path given to Locate
	Data      string // the folder holding the CSV files
	Synthetic bool   // a SyntheticMarker was found next to the files
}

// Path returns the path of one data file.
func (d Dir) Path(file string) string { return filepath.Join(d.Data, file) }

// Label names the data for messages: "KuaiRec 2.0 (SYNTHETIC sample)" or
// "KuaiRec 2.0".
func (d Dir) Label() string {
	if d.Synthetic {
		return "KuaiRec 2.0 (SYNTHETIC sample)"
	}
	return "KuaiRec 2.0"
}

// Locate finds the KuaiRec data files under dir: dir itself, dir/data,
// dir/"KuaiRec 2.0"/data (the unpacked zip) or dir/KuaiRec/data — the first
// of these that holds small_matrix.csv or big_matrix.csv.
func Locate(dir string) (Dir, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return Dir{}, fmt.Errorf("kuairec: %w", err)
	}
	if !st.IsDir() {
		return Dir{}, fmt.Errorf("kuairec: %s is not a directory (give the folder holding the KuaiRec 2.0 files, or the unpacked zip's folder)", dir)
	}
	cands := []string{dir, filepath.Join(dir, "data"), filepath.Join(dir, ArchiveDir, "data"), filepath.Join(dir, "KuaiRec", "data")}
	for _, c := range cands {
		if exists(filepath.Join(c, SmallMatrixFile)) || exists(filepath.Join(c, BigMatrixFile)) {
			d := Dir{Root: dir, Data: c}
			for p := c; ; p = filepath.Dir(p) {
				if exists(filepath.Join(p, SyntheticMarker)) {
					d.Synthetic = true
					break
				}
				if p == filepath.Clean(dir) || filepath.Dir(p) == p {
					break
				}
			}
			return d, nil
		}
	}
	return Dir{}, fmt.Errorf("kuairec: no %s or %s in %s (looked in %s); unpack KuaiRec.zip there, or generate a synthetic sample with okstream kuairec-gen --out %s",
		SmallMatrixFile, BigMatrixFile, dir, strings.Join(cands, ", "), dir)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
