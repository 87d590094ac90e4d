package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/segmentio/kafka-go"

	"okstream/internal/kafkautil"
)

// Reset discards every checkpoint of id: it writes a tombstone (a record
// with a null value) for each of id's keys present on the topic (both
// slots' manifests and chunks), so that Load finds no checkpoint and
// compaction removes the records. It returns the number of tombstones
// written. If fresh is not nil (its ID must be id), it is then saved as
// id's only checkpoint, so that a restore resumes at fresh.NextOffset with
// fresh.Payload.
//
// Reset is an operator's tool for a partition whose checkpoints are all
// damaged (ErrNoValidCheckpoint): the runtime does not start such a
// partition by itself, because starting it fresh would silently discard
// its model. A worker that owns id and is running overwrites the reset
// with its next checkpoint; reset a partition while it is failed (the
// failed partition retries its restore and picks the reset up) or while no
// instance runs.
func (s *Store) Reset(ctx context.Context, id ID, fresh *Checkpoint) (tombstones int, err error) {
	if s.writer == nil {
		return 0, errors.New("checkpoint: Reset needs a store opened with Open")
	}
	if fresh != nil && fresh.ID != id {
		return 0, fmt.Errorf("checkpoint: Reset of %s given a checkpoint of %s", id, fresh.ID)
	}
	part := s.routeOf(id.prefix())
	first, end, err := kafkautil.Offsets(ctx, s.client, s.cfg.Topic, part)
	if err != nil {
		return 0, fmt.Errorf("checkpoint %s: offsets of %s/%d: %w", id, s.cfg.Topic, part, err)
	}
	live := map[string]bool{}
	err = kafkautil.ReadRange(ctx, s.client, s.cfg.Topic, part, first, end, func(r kafkautil.Record) error {
		if _, _, ok := belongs(string(r.Key), id); ok {
			live[string(r.Key)] = r.Value != nil
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("checkpoint %s: reading %s/%d: %w", id, s.cfg.Topic, part, err)
	}
	keys := make([]string, 0, len(live))
	for k, present := range live {
		if present {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	msgs := make([]kafka.Message, len(keys))
	for i, k := range keys {
		msgs[i] = kafka.Message{Key: []byte(k)} // Value nil: a tombstone
	}
	if len(msgs) > 0 {
		if err := s.writer.WriteMessages(ctx, msgs...); err != nil {
			return 0, fmt.Errorf("checkpoint %s: writing %d tombstones: %w", id, len(msgs), err)
		}
	}
	if fresh != nil {
		if _, err := s.Save(ctx, *fresh); err != nil {
			return len(msgs), err
		}
	}
	return len(msgs), nil
}
