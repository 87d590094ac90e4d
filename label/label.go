// Package label maps the labels of events (codec.Event: a number, a bool or
// a string in "y") to the values the learners learn from, and decides a
// stream's task, binary classification, multi-class classification or
// regression, when it is not given.
//
// The rules, which README "Event schema" documents for users:
//
//   - Binary: a label is +1, 1 or true for the positive class and −1, 0 or
//     false for the negative one (learnt as +1 and −1), or one of two
//     strings. A stream's negative number is the first of −1 and 0 it shows:
//     the other one is a third class. For strings, the class named by
//     Positive (okstream run --positive) is +1 and any one other string −1;
//     without Positive, the first string label seen is −1 and the second
//     distinct one +1. The strings seen are a class dictionary (Classes, in
//     order of first appearance), kept in Map's state, which the runtime
//     checkpoints: a restored partition maps as before.
//   - Multi-class: a label is a class name — a string, or with the task
//     given (okstream run --task multiclass) a number or a bool too: a
//     number is named as it is written in decimal ("7" for 7 and 7.0, "-1",
//     "2.5"; an integer of magnitude below 2^53 without exponent or
//     fraction), a bool "true" or "false". Classes get indices 0, 1, ... in
//     order of first appearance (Classes, the class dictionary, kept in
//     Map's state) up to MaxClasses (DefaultMaxClasses, okstream run
//     --max-classes); a new class beyond the cap does not fit. Apply returns
//     the class index (as a float64) and Class() the same index.
//   - Regression: a label is a number, learnt as it is.
//   - Once a stream's labels are of one kind (number, bool, string), a label
//     of another kind does not fit.
//   - An undecided task (Undecided: not given, and the models' learners can
//     learn either) is decided by the labels of a warm-up: a bool or a
//     string label makes it binary at once, a number other than −1, 0 and +1
//     (or both −1 and 0: three values) regression at once; after Warmup
//     labels that are all −1/+1 or all 0/1 it is binary. During the warm-up
//     the runtime runs both candidates (Apply's value for the binary one, the
//     label itself for the regression one) and keeps the one decided. A
//     regression stream whose first Warmup targets are all 0 and 1 (or −1
//     and 1) is taken as binary: give the task (okstream run --task
//     regression). Numbers are never inferred multi-class: integer class
//     ids need --task multiclass.
//   - An undecided stream of strings (unless Positive, RequirePositive or
//     NoMulti is set: then binary at once, as strings always were before
//     multi-class existed) is decided by its warm-up too: a third distinct
//     string makes it multi-class at once; after Warmup labels with at most
//     two distinct strings it is binary. During the warm-up the runtime runs
//     the binary candidate (Apply's value, −1/+1) and a multi-class one (the
//     class index Class()), and keeps the one decided. After the warm-up
//     decided binary, a third string does not fit: its error says to restart
//     with --task multiclass.
//
// A label that does not fit is an error (*Error), which the runtime
// dead-letters with reason invalid_label: a model never learns one class of
// a binary stream while the other is dropped.
package label

import (
	"fmt"
	"math"
	"strconv"

	"okstream/codec"
	"okstream/learner"
	"okstream/learner/state"
)

// Task is what the models of a stream learn.
type Task uint8

const (
	// Undecided: decided by the labels of a warm-up (Map.Apply).
	Undecided Task = iota
	// Binary classification: labels are mapped to −1 and +1.
	Binary
	// Regression: labels are real numbers, learnt as they are.
	Regression
	// MultiClass classification: labels are class names, mapped to the
	// indices of the class dictionary.
	MultiClass
)

func (t Task) String() string {
	switch t {
	case Binary:
		return "binary"
	case Regression:
		return "regression"
	case MultiClass:
		return "multiclass"
	}
	return "undecided"
}

// ParseTask parses a --task value: binary (or classification), multiclass
// (or multi-class), regression, or "" and auto for Undecided.
func ParseTask(s string) (Task, error) {
	switch s {
	case "", "auto":
		return Undecided, nil
	case "binary", "classification":
		return Binary, nil
	case "multiclass", "multi-class":
		return MultiClass, nil
	case "regression":
		return Regression, nil
	}
	return Undecided, fmt.Errorf("task %q: use binary, regression or auto (inferred from the labels), or multiclass", s)
}

// OfLearner is the task of a learner's Info().Task.
func OfLearner(t learner.Task) Task {
	switch t {
	case learner.Classification:
		return Binary
	case learner.MultiClass:
		return MultiClass
	}
	return Regression
}

