package dataset

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"okstream/codec"
)

// checkNamed checks the invariants of a named dataset: one record and one
// row per label, rows of Dim finite values equal to the records encoded in
// file order by a fresh encoder, and a Dim that leaves no field dropped.
func checkNamed(t *testing.T, d *Dataset) {
	t.Helper()
	n := d.Named
	if len(n.Records) != d.Len() || len(d.X) != d.Len() || n.Config.Dim != d.Dim || d.Dim < 1 {
		t.Fatalf("named: %d records, %d rows, %d labels, dim %d (config %d)", len(n.Records), len(d.X), d.Len(), d.Dim, n.Config.Dim)
	}
	enc := n.NewEncoder()
	for i, r := range n.Records {
		x, err := enc.Encode(r, nil)
		if err != nil || !slices.Equal(x, d.X[i]) {
			t.Fatalf("row %d: %v, X %v, encoded %v", i, err, d.X[i], x)
		}
		for _, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("row %d: %v", i, x)
			}
		}
	}
	if st := enc.Stats(); st.Dropped != 0 && n.Config.Dim == NamedDim(n.Records, n.Config.MaxValuesPerName) {
		t.Fatalf("dropped %d fields at the dimension NamedDim chose (%d)", st.Dropped, d.Dim)
	}
}

const namedCSV = `age,city,income,owner,y
30,Paris,1200.5,yes,no
,Lyon,?,NA,yes
41,"Paris",NaN,no,no
27,Nice,800,,yes
55,?,null,None,no
`

func TestNamedCSV(t *testing.T) {
	path := writeFile(t, "n.csv", namedCSV)
	d := mustLoad(t, path, Options{Label: "y", ClassNames: true})
	if d.Named == nil {
		t.Fatal("not read as named")
	}
	checkNamed(t, d)
	if d.Len() != 5 || !slices.Equal(d.Y, []float64{0, 1, 0, 1, 0}) || !slices.Equal(d.Classes, []string{"no", "yes"}) {
		t.Fatalf("labels %v classes %v", d.Y, d.Classes)
	}
	if !slices.Equal(d.FeatureNames, []string{"age", "city", "income", "owner"}) || d.LabelName != "y" {
		t.Fatalf("names %v label %q", d.FeatureNames, d.LabelName)
	}
	r := d.Named.Records
	want := []codec.Field{{Name: "age", Kind: codec.FieldMissing}, {Name: "city", Kind: codec.FieldString, Str: "Lyon"},
		{Name: "income", Kind: codec.FieldMissing}, {Name: "owner", Kind: codec.FieldMissing}}
	if !slices.Equal(r[1], want) {
		t.Fatalf("row 1: %+v, want %+v", r[1], want)
	}
	if r[2][1].Str != "Paris" || r[2][2].Kind != codec.FieldMissing || r[4][1].Kind != codec.FieldMissing || r[4][3].Kind != codec.FieldMissing {
		t.Fatalf("rows 2, 4: %+v %+v", r[2], r[4])
	}
	// age: number + missing; city: 3 values + missing; income: number +
	// missing; owner: 2 values + missing (NamedDim counts a missing
	// indicator for every name with a missing value: a bound for any order).
	if d.Dim != 2+4+2+3 {
		t.Fatalf("dim %d, want 11", d.Dim)
	}
	// A given dimension is the encoder's, not the number of columns.
	d = mustLoad(t, path, Options{Label: "y", ClassNames: true, Dim: 32})
	if d.Dim != 32 || d.Named.Config.Dim != 32 {
		t.Fatalf("Dim 32: %d", d.Dim)
	}
	// The streaming Reader refuses the named file.
	if _, err := Open(path, Options{Label: "y", ClassNames: true, Named: true}); err == nil {
		t.Fatal("Open: named accepted")
	}
}

