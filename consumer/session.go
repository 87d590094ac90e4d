package consumer

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"
)

// Group membership and recovery timings (issue 17, README "Recovery").
//
// What kafka-go v0.4.x's ConsumerGroup allows, read from its source:
//   - SessionTimeout, HeartbeatInterval and RebalanceTimeout are sent in
//     JoinGroup (v2) and used as they are; the broker refuses a session
//     timeout outside its group.min.session.timeout.ms and
//     group.max.session.timeout.ms (defaults 6 s and 30 min; kafka-go then
//     retries the join for ever, logging INVALID_SESSION_TIMEOUT), hence
//     checkSessionTimeout.
//   - Close leaves the group (LeaveGroup v0) after the current generation
//     has ended: the coordinator rebalances at once, without waiting for
//     the session timeout. Run closes the group when its context ends
//     (SIGTERM), after the workers have drained and checkpointed.
//   - No static membership: JoinGroup v2 has no group.instance.id, and the
//     member id is not settable, so a restarted process cannot rejoin as
//     the member it was. After a SIGKILL the dead member stays in the group
//     until its session times out; the rebalance its successor's join
//     starts completes only then (the coordinator waits for every known
//     member to rejoin). The session timeout is therefore the bound on the
//     recovery delay after a crash, and the one setting that shortens it.

// Broker configurations bounding a consumer group's session timeout.
const (
	brokerMinSession = "group.min.session.timeout.ms"
	brokerMaxSession = "group.max.session.timeout.ms"
)

// sessionLimits reads the broker's bounds on a group's session timeout
// (from the first broker the metadata lists). ok is false when the broker
// does not report them (no DescribeConfigs permission, an embedded broker):
// the broker still enforces them, at join time.
func sessionLimits(ctx context.Context, c *kafka.Client) (lo, hi time.Duration, ok bool) {
	md, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{}})
	if err != nil || len(md.Brokers) == 0 {
		return 0, 0, false
	}
	resp, err := c.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{
		ResourceType: kafka.ResourceTypeBroker, ResourceName: strconv.Itoa(md.Brokers[0].ID),
		ConfigNames: []string{brokerMinSession, brokerMaxSession},
	}}})
	if err != nil {
		return 0, 0, false
	}
	ms := map[string]time.Duration{}
	for _, r := range resp.Resources {
		if r.Error != nil {
			return 0, 0, false
		}
		for _, e := range r.ConfigEntries {
			if v, err := strconv.ParseInt(e.ConfigValue, 10, 64); err == nil && v > 0 {
				ms[e.ConfigName] = time.Duration(v) * time.Millisecond
			}
		}
	}
	lo, okLo := ms[brokerMinSession]
	hi, okHi := ms[brokerMaxSession]
	return lo, hi, okLo && okHi
}

// checkSessionTimeout refuses a session timeout the broker would refuse
// (at every join, which kafka-go retries for ever), naming the range. When
// the broker does not report its range the check is skipped (logged at
// debug level).
func (p *Pipeline) checkSessionTimeout(ctx context.Context) error {
	lo, hi, ok := sessionLimits(ctx, p.client)
	st := p.cfg.SessionTimeout
	if !ok {
		p.cfg.Logger.Debug("the broker does not report its session timeout range; not checked", "session_timeout", st)
		return nil
	}
	if st < lo || st > hi {
		return fmt.Errorf("--session-timeout %s is outside the broker's range [%s, %s] (%s, %s): choose a value within it",
			st, lo, hi, brokerMinSession, brokerMaxSession)
	}
	return nil
}