// Learner is the learner task of t (Undecided: 0).
func (t Task) Learner() learner.Task {
	switch t {
	case Binary:
		return learner.Classification
	case Regression:
		return learner.Regression
	case MultiClass:
		return learner.MultiClass
	}
	return 0
}

// kind is what a stream's labels are.
type kind uint8

const (
	kindNone kind = iota // no label seen yet
	kindNumber
	kindBool
	kindString
)

func kindOf(ev *codec.Event) kind {
	switch ev.YKind {
	case codec.LabelBool:
		return kindBool
	case codec.LabelString:
		return kindString
	}
	return kindNumber
}

func (k kind) String() string {
	switch k {
	case kindNumber:
		return "numbers"
	case kindBool:
		return "bools"
	case kindString:
		return "strings"
	}
	return "none"
}

// Error is a label that does not fit the stream.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

func errorf(format string, a ...any) *Error { return &Error{fmt.Sprintf(format, a...)} }

// Map is one stream's (one partition's) label mapping. The zero value with
// Task set is ready; Positive is configuration (not state).
type Map struct {
	Task     Task
	Positive string // the positive class of string labels ("": the second string seen)
	// RequirePositive refuses string labels without Positive: for models
	// shared across partitions, where each partition's own first string
	// would give the classes different signs.
	RequirePositive bool

	// Warmup is the number of labels an undecided stream of numbers −1, 0,
	// +1 (or of at most two strings) takes to be decided binary (New:
	// DefaultWarmup).
	Warmup int
	// MaxClasses caps a multi-class stream's class dictionary (New:
	// DefaultMaxClasses; at most learner.MaxClasses): a label of a new
	// class beyond it does not fit. Configuration, not state: a restored
	// dictionary larger than the cap keeps its classes.
	MaxClasses int
	// NoMulti keeps an undecided stream of strings binary (decided at its
	// first label, as before multi-class existed): for pipelines that
	// cannot run multi-class models (delayed feedback, shared models).
	NoMulti bool

	kind    kind
	neg     uint8    // binary numbers: the negative label seen first: negNone, negMinus (−1) or negZero (0)
	seen    uint32   // labels seen while undecided
	Classes []string // class names in order of first appearance (binary: strings, at most 2)

	last int             // the class index of the last label Apply mapped (strings, multi-class); −1 otherwise
	idx  map[string]int  // Classes' indices (strings and bools), built on demand
	nidx map[float64]int // multi-class numbers: the index of each label value, built on demand
}

// DefaultWarmup is Map.Warmup's default: an undecided stream whose first 100
// labels are all −1/+1 (or all 0/1, or at most two strings) is binary.
const DefaultWarmup = 100

// DefaultMaxClasses is Map.MaxClasses's default: a multi-class stream may
// name 256 classes (okstream run --max-classes raises it, up to
// learner.MaxClasses).
const DefaultMaxClasses = 256

const (
	negNone uint8 = iota
	negMinus
	negZero
)

// New returns the map of a stream of task t.
func New(t Task, positive string) *Map {
	return &Map{Task: t, Positive: positive, Warmup: DefaultWarmup, MaxClasses: DefaultMaxClasses, last: -1}
}

// Class returns the class dictionary index of the label Apply mapped last
// when it was a string (any task) or a multi-class label, and −1 otherwise:
// on an undecided stream of strings, what the multi-class candidate learns.
func (m *Map) Class() int { return m.last }

// Multi reports whether m is an undecided stream of strings whose warm-up
// may still decide multi-class: the runtime then runs a multi-class
// candidate beside the binary one.
func (m *Map) Multi() bool {
	return m.Task == Undecided && m.kind == kindString && m.multiAllowed()
}

// MayBeMulti reports whether the task may still become multi-class by
// inference: undecided, and no label of another kind than strings seen yet.
func (m *Map) MayBeMulti() bool {
	return m.Task == Undecided && (m.kind == kindNone || m.kind == kindString) && m.multiAllowed()
}

func (m *Map) multiAllowed() bool { return m.Positive == "" && !m.RequirePositive && !m.NoMulti }

