package main

// okstream score: offline scoring of a data file with a model file's
// models, through consumer.Scorer (the pipeline's own scoring path), so that
// its scores are the prediction records' bit for bit.

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"okstream/codec"
	"okstream/consumer"
	"okstream/dataset"
	"okstream/modelfile"
)

func init() {
	register(command{name: "score", summary: "score a data file offline with a model file (predictions as the pipeline would publish them)", run: runScore})
}

const scoreSynopsis = `score --model FILE --data FILE [--partition P] [--output-format jsonl|csv] [--out FILE] [flags]

Scores every row of --data with the models of one entry of the model file
(okstream model export, okstream eval --save), without learning, exactly as
the pipeline publishes the prediction of an event for a partition whose
models are in that state (consumer.Scorer: the same label map, named-feature
encoder, scores, decisions, probabilities and classes, bit for bit). Each
row is scored against the file's state: the answer for a row does not depend
on the rows before it.

Input: JSON lines (.jsonl, .ndjson, or --format jsonl) are events in the
input topic's schema (x, xi/xv or named f; id, key, y and ts as the pipeline
reads them); CSV and LIBSVM files are read as okstream eval reads them
(--label, --header, --drop, ...), a CSV file as named features when the
model's partition takes named features. A row the pipeline would
dead-letter (wrong dimension, wrong feature kind, non-finite value) is
reported on stderr and skipped; the exit status is then 1.

Output (--output-format): jsonl, the prediction records' JSON (codec:
"m": [{"n", "s", "d", "pp", "c", "ci", "pd", "u"}], "c", "y", "id", "key",
"ts"; "t" is the data file's name and "o" the row's number, from 0), or csv:
row, id, class, then per model NAME_score, NAME_decision, NAME_prob (and
NAME_class for a multi-class model); floats in the shortest form that
reads back to the same float64.`

const scoreExamples = `  okstream eval --data a9a --runs 1 --model auto --save a9a.okm
  okstream score --model a9a.okm --data ../shared/datasets/a9a/a9a.t --output-format csv --out a9a-test.csv
  okstream score --model events.okm --partition 3 --data events.jsonl`

func runScore(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("score", scoreSynopsis, scoreExamples, stderr)
	var df dataFlags
	df.register(fs)
	fs.Lookup("data").Usage = "the data file to score: JSON lines (events in the input topic's schema), CSV or LIBSVM (required)"
	fs.Lookup("scale").Usage = "none only: the pipeline scores events as they are"
	fs.Lookup("positive").Usage = "the positive class of string labels (as okstream run --positive): names a binary decision's class"
	fs.Lookup("limit").Usage = "score only the first N rows (0: all)"
	modelPath := fs.String("model", "", "the model file (required)")
	partition := fs.Int("partition", -1, "the entry of this partition (-1: the file's only entry)")
	outFormat := fs.String("output-format", "jsonl", "jsonl (the prediction records' JSON) or csv")
	outPath := fs.String("out", "", "write the predictions here (default: stdout)")
	maxBytes := fs.Int64("max-bytes", modelfile.DefaultMaxBytes, "refuse a larger model file")
	topK := fs.Int("top-k", consumer.DefaultTopK, "classes a multi-class model's prediction lists (as okstream run --top-k; -1: all)")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "okstream score: "+format+"\n", a...)
		return 2
	}
	if *modelPath == "" || df.data == "" {
		return fail("--model FILE and --data FILE are required (see okstream score --help)")
	}
	if *outFormat != "jsonl" && *outFormat != "csv" {
		return fail("--output-format %q: use jsonl or csv", *outFormat)
	}
	if df.scale != "none" && df.scale != "" {
		return fail("--scale %s: the pipeline scores events as they are; scale the file beforehand", df.scale)
	}
	positive := df.positive // here the positive class of string labels (as okstream run --positive): it names a binary decision's class
	f, err := readModelFile(*modelPath, *maxBytes)
	if err != nil {
		return fail("%v", err)
	}
	entry, err := pickEntry(f, *partition)
	if err != nil {
		return fail("%v", err)
	}
	sc, err := consumer.NewScorerWith(entry.Payload, consumer.ScorerOptions{TopK: *topK, Positive: positive})
	if err != nil {
		return fail("entry %s: %v", entry, err)
	}
	var out io.Writer = stdout
	if *outPath != "" {
		fh, err := os.Create(*outPath)
		if err != nil {
			return fail("%v", err)
		}
		defer fh.Close()
		out = fh
	}
	bw := bufio.NewWriter(out)
	w := &scoreWriter{w: bw, csv: *outFormat == "csv", sc: sc, topic: filepath.Base(df.data)}
	bad := 0
	report := func(row int, err error) {
		if bad++; bad <= 10 {
			fmt.Fprintf(stderr, "okstream score: row %d: %v\n", row, err)
		}
	}
	if err := scoreRows(&df, sc, w, report); err != nil {
		return fail("%v", err)
	}
	if err := bw.Flush(); err != nil {
		return fail("%v", err)
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "okstream score: %d rows scored, %d skipped (the pipeline would dead-letter them)\n", w.rows, bad)
		return 1
	}
	return 0
}