// A numeric CSV is read exactly as before: not named, the same rows; with
// Options.Named, it becomes named with one numeric coordinate per column.
func TestNumericCSVNotNamed(t *testing.T) {
	path := writeFile(t, "num.csv", "a,b,y\n1,2,1\n3,4.5,-1\n")
	d := mustLoad(t, path, Options{Label: "y"})
	if d.Named != nil || d.Dim != 2 || !slices.Equal(d.X[1], []float64{3, 4.5}) {
		t.Fatalf("numeric CSV: named %v dim %d rows %v", d.Named != nil, d.Dim, d.X)
	}
	d = mustLoad(t, path, Options{Label: "y", Named: true})
	if d.Named == nil || d.Dim != 2 || !slices.Equal(d.X[1], []float64{3, 4.5}) {
		t.Fatalf("Named: named %v dim %d rows %v", d.Named != nil, d.Dim, d.X)
	}
	checkNamed(t, d)
}

// namedJSONL is namedCSV as runtime events (schema v3).
const namedJSONL = `{"v":3,"f":{"age":30,"city":"Paris","income":1200.5,"owner":"yes"},"y":"no"}
{"v":3,"f":{"age":null,"city":"Lyon","income":null,"owner":null},"y":"yes"}

{"v":3,"f":{"age":41,"city":"Paris","income":null,"owner":"no"},"y":"no"}
{"v":3,"f":{"age":27,"city":"Nice","income":800,"owner":null},"y":"yes"}
{"v":3,"f":{"age":55,"city":null,"income":null,"owner":null},"y":"no"}
`

func TestJSONLMatchesCSV(t *testing.T) {
	c := mustLoad(t, writeFile(t, "n.csv", namedCSV), Options{Label: "y", ClassNames: true})
	for _, name := range []string{"n.jsonl", "n.ndjson", "events"} {
		j := mustLoad(t, writeFile(t, name, namedJSONL), Options{ClassNames: true})
		if j.Named == nil {
			t.Fatalf("%s: not named", name)
		}
		checkNamed(t, j)
		if j.Dim != c.Dim || !slices.Equal(j.Y, c.Y) || !slices.Equal(j.Classes, c.Classes) {
			t.Fatalf("%s: dim %d labels %v %v, CSV %d %v %v", name, j.Dim, j.Y, j.Classes, c.Dim, c.Y, c.Classes)
		}
		for i := range c.X {
			if !slices.Equal(j.Named.Records[i], c.Named.Records[i]) || !slices.Equal(j.X[i], c.X[i]) {
				t.Fatalf("%s row %d: %+v %v, CSV %+v %v", name, i, j.Named.Records[i], j.X[i], c.Named.Records[i], c.X[i])
			}
		}
	}
	// A field left out is missing like a null one: same dimension.
	j := mustLoad(t, writeFile(t, "absent.jsonl", strings.ReplaceAll(namedJSONL, `"owner":null`, `"z":1`)), Options{ClassNames: true})
	checkNamed(t, j)
}

func TestJSONLDenseSparse(t *testing.T) {
	d := mustLoad(t, writeFile(t, "d.jsonl", `{"v":1,"x":[1,2,3],"y":1}
{"v":1,"xi":[0,2],"xv":[5,6],"y":-1}
`), Options{})
	if d.Named != nil || d.Dim != 3 || !slices.Equal(d.X[1], []float64{5, 0, 6}) {
		t.Fatalf("dense/sparse: dim %d rows %v", d.Dim, d.X)
	}
	for _, c := range []struct{ name, content, msg string }{
		{"mixed.jsonl", `{"v":1,"x":[1],"y":1}` + "\n" + `{"v":3,"f":{"a":1},"y":1}` + "\n", "in one file"},
		{"nolabel.jsonl", `{"v":1,"x":[1]}` + "\n", `no label`},
		{"feedback.jsonl", `{"v":2,"ref":"a","y":1}` + "\n", "feedback"},
		{"bad.jsonl", `{"v":1,"x":[1],"y":1}` + "\n" + `{"v":1,"x":[1,"a"],"y":1}` + "\n", "bad.jsonl:2"},
		{"short.jsonl", `{"v":1,"x":[1,2],"y":1}` + "\n" + `{"v":1,"x":[1],"y":1}` + "\n", "dense features"},
		{"string.jsonl", `{"v":1,"x":[1],"y":"a"}` + "\n", "ClassNames"},
	} {
		_, err := Load(writeFile(t, c.name, c.content), Options{})
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %q", c.name, err, c.msg)
		}
	}
}

