package main

// okstream eval --save FILE: the first run's final models written as a
// model file (package modelfile) whose payload is the checkpoint payload
// the pipeline would write for those learners, with the dataset's label
// mapping and feature encoder (consumer.TrainedPayload).

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"

	"okstream/codec"
	"okstream/consumer"
	"okstream/dataset"
	"okstream/eval"
	"okstream/label"
	"okstream/learner"
	"okstream/modelfile"
)

// evalSaver collects run 0's final models (eval.Config.Final) for --save.
type evalSaver struct {
	path string
	mu   sync.Mutex
	runs map[string]eval.FinalModel // run 0's models by canonical spec
}

// checkSave refuses, at start, the evaluations whose models the pipeline
// could not use as they are: scaled features (the pipeline scores events
// as they come) and one-vs-rest labels (--positive).
func checkSave(df *dataFlags) error {
	if sc, err := dataset.ParseScale(df.scale); err == nil && (sc != dataset.Scale{}) {
		return fmt.Errorf("--save with --scale %s: the saved models would expect scaled features, but okstream run, serve and score see the events as they are; scale the file beforehand, or drop --scale", df.scale)
	}
	if df.positive != "" {
		return errors.New("--save with --positive: one-vs-rest labels have no label mapping in the pipeline (its binary streams have exactly two classes); drop --positive")
	}
	return nil
}

// hook is the eval.Config.Final that keeps run 0's models.
func (s *evalSaver) hook(m eval.FinalModel) {
	if m.Run != 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs == nil {
		s.runs = map[string]eval.FinalModel{}
	}
	s.runs[m.Spec] = m
}

// save writes the reported models (each --model's grid winner) of run 0 as
// one entry of a model file.
func (s *evalSaver) save(res *eval.Result, ds *dataset.Dataset, df *dataFlags, args []string) error {
	ts := consumer.TrainedSet{Dim: ds.Dim}
	switch res.Task {
	case "multiclass":
		ts.Task = label.MultiClass
	case learner.Regression.String():
		ts.Task = label.Regression
	default:
		ts.Task = label.Binary
		ts.Labels = binaryLabelEvents(ds, df)
	}
	names := map[string]int{}
	events := 0
	for _, mr := range res.Models {
		fm, ok := s.runs[mr.Chosen]
		if !ok {
			return fmt.Errorf("--save: no final model of %s (run 0)", mr.Chosen)
		}
		name, _, _ := learner.ParseSpec(mr.Spec)
		if names[name]++; names[name] > 1 {
			name += "-" + strconv.Itoa(names[name])
		}
		tm := consumer.TrainedModel{Name: name, Learner: fm.Learner, Multi: fm.Multi, Updates: uint64(fm.Events), Calib: fm.Calib,
			Stats: consumer.Stats{Labeled: uint64(fm.Events), Mistakes: uint64(fm.Mistakes), SqErr: fm.SqErr}}
		ts.Models = append(ts.Models, tm)
		if ts.Task == label.MultiClass && ts.Labels == nil {
			ts.Labels = multiLabelEvents(res.Classes, fm.Classes, ds.Classes != nil)
		} else if ts.Task == label.MultiClass && !slices.Equal(fm.Classes, s.runs[res.Models[0].Chosen].Classes) {
			return errors.New("--save: the models met the classes in different orders") // one permutation per run: cannot happen
		}
		ts.Features = fm.Encoder // every model of run 0 saw the same order: the same encoder state
		events = fm.Events
	}
	payload, err := consumer.TrainedPayload(ts)
	if err != nil {
		return fmt.Errorf("--save: %w", err)
	}
	f := &modelfile.File{
		Header:  modelfile.Header{Creator: "okstream eval --save", Okstream: versionString(), From: "okstream eval " + joinArgs(args)},
		Entries: []modelfile.Entry{{Kind: modelfile.KindEval, Topic: ds.Name, NextOffset: int64(events), Payload: payload}},
	}
	var buf bytes.Buffer
	if err := modelfile.Write(&buf, f); err != nil {
		return err
	}
	return writeFileAtomic(s.path, buf.Bytes())
}

// binaryLabelEvents are the two labels of a binary dataset as a stream
// would carry them, the one eval mapped to −1 first: class names as
// strings, numbers as numbers (−1/+1 or 0/1: the labels the pipeline's
// binary streams take).
func binaryLabelEvents(ds *dataset.Dataset, df *dataFlags) []codec.Event {
	neg, pos := -1.0, 1.0
	if df.labelPair != nil {
		neg, pos = df.labelPair[0], df.labelPair[1]
	}
	if ds.Classes != nil && int(neg) >= 0 && int(pos) < len(ds.Classes) {
		return []codec.Event{{YKind: codec.LabelString, YStr: ds.Classes[int(neg)]}, {YKind: codec.LabelString, YStr: ds.Classes[int(pos)]}}
	}
	return []codec.Event{{Y: neg}, {Y: pos}}
}

// multiLabelEvents are a multi-class run's classes in the order the run met
// them (order[j] is the reported class of the learner's class j), as
// strings for class names, else as numbers.
func multiLabelEvents(names []string, order []int, strs bool) []codec.Event {
	out := make([]codec.Event, len(order))
	for j, c := range order {
		if v, err := strconv.ParseFloat(names[c], 64); err == nil && !strs {
			out[j] = codec.Event{Y: v}
		} else {
			out[j] = codec.Event{YKind: codec.LabelString, YStr: names[c]}
		}
	}
	return out
}

// writeFileAtomic writes b to path through a temporary file renamed over
// it, so that a reader never sees half a file.
func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func joinArgs(args []string) string {
	var b bytes.Buffer
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Quote(a)[1 : len(strconv.Quote(a))-1])
	}
	return b.String()
}
