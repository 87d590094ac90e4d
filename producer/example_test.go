package producer_test

import (
	"fmt"
	"time"

	"okstream/dataset"
	"okstream/producer"
)

// A Plan tells, without Kafka, which event a replay sends when and where:
// here two passes over four rows, each pass in its own seeded order.
func ExamplePlan() {
	ds := &dataset.Dataset{Name: "tiny", Dim: 2,
		X: [][]float64{{0, 1}, {2, 0}, {3, 4}, {5, 0}},
		Y: []float64{1, -1, 1, -1}}
	p, err := producer.NewPlan(ds, producer.Config{Loop: true, Limit: 8, Permute: true, Seed: 1, Time: producer.TimeNone})
	if err != nil {
		panic(err)
	}
	for i := range p.Len() {
		ev := p.Event(i, time.Time{})
		fmt.Printf("event %d: id %s key %s partition %d/3 x %v y %v\n",
			i, ev.ID, ev.Key, producer.Partition(ev.Key, 3), ev.X, ev.Y)
	}
	// Output:
	// event 0: id 0-1 key 1 partition 0/3 x [2 0] y -1
	// event 1: id 0-0 key 0 partition 2/3 x [0 1] y 1
	// event 2: id 0-3 key 3 partition 2/3 x [5 0] y -1
	// event 3: id 0-2 key 2 partition 2/3 x [3 4] y 1
	// event 4: id 1-0 key 0 partition 2/3 x [0 1] y 1
	// event 5: id 1-3 key 3 partition 2/3 x [5 0] y -1
	// event 6: id 1-1 key 1 partition 0/3 x [2 0] y -1
	// event 7: id 1-2 key 2 partition 2/3 x [3 4] y 1
}
