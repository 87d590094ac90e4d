package codec_test

import (
	"fmt"

	"okstream/codec"
)

// A Go producer builds an Event and encodes it with AppendEvent; the bytes are
// the Kafka record value. With segmentio/kafka-go the write is
//
//	w := &kafka.Writer{Addr: kafka.TCP("localhost:9092"), Topic: "events"}
//	err = w.WriteMessages(ctx, kafka.Message{Key: []byte(ev.Key), Value: value})
//
// okstream decodes each record value with a Decoder configured for the
// feature dimension.
func Example() {
	ev := codec.Event{
		Version: codec.EventVersion,
		ID:      "click-000042",
		TS:      1700000000123, HasTS: true, // ms since the Unix epoch, e.g. time.Now().UnixMilli()
		Key: "user-7",
		X:   []float64{0.5, 1, 0, -2.25},
		Y:   1, HasY: true, // leave HasY false to ask for a prediction only
	}
	value, err := codec.AppendEvent(nil, &ev)
	if err != nil {
		fmt.Println("invalid event:", err)
		return
	}
	fmt.Printf("%d bytes\n", len(value))

	// The consumer side.
	dec := codec.NewDecoder(codec.Limits{Dim: 4, MaxBytes: 1 << 20})
	var got codec.Event
	if err := dec.DecodeEvent(value, &got); err != nil {
		fmt.Println("dead letter:", codec.ReasonOf(err), err)
		return
	}
	fmt.Println(got.ID, got.Key, got.TS, got.X, got.Y)

	// A bad record is rejected with a reason for the dead-letter topic.
	ev.X[1] = 0 / zero
	_, err = codec.AppendEvent(nil, &ev)
	fmt.Println(err)

	// Output:
	// 93 bytes
	// click-000042 user-7 1700000000123 [0.5 1 0 -2.25] 1
	// codec: field "x": element 1 is NaN (non_finite)
}

var zero float64

func ExampleDecoder_DecodeEvent_sparse() {
	// What Python's msgpack.packb({"v": 1, "xi": [0, 3], "xv": [1, 2.5]}) produces.
	value := []byte{0x83, 0xa1, 'v', 0x01, 0xa2, 'x', 'i', 0x92, 0x00, 0x03,
		0xa2, 'x', 'v', 0x92, 0x01, 0xcb, 0x40, 0x04, 0, 0, 0, 0, 0, 0}
	dec := codec.NewDecoder(codec.Limits{Dim: 5})
	var ev codec.Event
	if err := dec.DecodeEvent(value, &ev); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ev.XI, ev.XV, ev.Dense(nil, 5))

	// Output:
	// [0 3] [1 2.5] [1 0 0 2.5 0]
}

func ExampleAppendPrediction() {
	p := codec.Prediction{
		Version: codec.PredictionVersion,
		ID:      "events/0/42", Key: "user-7", Topic: "events", Partition: 0, Offset: 42,
		Models: []codec.ModelScore{
			{Name: "fogd", Score: 0.73, Classify: true, Decision: codec.Decision(0.73), Updates: 41},
		},
	}
	b := codec.AppendPrediction(nil, &p)
	back, err := codec.DecodePrediction(b)
	fmt.Printf("%d bytes, decision %d, error %v\n", len(b), back.Models[0].Decision, err)

	// Output:
	// 73 bytes, decision 1, error <nil>
}

// Delayed feedback (schema version 2): an impression with an id and no label
// is scored at once; the feedback event, later, carries only the label and
// the impression's id as Ref, with the same key so that it lands in the same
// partition.
func Example_feedback() {
	imp := codec.Event{Version: 2, ID: "imp-000042", Key: "user-7", TS: 1700000000123, HasTS: true,
		X: []float64{0.5, 1, 0, -2.25}}
	fb := codec.Event{Version: 2, Key: imp.Key, Ref: imp.ID, TS: 1700000060000, HasTS: true, Y: 1, HasY: true}
	impValue, err := codec.AppendEvent(nil, &imp)
	if err != nil {
		fmt.Println(err)
		return
	}
	fbValue, err := codec.AppendEvent(nil, &fb)
	if err != nil {
		fmt.Println(err)
		return
	}

	// The consumer side.
	dec := codec.NewDecoder(codec.Limits{Dim: 4})
	var ev codec.Event
	for _, value := range [][]byte{impValue, fbValue} {
		if err := dec.DecodeEvent(value, &ev); err != nil {
			fmt.Println("dead letter:", err)
			continue
		}
		if ev.IsFeedback() {
			fmt.Printf("feedback for %s: y=%v\n", ev.Ref, ev.Y)
		} else {
			fmt.Printf("impression %s: x=%v, labelled %v\n", ev.ID, ev.Dense(nil, 4), ev.HasY)
		}
	}

	// The outcome record okstream writes for the feedback: version 2, with
	// the impression-time scores.
	out := codec.Prediction{ID: imp.ID, Key: fb.Key, Topic: "events", Partition: 3, Offset: 1043,
		TS: fb.TS, HasTS: true, Y: fb.Y, HasY: true, Ref: imp.ID, RefOffset: 1000, HasRef: true,
		Models: []codec.ModelScore{{Name: "fogd", Score: 0.73, Classify: true, Decision: 1, Updates: 41}}}
	p, err := codec.DecodePrediction(codec.AppendPrediction(nil, &out))
	fmt.Println(p.Version, p.Ref, p.RefOffset, err)

	// Feedback needs version 2; a feedback event cannot carry features.
	fb.Version = 1
	_, err = codec.AppendEvent(nil, &fb)
	fmt.Println(err)
	_, err = codec.DecodeEvent([]byte("\x84\xa1v\x02\xa3ref\xa1a\xa1x\x91\x01\xa1y\x01"), codec.Limits{})
	fmt.Println(codec.ReasonOf(err))

	// Output:
	// impression imp-000042: x=[0.5 1 0 -2.25], labelled false
	// feedback for imp-000042: y=1
	// 2 imp-000042 1000 <nil>
	// codec: field "ref": Ref is set but Version is 1, which has no feedback events; set Version 2 for feedback events (bad_field_type)
	// feedback_with_features
}
