package consumer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/segmentio/kafka-go"
)

// The member file (Config.MemberFile) is what okstream has in place of
// static membership, which kafka-go's ConsumerGroup lacks (see session.go).
// An instance writes its consumer-group member id to the file at each
// generation. A crashed instance (SIGKILL, OOM kill) does not leave the
// group, so its member stays until its session times out, and the
// rebalance its restarted self starts waits for that member to rejoin or
// expire. The restarted instance reads the file and sends LeaveGroup for
// that member id before it joins: the coordinator removes the dead member
// at once, and the group rebalances without waiting for the session
// timeout.
//
// Failure modes: a member id that is no longer in the group (it expired,
// or the last stop was clean and the file was left behind) is answered
// UNKNOWN_MEMBER_ID, which is logged and ignored. Two live instances given
// the same file would evict each other at each restart: each then rejoins
// (a rebalance; exactness is unaffected, as for any rebalance), so the
// file must be the instance's own (a local path, a pod's emptyDir). A file
// that cannot be read or written is logged and the instance runs as
// without one.

// evictPrevious sends LeaveGroup for the member id in the member file, if
// any (see above).
func (p *Pipeline) evictPrevious(ctx context.Context) {
	path := p.cfg.MemberFile
	if path == "" {
		return
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	log := p.cfg.Logger
	if err != nil {
		log.Warn("member file unreadable: not evicting a previous member", "file", path, "err", err)
		return
	}
	id := strings.TrimSpace(string(b))
	if id == "" {
		return
	}
	resp, err := p.client.LeaveGroup(ctx, &kafka.LeaveGroupRequest{GroupID: p.cfg.Group, Members: []kafka.LeaveGroupRequestMember{{ID: id}}})
	if err == nil {
		err = resp.Error
		for _, m := range resp.Members {
			err = errors.Join(err, m.Error)
		}
	}
	switch {
	case err == nil:
		log.Info("evicted this instance's previous member from the group (it did not leave: a crash?): the group rebalances now, not after the session timeout",
			"member", id, "file", path)
	case errors.Is(err, kafka.UnknownMemberId):
		log.Info("the previous member in the member file is no longer in the group", "member", id, "file", path)
	default:
		log.Warn("evicting the previous member failed: its partitions move when its session times out", "member", id, "file", path, "err", err)
	}
}

// noteMember records the member id of the current generation in the
// member file (written to a temporary file, then renamed over it).
func (p *Pipeline) noteMember(id string) {
	path := p.cfg.MemberFile
	if path == "" || id == "" {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err == nil {
		_, err = tmp.WriteString(id + "\n")
		err = errors.Join(err, tmp.Close())
		if err == nil {
			err = os.Rename(tmp.Name(), path)
		}
		if err != nil {
			os.Remove(tmp.Name())
		}
	}
	if err != nil {
		p.cfg.Logger.Warn("writing the member file failed: a restart after a crash will wait for the session timeout", "file", path, "err", err)
	}
}

// forgetMember removes the member file after the instance has left the
// group (a clean stop: nothing to evict at the next start).
func (p *Pipeline) forgetMember() {
	if path := p.cfg.MemberFile; path != "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			p.cfg.Logger.Warn("removing the member file failed", "file", path, "err", err)
		}
	}
}
