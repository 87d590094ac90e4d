package consumer

import (
	"testing"

	"okstream/codec"
	"okstream/features"
	"okstream/share"
)

// FuzzDecodePayload feeds arbitrary bytes to the checkpoint payload decoder
// (the models' summaries, the pending-feedback buffer and the sharing
// schedule's state; the learners'
// own states are fuzzed in package learner): it never panics, and a buffer
// it accepts respects the configured limits, with its accounted bytes equal
// to the sum of its entries' costs and a usable watermark.
func FuzzDecodePayload(f *testing.F) {
	models := []Model{{Name: "a", Spec: "fogd:budget=4"}, {Name: "b", Spec: "nogd:budget=4"}}
	lim := pendingLimits{max: 5, maxBytes: 4096, maxAge: 1000}
	ms, err := newModelSet(models, 2, lim)
	if err != nil {
		f.Fatal(err)
	}
	seed := func() {
		b, err := ms.marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	seed() // empty buffer
	for i := 0; i < 4; i++ {
		x := []float64{float64(i), -1}
		ms.pend.observe(int64(100 * i))
		ms.score(x, 1, true, nil, nil)
		ms.pend.add(&impression{id: string(rune('p' + i)), key: "k", offset: int64(i), ts: int64(100 * i), hasTS: true,
			x: x, scores: []float64{0.5, -0.5}, updates: []uint64{1, 2}})
		seed()
	}
	st := share.State{Count: 37, Frontier: []int64{1, 0, -1}} // with the sharing schedule (v4)
	ms.share = &st
	seed()
	// With a named-feature encoder (v9).
	if err := ms.setFeatures(features.Config{Dim: 2}); err != nil {
		f.Fatal(err)
	}
	if _, err := ms.encode([]codec.Field{{Name: "a", Kind: codec.FieldNumber, Num: 1}, {Name: "s", Kind: codec.FieldString, Str: "v"}}, nil); err != nil {
		f.Fatal(err)
	}
	seed()
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		pend := newPending(lim, 2)
		pl, q, err := decodePayload(b, pend, []string{"a", "b"})
		if err != nil {
			return
		}
		if pl.Features != nil {
			pl.Features.Names() // a restored dictionary is usable
			if _, err := pl.Features.Encode([]codec.Field{{Name: "z", Kind: codec.FieldMissing}}, nil); err != nil && pl.Features.Config().Missing == features.MissingImpute {
				t.Fatal(err)
			}
		}
		if pl.Share != nil && (len(pl.Share.Frontier) < 1 || pl.Share.Count < 0) {
			t.Fatalf("accepted share state %+v", pl.Share)
		}
		if q.len() > lim.max || q.bytes > lim.maxBytes {
			t.Fatalf("%d entries, %d bytes: above the limits", q.len(), q.bytes)
		}
		var sum int64
		for im := q.head; im != nil; im = im.next {
			sum += im.cost()
			if len(im.x) != 2 || len(im.scores) != 2 || len(im.updates) != 2 || q.byID[im.id] != im {
				t.Fatalf("malformed entry %+v", im)
			}
		}
		if sum != q.bytes || len(q.byID) != q.len() {
			t.Fatalf("accounted %d, entries cost %d; %d ids for %d entries", q.bytes, sum, len(q.byID), q.len())
		}
		if q.nts > 0 {
			q.watermark()
		}
		q.observe(0)
	})
}
