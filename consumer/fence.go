package consumer

// Fencing: an instance that has lost (or may have lost) a partition stops
// writing before anyone else can own it.
//
// kafka-go has no producer fencing (no transactions), so a worker whose
// generation ended could, before this, keep writing its partition's
// predictions while it drained (up to --shutdown-timeout, longer than the
// session timeout): the coordinator evicted the silent member, the next
// owner restored, scanned the output's tail (dedup.go) and published, and
// the old writer published the same offsets again (issue 37: 866
// duplicates on a plain scale-out of a loaded 2-core machine).
//
// The argument. A member keeps its partitions until the coordinator hands
// them to someone else, which it does only once the member has rejoined
// (its generation's routines — every worker, writer and publisher of the
// partition — have returned: kafka-go waits for them before it rejoins)
// or has been removed from the group. The coordinator removes a member
// only when no heartbeat of it has arrived for the session timeout, or when
// it has not rejoined within the rebalance timeout of a rebalance's start.
// Both clocks start no earlier than the moment this process *sent* its
// last heartbeat that the coordinator answered without error (the session
// timer restarts when that heartbeat arrives; a rebalance that began before
// it would have been answered REBALANCE_IN_PROGRESS). So with
//
//	lease = send time of the last error-free heartbeat
//	        + min(session timeout, rebalance timeout) − margin
//
// nobody else owns the partition before the lease ends, plus the margin.
// Every write that depends on ownership — a micro-batch's predictions and
// dead letters, a decision record of shared models, a delta — is started
// only while the lease holds (lease.valid); a unit the writer cannot start
// in time is abandoned, not checkpointed past, and the next owner
// recomputes it. A request started just before the lease ended has the
// margin (a quarter of the smaller timeout: 2.5 s by default) to reach the
// broker before a new owner can exist, and to be in the log when the new
// owner reads the output's tail (findPublished). The lease is renewed by this process's own
// heartbeats (one request per heartbeat interval, in addition to
// kafka-go's, which it cannot observe); it is never renewed once the
// generation has ended, so a drain lasts at most until the lease ends,
// whatever --shutdown-timeout says.
//
// What this does not cover: a process paused (GC, a stopped VM) for longer
// than the margin between its check of the lease and the moment its
// request reaches the broker; and a request that was on the wire when its
// process died or gave up on it (a rejoin after a cancelled write, a kill)
// and that the broker applies only after the next owner has read the tail
// (a broker that slow is far slower than a rebalance). Clocks need not
// agree across machines: only each process's own monotonic clock is used,
// over seconds.

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"
)

// errLeaseExpired is returned for a write that was not started because
// the generation's lease ended.
var errLeaseExpired = errors.New("the membership lease ended (the generation is over and this instance may no longer own the partition): not writing")

// lease is one generation's ownership lease (see above). The zero value
// holds nothing; newLease is valid for the whole first heartbeat interval
// after the generation was handed out.
type lease struct {
	until atomic.Int64 // monotonic nanoseconds (since leaseEpoch) before which writes may start
	span  time.Duration
	ended atomic.Bool // the generation is over: the lease is never renewed again
}

// leaseEpoch anchors the leases' monotonic clock.
var leaseEpoch = time.Now()

func leaseNow() int64 { return int64(time.Since(leaseEpoch)) }

// leaseSpan is min(session, rebalance timeout) less the margin.
func leaseSpan(cfg *Config) time.Duration {
	d := min(cfg.SessionTimeout, cfg.RebalanceTimeout)
	return d - d/4
}

// newLease returns the lease of a generation handed out now: the JoinGroup
// and SyncGroup that made it were answered just now, which restarts the
// session timer like a heartbeat (their send time is earlier than now by a
// round trip, which the margin covers).
func newLease(cfg *Config) *lease {
	l := &lease{span: leaseSpan(cfg)}
	l.until.Store(leaseNow() + int64(l.span))
	return l
}

// valid reports whether a write may start now.
func (l *lease) valid() bool {
	return l == nil || leaseNow() < l.until.Load()
}

// await waits until a write may start (true), or reports false once the
// lease has ended with its generation (the partition may have a new owner:
// abandon the write) or ctx ends. While the generation lasts, a lease that
// ran out (this instance's heartbeats were not answered in time, a broker
// under load) is waited for, not given up on: the writes resume when a
// heartbeat renews it, and the coordinator ends the generation if the
// membership is really lost.
func (l *lease) await(ctx context.Context) bool {
	for !l.valid() {
		if l.ended.Load() || ctx.Err() != nil {
			return false
		}
		sleep(ctx, 50*time.Millisecond)
	}
	return true
}

// renew extends the lease from a heartbeat sent at sent (leaseNow units)
// and answered without error.
func (l *lease) renew(sent int64) {
	next := sent + int64(l.span)
	for {
		cur := l.until.Load()
		if next <= cur || l.until.CompareAndSwap(cur, next) {
			return
		}
	}
}

// remaining is how long the lease still holds (≤ 0: over).
func (l *lease) remaining() time.Duration {
	if l == nil {
		return time.Duration(1<<63 - 1)
	}
	return time.Duration(l.until.Load() - leaseNow())
}

// heartbeat keeps l renewed while ctx (the generation) lasts: one
// Heartbeat request per heartbeat interval with the generation's id and
// member id. An error-free answer renews the lease from the request's send
// time; any other answer (REBALANCE_IN_PROGRESS, an unknown member, a
// timeout) leaves it to run out. It never renews after ctx ended.
func (p *Pipeline) heartbeat(ctx context.Context, l *lease, genID int32, member string) {
	cfg := p.cfg
	t := time.NewTicker(cfg.HeartbeatInterval)
	defer t.Stop()
	defer l.ended.Store(true)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sent := leaseNow()
		hctx, cancel := context.WithTimeout(ctx, cfg.HeartbeatInterval*2)
		res, err := p.client.Heartbeat(hctx, &kafka.HeartbeatRequest{GroupID: cfg.Group, GenerationID: genID, MemberID: member})
		cancel()
		if err == nil && res.Error == nil && ctx.Err() == nil {
			l.renew(sent)
			continue
		}
		if err == nil {
			err = res.Error
		}
		if ctx.Err() == nil {
			cfg.Logger.Debug("membership heartbeat not answered without error; the lease is not renewed", "generation", genID, "err", err, "lease_left", l.remaining())
		}
	}
}
