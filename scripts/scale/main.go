// Command scale measures the throughput of 1, 2, 3… instances of okstream
// run in one consumer group (issue 17): it replays a dataset once into a
// fresh topic, then, for each configuration (pass-through and learning
// models) and each instance count, starts that many `okstream run`
// processes in a new group (fresh output and checkpoint topics), watches
// the output topic's end offsets until every event has its prediction,
// stops the instances with SIGTERM and prints a table of events/s.
//
// The rate is measured from the moment the group is stable with every
// instance assigned partitions (DescribeGroups), so the joins (one
// rebalance per instance that joins) stay out of it, until 95 % of the
// events have their prediction or --window has passed, so the tail of the
// slowest partition stays out too.
//
//	go build -o /tmp/okstream ./cmd/okstream
//	go run ./scripts/scale --brokers 127.0.0.1:9092 --okstream /tmp/okstream
//
// scripts/scale.sh does both, and starts (and stops) scripts/kafka.sh's
// broker when OKSTREAM_TEST_BROKERS is not set.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/internal/kafkautil"
)

func main() {
	brokers := flag.String("brokers", os.Getenv("OKSTREAM_TEST_BROKERS"), "Kafka bootstrap brokers")
	bin := flag.String("okstream", "okstream", "the okstream binary")
	data := flag.String("data", "cod-rna", "dataset to replay (okstream replay --data)")
	dim := flag.Int("dim", 8, "its feature dimension")
	events := flag.Int("events", 3000000, "events to replay (the dataset in a loop of permutations)")
	partitions := flag.Int("partitions", 6, "partitions of the input topic")
	counts := flag.String("instances", "1,2,3", "instance counts to measure")
	configs := flag.String("configs", "passthrough;forks=forks:budget=100,sigma=8;fogd=fogd:budget=100,sigma=8", "configurations, ';'-separated: passthrough or NAME=SPEC")
	window := flag.Duration("window", 20*time.Second, "measure for at most this long (or until 95 % of the events have their prediction)")
	timeout := flag.Duration("timeout", 2*time.Minute, "give up when a group is not stable after this")
	logDir := flag.String("logs", os.TempDir(), "directory for the instances' logs")
	flag.Parse()
	if *brokers == "" {
		fail("no brokers: set --brokers or OKSTREAM_TEST_BROKERS")
	}
	ctx := context.Background()
	client := &kafka.Client{Addr: kafka.TCP(strings.Split(*brokers, ",")...), Timeout: 30 * time.Second}
	stamp := strconv.FormatInt(time.Now().Unix(), 36)
	input := "scale-" + stamp
	start := time.Now()
	run(*bin, "replay", "--brokers", *brokers, "--data", *data, "--topic", input, "--create-topic", "--partitions", strconv.Itoa(*partitions),
		"--loop", "--limit", strconv.Itoa(*events), "--keys", "random", "--quiet")
	fmt.Printf("replayed %d events of %s into %s (%d partitions) in %s\n", *events, *data, input, *partitions, time.Since(start).Round(time.Millisecond))

	var ns []int
	for _, s := range strings.Split(*counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fail("--instances %q: want counts like 1,2,3", *counts)
		}
		ns = append(ns, n)
	}
	type row struct {
		config string
		rates  []result
	}
	var rows []row
	for _, c := range strings.Split(*configs, ";") {
		name, spec, _ := strings.Cut(c, "=")
		r := row{config: c}
		for _, n := range ns {
			tag := fmt.Sprintf("%s-%s-%d", input, name, n)
			args := []string{"run", "--brokers", *brokers, "--input", input, "--dim", strconv.Itoa(*dim), "--group", tag,
				"--output", tag + ".predictions", "--dead-letter", tag + ".dlq", "--checkpoint-topic", tag + ".ckpt",
				"--metrics-addr", "", "--session-timeout", "6s", "--progress-interval", "0"}
			if name == "passthrough" {
				args = append(args, "--passthrough")
			} else {
				args = append(args, "--model", name+"="+spec)
			}
			rate := measure(ctx, client, *bin, args, n, tag, tag+".predictions", int64(*events), *window, *timeout, *logDir)
			fmt.Printf("%-40s %d instance(s): %8.0f events/s, %8.0f events/CPU-s of okstream, load average %.1f\n", c, n, rate.rate, rate.perCPU, rate.load)
			r.rates = append(r.rates, rate)
		}
		rows = append(rows, r)
	}
	fmt.Printf("\n| configuration | %s |\n|---|", strings.Join(func() []string {
		var h []string
		for _, n := range ns {
			h = append(h, fmt.Sprintf("%d instance(s)", n))
		}
		return h
	}(), " | "))
	for range ns {
		fmt.Print("---|")
	}
	fmt.Println()
	for _, r := range rows {
		fmt.Printf("| %s |", r.config)
		for _, v := range r.rates {
			fmt.Printf(" %.0f (%.2f×; %.0f/CPU-s, load %.1f) |", v.rate, v.rate/r.rates[0].rate, v.perCPU, v.load)
		}
		fmt.Println()
	}
	fmt.Printf("\nevents/s of the output topic once the group is stable, over at most %s; (×): relative to %d instance(s);\n"+
		"/CPU-s: events per CPU-second of the okstream processes (whole lives, broker excluded); load: 1-minute load average\n"+
		"at the start of the window, on %d cores (other processes share them).\n", *window, ns[0], runtime.NumCPU())
}

