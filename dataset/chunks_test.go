package dataset

import (
	"reflect"
	"testing"

	"okstream/learner/rng"
)

// Rows of random lengths (zero, small, larger than a chunk) come back from
// the cursor exactly as added.
func TestChunksCursor(t *testing.T) {
	r := rng.New(1)
	var c chunks[int]
	var want [][]int
	next := 0
	for range 2000 {
		n := r.IntN(50)
		switch r.IntN(100) {
		case 0:
			n = 0
		case 1:
			n = chunkMax + r.IntN(1000)
		}
		row := make([]int, n)
		for k := range row {
			row[k] = next
			next++
		}
		got := c.add(row...)
		if !reflect.DeepEqual(got, row) || cap(got) != n {
			t.Fatalf("add returned %d elements (cap %d), want %d", len(got), cap(got), n)
		}
		want = append(want, row)
	}
	cur := cursor[int]{c: &c}
	for i, row := range want {
		if got := cur.next(len(row)); !reflect.DeepEqual(got, row) && len(row) > 0 {
			t.Fatalf("row %d differs", i)
		}
	}
	flat := c.flatten()
	if len(flat) != next || flat[next-1] != next-1 {
		t.Fatalf("flatten: %d elements", len(flat))
	}
	for i, v := range flat {
		if v != i {
			t.Fatalf("flatten[%d] = %d", i, v)
		}
	}
}