// NamedDim bounds the coordinates in every order, and the cap on values
// folds the rest into one <other> coordinate.
func TestNamedDimBound(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,n,y\n")
	for i := range 200 {
		n := strconv.Itoa(i)
		if i%7 == 0 {
			n = ""
		}
		fmt.Fprintf(&b, "u%d,%s,%d\n", i%100, n, i%2)
	}
	d := mustLoad(t, writeFile(t, "ids.csv", b.String()), Options{Label: "y"})
	if d.Dim != 64+1+1+1 {
		t.Fatalf("dim %d, want 67 (64 values, <other>, n, n's missing indicator)", d.Dim)
	}
	for run := range 5 {
		enc := d.Named.NewEncoder()
		for _, i := range Permutation(d.Len(), 3, run) {
			enc.Encode(d.Named.Records[i], nil)
		}
		if st := enc.Stats(); st.Dropped != 0 || st.Coords > d.Dim {
			t.Fatalf("run %d: %+v at dim %d", run, st, d.Dim)
		}
	}
	d = mustLoad(t, writeFile(t, "ids.csv", b.String()), Options{Label: "y", MaxValuesPerName: 10})
	if d.Dim != 10+1+1+1 || d.Named.Config.MaxValuesPerName != 10 {
		t.Fatalf("MaxValuesPerName 10: dim %d", d.Dim)
	}
	// Subset and Clone carry the records.
	s := d.Subset([]int{3, 1})
	if len(s.Named.Records) != 2 || !slices.Equal(s.Named.Records[0], d.Named.Records[3]) {
		t.Fatal("Subset: records not carried")
	}
	c := d.Clone()
	if len(c.Named.Records) != d.Len() || &c.Named.Records[0][0] == &d.Named.Records[0][0] {
		t.Fatal("Clone: records not copied")
	}
}

func TestNamedCSVLimits(t *testing.T) {
	long := strings.Repeat("v", codec.DefaultMaxNameBytes+1)
	lp := writeFile(t, "long.csv", "a,y\n"+long+",1\n")
	_, err := Load(lp, Options{Label: "y"})
	wantParseError(t, err, lp, 2, "longer than 256 bytes")
	dp := writeFile(t, "dup.csv", "a,a,y\nx,1,1\n")
	if _, err := Load(dp, Options{Label: "y"}); err == nil || !strings.Contains(err.Error(), "distinct names") {
		t.Fatalf("duplicate names: %v", err)
	}
	path := writeFile(t, "big.csv", "a,b,y\nx,1,1\ny,2,1\nz,3,1\n")
	_, err = Load(path, Options{Label: "y", MaxDenseBytes: 100})
	if err == nil || !strings.Contains(err.Error(), "MaxDenseBytes") {
		t.Fatalf("MaxDenseBytes: %v", err)
	}
}

// FuzzReadNamed reads a file as named features: CSV (Options.Named, or
// detected from its cells) and JSON lines. No input panics; an accepted
// file satisfies checkNamed.
func FuzzReadNamed(f *testing.F) {
	for _, s := range []string{namedCSV, namedJSONL, "a,y\n,1\n?,2\n", "a;b;y\nx;1;1\n", "1,a\n2,b\n",
		`{"v":3,"f":{},"y":1}` + "\n", `{"v":3,"f":{"a":true,"b":1e300},"y":true}` + "\n", `{"v":1,"x":[1],"y":1}` + "\n"} {
		f.Add([]byte(s), byte(0))
		f.Add([]byte(s), byte(0x81))
	}
	f.Fuzz(func(t *testing.T, data []byte, mode byte) {
		o := fuzzLimits
		o.ClassNames = mode&1 != 0
		o.Header = HeaderMode(mode / 2 % 3)
		o.Label = []string{"y", "0", "-1"}[int(mode/6)%3]
		o.Named = mode&0x80 != 0
		o.MaxValuesPerName = int(mode>>5) & 3
		for _, name := range []string{"f.csv", "f.jsonl"} {
			d, err := load(name, memOpener(data), o)
			if err != nil {
				if len(err.Error()) > maxMsg {
					t.Fatalf("message of %d bytes", len(err.Error()))
				}
				continue
			}
			if d.Named != nil {
				checkNamed(t, d)
			}
		}
	})
}
