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
// written. If fresh is not nil (its ID must be id), it is saved first and
// becomes id's only checkpoint (the tombstones spare the keys it wrote),
// so that a restore resumes at fresh.NextOffset with fresh.Payload; a
// restore that runs while Reset does sees the old slots or the fresh
// checkpoint, never no checkpoint at all.
//
// Reset is an operator's tool for a partition whose checkpoints are all
// damaged (ErrNoValidCheckpoint) or lost (none, although the group has a
// committed offset): the runtime does not start such a partition by
// itself, because starting it fresh would silently discard its model.
// okstream checkpoints reset always passes a fresh checkpoint, after
// checking that the input partition exists and holds its offset. A worker that owns id and is running overwrites the reset
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
	// With a fresh checkpoint, save it first and then tombstone every
	// older key it did not overwrite: a failed partition that retries its
	// restore concurrently then finds either the old (invalid) slots or
	// the fresh checkpoint, never an empty store — which it would take as
	// a partition without checkpoints (refused when the group has a
	// committed offset, else fresh models at its start offset instead of
	// at fresh.NextOffset).
	keep := func(string) bool { return false }
	if fresh != nil {
		st, err := s.Save(ctx, *fresh)
		if err != nil {
			return 0, err
		}
		slot, chunks := fresh.Epoch.Slot(), st.Records-1
		keep = func(k string) bool {
			sl, i, _ := belongs(k, id)
			return sl == slot && i < chunks // its manifest (i = −1) and chunks
		}
	}
	keys := make([]string, 0, len(live))
	for k, present := range live {
		if present && !keep(k) {
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
	return len(msgs), nil
}
