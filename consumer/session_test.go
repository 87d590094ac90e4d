package consumer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"okstream/internal/kafkatest"
)

// A graceful stop (SIGTERM in okstream run) leaves the group: the broker
// sees a LeaveGroup from the stopping member, and the other member takes
// over its partitions at once. The session timeout is 100 s, so only the
// LeaveGroup can explain the takeover within the test's 60 s.
func TestShutdownLeavesGroup(t *testing.T) {
	e := kafkatest.New(t)
	if e.Real {
		t.Skip("observes the embedded broker's requests")
	}
	var mu sync.Mutex
	var leaves []string
	group := e.Name("g")
	onLeaveGroup(e, group, func(lg *kmsg.LeaveGroupRequest) error {
		mu.Lock()
		defer mu.Unlock()
		leaves = append(leaves, lg.MemberID)
		return nil
	})
	cfg := longSessionConfig(t, e, group)
	a := start(t, cfg)
	waitFor(t, 60*time.Second, "a owns every partition", func() bool { return owned(a) == 4 })
	b := start(t, cfg)
	waitFor(t, 60*time.Second, "a and b share the partitions", func() bool { return owned(a) == 2 && owned(b) == 2 })
	if err := a.shutdown(t); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	n := len(leaves)
	mu.Unlock()
	if n != 1 || leaves[0] == "" {
		t.Fatalf("LeaveGroup requests of the stopped member: %q, want one", leaves)
	}
	waitFor(t, 60*time.Second, "b takes over every partition", func() bool { return owned(b) == 4 })
}

// A session timeout outside the broker's group.min/max.session.timeout.ms
// stops the pipeline at start with an error naming the range, instead of
// a join that kafka-go would retry for ever.
func TestSessionTimeoutOutsideBrokerRange(t *testing.T) {
	e := kafkatest.NewWith(t, kafkatest.Options{BrokerConfigs: map[string]string{
		"group.min.session.timeout.ms": "2000", "group.max.session.timeout.ms": "60000"}})
	if e.Real {
		t.Skip("sets the embedded broker's configuration")
	}
	input := e.Name("events")
	e.CreateTopic(t, input, 1, nil)
	for _, c := range []struct {
		session time.Duration
		refused bool
	}{{time.Second, true}, {90 * time.Second, true}, {3 * time.Second, false}} {
		cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
		cfg.SessionTimeout = c.session
		p, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		err = p.Run(ctx)
		cancel()
		got := err != nil && strings.Contains(err.Error(), "outside the broker's range [2s, 1m0s]")
		if got != c.refused {
			t.Errorf("session timeout %s: Run returned %v, want refused=%v", c.session, err, c.refused)
		}
	}
}

// A crash leaves the crashed member in the group until its session
// expires (here 100 s: its LeaveGroup is dropped, as a SIGKILL would never
// send it). With a member file, the restarted instance evicts that member
// before it joins and gets every partition at once, well within the
// test's 60 s; the file then holds the new member id, and a clean stop
// removes it.
func TestMemberFileEvictsCrashedMember(t *testing.T) {
	e := kafkatest.New(t)
	if e.Real {
		t.Skip("drops requests at the embedded broker")
	}
	group := e.Name("g")
	var mu sync.Mutex
	crashing := false
	onLeaveGroup(e, group, func(*kmsg.LeaveGroupRequest) error {
		mu.Lock()
		defer mu.Unlock()
		if crashing {
			return errors.New("crashed") // the connection closes: no LeaveGroup arrives
		}
		return nil
	})
	cfg := longSessionConfig(t, e, group)
	cfg.MemberFile = filepath.Join(t.TempDir(), "member")
	a := start(t, cfg)
	waitFor(t, 60*time.Second, "a owns every partition", func() bool { return owned(a) == 4 })
	first, err := os.ReadFile(cfg.MemberFile)
	if err != nil || len(strings.TrimSpace(string(first))) == 0 {
		t.Fatalf("member file after the first generation: %q, %v", first, err)
	}
	mu.Lock()
	crashing = true
	mu.Unlock()
	a.p.Kill()
	a.done <- <-a.done // Run returned (the cleanup reads it again)
	mu.Lock()
	crashing = false
	mu.Unlock()

	b := start(t, cfg)
	waitFor(t, 60*time.Second, "the restarted instance owns every partition", func() bool { return owned(b) == 4 })
	second, err := os.ReadFile(cfg.MemberFile)
	if err != nil || string(second) == string(first) {
		t.Fatalf("member file after the restart: %q (was %q), %v", second, first, err)
	}
	if err := b.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cfg.MemberFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("member file after a clean stop: %v, want it removed", err)
	}
}

// onLeaveGroup calls fn for every LeaveGroup request of group at the
// embedded broker; an error from fn drops the request (the broker closes
// the connection, as to a process that died before sending it).
func onLeaveGroup(e *kafkatest.Env, group string, fn func(*kmsg.LeaveGroupRequest) error) {
	e.Cluster.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		e.Cluster.KeepControl()
		if lg, ok := req.(*kmsg.LeaveGroupRequest); ok && lg.Group == group {
			if err := fn(lg); err != nil {
				return nil, err, true
			}
		}
		return nil, nil, false
	})
}

// longSessionConfig is a test configuration for group with 400 events in
// a fresh 4-partition topic and session and rebalance timeouts of 100 s,
// so that only a LeaveGroup moves partitions within a test's 60 s waits.
func longSessionConfig(t *testing.T, e *kafkatest.Env, group string) Config {
	input := e.Name("events")
	e.CreateTopic(t, input, 4, nil)
	e.Produce(t, input, genEvents(400, 3, "l")...)
	cfg := testConfig(e, input, group, e.Name("preds"))
	cfg.SessionTimeout, cfg.RebalanceTimeout = 100*time.Second, 100*time.Second
	return cfg
}
