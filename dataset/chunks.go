package dataset

// chunks is an append-only sequence stored in chunks that never move, so
// that growing it copies nothing: the loaders keep rows in it and hand out
// slices of it. Chunks start small and double up to chunkMax elements.
type chunks[T any] struct {
	full []([]T)
	cur  []T
	n    int
}

const chunkMax = 1 << 16

// add appends v, keeping it within one chunk, and returns the stored copy.
func (c *chunks[T]) add(v ...T) []T {
	return c.grow(len(v), v)
}

func (c *chunks[T]) grow(n int, v []T) []T {
	if len(c.cur)+n > cap(c.cur) {
		if len(c.cur) > 0 {
			c.full = append(c.full, c.cur)
		}
		size := min(max(2*cap(c.cur), 1024), chunkMax)
		c.cur = make([]T, 0, max(size, n))
	}
	s := len(c.cur)
	c.cur = c.cur[:s+n]
	out := c.cur[s : s+n : s+n]
	copy(out, v)
	c.n += n
	return out
}

// flatten returns the elements in one new slice.
func (c *chunks[T]) flatten() []T {
	out := make([]T, 0, c.n)
	for _, f := range c.full {
		out = append(out, f...)
	}
	return append(out, c.cur...)
}

// cursor walks a chunks value from the start, returning the slices that
// were added, in order, given their lengths. It relies on add never
// splitting a slice across chunks: a slice that does not fit in the rest of
// its chunk starts the next one.
type cursor[T any] struct {
	c       *chunks[T]
	ci, off int
}

func (r *cursor[T]) chunk() []T {
	if r.ci < len(r.c.full) {
		return r.c.full[r.ci]
	}
	return r.c.cur
}

// next returns the next n elements (as one stored slice).
func (r *cursor[T]) next(n int) []T {
	cur := r.chunk()
	if r.off+n > len(cur) {
		r.ci++
		r.off = 0
		cur = r.chunk()
	}
	s := cur[r.off : r.off+n : r.off+n]
	r.off += n
	return s
}