// Apply returns the value the models learn from for the labelled event ev
// (ev.HasY), deciding the task if it is Undecided and this label decides it,
// and updating the class dictionary; a label that does not fit is an
// *Error, and then m is unchanged. While the task stays Undecided the value
// is the binary candidate's (−1/+1); the regression candidate learns ev.Y.
// It allocates only for a new string class.
func (m *Map) Apply(ev *codec.Event) (float64, error) {
	k := kindOf(ev)
	if m.kind != kindNone && k != m.kind {
		return 0, errorf("label %s: this stream's labels are %s, not %s", show(ev), m.kind, k)
	}
	m.last = -1
	t := m.Task
	if t == MultiClass {
		c, err := m.multi(ev, k)
		if err != nil {
			return 0, err
		}
		m.kind, m.last = k, c
		return float64(c), nil
	}
	if t == Undecided && k == kindString && m.multiAllowed() {
		return m.undecidedString(ev)
	}
	if t == Undecided {
		switch y := ev.Y; {
		case k != kindNumber:
			t = Binary
		case y != 1 && y != 0 && y != -1:
			t = Regression
		case m.neg != negNone && m.neg != negOf(y) && y != 1:
			t = Regression // −1, 0 and 1: three values
		default:
			y, err := m.binary(ev, k) // cannot fail: checked above
			if err != nil {
				return 0, err
			}
			m.kind = k
			if m.seen++; int(m.seen) >= m.Warmup {
				m.Task = Binary
			}
			return y, nil
		}
	}
	var y float64
	if t == Regression {
		if k != kindNumber {
			return 0, errorf("label %s: regression models learn from numbers only (the task is regression)", show(ev))
		}
		y = ev.Y
	} else {
		var err error
		if y, err = m.binary(ev, k); err != nil {
			return 0, err
		}
	}
	m.Task, m.kind = t, k
	return y, nil
}

// undecidedString maps a string label of an undecided stream: a known or
// second class is the binary candidate's −1/+1 (and Class() its index); a
// third decides multi-class, returning its index.
func (m *Map) undecidedString(ev *codec.Event) (float64, error) {
	i, ok := m.index(ev.YStr)
	if !ok && len(m.Classes) >= 2 {
		c, err := m.multi(ev, kindString)
		if err != nil {
			return 0, err
		}
		m.Task, m.kind, m.last = MultiClass, kindString, c
		return float64(c), nil
	}
	if !ok {
		i = m.add(ev.YStr)
	}
	m.kind, m.last = kindString, i
	if m.seen++; int(m.seen) >= m.Warmup {
		m.Task = Binary
	}
	return m.sign(i), nil
}

// index returns the dictionary index of class s.
func (m *Map) index(s string) (int, bool) {
	if m.idx == nil {
		m.idx = make(map[string]int, len(m.Classes)+1)
		for i, c := range m.Classes {
			m.idx[c] = i
		}
	}
	i, ok := m.idx[s]
	return i, ok
}

// add appends class s to the dictionary.
func (m *Map) add(s string) int {
	m.index("") // builds idx
	m.Classes = append(m.Classes, s)
	m.idx[s] = len(m.Classes) - 1
	return len(m.Classes) - 1
}

// multi maps a multi-class label to its class index, adding a new class
// within the cap. It allocates only for a new class.
func (m *Map) multi(ev *codec.Event, k kind) (int, error) {
	switch k {
	case kindString:
		if i, ok := m.index(ev.YStr); ok {
			return i, nil
		}
	case kindBool:
		s := "false"
		if ev.Y != 0 {
			s = "true"
		}
		if i, ok := m.index(s); ok {
			return i, nil
		}
	default:
		y := ev.Y
		if y == 0 {
			y = 0 // −0 is 0
		}
		if m.nidx == nil {
			m.nidx = make(map[float64]int, len(m.Classes)+1)
			for i, c := range m.Classes {
				if v, err := strconv.ParseFloat(c, 64); err == nil {
					m.nidx[v] = i
				}
			}
		}
		if i, ok := m.nidx[y]; ok {
			return i, nil
		}
		if math.IsNaN(y) || math.IsInf(y, 0) {
			return 0, errorf("label %s: a class name must be finite", show(ev))
		}
	}
	limit := m.MaxClasses
	if limit <= 0 {
		limit = DefaultMaxClasses
	}
	limit = min(limit, learner.MaxClasses)
	if len(m.Classes) >= limit {
		return 0, errorf("label %s: a new class beyond the cap of %d classes (this stream has %d); raise it with okstream run --max-classes N (at most %d), or map rare classes to one before the stream", show(ev), limit, len(m.Classes), learner.MaxClasses)
	}
	name := className(ev, k)
	i := m.add(name)
	if k == kindNumber {
		y := ev.Y
		if y == 0 {
			y = 0
		}
		m.nidx[y] = i
	}
	return i, nil
}

