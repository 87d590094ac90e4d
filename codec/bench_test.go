package codec

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func benchDenseEvent(dim int) Event {
	rng := rand.New(rand.NewPCG(uint64(dim), 1))
	ev := Event{Version: 1, ID: "events/0/123456", TS: 1700000000123, HasTS: true, Key: "user-42", Y: 1, HasY: true,
		X: make([]float64, dim)}
	for i := range ev.X {
		ev.X[i] = rng.NormFloat64()
	}
	return ev
}

func benchSparseEvent(nnz, dim int) Event {
	rng := rand.New(rand.NewPCG(uint64(nnz), 2))
	ev := Event{Version: 1, ID: "events/0/123456", TS: 1700000000123, HasTS: true, Key: "user-42", Y: -1, HasY: true}
	for j := 0; len(ev.XI) < nnz; j += 1 + rng.IntN(dim/nnz) {
		ev.XI = append(ev.XI, uint32(j))
		ev.XV = append(ev.XV, rng.Float64())
	}
	return ev
}

func benchDecode(b *testing.B, ev Event, lim Limits) {
	enc, err := AppendEvent(nil, &ev)
	if err != nil {
		b.Fatal(err)
	}
	d := NewDecoder(lim)
	var out Event
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if err := d.DecodeEvent(enc, &out); err != nil {
			b.Fatal(err)
		}
	}
}

// The events carry an id and a key: the two strings are the only allocations.
func BenchmarkDecodeEventDense20(b *testing.B) { benchDecode(b, benchDenseEvent(20), Limits{Dim: 20}) }
func BenchmarkDecodeEventDense300(b *testing.B) {
	benchDecode(b, benchDenseEvent(300), Limits{Dim: 300})
}
func BenchmarkDecodeEventSparse12(b *testing.B) {
	benchDecode(b, benchSparseEvent(12, 1000), Limits{Dim: 1000})
}

// No id or key: nothing to allocate.
func BenchmarkDecodeEventDense300NoStrings(b *testing.B) {
	ev := benchDenseEvent(300)
	ev.ID, ev.Key = "", ""
	benchDecode(b, ev, Limits{Dim: 300})
}

func BenchmarkAppendEventDense20(b *testing.B) {
	ev := benchDenseEvent(20)
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendEvent(buf[:0], &ev); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendEventDense300(b *testing.B) {
	ev := benchDenseEvent(300)
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendEvent(buf[:0], &ev); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendPrediction2Models(b *testing.B) {
	p := Prediction{Version: 1, ID: "events/0/123456", Key: "user-42", Topic: "events", Partition: 3, Offset: 123456,
		TS: 1700000000123, HasTS: true, Y: 1, HasY: true, Models: []ModelScore{
			{Name: "forks", Score: 0.42, Classify: true, Decision: 1, Updates: 123000},
			{Name: "fogd", Score: -0.1, Classify: true, Decision: -1, Updates: 123000},
		}}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendPrediction(buf[:0], &p)
	}
}

// The same record in schema version 3: a class and each model's probability.
func BenchmarkAppendPrediction2ModelsV3(b *testing.B) {
	p := Prediction{Version: 3, ID: "events/0/123456", Key: "user-42", Topic: "events", Partition: 3, Offset: 123456,
		TS: 1700000000123, HasTS: true, Y: 1, HasY: true, Class: "spam", Models: []ModelScore{
			{Name: "forks", Score: 0.42, Classify: true, Decision: 1, Updates: 123000, Prob: 0.71, HasProb: true},
			{Name: "fogd", Score: -0.1, Classify: true, Decision: -1, Updates: 123000, Prob: 0.46, HasProb: true},
		}}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendPrediction(buf[:0], &p)
	}
}

// A feedback event (schema version 2): the id, key and ref strings are the
// only allocations.
func BenchmarkDecodeEventFeedback(b *testing.B) {
	ev := Event{Version: 2, ID: "events/0/123999", TS: 1700000060000, HasTS: true, Key: "user-42",
		Ref: "events/0/123456", Y: 1, HasY: true}
	benchDecode(b, ev, Limits{Dim: 20})
}

// The label's kind: a bool costs what a number does; a string label is one
// more allocation (like id and key).
func BenchmarkDecodeEventLabel(b *testing.B) {
	for _, c := range []struct {
		name string
		set  func(ev *Event)
	}{
		{"number", func(ev *Event) {}},
		{"bool", func(ev *Event) { ev.YKind = LabelBool }},
		{"string", func(ev *Event) { ev.YKind, ev.Y, ev.YStr = LabelString, 0, "click" }},
	} {
		b.Run(c.name, func(b *testing.B) {
			ev := benchDenseEvent(20)
			c.set(&ev)
			benchDecode(b, ev, Limits{Dim: 20})
		})
	}
}

