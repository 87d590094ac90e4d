package producer

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"okstream/codec"
	"okstream/dataset/kuairec"
	"okstream/internal/kafkatest"
)

const kuairecSample = "../testdata/kuairec-synthetic"

func openSample(t *testing.T, limit int) *kuairec.Stream {
	t.Helper()
	s, err := kuairec.Open(kuairecSample, kuairec.Options{Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Dir.Synthetic {
		t.Fatal("the committed sample is not marked synthetic")
	}
	return s
}

func drain(t *testing.T, src Source) []codec.Event {
	t.Helper()
	var out []codec.Event
	for {
		ev, err := src.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		ev.X = slices.Clone(ev.X)
		out = append(out, ev)
	}
}

// TestKuaiRecSourceFeedbackOrder: in feedback mode every impression is
// followed by exactly one feedback event, play_duration later in event
// time, with ref = the impression's id, the impression's key and the
// label; the merged stream is ordered by event time.
func TestKuaiRecSourceFeedbackOrder(t *testing.T) {
	s := openSample(t, 0)
	src, err := NewKuaiRecSource(s, KuaiRecConfig{Mode: KuaiRecFeedback, IDPrefix: "k:"})
	if err != nil {
		t.Fatal(err)
	}
	evs := drain(t, src)
	if int64(len(evs)) != src.Len() || src.Impressions != int64(len(s.Events)) || src.Feedback != src.Impressions {
		t.Fatalf("%d events; impressions %d, feedback %d, stream %d", len(evs), src.Impressions, src.Feedback, len(s.Events))
	}
	imps := map[string]codec.Event{}
	byID := map[string]kuairec.Event{}
	for _, e := range s.Events {
		byID["k:"+e.ID()] = e
	}
	for i, ev := range evs {
		if i > 0 && ev.TS < evs[i-1].TS {
			t.Fatalf("event %d: time goes back (%d after %d)", i, ev.TS, evs[i-1].TS)
		}
		if ev.Version != 2 {
			t.Fatalf("event %d: version %d", i, ev.Version)
		}
		if !ev.IsFeedback() {
			if ev.HasY || len(ev.X) != 86 || ev.ID == "" {
				t.Fatalf("impression %d: %+v", i, ev)
			}
			imps[ev.ID] = ev
			continue
		}
		imp, ok := imps[ev.Ref]
		if !ok {
			t.Fatalf("feedback %d refers to %q before (or without) its impression", i, ev.Ref)
		}
		delete(imps, ev.Ref)
		e := byID[ev.Ref]
		if ev.Key != imp.Key || ev.TS != imp.TS+e.PlayMS || !ev.HasY || ev.Y != e.Label(0.75) || ev.X != nil || ev.ID != ev.Ref+"/fb" {
			t.Fatalf("feedback %+v for impression %+v (play %d ms)", ev, imp, e.PlayMS)
		}
	}
	if len(imps) != 0 {
		t.Fatalf("%d impressions without feedback", len(imps))
	}
}

// TestKuaiRecReplay replays the committed synthetic sample through the
// embedded broker in both modes and checks every record: key = user_id,
// record time = event time, unique ids, refs that name an impression
// earlier in the same partition, features and labels as the stream has
// them, the schema headers, and replay order within each partition.
func TestKuaiRecReplay(t *testing.T) {
	e := kafkatest.New(t)
	s := openSample(t, 1500)
	for _, mode := range []KuaiRecMode{KuaiRecLabelled, KuaiRecFeedback} {
		t.Run(mode.String(), func(t *testing.T) {
			topic := e.Name("kuairec-" + mode.String())
			e.CreateTopic(t, topic, 3, map[string]string{"retention.ms": "-1"})
			src, err := NewKuaiRecSource(s, KuaiRecConfig{Mode: mode, Sparse: mode == KuaiRecFeedback})
			if err != nil {
				t.Fatal(err)
			}
			clk := newFakeClock()
			st, err := ReplaySource(context.Background(), src, StreamConfig{Brokers: e.Brokers, Topic: topic,
				Speedup: 3600, BatchSize: 200, Headers: src.Headers(), clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			n := int64(len(s.Events))
			if mode == KuaiRecFeedback {
				n *= 2
			}
			if st.Events != n || st.Labelled != int64(len(s.Events)) {
				t.Fatalf("stats %+v, want %d events, %d labelled", st, n, len(s.Events))
			}
			// Event-time pacing: an hour of event time per second.
			first, last := s.Events[0].TS, s.Events[len(s.Events)-1].TS
			if mode == KuaiRecFeedback {
				for _, ev := range s.Events {
					last = max(last, ev.TS+ev.PlayMS)
				}
			}
			var slept time.Duration
			for _, d := range clk.sleeps {
				slept += d
			}
			if want := time.Duration(last-first) * time.Millisecond / 3600; slept < want-time.Microsecond || slept > want+time.Microsecond {
				t.Fatalf("slept %v, want (last − first event time) / 3600 = %v", slept, want)
			}

			recs := e.ReadAll(t, topic)
			if int64(len(recs)) != n {
				t.Fatalf("%d records", len(recs))
			}
			byID := map[string]int{}
			for i := range s.Events {
				byID[s.Events[i].ID()] = i
			}
			seen := map[string]bool{}
			pendingImp := map[string]int{} // impression id → partition
			lastTS := map[int]int64{}
			lastIdx := map[int]int{}
			for _, r := range recs {
				ev, err := codec.DecodeEvent(r.Value, codec.Limits{Dim: 86})
				if err != nil {
					t.Fatal(err)
				}
				if seen[ev.ID] {
					t.Fatalf("repeated id %q", ev.ID)
				}
				seen[ev.ID] = true
				if string(r.Key) != ev.Key || r.Time.UnixMilli() != ev.TS || !ev.HasTS {
					t.Fatalf("record key %q / time %v vs event key %q / ts %d", r.Key, r.Time, ev.Key, ev.TS)
				}
				if len(r.Headers) != 2 || string(r.Headers[0].Value) != "kuairec-v1" || string(r.Headers[1].Value) != "kuairec-synthetic/small_matrix.csv" {
					t.Fatalf("headers %v", r.Headers)
				}
				if ev.TS < lastTS[r.Partition] {
					t.Fatalf("partition %d: event time goes back", r.Partition)
				}
				lastTS[r.Partition] = ev.TS
				if ev.IsFeedback() {
					p, ok := pendingImp[ev.Ref]
					if !ok || p != r.Partition {
						t.Fatalf("feedback for %q: impression not earlier in partition %d", ev.Ref, r.Partition)
					}
					delete(pendingImp, ev.Ref)
					continue
				}
				i, ok := byID[ev.ID]
				if !ok {
					t.Fatalf("unknown id %q", ev.ID)
				}
				se := &s.Events[i]
				if ev.Key != se.Key() || ev.TS != se.TS {
					t.Fatalf("event %q: key %q ts %d", ev.ID, ev.Key, ev.TS)
				}
				if l, ok := lastIdx[r.Partition]; ok && i <= l {
					t.Fatalf("partition %d: event %d after %d (replay order)", r.Partition, i, l)
				}
				lastIdx[r.Partition] = i
				if want := s.Features.BuildEvent(nil, se); !slices.Equal(ev.Dense(nil, 86), want) {
					t.Fatalf("event %q: features differ", ev.ID)
				}
				switch mode {
				case KuaiRecLabelled:
					if ev.Version != 1 || !ev.HasY || ev.Y != se.Label(0.75) {
						t.Fatalf("labelled event %q: v%d y %v/%v", ev.ID, ev.Version, ev.HasY, ev.Y)
					}
				case KuaiRecFeedback:
					if ev.Version != 2 || ev.HasY || ev.X != nil {
						t.Fatalf("impression %q: v%d, y %v, dense %v", ev.ID, ev.Version, ev.HasY, ev.X != nil)
					}
					pendingImp[ev.ID] = r.Partition
				}
			}
			if len(pendingImp) != 0 {
				t.Fatalf("%d impressions without feedback", len(pendingImp))
			}
		})
	}
}