// pickEntry is the entry of partition p, or the file's only entry (p < 0).
func pickEntry(f *modelfile.File, p int) (modelfile.Entry, error) {
	if p < 0 {
		if len(f.Entries) != 1 {
			return modelfile.Entry{}, fmt.Errorf("the model file holds %d entries: choose one with --partition (okstream model inspect lists them)", len(f.Entries))
		}
		return f.Entries[0], nil
	}
	for _, e := range f.Entries {
		if e.Partition == p {
			return e, nil
		}
	}
	return modelfile.Entry{}, fmt.Errorf("--partition %d: the model file has no entry of that partition (okstream model inspect lists them)", p)
}

// scoreRows scores every row of the data file and writes it with w;
// report gets each row the scorer refuses.
func scoreRows(df *dataFlags, sc *consumer.Scorer, w *scoreWriter, report func(int, error)) error {
	path, opts, err := df.options()
	if err != nil {
		return err
	}
	if opts.Format == dataset.FormatAuto {
		if opts.Format, err = dataset.DetectFormat(path); err != nil {
			return err
		}
	}
	var ev codec.Event
	var scores []codec.ModelScore
	one := func(row int) error {
		scores, err = sc.Score(&ev, scores[:0])
		if err != nil {
			report(row, err)
			return nil
		}
		return w.write(row, &ev, scores)
	}
	if opts.Format == dataset.FormatJSONL {
		fh, err := os.Open(path)
		if err != nil {
			return err
		}
		defer fh.Close()
		maxEvent := consumer.NewConfig().MaxEventBytes
		dec := codec.NewDecoder(codec.Limits{Dim: sc.Dim(), MaxAbsValue: consumer.DefaultMaxAbsValue, MaxIDBytes: consumer.DefaultMaxIDBytes, MaxBytes: maxEvent})
		s := bufio.NewScanner(fh)
		s.Buffer(make([]byte, 64<<10), maxEvent+1)
		row := 0
		for s.Scan() {
			line := bytes.TrimSpace(s.Bytes())
			if len(line) == 0 {
				continue
			}
			if err := dec.DecodeEventJSON(line, &ev); err != nil {
				report(row, err)
			} else if err := one(row); err != nil {
				return err
			}
			row++
			if df.limit > 0 && row >= df.limit {
				break
			}
		}
		if err := s.Err(); err != nil {
			return fmt.Errorf("%s: %w (a line longer than %d bytes, the pipeline's --max-event-bytes?)", path, err, maxEvent)
		}
		return nil
	}
	opts.ClassNames = true
	if opts.Dim == 0 {
		opts.Dim = sc.Dim()
	}
	if enc := sc.Describe().Features; enc != nil { // the partition takes named features: read the file so
		opts.Named = true
		if opts.MaxValuesPerName == 0 {
			opts.MaxValuesPerName = enc.Config().MaxValuesPerName
		}
	}
	ds, err := dataset.Load(path, opts)
	if err != nil {
		return err
	}
	n := ds.Len()
	if df.limit > 0 {
		n = min(n, df.limit)
	}
	for i := 0; i < n; i++ {
		ev = codec.Event{Y: ds.Y[i], HasY: true}
		if ds.Classes != nil {
			if c := int(ds.Y[i]); c >= 0 && c < len(ds.Classes) {
				ev.Y, ev.YKind, ev.YStr = 0, codec.LabelString, ds.Classes[c]
			}
		}
		if ds.Named != nil {
			ev.F = ds.Named.Records[i]
		} else {
			ev.X = ds.X[i]
		}
		if err := one(i); err != nil {
			return err
		}
	}
	return nil
}

// scoreWriter writes predictions as JSON lines or CSV.
type scoreWriter struct {
	w     *bufio.Writer
	csv   bool
	cw    *csv.Writer
	sc    *consumer.Scorer
	topic string
	buf   []byte
	rows  int
}

func (s *scoreWriter) write(row int, ev *codec.Event, scores []codec.ModelScore) error {
	s.rows++
	if !s.csv {
		p := codec.Prediction{Version: codec.PredictionVersionProb, ID: ev.ID, Key: ev.Key, Topic: s.topic, Offset: int64(row),
			TS: ev.TS, HasTS: ev.HasTS, Y: ev.Y, HasY: ev.HasY, Models: scores, Class: s.sc.ClassName(scores)}
		s.buf = append(codec.AppendPredictionJSON(s.buf[:0], &p), '\n')
		_, err := s.w.Write(s.buf)
		return err
	}
	if s.rows == 1 {
		hdr := []string{"row", "id", "class"}
		for _, m := range scores {
			hdr = append(hdr, m.Name+"_score", m.Name+"_decision", m.Name+"_prob")
			if m.Multi {
				hdr = append(hdr, m.Name+"_class")
			}
		}
		s.cw = csv.NewWriter(s.w)
		if err := s.cw.Write(hdr); err != nil {
			return err
		}
	}
	rec := []string{strconv.Itoa(row), ev.ID, s.sc.ClassName(scores)}
	num := func(v float64, ok bool) string {
		if !ok {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	for _, m := range scores {
		dec := ""
		if m.Classify {
			dec = strconv.Itoa(int(m.Decision))
		}
		rec = append(rec, num(m.Score, true), dec, num(m.Prob, m.HasProb))
		if m.Multi {
			rec = append(rec, m.Class)
		}
	}
	if err := s.cw.Write(rec); err != nil {
		return err
	}
	s.cw.Flush() // into s.w, which the caller flushes
	return s.cw.Error()
}