// Named features against dense (the budget: named decoding costs at
// most 1.5× the dense decoding of the same event), and JSON against
// msgpack. Every event has the id and key of benchDenseEvent (two string
// allocations each); benchNamedEvent's names are "feature_00".."feature_29".
func BenchmarkDecodeEvent30(b *testing.B) {
	named := benchNamedEvent(30)
	categorical := benchNamedEvent(30)
	for i := 0; i < 30; i += 3 { // every third feature a categorical value
		categorical.F[i] = Field{Name: categorical.F[i].Name, Kind: FieldString, Str: []string{"FR", "ios", "premium"}[i%3]}
	}
	// Values as services often write them (12.5, 3, 0.25): short decimals,
	// which JSON parses on its exact fast path; the other events' values
	// are random float64s of 17 significant digits.
	short := benchNamedEvent(30)
	for i := range short.F {
		short.F[i].Num = math.Round(short.F[i].Num*100) / 100
	}
	shortDense := benchDenseEvent(30)
	for i := range shortDense.X {
		shortDense.X[i] = math.Round(shortDense.X[i]*100) / 100
	}
	for _, c := range []struct {
		name string
		ev   Event
	}{
		{"dense", benchDenseEvent(30)},
		{"named", named},
		{"named_categorical", categorical},
		{"dense_short", shortDense},
		{"named_short", short},
	} {
		b.Run(c.name+"/msgpack", func(b *testing.B) { benchDecode(b, c.ev, Limits{Dim: 30}) })
		b.Run(c.name+"/json", func(b *testing.B) { benchDecodeJSON(b, c.ev, Limits{Dim: 30}) })
	}
}

func benchDecodeJSON(b *testing.B, ev Event, lim Limits) {
	enc, err := AppendEventJSON(nil, &ev)
	if err != nil {
		b.Fatal(err)
	}
	d := NewDecoder(lim)
	var out Event
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if err := d.DecodeEventJSON(enc, &out); err != nil {
			b.Fatal(err)
		}
	}
}

// The same JSON records through encoding/json into a generic map, for scale
// (what a consumer built on the standard library would pay before checking
// anything).
func BenchmarkDecodeEvent30StdlibJSON(b *testing.B) {
	for _, c := range []struct {
		name string
		ev   Event
	}{{"dense", benchDenseEvent(30)}, {"named", benchNamedEvent(30)}} {
		b.Run(c.name, func(b *testing.B) {
			enc, err := AppendEventJSON(nil, &c.ev)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(enc)))
			b.ReportAllocs()
			for b.Loop() {
				var m map[string]any
				if err := json.Unmarshal(enc, &m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAppendNamed30(b *testing.B) {
	ev := benchNamedEvent(30)
	p := Prediction{Version: 3, ID: "events/0/123456", Key: "user-42", Topic: "events", Partition: 3, Offset: 123456,
		TS: 1700000000123, HasTS: true, Y: 1, HasY: true, Class: "spam", Models: []ModelScore{
			{Name: "forks", Score: 0.42, Classify: true, Decision: 1, Updates: 123000, Prob: 0.71, HasProb: true},
			{Name: "fogd", Score: -0.1, Classify: true, Decision: -1, Updates: 123000, Prob: 0.46, HasProb: true},
		}}
	buf := make([]byte, 0, 4096)
	b.Run("event/msgpack", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = AppendEvent(buf[:0], &ev)
		}
	})
	b.Run("event/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = AppendEventJSON(buf[:0], &ev)
		}
	})
	b.Run("prediction/msgpack", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf = AppendPrediction(buf[:0], &p)
		}
	})
	b.Run("prediction/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf = AppendPredictionJSON(buf[:0], &p)
		}
	})
}

// JSON number parsing, per number: random float64s written with 17
// significant digits (%.17g, the digits Python's json.dumps writes for most
// random floats), through jsonReader.number and through strconv.ParseFloat
// (what number did for them before Eisel–Lemire).
func BenchmarkParseFloat17(b *testing.B) {
	rng := rand.New(rand.NewPCG(17, 17))
	nums := make([][]byte, 1024)
	strs := make([]string, len(nums))
	for i := range nums {
		v := rng.NormFloat64()
		if i%2 == 0 {
			v = rng.Float64()
		}
		nums[i] = strconv.AppendFloat(nil, v, 'g', 17, 64)
		strs[i] = string(nums[i])
	}
	b.Run("json", func(b *testing.B) {
		j := &jsonReader{}
		i := 0
		for b.Loop() {
			j.reset(nums[i&1023])
			if _, _, _, _, e := j.number("x"); e != nil {
				b.Fatal(e)
			}
			i++
		}
	})
	b.Run("strconv", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := strconv.ParseFloat(strs[i&1023], 64); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