// className is the multi-class name of a label: the string, "true" or
// "false", or the number in decimal ("7" for 7: integers below 2^53 in
// magnitude without exponent; others as strconv 'g' writes them).
func className(ev *codec.Event, k kind) string {
	switch k {
	case kindString:
		return ev.YStr
	case kindBool:
		if ev.Y != 0 {
			return "true"
		}
		return "false"
	}
	y := ev.Y
	if y == math.Trunc(y) && math.Abs(y) < 1<<53 {
		return strconv.FormatInt(int64(y), 10)
	}
	return strconv.FormatFloat(y, 'g', -1, 64)
}

// ClassNameOf is the name of class index i of a multi-class stream ("" out
// of range). It does not allocate.
func (m *Map) ClassNameOf(i int) string {
	if i < 0 || i >= len(m.Classes) {
		return ""
	}
	return m.Classes[i]
}

// binary maps a label of a binary stream, recording a new class.
func (m *Map) binary(ev *codec.Event, k kind) (float64, error) {
	switch k {
	case kindBool:
		if ev.Y != 0 {
			return 1, nil
		}
		return -1, nil
	case kindString:
		if m.Positive == "" && m.RequirePositive {
			return 0, errorf("label %s: string labels on models shared across partitions need --positive naming the positive class (each partition would otherwise take its own first string as -1)", show(ev))
		}
		s := ev.YStr
		if i, ok := m.index(s); ok {
			m.last = i
			return m.sign(i), nil
		}
		if len(m.Classes) >= 2 || (m.Positive != "" && len(m.Classes) == 1 && s != m.Positive && m.Classes[0] != m.Positive) {
			return 0, errorf("label %s: a third class on a binary stream (its classes are %s); for more than two classes restart with okstream run --task multiclass (new models: another --group or --checkpoint-topic)", show(ev), m.classList())
		}
		m.last = m.add(s)
		return m.sign(m.last), nil
	}
	switch y := ev.Y; {
	case y == 1:
		return 1, nil
	case y == -1 || y == 0:
		n := negOf(y)
		if m.neg == negNone {
			m.neg = n
		} else if m.neg != n {
			return 0, errorf("label %v: a third class on a binary stream (its labels are %v and 1; binary labels are -1/+1 or 0/1)", y, -y-1)
		}
		return -1, nil
	}
	return 0, errorf("label %v: binary models learn from labels -1/+1, 0/1, true/false or two strings (the task is binary; give --task regression for real-valued targets)", ev.Y)
}

func negOf(y float64) uint8 {
	if y == 0 {
		return negZero
	}
	return negMinus
}

// sign is the value of class i of the dictionary.
func (m *Map) sign(i int) float64 {
	if m.Positive != "" {
		if m.Classes[i] == m.Positive {
			return 1
		}
		return -1
	}
	if i == 1 {
		return 1
	}
	return -1
}

// ClassName is the name of the class a binary decision d (+1 or −1)
// predicts, as the stream writes its labels: for string labels the class
// of the dictionary (or Positive) that maps to d; for bools "true" and
// "false"; for numbers "1" and the stream's negative label, "-1" or "0".
// It is "" when the name is not known yet (no label of that class and none
// to tell it: a string class not seen, the negative number before the first
// negative label), for d = 0, and for a regression stream. It does not
// allocate.
func (m *Map) ClassName(d int8) string {
	if m.Task == Regression || m.Task == MultiClass || d == 0 {
		return ""
	}
	switch m.kind {
	case kindBool:
		if d > 0 {
			return "true"
		}
		return "false"
	case kindString:
		for i, c := range m.Classes {
			if m.sign(i) == float64(d) {
				return c
			}
		}
		if d > 0 && m.Positive != "" {
			return m.Positive
		}
	case kindNumber:
		if d > 0 {
			return "1"
		}
		switch m.neg {
		case negMinus:
			return "-1"
		case negZero:
			return "0"
		}
	}
	return ""
}

func (m *Map) classList() string {
	s := ""
	for i, c := range m.Classes {
		if i > 0 {
			s += " and "
		}
		s += strconv.Quote(c) + fmt.Sprintf(" (%+g)", m.sign(i))
	}
	return s
}

// multiList names a multi-class dictionary's first classes.
func (m *Map) multiList() string {
	const show = 10
	s := fmt.Sprintf(" %d classes", len(m.Classes))
	for i, c := range m.Classes {
		if i == show {
			s += ", ..."
			break
		}
		if i == 0 {
			s += " "
		} else {
			s += ", "
		}
		s += strconv.Quote(c)
	}
	return s
}

