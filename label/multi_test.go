package label

import (
	"errors"
	"math"
	"strings"
	"testing"

	"okstream/codec"
	"okstream/learner/state"
)

// The multi-class names of numbers and bools, as the README documents them.
func TestMultiClassNames(t *testing.T) {
	m := New(MultiClass, "")
	for _, c := range []struct {
		y    float64
		name string
	}{{7, "7"}, {7.0, "7"}, {-1, "-1"}, {2.5, "2.5"}, {1e300, "1e+300"}, {math.Copysign(0, -1), "0"}, {0, "0"}, {9007199254740991, "9007199254740991"}} {
		ev := num(c.y)
		y, err := m.Apply(&ev)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.ClassNameOf(int(y)); got != c.name || m.Class() != int(y) {
			t.Fatalf("label %v: class %q (index %v, Class %d), want %q", c.y, got, y, m.Class(), c.name)
		}
	}
}

// The warm-up of a string stream: at most two strings for Warmup labels is
// binary (with the mapping binary streams always had); a third string at
// any point of it is multi-class at once, and the class indices are those
// of first appearance; after a binary decision a third string is an error
// that says how to run multi-class.
func TestStringWarmup(t *testing.T) {
	m := New(Undecided, "")
	m.Warmup = 4
	for i, s := range []string{"no", "yes", "no", "yes"} {
		ev := str(s)
		y, err := m.Apply(&ev)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]float64{"no": -1, "yes": 1}[s]; y != want || m.Class() != map[string]int{"no": 0, "yes": 1}[s] {
			t.Fatalf("label %d %q: %v (class %d)", i, s, y, m.Class())
		}
		if i < 3 && (m.Task != Undecided || !m.Multi()) {
			t.Fatalf("label %d: task %v, multi %v", i, m.Task, m.Multi())
		}
	}
	if m.Task != Binary || m.Multi() {
		t.Fatalf("after the warm-up: %v", m.Task)
	}
	ev := str("maybe")
	if _, err := m.Apply(&ev); err == nil || !strings.Contains(err.Error(), "--task multiclass") {
		t.Fatalf("third class after a binary decision: %v", err)
	}

	m = New(Undecided, "")
	for _, s := range []string{"b", "a", "b", "c"} {
		ev := str(s)
		if _, err := m.Apply(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if m.Task != MultiClass || len(m.Classes) != 3 || m.Classes[2] != "c" || m.Class() != 2 {
		t.Fatalf("a third string: %v", m)
	}
	// NoMulti and Positive keep strings binary at once.
	for _, mk := range []func() *Map{
		func() *Map { m := New(Undecided, ""); m.NoMulti = true; return m },
		func() *Map { return New(Undecided, "a") },
	} {
		m := mk()
		ev := str("a")
		if _, err := m.Apply(&ev); err != nil || m.Task != Binary {
			t.Fatalf("%v: %v", m.Task, err)
		}
	}
	// Numbers are never inferred multi-class.
	m = New(Undecided, "")
	ev = num(3)
	if _, err := m.Apply(&ev); err != nil || m.Task != Regression || m.MayBeMulti() {
		t.Fatalf("integer 3: %v %v", m.Task, err)
	}
}

// The cap: a new class beyond MaxClasses is an *Error that says how to
// raise it, and leaves the map unchanged; known classes still map.
func TestMaxClasses(t *testing.T) {
	m := New(MultiClass, "")
	m.MaxClasses = 3
	for _, s := range []string{"a", "b", "c", "a"} {
		ev := str(s)
		if _, err := m.Apply(&ev); err != nil {
			t.Fatal(err)
		}
	}
	ev := str("d")
	_, err := m.Apply(&ev)
	var le *Error
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "--max-classes") || len(m.Classes) != 3 {
		t.Fatalf("fourth class over a cap of 3: %v, %d classes", err, len(m.Classes))
	}
	ev = str("c")
	if y, err := m.Apply(&ev); err != nil || y != 2 {
		t.Fatalf("known class after the refusal: %v %v", y, err)
	}
}

// A multi-class map restored from its encoding maps the rest of the stream
// as the original does (numbers included: their names are parsed back).
func TestMultiEncodeDecode(t *testing.T) {
	streams := [][]codec.Event{
		{str("b"), str("a"), str("c")},
		{num(3), num(-1), num(2.5)},
		{boolean(true)},
	}
	probes := []codec.Event{str("a"), str("c"), str("z"), num(3), num(2.5), num(4), boolean(false), boolean(true)}
	for si, s := range streams {
		a := New(MultiClass, "")
		for _, ev := range s {
			if _, err := a.Apply(&ev); err != nil {
				t.Fatal(err)
			}
		}
		e := state.NewEncoder(0)
		a.Encode(e)
		if len(e.Bytes()) != a.EncodedSize() {
			t.Fatalf("EncodedSize %d, wrote %d", a.EncodedSize(), len(e.Bytes()))
		}
		b := New(Undecided, "")
		d := state.NewDecoder(e.Bytes())
		b.Decode(d)
		if err := d.Done(); err != nil {
			t.Fatal(err)
		}
		for _, p := range probes {
			ya, ea := a.Apply(&p)
			yb, eb := b.Apply(&p)
			if ya != yb || (ea == nil) != (eb == nil) || a.String() != b.String() {
				t.Fatalf("stream %d, probe %+v: %v %v / %v %v", si, p, ya, ea, yb, eb)
			}
		}
	}
}

// A forged state: a duplicate class, or a binary task with three classes, is
// an error, not a panic.
func TestDecodeForged(t *testing.T) {
	for _, m := range []*Map{
		{Task: MultiClass, kind: kindString, Classes: []string{"a", "a"}},
		{Task: Binary, kind: kindString, Classes: []string{"a", "b", "c"}},
		{Task: Task(9)},
	} {
		e := state.NewEncoder(0)
		m.Encode(e)
		d := state.NewDecoder(e.Bytes())
		New(Undecided, "").Decode(d)
		if d.Err() == nil {
			t.Fatalf("%+v decoded", m)
		}
	}
}

// Mapping a known class allocates nothing (the hot path).
func TestMultiApplyAllocs(t *testing.T) {
	m := New(MultiClass, "")
	evs := []codec.Event{str("a"), str("b"), num(1)}
	m.Apply(&evs[0])
	m.Apply(&evs[1])
	if n := testing.AllocsPerRun(100, func() { m.Apply(&evs[0]); m.Apply(&evs[1]) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
	k := New(MultiClass, "")
	k.Apply(&evs[2])
	if n := testing.AllocsPerRun(100, func() { k.Apply(&evs[2]) }); n != 0 {
		t.Fatalf("numbers: %v allocations", n)
	}
}
