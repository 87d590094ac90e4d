package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"okstream/codec"
	"okstream/consumer"
	"okstream/eval/paper"
	"okstream/internal/kafkautil"
)

// The partitions experiment (okstream reproduce partitions) runs each
// configuration through the real consumer on an embedded broker.
func init() { paper.PartitionsPipeline = partitionsPipeline }

// partitionsDebug, if set (a benchmark), sees each run's pipeline once it
// has processed every event.
var partitionsDebug func(*consumer.Pipeline)

// partitionsWindow, if set (a benchmark), is called when a run's timed
// window opens (start) and when it closes, e.g. to read the process's CPU
// time over exactly the window that Seconds measures.
var partitionsWindow func(start bool)

// partitionsCluster, if set (a benchmark), sees each run's embedded broker
// before anything is produced to it, e.g. to delay its produce responses.
var partitionsCluster func(*kfake.Cluster)

// freshListen listens on a port no earlier embedded broker of this process
// used (kfake.ListenFn). kafka-go's default transport, which the pipeline
// uses, caches topic metadata per broker address for 6 s; a run whose fresh
// broker got an earlier run's port saw that run's topics ("Unknown Topic
// Or Partition" on its checkpoint topic, or the earlier partition count).
func freshListen(network, address string) (net.Listener, error) {
	usedPorts.Lock()
	defer usedPorts.Unlock()
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for range 1000 {
		l, err := net.Listen(network, address)
		if err != nil {
			return nil, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		if !usedPorts.m[port] {
			if usedPorts.m == nil {
				usedPorts.m = map[int]bool{}
			}
			usedPorts.m[port] = true
			return l, nil
		}
		held = append(held, l) // keep it so the next Listen gets another port
	}
	return nil, fmt.Errorf("embedded broker: no unused port after 1000 tries")
}

var usedPorts struct {
	sync.Mutex
	m map[int]bool
}

// partitionsPipeline produces the run's events into a fresh embedded
// broker, partition by partition as Assign says, runs one pipeline
// instance until every partition is processed, and returns the models'
// progressive statistics (mistakes, and each partition's squared-error
// sum) and the processing time.
func partitionsPipeline(r paper.PartitionsRun) (paper.PartitionsOutcome, error) {
	var out paper.PartitionsOutcome
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.GroupMinSessionTimeout(500*time.Millisecond), kfake.ListenFn(freshListen))
	if err != nil {
		return out, fmt.Errorf("embedded broker: %w", err)
	}
	defer c.Close()
	if partitionsCluster != nil {
		partitionsCluster(c)
	}
	brokers := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	// A transport of the run's own: kafka-go's default one caches metadata
	// per broker address, and a later run's fresh broker can listen on an
	// address an earlier run's broker used (the writer then saw the earlier
	// topic's partition count: "topic partition not found").
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 30 * time.Second, Transport: tr}
	const input = "events"
	if _, err := kafkautil.EnsureTopic(ctx, client, kafkautil.TopicSpec{Name: input, Partitions: r.Partitions}); err != nil {
		return out, err
	}
	i := 0
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Transport: tr, Topic: input, BatchSize: 1000, BatchTimeout: time.Millisecond, RequiredAcks: kafka.RequireAll,
		Balancer: kafka.BalancerFunc(func(kafka.Message, ...int) int { p := r.Assign[i]; i++; return p })}
	msgs := make([]kafka.Message, 0, 1000)
	for j := range r.Events {
		ev := codec.Event{Version: codec.EventVersion, X: r.Events[j].X, Y: r.Events[j].Y, HasY: true}
		b, err := codec.AppendEvent(nil, &ev)
		if err != nil {
			return out, err
		}
		msgs = append(msgs, kafka.Message{Value: b})
		if len(msgs) == cap(msgs) || j == len(r.Events)-1 {
			if err := w.WriteMessages(ctx, msgs...); err != nil {
				return out, err
			}
			msgs = msgs[:0]
		}
	}
	w.Close()
	ends := make([]int64, r.Partitions)
	for p := range ends {
		if _, ends[p], err = kafkautil.Offsets(ctx, client, input, p); err != nil {
			return out, err
		}
	}
	cfg := consumer.Config{
		Brokers: brokers, Group: "partitions", Input: input, Dim: r.Dim,
		Models:       []consumer.Model{{Name: "m", Spec: r.Spec}},
		CreateTopics: true, FetchMaxWait: 20 * time.Millisecond, ProgressInterval: -1,
		SessionTimeout: 6 * time.Second, HeartbeatInterval: 300 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if r.Share {
		cfg.Share, cfg.ShareEvery, cfg.ShareLag = []string{"m"}, r.Every, r.Lag
		cfg.ShareMaxWait = r.MaxWait
		cfg.ShareSkipIdle = true // a replay: a partition that has ended is not waited for
	}
	pl, err := consumer.New(cfg)
	if err != nil {
		return out, err
	}
	done := make(chan error, 1)
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { done <- pl.Run(rctx) }()
	// Timed from the first partition's restore (the group join before it
	// is the same for every configuration and not the pipeline's work).
	var first, last time.Time
	for {
		st, _ := pl.Status()
		var processed int64
		caught := len(st) == r.Partitions
		for _, s := range st {
			processed += max(0, s.Next)
			caught = caught && s.Next >= ends[s.Partition]
		}
		now := time.Now()
		if first.IsZero() && len(st) > 0 { // the first partition restored
			first = now
			if partitionsWindow != nil {
				partitionsWindow(true)
			}
		}
		if caught {
			if partitionsWindow != nil {
				partitionsWindow(false)
			}
			last = now
			break
		}
		select {
		case err := <-done:
			return out, fmt.Errorf("pipeline stopped: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if partitionsDebug != nil {
		partitionsDebug(pl)
	}
	st, _ := pl.Status()
	out.SqErr = make([]float64, r.Partitions)
	for _, s := range st {
		out.Mistakes += s.Models["m"].Mistakes
		out.Labeled += s.Models["m"].Labeled
		out.SqErr[s.Partition] += s.Models["m"].SqErr
	}
	out.Seconds = last.Sub(first).Seconds()
	if mfs, err := pl.Registry().Gather(); err == nil {
		for _, mf := range mfs {
			if mf.GetName() == "okstream_share_wait_expired_total" {
				out.Expired = int(mf.GetMetric()[0].GetCounter().GetValue())
			}
		}
	}
	stop()
	if err := <-done; err != nil {
		return out, err
	}
	return out, nil
}