func show(ev *codec.Event) string {
	switch ev.YKind {
	case codec.LabelBool:
		return strconv.FormatBool(ev.Y != 0)
	case codec.LabelString:
		return strconv.Quote(ev.YStr)
	}
	return strconv.FormatFloat(ev.Y, 'g', -1, 64)
}

// String describes m's state: the task, the labels' kind and the classes,
// e.g. `binary, strings "no" (-1) and "yes" (+1)`.
func (m *Map) String() string {
	s := m.Task.String()
	if m.Task == Undecided {
		return fmt.Sprintf("%s (%d of %d warm-up labels seen)", s, m.seen, m.Warmup)
	}
	if m.kind != kindNone {
		s += ", " + m.kind.String()
	}
	switch {
	case m.Task == Regression:
	case m.Task == MultiClass:
		s += m.multiList()
	case len(m.Classes) > 0:
		s += " " + m.classList()
	case m.kind == kindNumber && m.neg == negZero:
		s += " 0 (-1) and 1 (+1)"
	case m.kind == kindNumber && m.neg == negMinus:
		s += " -1 and +1"
	}
	return s
}

// TaskAndClasses returns m's task and the size of its class dictionary
// (a nil m: Undecided, 0): what a log line reports when they change.
func (m *Map) TaskAndClasses() (Task, int) {
	if m == nil {
		return Undecided, 0
	}
	return m.Task, len(m.Classes)
}

// EncodedSize is the number of bytes Encode writes.
func (m *Map) EncodedSize() int {
	n := 1 + 1 + 1 + 4 + 4
	for _, c := range m.Classes {
		n += 4 + len(c)
	}
	return n
}

// Encode appends m's state (not Positive, which is configuration).
func (m *Map) Encode(e *state.Encoder) {
	e.U8(uint8(m.Task))
	e.U8(uint8(m.kind))
	e.U8(m.neg)
	e.U32(m.seen)
	e.U32(uint32(len(m.Classes)))
	for _, c := range m.Classes {
		e.String(c)
	}
}

// Decode reads a state written by Encode into m (keeping Positive).
func (m *Map) Decode(d *state.Decoder) {
	t, k, neg, seen := Task(d.U8()), kind(d.U8()), d.U8(), d.U32()
	n := int(d.U32())
	maxN := 2
	if t == MultiClass {
		maxN = learner.MaxClasses
	}
	if d.Err() == nil && (t > MultiClass || k > kindString || neg > negZero || n > maxN) {
		d.Fail("label state: task %d, kind %d, negative %d, %d classes", t, k, neg, n)
	}
	var cs []string
	seenName := map[string]bool{}
	for i := 0; i < n && d.Err() == nil; i++ {
		c := d.String()
		if d.Err() == nil && seenName[c] {
			d.Fail("label state: class %q twice", c)
		}
		seenName[c] = true
		cs = append(cs, c)
	}
	if d.Err() != nil {
		return
	}
	m.Task, m.kind, m.neg, m.seen, m.Classes = t, k, neg, seen, cs
	m.idx, m.nidx, m.last = nil, nil, -1
}

// Flexible reports whether spec is a learner spec whose task follows the
// labels: auto without a loss (bare auto, auto:base=fogd, ...). Binary
// streams run it as it is, regression streams with loss=square
// (ResolveSpec).
func Flexible(spec string) bool {
	name, kv, err := learner.ParseSpec(spec)
	if err != nil || name != "auto" {
		return false
	}
	_, hasLoss := kv["loss"]
	return !hasLoss
}

// ResolveSpec is the spec a model of spec runs for task t: a Flexible spec
// gets loss=square for regression; for multi-class it stays as it is when
// auto has a multi-class form (learner.DescribeMulti("auto")), else it is
// "linear" (multinomial logistic regression: a build without multi-class
// auto); every other spec is returned as it is.
func ResolveSpec(spec string, t Task) string {
	if t == MultiClass && Flexible(spec) && learner.DescribeMulti("auto") == nil {
		return "linear"
	}
	if t != Regression || !Flexible(spec) {
		return spec
	}
	name, rest, has := cut(spec)
	if !has || rest == "" {
		return name + ":loss=square"
	}
	return name + ":" + rest + ",loss=square"
}

func cut(spec string) (name, rest string, has bool) {
	for i := 0; i < len(spec); i++ {
		if spec[i] == ':' {
			return spec[:i], spec[i+1:], true
		}
	}
	return spec, "", false
}
