package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"okstream/eval/paper"
	"okstream/share"
)

// The partitions experiment's regression path: the consumer's shared runs
// of the regression learners (ridge and FOGD with the square loss) on the
// embedded broker end with every partition's progressive squared-error
// sum equal, bit for bit, to the simulator's (each partition sums in its
// offset order in both), and independent runs with the simulator's
// independent sums.
func TestPartitionsPipelineSqErrEqualsSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("embedded broker runs in -short mode")
	}
	const P, n, dim = 4, 4 * 16 * 8, 3 // every partition ends on an epoch boundary
	rng := rand.New(rand.NewPCG(17, 0))
	events := make([]share.Event, n)
	assign := make([]int, n)
	for i := range events {
		x := []float64{2*rng.Float64() - 1, 2*rng.Float64() - 1, 2*rng.Float64() - 1}
		events[i] = share.Event{X: x, Y: math.Sin(2*x[0]) + 0.5*x[1]*x[2] + 0.1*rng.NormFloat64()}
		assign[i] = i % P
	}
	for _, spec := range []string{"linear:loss=square", "fogd:loss=square,sigma=1,features=50,eta=0.05"} {
		for _, shared := range []bool{false, true} {
			run := paper.PartitionsRun{Spec: spec, Dim: dim, Partitions: P, Share: shared, Every: 16, Lag: 1,
				MaxWait: time.Minute, Events: events, Assign: assign}
			out, err := partitionsPipeline(run)
			if err != nil {
				t.Fatalf("%s, shared %v: %v", spec, shared, err)
			}
			c := share.Config{Partitions: P}
			if shared {
				c.Every, c.Lag = 16, 1
			}
			sim, err := share.Simulate(spec, dim, c, events, func(i int) int { return assign[i] })
			if err != nil {
				t.Fatal(err)
			}
			if out.Labeled != n || out.Mistakes != 0 {
				t.Errorf("%s, shared %v: %d labelled, %d mistakes; want %d, 0 (regression)", spec, shared, out.Labeled, out.Mistakes, n)
			}
			if !slices.Equal(out.SqErr, sim.SqErr) || sim.SqErr[0] <= 0 {
				t.Errorf("%s, shared %v: pipeline's squared-error sums %v, simulator's %v", spec, shared, out.SqErr, sim.SqErr)
			}
		}
	}
}
