package consumer

import (
	"bytes"
	"context"
	"sort"
	"testing"
	"time"

	"okstream/codec"
	"okstream/dataset/kuairec"
	"okstream/eval"
	"okstream/internal/kafkatest"
	"okstream/producer"
)

// The KuaiRec issue's acceptance test: the SYNTHETIC KuaiRec sample
// (testdata) replayed with delayed feedback (impression, then a label-only
// feedback event play_duration later) through the broker yields, per
// partition, the same scores as the offline path fed the same (impression,
// feedback) sequence, and exact recovery holds with feedback pending when
// the pipeline is killed. The progressive mistake rate computed from the
// prediction topic's outcome records equals the models' checkpointed
// statistics.
func TestKuaiRecDelayedFeedbackEndToEnd(t *testing.T) {
	s, err := kuairec.Open("../testdata/kuairec-synthetic", kuairec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := producer.NewKuaiRecSource(s, producer.KuaiRecConfig{Mode: producer.KuaiRecFeedback})
	if err != nil {
		t.Fatal(err)
	}
	e := kafkatest.New(t)
	input := e.Name("kuairec")
	// The log's record times are from 2020: keep them (no time retention).
	e.CreateTopic(t, input, 3, map[string]string{"retention.ms": "-1"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := producer.ReplaySource(ctx, src, producer.StreamConfig{Brokers: e.Brokers, Topic: input})
	if err != nil {
		t.Fatal(err)
	}
	dim := 86
	cfg := testConfig(e, input, e.Name("g"), e.Name("preds"))
	cfg.Dim = dim
	cfg.Models = []Model{{Name: "fogd", Spec: "fogd:sigma=2,budget=50"}, {Name: "nogd", Spec: "nogd:sigma=2,budget=60,k=30"}}
	cfg.FeedbackBuffer, cfg.FeedbackMaxAge, cfg.CheckpointEvery = 50000, 24*time.Hour, 400
	ends := endOffsets(t, e, input)
	r := start(t, cfg)
	waitFor(t, 90*time.Second, "progress", func() bool { return r.p.m.predictionsCount() >= float64(st.Events/3) || caughtUp(ends, r) })
	r.kill(t) // with impressions awaiting feedback
	r = start(t, cfg)
	waitFor(t, 90*time.Second, "the final run", func() bool { return caughtUp(ends, r) })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}

	// Offline path, per partition.
	byPart := map[int][]codec.Event{}
	offs := map[int][]int64{}
	for _, rec := range e.ReadAll(t, input) {
		ev, err := codec.DecodeEvent(rec.Value, codec.Limits{Dim: dim})
		if err != nil {
			t.Fatal(err)
		}
		byPart[rec.Partition] = append(byPart[rec.Partition], ev)
		offs[rec.Partition] = append(offs[rec.Partition], rec.Offset)
	}
	want := map[[2]int64][]float64{}
	wantStates := map[int][][]byte{}
	parts := make([]int, 0, len(byPart))
	for p := range byPart {
		parts = append(parts, p)
	}
	sort.Ints(parts)
	for _, p := range parts {
		for _, m := range cfg.Models {
			scores, l, err := eval.ReplayEvents(m.Spec, dim, byPart[p])
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range offs[p] {
				k := [2]int64{int64(p), o}
				want[k] = append(want[k], scores[i])
			}
			b, _ := l.MarshalBinary()
			wantStates[p] = append(wantStates[p], b)
		}
	}
	got := predictionsByOffset(t, e, cfg.Output)
	if int64(len(got)) != st.Events {
		t.Fatalf("%d offsets have records, want %d", len(got), st.Events)
	}
	labelled := make([]int, len(cfg.Models))
	mistakes := make([]int, len(cfg.Models))
	for k, raw := range got {
		pr, err := codec.DecodePrediction(raw)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range pr.Models {
			if !sameScore(m.Score, want[k][i]) {
				t.Fatalf("partition %d offset %d model %s: published %v, offline %v", k[0], k[1], m.Name, m.Score, want[k][i])
			}
			if pr.HasRef {
				labelled[i]++
				if float64(m.Decision) != pr.Y {
					mistakes[i]++
				}
			}
		}
	}
	states, _ := checkpointStates(t, e, cfg, len(parts))
	for _, p := range parts {
		for i := range cfg.Models {
			if !bytes.Equal(states[p][i], wantStates[p][i]) {
				t.Fatalf("partition %d model %s: final state differs from the offline replay", p, cfg.Models[i].Name)
			}
		}
	}
	stats := checkpointStats(t, e, cfg, len(parts))
	for i, m := range cfg.Models {
		s := stats[m.Name]
		if int(s.Labeled) != labelled[i] || int(s.Mistakes) != mistakes[i] {
			t.Fatalf("model %s: prediction topic gives %d/%d mistakes, checkpoints %d/%d", m.Name, mistakes[i], labelled[i], s.Mistakes, s.Labeled)
		}
		t.Logf("SYNTHETIC KuaiRec, delayed feedback: %s progressive mistake rate %.2f%% (%d labelled)", m.Name, 100*float64(mistakes[i])/float64(labelled[i]), labelled[i])
	}
}
