package checkpoint

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"okstream/internal/kafkautil"
)

// Summary describes the checkpoints of one ID found on the topic.
type Summary struct {
	ID       ID
	Newest   *Checkpoint // newest complete checkpoint, nil if none
	Slots    []string    // one line per slot: epoch, offset, size, or why rejected
	Records  int         // records of this ID read
	Rejected int
	// Rejections says why each rejected slot was rejected (the same
	// validation, limits and reasons as Load).
	Rejections []Rejection
	Dropped    int // chunk records not kept (see LoadStats.Dropped)
}

// parseKey splits a record key into ID, slot and chunk index (-1 for the
// manifest).
func parseKey(key string) (id ID, slot string, index int, ok bool) {
	rest, ok := strings.CutPrefix(key, "okstream/v1/")
	if !ok {
		return ID{}, "", 0, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 5 {
		return ID{}, "", 0, false
	}
	g, err1 := url.PathUnescape(parts[0])
	t, err2 := url.PathUnescape(parts[1])
	p, err3 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return ID{}, "", 0, false
	}
	id = ID{Group: g, Topic: t, Partition: p}
	slot, index, ok = belongs(key, id)
	return id, slot, index, ok
}

// Scan reads the whole checkpoint topic and summarizes every ID's
// checkpoints (for okstream inspect). Records that are not okstream
// checkpoint records are ignored. A damaged or forged slot is reported in
// the summary (the same checks and limits as Load), never a failure of Scan.
func (s *Store) Scan(ctx context.Context) ([]Summary, error) {
	type idData struct {
		slots   map[string]*slotRecords
		records int
	}
	ids := map[ID]*idData{}
	for p := 0; p < s.partitions; p++ {
		recs, err := kafkautil.ReadPartition(ctx, s.client, s.cfg.Topic, p)
		if err != nil {
			return nil, fmt.Errorf("reading %s/%d: %w", s.cfg.Topic, p, err)
		}
		for _, r := range recs {
			id, slot, idx, ok := parseKey(string(r.Key))
			if !ok {
				continue
			}
			d := ids[id]
			if d == nil {
				d = &idData{slots: map[string]*slotRecords{"A": {}, "B": {}}}
				ids[id] = d
			}
			d.records++
			d.slots[slot].add(idx, r.Value, s.lim)
		}
	}
	var out []Summary
	for id, d := range ids {
		sum := Summary{ID: id, Records: d.records, Dropped: d.slots["A"].dropped + d.slots["B"].dropped}
		cps, rej, _ := s.assembleSlots(id, d.slots)
		sum.Rejected, sum.Rejections = len(rej), rej
		if len(cps) > 0 {
			sum.Newest = cps[0]
		}
		for _, slot := range []string{"A", "B"} {
			line := slot + ": empty" // assemble checked that a checkpoint's epoch belongs to its slot
			for _, cp := range cps {
				if cp.Epoch.Slot() == slot {
					line = fmt.Sprintf("%s: epoch %s, next offset %d, %d bytes", slot, cp.Epoch, cp.NextOffset, len(cp.Payload))
				}
			}
			for _, r := range rej {
				if r.Slot == slot {
					line = fmt.Sprintf("%s: REJECTED (%s) %s", slot, r.Reason, r.Detail)
				}
			}
			sum.Slots = append(sum.Slots, line)
		}
		out = append(out, sum)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].ID, out[j].ID
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	return out, nil
}

// OpenExisting connects to an existing checkpoint topic without creating it
// (for inspection).
func OpenExisting(ctx context.Context, cfg Config) (*Store, error) {
	c := cfg.Client
	if c == nil {
		var err error
		if c, err = newClient(cfg); err != nil {
			return nil, err
		}
	}
	n, err := kafkautil.Partitions(ctx, c, cfg.Topic)
	if err != nil {
		return nil, fmt.Errorf("checkpoint topic %s: %w", cfg.Topic, err)
	}
	cfg.Client = c
	return &Store{cfg: cfg, client: c, partitions: n, chunkBytes: DefaultChunkBytes, lim: cfg.limits()}, nil
}
