package label

import (
	"errors"
	"math"
	"strings"
	"testing"

	"okstream/codec"
	"okstream/learner/state"
)

func num(y float64) codec.Event { return codec.Event{Y: y, HasY: true} }
func boolean(b bool) codec.Event {
	e := codec.Event{HasY: true, YKind: codec.LabelBool}
	if b {
		e.Y = 1
	}
	return e
}
func str(s string) codec.Event { return codec.Event{HasY: true, YKind: codec.LabelString, YStr: s} }

// step is one label and what the map must make of it: the value learnt, or
// an error containing errSub.
type step struct {
	ev     codec.Event
	want   float64
	errSub string
}

func TestMap(t *testing.T) {
	cases := []struct {
		name     string
		task     Task
		positive string
		steps    []step
		final    Task
	}{
		{"±1 binary", Binary, "", []step{{num(1), 1, ""}, {num(-1), -1, ""}, {num(1), 1, ""}}, Binary},
		{"0/1 binary", Binary, "", []step{{num(0), -1, ""}, {num(1), 1, ""}, {num(0), -1, ""}}, Binary},
		{"0 after -1 is a third class", Binary, "", []step{{num(-1), -1, ""}, {num(1), 1, ""}, {num(0), 0, "third class"}, {num(-1), -1, ""}}, Binary},
		{"-1 after 0 is a third class", Binary, "", []step{{num(0), -1, ""}, {num(-1), 0, "third class"}}, Binary},
		{"real on binary", Binary, "", []step{{num(1), 1, ""}, {num(0.5), 0, "--task regression"}, {num(2), 0, "binary models"}}, Binary},
		{"bools", Binary, "", []step{{boolean(false), -1, ""}, {boolean(true), 1, ""}}, Binary},
		{"strings: first seen negative", Binary, "", []step{{str("no"), -1, ""}, {str("yes"), 1, ""}, {str("no"), -1, ""}, {str("maybe"), 0, "third class"}}, Binary},
		{"strings: first seen negative whatever the order", Binary, "", []step{{str("yes"), -1, ""}, {str("no"), 1, ""}}, Binary},
		{"strings with positive, positive first", Binary, "yes", []step{{str("yes"), 1, ""}, {str("no"), -1, ""}, {str("maybe"), 0, "third class"}}, Binary},
		{"strings with positive, negative first", Binary, "yes", []step{{str("no"), -1, ""}, {str("maybe"), 0, "third class"}, {str("yes"), 1, ""}}, Binary},
		{"kind change", Binary, "", []step{{num(1), 1, ""}, {boolean(true), 0, "labels are numbers, not bools"}, {str("a"), 0, "not strings"}}, Binary},
		{"regression", Regression, "", []step{{num(0), 0, ""}, {num(1), 1, ""}, {num(3.25), 3.25, ""}, {str("a"), 0, "not strings"}}, Regression},
		{"regression refuses bools first", Regression, "", []step{{boolean(true), 0, "numbers only"}, {num(2), 2, ""}}, Regression},
		{"undecided: 0/1 stays undecided in the warm-up", Undecided, "", []step{{num(0), -1, ""}, {num(1), 1, ""}, {num(0), -1, ""}}, Undecided},
		{"undecided: another number in the warm-up is regression", Undecided, "", []step{{num(0), -1, ""}, {num(1), 1, ""}, {num(2), 2, ""}, {num(0), 0, ""}, {num(1), 1, ""}}, Regression},
		{"undecided: -1, 0 and 1 are regression", Undecided, "", []step{{num(-1), -1, ""}, {num(1), 1, ""}, {num(0), 0, ""}, {num(-1), -1, ""}}, Regression},
		{"undecided: 0, 1, -1 are regression", Undecided, "", []step{{num(0), -1, ""}, {num(-1), -1, ""}, {num(3), 3, ""}}, Regression},
		{"undecided: 0.5 is regression", Undecided, "", []step{{num(0.5), 0.5, ""}, {num(0), 0, ""}, {num(-7), -7, ""}}, Regression},
		{"undecided: 2 is regression", Undecided, "", []step{{num(2), 2, ""}, {num(1), 1, ""}}, Regression},
		{"undecided: bool is binary", Undecided, "", []step{{boolean(true), 1, ""}}, Binary},
		{"undecided: two strings stay undecided in the warm-up", Undecided, "", []step{{str("spam"), -1, ""}, {str("ham"), 1, ""}}, Undecided},
		{"undecided: string with positive is binary", Undecided, "ham", []step{{str("spam"), -1, ""}, {str("ham"), 1, ""}}, Binary},
		{"undecided: a third string is multi-class", Undecided, "", []step{{str("a"), -1, ""}, {str("b"), 1, ""}, {str("c"), 2, ""}, {str("a"), 0, ""}, {str("b"), 1, ""}}, MultiClass},
		{"multiclass strings", MultiClass, "", []step{{str("x"), 0, ""}, {str("y"), 1, ""}, {str("x"), 0, ""}, {num(1), 0, "not numbers"}}, MultiClass},
		{"multiclass integers", MultiClass, "", []step{{num(7), 0, ""}, {num(-1), 1, ""}, {num(7), 0, ""}, {num(2.5), 2, ""}, {num(math.Copysign(0, -1)), 3, ""}, {num(0), 3, ""}}, MultiClass},
		{"multiclass bools", MultiClass, "", []step{{boolean(true), 0, ""}, {boolean(false), 1, ""}, {boolean(true), 0, ""}}, MultiClass},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := New(c.task, c.positive)
			if m.Warmup != DefaultWarmup {
				t.Fatalf("Warmup %d", m.Warmup)
			}
			for i, s := range c.steps {
				y, err := m.Apply(&s.ev)
				if s.errSub != "" {
					var le *Error
					if err == nil || !errors.As(err, &le) || !strings.Contains(err.Error(), s.errSub) {
						t.Fatalf("step %d: Apply = %v, %v; want an *Error containing %q", i, y, err, s.errSub)
					}
					continue
				}
				if err != nil || y != s.want {
					t.Fatalf("step %d: Apply = %v, %v; want %v", i, y, err, s.want)
				}
			}
			if m.Task != c.final {
				t.Fatalf("task %v, want %v", m.Task, c.final)
			}
		})
	}
}

