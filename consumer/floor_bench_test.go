package consumer

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"okstream/codec"
	"okstream/internal/kafkatest"
	"okstream/learner"
)

// floorBrokerEnv makes a run of this test binary the embedded broker of
// BenchmarkPipelineFloor (TestFloorBrokerProcess), in a process of its own.
const floorBrokerEnv = "OKSTREAM_FLOOR_BROKER"

// TestFloorBrokerProcess is not a test: it is the broker process of
// BenchmarkPipelineFloor (the helper-process pattern of os/exec's tests).
// Run with OKSTREAM_FLOOR_BROKER=1 it starts an embedded broker, prints
// "addr HOST:PORT" and serves until its standard input closes; otherwise it
// returns at once.
func TestFloorBrokerProcess(t *testing.T) {
	if os.Getenv(floorBrokerEnv) != "1" {
		return
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.GroupMinSessionTimeout(500*time.Millisecond),
		kfake.BrokerConfigs(map[string]string{"group.min.session.timeout.ms": "500"}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Printf("addr %s\n", c.ListenAddrs()[0])
	_, _ = io.Copy(io.Discard, os.Stdin) // until the benchmark closes the pipe
}

// floorBroker starts the benchmark's broker in a child process (this test
// binary, TestFloorBrokerProcess) and points kafkatest at it, so that the
// benchmark's process — whose CPU time and allocations it measures — is
// okstream alone. With OKSTREAM_TEST_BROKERS set it uses that broker.
func floorBroker(b *testing.B) {
	if os.Getenv("OKSTREAM_TEST_BROKERS") != "" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFloorBrokerProcess$", "-test.count=1", "-test.bench=^$")
	cmd.Env = append(os.Environ(), floorBrokerEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if addr, ok := strings.CutPrefix(sc.Text(), "addr "); ok {
			b.Setenv("OKSTREAM_TEST_BROKERS", addr)
			go func() { _, _ = io.Copy(io.Discard, out) }()
			return
		}
	}
	b.Fatalf("the broker process printed no address (%v)", sc.Err())
}

// floorModels are BenchmarkPipelineFloor's configurations and their
// streams' lengths in passes of floorEvents: pass-through and FOGD at steady
// state (ten passes, as a long-running pipeline), auto over one pass (each
// partition then spends its life in auto's warm-up: the case issue 41
// measured).
var floorModels = []struct {
	name   string
	models []Model
	passes int
}{
	{"passthrough", nil, 10},
	{"fogd", []Model{{Name: "fogd", Spec: "fogd:sigma=4,budget=100"}}, 10},
	{"auto", []Model{{Name: "auto", Spec: "auto"}}, 1},
}

// floorEvents and floorPartitions: cod-rna's size (59,535 training events,
// d = 8) in 16 partitions, i.e. about 3,700 events per partition and pass.
const (
	floorEvents     = 59535
	floorPartitions = 16
	floorDim        = 8
)

// BenchmarkPipelineFloor measures what the pipeline costs per event beyond
// the work no pipeline can avoid (issue 41). It runs one instance over
// floorModels' events in 16 partitions (d = 8; checkpoints every 10,000
// events per partition, micro-batches of 1,000, effectively-once output
// unsigned: okstream run's defaults)
// with the broker in a child process, and reports
//
//   - cpu-ns/event: okstream's CPU time (user + system of this process,
//     which holds no broker) per event, from the pipeline's start (group
//     join and restores included) to every partition caught up;
//   - allocs/event: heap allocations per event in the same window;
//   - codec-ns/event: decoding the same events and encoding for each the
//     prediction record pass-through writes (codec.Decoder,
//     codec.AppendPrediction), timed in the same run;
//   - floor-ratio: cpu-ns/event ÷ codec-ns/event (pass-through only);
//   - events/cpu-s: events per CPU-second of okstream;
//   - for auto, learn-ns/event: auto's own Learn at steady state (after
//     20,000 events of the same stream), and auto/steady: the pipeline's
//     cpu-ns/event (each partition running its own auto from scratch,
//     warm-up included) over what the same pipeline costs per event with
//     auto at steady state: pass-through's cpu-ns/event on the same
//     stream, measured in the same run, plus learn-ns/event.
//
// Run it with
//
//	go test ./consumer -run '^$' -bench PipelineFloor -benchtime 1x
//
// OKSTREAM_BENCH_EVENTS sets every configuration's events;
// OKSTREAM_BENCH_CPUPROFILE=prefix writes a CPU profile of each window.
func BenchmarkPipelineFloor(b *testing.B) {
	floorBroker(b)
	for _, c := range floorModels {
		b.Run(c.name, func(b *testing.B) {
			var cpu time.Duration
			var allocs uint64
			var n int64
			var topic string
			for i := 0; i < b.N; i++ {
				r := floorRun(b, c.models, c.passes*floorEvents)
				cpu, allocs, n, topic = cpu+r.cpu, allocs+r.allocs, n+r.events, r.topic
			}
			codecNs := codecFloor(benchEvents(c.passes*floorEvents, floorDim), topic)
			perEvent := float64(cpu.Nanoseconds()) / float64(n)
			b.ReportMetric(perEvent, "cpu-ns/event")
			b.ReportMetric(float64(allocs)/float64(n), "allocs/event")
			b.ReportMetric(1e9/perEvent, "events/cpu-s")
			b.ReportMetric(codecNs, "codec-ns/event")
			if c.models == nil {
				b.ReportMetric(perEvent/codecNs, "floor-ratio")
			}
			if c.name == "auto" {
				// Steady state in the pipeline: pass-through's cost on the
				// same stream plus auto's own at steady state.
				learn := autoSteady(b, benchEvents(floorEvents, floorDim))
				pt := floorRun(b, nil, c.passes*floorEvents)
				steady := float64(pt.cpu.Nanoseconds())/float64(pt.events) + learn
				b.ReportMetric(learn, "learn-ns/event")
				b.ReportMetric(perEvent/steady, "auto/steady")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// floorResult is one pass's okstream CPU time, heap allocations and events
// processed in the measured window.
type floorResult struct {
	cpu    time.Duration
	allocs uint64
	events int64
	topic  string // the input topic
}

// floorRun produces the benchmark's events into a fresh 16-partition topic
// and processes them with one pipeline, measuring from its start to every
// partition caught up. The events are dropped once produced:
// the garbage collector would otherwise scan them, in okstream's CPU time,
// at every cycle.
func floorRun(b *testing.B, models []Model, events int) floorResult {
	b.Helper()
	e := kafkatest.New(b)
	input := e.Name("events")
	e.CreateTopic(b, input, floorPartitions, nil)
	e.Produce(b, input, benchEvents(events, floorDim)...)
	runtime.GC()
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.Models, cfg.Passthrough, cfg.Dim = models, models == nil, floorDim
	cfg.CheckpointEvery, cfg.BatchSize, cfg.FetchMaxWait = 10000, 1000, 250*time.Millisecond
	cfg.ControlSecret = nil // okstream run's default: output records unsigned
	ends := endOffsets(b, e, input)
	p := mustNew(b, cfg)
	// The measure runs from the pipeline's start, group join, restores
	// and the models' construction included: with every partition ready
	// first, the partitions ready early would have gone through part of
	// their stream — auto's most expensive events — outside it.
	stop := profileWindow(b, models)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	allocs0, cpu0 := ms.Mallocs, cpuTime()
	r := startPipeline(b, p)
	for !caughtUp(ends, r) {
		time.Sleep(5 * time.Millisecond)
	}
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&ms)
	stop()
	res := floorResult{cpu: cpu, allocs: ms.Mallocs - allocs0, events: processed(p), topic: input}
	if err := r.shutdown(b); err != nil {
		b.Fatal(err)
	}
	return res
}

// codecFloor returns the CPU nanoseconds per event of decoding msgs' events
// and encoding for each the prediction record a pass-through pipeline
// writes for it from topic (the default id topic/partition/offset, the
// event's key, the source coordinates, the label; no model scores): what
// any pipeline must do per event (best of three passes).
func codecFloor(msgs []kafka.Message, topic string) float64 {
	dec := codec.NewDecoder(codec.Limits{})
	var ev codec.Event
	var buf, id []byte
	best := time.Duration(1<<63 - 1)
	for pass := 0; pass < 3; pass++ {
		t0 := cpuTime()
		for i, m := range msgs {
			if err := dec.DecodeEvent(m.Value, &ev); err != nil {
				panic(err)
			}
			part, off := i%floorPartitions, int64(i/floorPartitions)
			id = append(append(append(append(id[:0], topic...), '/'), strconv.Itoa(part)...), '/')
			id = strconv.AppendInt(id, off, 10)
			pred := codec.Prediction{Version: codec.PredictionVersionProb, ID: string(id), Key: ev.Key,
				Topic: topic, Partition: int32(part), Offset: off, Y: ev.Y, HasY: ev.HasY}
			buf = codec.AppendPrediction(buf[:0], &pred)
		}
		best = min(best, cpuTime()-t0)
	}
	return float64(best.Nanoseconds()) / float64(len(msgs))
}

// autoSteady returns auto's Learn time per event at steady state: after
// 20,000 events of msgs' stream, over the next 10,000 (best of three).
func autoSteady(b *testing.B, msgs []kafka.Message) float64 {
	l, err := learner.New("auto", floorDim)
	if err != nil {
		b.Fatal(err)
	}
	dec := codec.NewDecoder(codec.Limits{})
	xs := make([][]float64, len(msgs))
	ys := make([]float64, len(msgs))
	for i, m := range msgs {
		var ev codec.Event
		if err := dec.DecodeEvent(m.Value, &ev); err != nil {
			b.Fatal(err)
		}
		xs[i], ys[i] = append([]float64(nil), ev.X...), ev.Y
	}
	const warm, span = 20000, 10000
	for i := 0; i < warm; i++ {
		l.Learn(xs[i], ys[i])
	}
	best := time.Duration(1<<63 - 1)
	for pass := 0; pass < 3; pass++ {
		t0 := cpuTime()
		for i := warm; i < warm+span; i++ {
			l.Learn(xs[i], ys[i])
		}
		best = min(best, cpuTime()-t0)
	}
	return float64(best.Nanoseconds()) / span
}
