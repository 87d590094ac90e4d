package dataset

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

func benchLoad(b *testing.B, rel string) {
	path := filepath.Join(sharedDatasets(b), rel)
	opts, _ := Preset(path)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(path, opts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoadCodRNACSV(b *testing.B)    { benchLoad(b, "cod-rna/cod-rna.train.csv") }
func BenchmarkLoadCodRNALIBSVM(b *testing.B) { benchLoad(b, "cod-rna/cod-rna.libsvm") }
func BenchmarkLoadW7a(b *testing.B)          { benchLoad(b, "w7a/w7a") }

// BenchmarkStreamW7a streams w7a with the dimension given (one pass).
func BenchmarkStreamW7a(b *testing.B) {
	path := filepath.Join(sharedDatasets(b), "w7a/w7a")
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		r, err := Open(path, Options{Dim: 300})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := r.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
		r.Close()
	}
}