// A map restored from its encoding maps the rest of a stream as the
// original does: the class dictionary and the negative number are state.
// The warm-up: Warmup labels −1/+1 or 0/1 make an undecided stream binary;
// a number that is not one of them decides regression at any point of it.
func TestWarmup(t *testing.T) {
	m := New(Undecided, "")
	m.Warmup = 3
	for i, ev := range []codec.Event{num(1), num(0), num(1)} {
		if m.Task != Undecided {
			t.Fatalf("decided %v after %d labels", m.Task, i)
		}
		if _, err := m.Apply(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if m.Task != Binary {
		t.Fatalf("task %v after the warm-up, want binary", m.Task)
	}
	if _, err := m.Apply(&codec.Event{Y: 2, HasY: true}); err == nil || !strings.Contains(err.Error(), "--task regression") {
		t.Fatalf("a 2 after the warm-up: %v", err)
	}
	m = New(Undecided, "")
	m.Warmup = 3
	for _, y := range []float64{1, 0} {
		ev := num(y)
		m.Apply(&ev)
	}
	ev := num(0.5)
	if y, err := m.Apply(&ev); err != nil || y != 0.5 || m.Task != Regression {
		t.Fatalf("0.5 in the warm-up: %v, %v, task %v", y, err, m.Task)
	}
}

func TestMapEncodeDecode(t *testing.T) {
	streams := [][]codec.Event{
		{str("b"), str("a")},
		{str("b")},
		{num(0)},
		{num(-1), num(1)},
		{boolean(true)},
		{num(0.5)},
		nil,
	}
	probes := []codec.Event{str("a"), str("b"), str("c"), num(0), num(-1), num(1), num(3), boolean(false)}
	for si, s := range streams {
		a := New(Undecided, "")
		for _, ev := range s {
			if _, err := a.Apply(&ev); err != nil {
				t.Fatal(err)
			}
		}
		e := state.NewEncoder(0)
		a.Encode(e)
		b := New(Undecided, "")
		d := state.NewDecoder(e.Bytes())
		b.Decode(d)
		if err := d.Done(); err != nil {
			t.Fatal(err)
		}
		for _, p := range probes {
			aa, bb := *a, *b
			aa.Classes, bb.Classes = append([]string(nil), a.Classes...), append([]string(nil), b.Classes...)
			ya, ea := aa.Apply(&p)
			yb, eb := bb.Apply(&p)
			if ya != yb || (ea == nil) != (eb == nil) {
				t.Fatalf("stream %d probe %+v: original %v, %v; restored %v, %v", si, p, ya, ea, yb, eb)
			}
		}
	}
	// Damaged states are refused.
	for _, b := range [][]byte{{9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {1, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {1, 1, 7, 0, 0, 0, 0, 0, 0, 0, 0}, {1, 3, 0, 0, 0, 0, 0, 3, 0, 0, 0}, {1}} {
		m := New(Undecided, "")
		d := state.NewDecoder(b)
		m.Decode(d)
		if d.Done() == nil {
			t.Errorf("state %x decoded", b)
		}
		if m.Task != Undecided {
			t.Errorf("state %x changed the map", b)
		}
	}
}

func TestSpecs(t *testing.T) {
	for _, c := range []struct {
		spec     string
		flexible bool
		reg      string
	}{
		{"auto", true, "auto:loss=square"},
		{"auto:", true, "auto:loss=square"},
		{"auto:base=fogd", true, "auto:base=fogd,loss=square"},
		{"auto:base=nogd,budget=50", true, "auto:base=nogd,budget=50,loss=square"},
		{"auto:loss=square", false, "auto:loss=square"},
		{"auto:base=fogd,loss=hinge", false, "auto:base=fogd,loss=hinge"},
		{"fogd:sigma=1", false, "fogd:sigma=1"},
		{"::", false, "::"},
	} {
		if got := Flexible(c.spec); got != c.flexible {
			t.Errorf("Flexible(%q) = %v", c.spec, got)
		}
		if got := ResolveSpec(c.spec, Regression); got != c.reg {
			t.Errorf("ResolveSpec(%q, regression) = %q, want %q", c.spec, got, c.reg)
		}
		if got := ResolveSpec(c.spec, Binary); got != c.spec {
			t.Errorf("ResolveSpec(%q, binary) = %q", c.spec, got)
		}
	}
	for _, s := range []string{"", "auto", "binary", "classification", "regression"} {
		if _, err := ParseTask(s); err != nil {
			t.Errorf("ParseTask(%q): %v", s, err)
		}
	}
	if _, err := ParseTask("ranking"); err == nil {
		t.Error("ParseTask(ranking) accepted")
	}
}

// BenchmarkApply is the per-event cost of the label mapping.
func BenchmarkApply(b *testing.B) {
	for _, c := range []struct {
		name string
		task Task
		evs  []codec.Event
	}{
		{"pm1", Binary, []codec.Event{num(1), num(-1)}},
		{"01", Binary, []codec.Event{num(1), num(0)}},
		{"bool", Binary, []codec.Event{boolean(true), boolean(false)}},
		{"string", Binary, []codec.Event{str("no_click"), str("click")}},
		{"regression", Regression, []codec.Event{num(0.25), num(3)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			m := New(c.task, "")
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := m.Apply(&c.evs[i&1]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestMapString(t *testing.T) {
	for _, c := range []struct {
		task Task
		evs  []codec.Event
		want string
	}{
		{Undecided, nil, "undecided (0 of 100 warm-up labels seen)"},
		{Undecided, []codec.Event{num(0), num(1)}, "undecided (2 of 100 warm-up labels seen)"},
		{Binary, []codec.Event{num(0), num(1)}, "binary, numbers 0 (-1) and 1 (+1)"},
		{Binary, []codec.Event{str("no"), str("yes")}, `binary, strings "no" (-1) and "yes" (+1)`},
		{Undecided, []codec.Event{num(2.5)}, "regression, numbers"},
	} {
		m := New(c.task, "")
		for _, ev := range c.evs {
			if _, err := m.Apply(&ev); err != nil {
				t.Fatal(err)
			}
		}
		if got := m.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
}

// Models shared across partitions refuse string labels without a named
// positive class, and take them with one.
func TestRequirePositive(t *testing.T) {
	m := New(Binary, "")
	m.RequirePositive = true
	ev := str("yes")
	if _, err := m.Apply(&ev); err == nil || !strings.Contains(err.Error(), "--positive") {
		t.Fatalf("Apply without positive: %v", err)
	}
	if _, err := m.Apply(&codec.Event{Y: 0, HasY: true}); err != nil {
		t.Fatalf("numbers: %v", err)
	}
	m = New(Binary, "yes")
	m.RequirePositive = true
	if y, err := m.Apply(&ev); err != nil || y != 1 {
		t.Fatalf("with positive: %v, %v", y, err)
	}
}

// TestClassName checks the class names of the decisions: as the stream
// writes its labels, "" while unknown, and that each name maps back to its
// decision.
func TestClassName(t *testing.T) {
	cases := []struct {
		name     string
		task     Task
		positive string
		labels   []codec.Event
		pos, neg string // ClassName(+1), ClassName(-1) after the labels
	}{
		{"no labels", Binary, "", nil, "", ""},
		{"±1", Binary, "", []codec.Event{num(1), num(-1)}, "1", "-1"},
		{"0/1", Undecided, "", []codec.Event{num(0)}, "1", "0"},
		{"1 only", Binary, "", []codec.Event{num(1)}, "1", ""},
		{"bools", Binary, "", []codec.Event{boolean(true)}, "true", "false"},
		{"strings", Binary, "", []codec.Event{str("ham"), str("spam")}, "spam", "ham"},
		{"one string", Binary, "", []codec.Event{str("ham")}, "", "ham"},
		{"strings, positive first", Binary, "spam", []codec.Event{str("spam"), str("ham")}, "spam", "ham"},
		{"positive not seen", Binary, "spam", []codec.Event{str("ham")}, "spam", "ham"},
		{"positive only", Binary, "spam", nil, "", ""},
		{"regression", Regression, "", []codec.Event{num(2.5)}, "", ""},
	}
	for _, c := range cases {
		m := New(c.task, c.positive)
		for i := range c.labels {
			if _, err := m.Apply(&c.labels[i]); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		if got := m.ClassName(1); got != c.pos {
			t.Errorf("%s: ClassName(+1) = %q, want %q", c.name, got, c.pos)
		}
		if got := m.ClassName(-1); got != c.neg {
			t.Errorf("%s: ClassName(-1) = %q, want %q", c.name, got, c.neg)
		}
		if got := m.ClassName(0); got != "" {
			t.Errorf("%s: ClassName(0) = %q", c.name, got)
		}
		// A named class's label maps to its decision.
		for _, d := range []int8{1, -1} {
			name := m.ClassName(d)
			if name == "" || c.task == Regression {
				continue
			}
			ev := str(name)
			switch name {
			case "true", "false":
				ev = boolean(name == "true")
			case "1", "0", "-1":
				ev = num(map[string]float64{"1": 1, "0": 0, "-1": -1}[name])
			}
			if y, err := m.Apply(&ev); err != nil || y != float64(d) {
				t.Errorf("%s: class %q maps to %v, %v; want %d", c.name, name, y, err, d)
			}
		}
	}
	m := New(Binary, "")
	ev := str("ham")
	m.Apply(&ev)
	if a := testing.AllocsPerRun(100, func() { _ = m.ClassName(-1) }); a != 0 {
		t.Errorf("%v allocations", a)
	}
}