// measure starts n instances with args, waits until their group is
// stable with n members, then returns the events/s of the output topic
// from then until 95 % of want have their prediction or window has passed,
// and stops the instances (SIGTERM).
func measure(ctx context.Context, c *kafka.Client, bin string, args []string, n int, group, output string, want int64, window, timeout time.Duration, logDir string) result {
	var procs []*exec.Cmd
	for i := 0; i < n; i++ {
		logf, err := os.Create(filepath.Join(logDir, fmt.Sprintf("%s.%d.log", output, i)))
		if err != nil {
			fail("%v", err)
		}
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			fail("starting okstream run: %v", err)
		}
		procs = append(procs, cmd)
	}
	// stop stops the instances (SIGTERM: they drain, checkpoint and leave)
	// and returns the events per CPU-second they used over their whole
	// lives (join, processing, drain; the broker's CPU is not counted).
	stop := func() float64 {
		for _, p := range procs {
			p.Process.Signal(syscall.SIGTERM)
		}
		var cpu time.Duration
		for _, p := range procs {
			p.Wait()
			cpu += p.ProcessState.UserTime() + p.ProcessState.SystemTime()
		}
		return float64(outputCount(ctx, c, output)) / cpu.Seconds()
	}
	// Wait until the group is stable with every instance assigned
	// partitions, then measure over at most window.
	deadline := time.Now().Add(timeout)
	for !stable(ctx, c, group, n) {
		if time.Now().After(deadline) {
			stop()
			fail("%s: the group did not become stable with %d members within %s (see the logs in %s)", group, n, timeout, logDir)
		}
		time.Sleep(20 * time.Millisecond)
	}
	load := loadAvg()
	t0, c0 := time.Now(), outputCount(ctx, c, output)
	t1, c1 := t0, c0
	for end := t0.Add(window); t1.Before(end) && c1 < want*95/100; {
		time.Sleep(20 * time.Millisecond)
		t1, c1 = time.Now(), outputCount(ctx, c, output)
	}
	if c1-c0 < want/10 {
		fmt.Fprintf(os.Stderr, "scale: %s: only %d events in the window (the group took long to settle): replay more events\n", group, c1-c0)
	}
	perCPU := stop()
	return result{rate: float64(c1-c0) / t1.Sub(t0).Seconds(), perCPU: perCPU, load: load}
}

// result is one measurement: events/s of the output once the group is
// stable, events per CPU-second of the instances, and the machine's
// one-minute load average when the window began (other processes' load
// shares the cores).
type result struct{ rate, perCPU, load float64 }

// loadAvg is the one-minute load average (0 where /proc/loadavg is
// missing).
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// stable reports whether the group is Stable with n members, each
// assigned at least one partition.
func stable(ctx context.Context, c *kafka.Client, group string, n int) bool {
	resp, err := c.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
	if err != nil || len(resp.Groups) != 1 {
		return false
	}
	g := resp.Groups[0]
	if g.Error != nil || g.GroupState != "Stable" || len(g.Members) != n {
		return false
	}
	for _, m := range g.Members {
		parts := 0
		for _, t := range m.MemberAssignments.Topics {
			parts += len(t.Partitions)
		}
		if parts == 0 {
			return false
		}
	}
	return true
}

// outputCount is the number of records in a topic (the sum of its
// partitions' end offsets; 0 while it does not exist).
func outputCount(ctx context.Context, c *kafka.Client, topic string) int64 {
	n, err := kafkautil.Partitions(ctx, c, topic)
	if err != nil {
		return 0
	}
	req := map[string][]kafka.OffsetRequest{}
	for p := 0; p < n; p++ {
		req[topic] = append(req[topic], kafka.LastOffsetOf(p))
	}
	resp, err := c.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: req})
	if err != nil {
		return 0
	}
	var sum int64
	for _, po := range resp.Topics[topic] {
		sum += po.LastOffset
	}
	return sum
}

func run(bin string, args ...string) {
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fail("%s %s: %v", bin, strings.Join(args, " "), err)
	}
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "scale: "+format+"\n", a...)
	os.Exit(1)
}
