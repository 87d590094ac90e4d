package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/checkpoint"
	"okstream/codec"
	"okstream/consumer"
	"okstream/eval"
	"okstream/internal/kafkasec"
	"okstream/internal/kafkautil"
	"okstream/label"
	"okstream/learner"
)

func init() {
	register(command{name: "inspect", summary: "show predictions, checkpoints, dead letters or events of a topic in readable form", run: runInspect})
}

const inspectSynopsis = `inspect predictions|checkpoints|dead-letters|events --brokers HOST:PORT --topic TOPIC [flags]

  predictions    prediction records, msgpack or JSON (--format; by default
                 each record's first byte tells; multi-class models: the
                 class and the top of the distribution), and each model's
                 progressive mistake rate (or MSE) computed from them
                 (re-emitted duplicates counted once)
  checkpoints    every (group, topic, partition) in a checkpoint topic: both
                 slots, the newest complete checkpoint, and with --models the
                 models inside (spec, updates, progressive statistics)
  dead-letters   dead-lettered records: reason, detail, source, original bytes
                 (and a JSON record's text)
  events         input events, msgpack or JSON (--format; by default each
                 record's first byte tells), as decoded by the runtime, or
                 why run would dead-letter them (labels too, mapped per
                 partition as run maps them: --task auto, the default,
                 decides by each partition's labels, as run without
                 --model; binary takes -1/+1, 0/1, true/false or two
                 strings, as run with classifiers; see --positive;
                 multiclass takes class names), then each partition's task
                 and classes`

const inspectExamples = `  okstream inspect events --brokers localhost:9092 --topic events --dim 8 --limit 5
  okstream inspect predictions --brokers localhost:9092 --topic events.predictions --limit 20
  okstream inspect events --brokers localhost:9092 --topic events --format json   # as run --input-format json reads them
  okstream inspect checkpoints --brokers localhost:9092 --topic okstream.checkpoints --models
  okstream inspect dead-letters --brokers localhost:9092 --topic events.dlq`

func runInspect(args []string, stdout, stderr io.Writer) int {
	what := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		what, args = args[0], args[1:]
	}
	fs := newFlagSet("inspect", inspectSynopsis, inspectExamples, stderr)
	brokers := fs.String("brokers", "", "Kafka bootstrap brokers (or OKSTREAM_BROKERS)")
	topic := fs.String("topic", "", "topic to read")
	limit := fs.Int("limit", 20, "records to print (0: none, only the summary; -1: all)")
	partition := fs.Int("partition", -1, "only this partition (-1: all)")
	models := fs.Bool("models", false, "checkpoints: list the models inside each newest checkpoint")
	dim := fs.Int("dim", 0, "events: expected dimension (0: any)")
	task := fs.String("task", "auto", "events: the models' task: auto (decided by each partition's labels, as okstream run without --model or --task), binary (labels -1/+1, 0/1, true/false or two strings, as okstream run with classifiers such as fogd), multiclass (class names: strings, integers, bools) or regression (any number)")
	maxClasses := fs.Int("max-classes", label.DefaultMaxClasses, "events: the class dictionary's cap of a multi-class partition (as okstream run --max-classes)")
	positive := fs.String("positive", "", "events: the positive class of string labels (as okstream run --positive)")
	maxAbs := fs.Float64("max-abs-value", consumer.DefaultMaxAbsValue, "events: a feature or label of larger magnitude would be dead-lettered (as okstream run --max-abs-value; 0: off)")
	maxID := fs.Int("max-id-bytes", consumer.DefaultMaxIDBytes, "events: a longer id, key or ref would be dead-lettered (as okstream run --max-id-bytes; 0: off)")
	maxBytes := fs.Int("max-event-bytes", consumer.NewConfig().MaxEventBytes, "events: a larger record would be dead-lettered (as okstream run --max-event-bytes)")
	format := fs.String("format", formatAuto, "events and predictions: the records' encoding: auto (each record by its first byte: '{' is JSON, anything else msgpack), msgpack or json; events with msgpack or json show what okstream run --input-format FORMAT would make of them (a record of the other format: looks_like_json or looks_like_msgpack)")
	var sf secFlags
	sf.register(fs)
	maxState := fs.Int64("max-state-bytes", checkpoint.DefaultMaxStateBytes, "checkpoints: reject (and report) checkpoints declaring a larger payload, as okstream run --checkpoint-max-state-bytes does")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "okstream inspect: "+format+"\n", a...)
		return 2
	}
	if *topic == "" {
		return fail("--brokers and --topic are required (see okstream inspect --help)")
	}
	conn, err := sf.connect(fs, *brokers, "inspect", stderr)
	if err != nil {
		return fail("%v", err)
	}
	defer conn.close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	brokerList, client := conn.brokers, conn.client
	if *format != formatAuto && *format != consumer.FormatMsgpack && *format != consumer.FormatJSON {
		return fail("--format %q: use auto, msgpack or json", *format)
	}
	switch what {
	case "checkpoints":
		if err := inspectCheckpoints(ctx, stdout, checkpoint.Config{Brokers: brokerList, Topic: *topic, Client: client, MaxStateBytes: *maxState}, *models); err != nil {
			return fail("%v", kafkasec.Explain(err))
		}
		return 0
	case "predictions", "dead-letters":
	case "events":
		if _, err := label.ParseTask(*task); err != nil {
			return fail("--%v", err)
		}
	default:
		return fail("say what to inspect: predictions, checkpoints, dead-letters or events")
	}
	recs, err := readTopic(ctx, client, *topic, *partition)
	if err != nil {
		return fail("%v", kafkasec.Explain(err))
	}
	switch what {
	case "predictions":
		err = inspectPredictions(stdout, recs, *limit, *format)
	case "dead-letters":
		inspectDeadLetters(stdout, recs, *limit)
	case "events":
		t, _ := label.ParseTask(*task)
		inspectEvents(stdout, recs, *limit, codec.Limits{Dim: *dim, MaxAbsValue: *maxAbs, MaxIDBytes: *maxID, MaxBytes: *maxBytes}, t, *positive, *maxClasses, *format)
	}
	if err != nil {
		return fail("%v", err)
	}
	return 0
}

func readTopic(ctx context.Context, c *kafka.Client, topic string, only int) ([]kafkautil.Record, error) {
	n, err := kafkautil.Partitions(ctx, c, topic)
	if err != nil {
		return nil, fmt.Errorf("topic %s: %w", topic, err)
	}
	var out []kafkautil.Record
	for p := 0; p < n; p++ {
		if only >= 0 && p != only {
			continue
		}
		recs, err := kafkautil.ReadPartition(ctx, c, topic, p)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

func shown(limit, i int) bool { return limit < 0 || i < limit }

// ModelMetrics is a model's progressive metric computed from prediction
// records.
type modelMetrics struct {
	name     string
	classify bool // binary or multi-class
	multi    bool
	labeled  int
	mistakes int
	sqerr    float64
}

// formatAuto: inspect tells each record's format by its first byte
// (codec.IsJSONRecord).
const formatAuto = "auto"

// decodePrediction decodes a prediction record in format (auto, msgpack
// or json).
func decodePrediction(b []byte, format string) (codec.Prediction, error) {
	switch format {
	case consumer.FormatMsgpack:
		return codec.DecodePrediction(b)
	case consumer.FormatJSON:
		return codec.DecodePredictionJSON(b)
	}
	return codec.DecodePredictionAny(b)
}

// predictionMetrics deduplicates prediction records (msgpack or JSON, told
// apart by their first byte) by source offset and computes every model's
// progressive statistics.
func predictionMetrics(recs []kafkautil.Record) ([]*modelMetrics, int, int, error) {
	return predictionMetricsFormat(recs, formatAuto)
}

// predictionMetricsFormat is predictionMetrics for records in format.
func predictionMetricsFormat(recs []kafkautil.Record, format string) ([]*modelMetrics, int, int, error) {
	seen := map[string]bool{}
	var order []*modelMetrics
	byName := map[string]*modelMetrics{}
	dups := 0
	for _, r := range recs {
		p, err := decodePrediction(r.Value, format)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("partition %d offset %d: not a prediction record: %v", r.Partition, r.Offset, err)
		}
		k := fmt.Sprintf("%s/%d/%d", p.Topic, p.Partition, p.Offset)
		if seen[k] {
			dups++
			continue
		}
		seen[k] = true
		for _, m := range p.Models {
			mm := byName[m.Name]
			if mm == nil {
				mm = &modelMetrics{name: m.Name, classify: m.Classify || m.Multi, multi: m.Multi}
				byName[m.Name] = mm
				order = append(order, mm)
			}
			mm.multi = mm.multi || m.Multi // a multi-class decision after a warm-up of binary records
			mm.classify = mm.classify || m.Classify || m.Multi
			if !p.HasY {
				continue
			}
			mm.labeled++
			switch {
			case m.Multi: // y is the label's class index
				if float64(m.ClassIndex) != p.Y {
					mm.mistakes++
				}
			case m.Classify && float64(m.Decision) != p.Y:
				mm.mistakes++
			}
			mm.sqerr += (m.Score - p.Y) * (m.Score - p.Y)
		}
	}
	return order, len(seen), dups, nil
}

func inspectPredictions(w io.Writer, recs []kafkautil.Record, limit int, format string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if limit != 0 {
		fmt.Fprintln(tw, "partition\toffset\tsource\tid\tkey\ty\tclass\tscores (model: score decision P(y=+1) updates; multi-class: class P(class) [top classes] updates)")
	}
	for i, r := range recs {
		if !shown(limit, i) {
			break
		}
		p, err := decodePrediction(r.Value, format)
		if err != nil {
			fmt.Fprintf(tw, "%d\t%d\tBAD RECORD: %v\n", r.Partition, r.Offset, err)
			continue
		}
		y := "-"
		if p.HasY {
			y = fmt.Sprintf("%g", p.Y)
		}
		class := "-" // none: a record older than version 3, or a class not known yet
		if p.Class != "" {
			class = strconv.Quote(p.Class)
		}
		var ms []string
		for _, m := range p.Models {
			if m.Multi {
				ms = append(ms, multiScoreText(m))
				continue
			}
			s := fmt.Sprintf("%s: %.4g", m.Name, m.Score)
			if m.Classify {
				s += fmt.Sprintf(" %+d", m.Decision)
			}
			if m.HasProb {
				s += fmt.Sprintf(" p=%.4f", m.Prob)
			}
			ms = append(ms, fmt.Sprintf("%s u=%d", s, m.Updates))
		}
		fmt.Fprintf(tw, "%d\t%d\t%s/%d/%d\t%s\t%s\t%s\t%s\t%s\n", r.Partition, r.Offset, p.Topic, p.Partition, p.Offset, p.ID, p.Key, y, class, strings.Join(ms, "; "))
	}
	tw.Flush()
	mm, n, dups, err := predictionMetricsFormat(recs, format)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d prediction records, %d distinct source events, %d re-emitted duplicates (identical copies after a recovery)\n", len(recs), n, dups)
	// A classifier's score is a margin, not an estimate of y: its squared
	// error is not a quality measure (it grows with the margins), so the
	// MSE is shown for regression models only.
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tlabelled\tprogressive mistake rate (classification)\tprogressive MSE (regression)")
	for _, m := range mm {
		rate, mse := "-", "-"
		switch {
		case m.labeled == 0:
		case m.classify:
			rate = fmt.Sprintf("%.3f%% (%d)", 100*float64(m.mistakes)/float64(m.labeled), m.mistakes)
			if m.multi {
				rate += " multi-class"
			}
		default:
			mse = fmt.Sprintf("%.5g", m.sqerr/float64(m.labeled))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", m.name, m.labeled, rate, mse)
	}
	return tw.Flush()
}

// multiScoreText shows a multi-class model's score: its class, that class's
// probability, the listed top of the distribution and the update count,
// e.g. `auto: "bird" p=0.6250 [bird 0.625, cat 0.25, dog 0.125] u=7`.
func multiScoreText(m codec.ModelScore) string {
	class := "-"
	if m.Class != "" {
		class = strconv.Quote(m.Class)
	}
	top := make([]string, len(m.Dist))
	for i, d := range m.Dist {
		top[i] = fmt.Sprintf("%s %.4g", d.Class, d.Prob)
	}
	return fmt.Sprintf("%s: %s p=%.4f [%s] u=%d", m.Name, class, m.Score, strings.Join(top, ", "), m.Updates)
}

// inspectCheckpoints prints every ID's slots. A damaged or forged slot is a
// line saying why it was rejected (the same validation and limits as a
// restore), never a failure of the command.
func inspectCheckpoints(ctx context.Context, w io.Writer, cfg checkpoint.Config, models bool) error {
	topic := cfg.Topic
	s, err := checkpoint.OpenExisting(ctx, cfg)
	if err != nil {
		return err
	}
	sums, err := s.Scan(ctx)
	if err != nil {
		return err
	}
	if len(sums) == 0 {
		fmt.Fprintf(w, "no okstream checkpoints in %s\n", topic)
		return nil
	}
	for _, sm := range sums {
		fmt.Fprintf(w, "group %q  topic %s  partition %d  (%d records)\n", sm.ID.Group, sm.ID.Topic, sm.ID.Partition, sm.Records)
		for _, l := range sm.Slots {
			fmt.Fprintf(w, "  slot %s\n", l)
		}
		if sm.Dropped > 0 {
			fmt.Fprintf(w, "  %d chunk records dropped (beyond the chunk-count or per-slot limits)\n", sm.Dropped)
		}
		if sm.Newest == nil {
			fmt.Fprintln(w, "  NO COMPLETE CHECKPOINT: the runtime refuses to start this partition")
			continue
		}
		fmt.Fprintf(w, "  newest: epoch %s, resumes at offset %d\n", sm.Newest.Epoch, sm.Newest.NextOffset)
		if !models {
			continue
		}
		pl, err := consumer.DescribePayload(sm.Newest.Payload)
		if err != nil {
			fmt.Fprintf(w, "  payload: %v\n", err)
			continue
		}
		fmt.Fprintf(w, "  dimension %d, %d impressions awaiting feedback\n", pl.Dim, pl.Pending)
		if pl.Labels != nil {
			fmt.Fprintf(w, "  labels: %s\n", pl.Labels)
		}
		writeFeatures(w, pl)
		for _, m := range pl.Models {
			stat := ""
			switch {
			case m.Stats.Labeled > 0 && m.Multi:
				stat = fmt.Sprintf(", multi-class over %d classes, mistake rate %.3f%%, Brier score %.4g", len(m.Classes), 100*m.Stats.MistakeRate(), m.Stats.MSE())
			case m.Stats.Labeled > 0:
				// A classifier's squared error measures its margins, not its
				// quality: its mistake rate only (as inspect predictions).
				if l, err := learner.New(m.Spec, max(pl.Dim, 1)); err == nil && l.Info().Task == learner.Classification {
					stat = fmt.Sprintf(", mistake rate %.3f%%", 100*m.Stats.MistakeRate())
					if eval.ProbabilityOf(l) == nil { // its probabilities come from the calibration
						stat += fmt.Sprintf(", probability σ(%.4g·score %+.4g)", m.Calib.A, m.Calib.B)
					}
				} else {
					stat = fmt.Sprintf(", MSE %.4g", m.Stats.MSE())
				}
			}
			if m.Stats.Resets > 0 {
				stat += fmt.Sprintf(", reset %d times (non-finite state)", m.Stats.Resets)
			}
			fmt.Fprintf(w, "    %-12s %s\n                 %d updates, %d labelled%s, state %d bytes\n", m.Name, m.Spec, m.Updates, m.Stats.Labeled, stat, len(m.State))
		}
	}
	return nil
}

func inspectDeadLetters(w io.Writer, recs []kafkautil.Record, limit int) {
	counts := map[string]int{}
	for i, r := range recs {
		h := map[string]string{}
		for _, x := range r.Headers {
			h[x.Key] = string(x.Value)
		}
		counts[h[consumer.HeaderReason]]++
		if !shown(limit, i) {
			continue
		}
		v := r.Value
		more := ""
		if len(v) > 48 {
			v, more = v[:48], "…"
		}
		key := r.Key
		if len(key) > 64 {
			key = key[:64]
		}
		if h[consumer.HeaderTruncated] == "true" {
			more += fmt.Sprintf("  (truncated: the record's key was %s bytes, its value %s)", h[consumer.HeaderKeyBytes], h[consumer.HeaderValueBytes])
		}
		fmt.Fprintf(w, "%d/%d  %s  from %s  key %q\n    %s\n    bytes (%d): %s%s\n", r.Partition, r.Offset, h[consumer.HeaderReason], h[consumer.HeaderSource], key, h[consumer.HeaderDetail], len(r.Value), hex.EncodeToString(v), more)
		if codec.IsJSONRecord(v) { // a JSON record: its text too, on one line
			text := strings.Map(func(c rune) rune {
				if c < 0x20 || c == 0x7f {
					return ' '
				}
				return c
			}, strings.ToValidUTF8(string(v), "\ufffd"))
			fmt.Fprintf(w, "    text: %s%s\n", text, more)
		}
	}
	fmt.Fprintf(w, "\n%d dead letters", len(recs))
	writeReasonCounts(w, counts)
}

// writeReasonCounts ends a summary line with "; reason: count" per reason,
// sorted by reason.
func writeReasonCounts(w io.Writer, counts map[string]int) {
	reasons := make([]string, 0, len(counts))
	for k := range counts {
		reasons = append(reasons, k)
	}
	sort.Strings(reasons)
	for _, k := range reasons {
		fmt.Fprintf(w, "; %s: %d", k, counts[k])
	}
	fmt.Fprintln(w)
}

// inspectEvents decodes the events as okstream run would, in format (auto:
// each record by its first byte).
// writeFeatures prints a checkpoint's feature kind and, for named features,
// the encoder's dictionary: every coordinate in use with its name and kind
// (e.g. `    3  device=ios  indicator`), then its counters.
func writeFeatures(w io.Writer, pl consumer.Payload) {
	if pl.Features == nil {
		kind := pl.FeatureKind
		if kind == "" {
			kind = "dense (a checkpoint from before named features)"
		}
		fmt.Fprintf(w, "  features: %s\n", kind)
		return
	}
	enc := pl.Features
	st := enc.Stats()
	c := enc.Config()
	fmt.Fprintf(w, "  features: named, %d names, %d of %d coordinates in use (--max-values-per-name %d, --missing %s, --missing-category=%v); %d events, %d dropped (the --dim cap), %d folded into name=<other>, %d imputed\n",
		st.Names, st.Coords, c.Dim, c.MaxValuesPerName, c.Missing, c.MissingCategory, st.Events, st.Dropped, st.Folded, st.Imputed)
	names := enc.Names()
	for j := 0; j < st.Coords; j++ {
		line := fmt.Sprintf("    %4d  %s  %s", j, strconv.Quote(names[j]), enc.Kind(j))
		if n, mean, sd, ok := enc.NumStats(j); ok {
			line += fmt.Sprintf("  (%d values, mean %.4g, sd %.4g)", n, mean, sd)
		}
		fmt.Fprintln(w, line)
	}
}

// namedText shows an event's named features: name=value, strings quoted,
// nil for a missing value.
func namedText(f []codec.Field) string {
	var b strings.Builder
	b.WriteString("f={")
	for i, fl := range f {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(fl.Name)
		b.WriteByte('=')
		switch fl.Kind {
		case codec.FieldNumber:
			b.WriteString(strconv.FormatFloat(fl.Num, 'g', -1, 64))
		case codec.FieldBool:
			b.WriteString(strconv.FormatBool(fl.Num != 0))
		case codec.FieldString:
			b.WriteString(strconv.Quote(fl.Str))
		default:
			b.WriteString("nil")
		}
	}
	b.WriteByte('}')
	return b.String()
}

func inspectEvents(w io.Writer, recs []kafkautil.Record, limit int, lim codec.Limits, task label.Task, positive string, maxClasses int, format string) {
	dec := codec.NewDecoder(lim)
	var ev codec.Event
	maps := map[int]*label.Map{} // per partition, as run keeps them
	bad := 0
	reasons := map[string]int{}
	for i, r := range recs {
		isJSON := format == consumer.FormatJSON || format == formatAuto && codec.IsJSONRecord(r.Value)
		var err error
		if isJSON {
			err = dec.DecodeEventJSON(r.Value, &ev)
		} else {
			err = dec.DecodeEvent(r.Value, &ev)
		}
		reason := ""
		if err != nil {
			if reason = string(codec.ReasonOf(err)); reason == "" {
				reason = string(codec.ReasonNotMsgpack)
			}
		} else if ev.HasY {
			m := maps[r.Partition]
			if m == nil {
				m = label.New(task, positive)
				m.MaxClasses = maxClasses
				maps[r.Partition] = m
			}
			if _, err = m.Apply(&ev); err != nil {
				reason = consumer.ReasonInvalidLabel
			}
		}
		if err != nil {
			bad++
			reasons[reason]++
		}
		if !shown(limit, i) {
			continue
		}
		if err != nil {
			fmt.Fprintf(w, "%d/%d  BAD (%s): %v\n", r.Partition, r.Offset, reason, err)
			continue
		}
		y := "-"
		switch {
		case !ev.HasY:
		case ev.YKind == codec.LabelBool:
			y = fmt.Sprint(ev.Y != 0)
		case ev.YKind == codec.LabelString:
			y = strconv.Quote(ev.YStr)
		default:
			y = fmt.Sprintf("%g", ev.Y)
		}
		feat := fmt.Sprintf("x=%v", ev.X)
		switch {
		case ev.Named():
			feat = namedText(ev.F)
		case ev.X == nil:
			feat = fmt.Sprintf("xi=%v xv=%v", ev.XI, ev.XV)
		}
		if len(feat) > 100 {
			feat = feat[:100] + "…"
		}
		fmt.Fprintf(w, "%d/%d  id=%s key=%s y=%s %s\n", r.Partition, r.Offset, ev.ID, ev.Key, y, feat)
	}
	fmt.Fprintf(w, "\n%d events, %d would be dead-lettered", len(recs), bad)
	writeReasonCounts(w, reasons)
	writeLabelMaps(w, maps, task)
}

// writeLabelMaps prints, per partition, what run would make of its labels
// (--task TASK): the task decided (or the warm-up so far), the labels' kind
// and the classes, e.g. `partition 0: binary, strings "no" (-1) and "yes" (+1)`.
func writeLabelMaps(w io.Writer, maps map[int]*label.Map, task label.Task) {
	parts := make([]int, 0, len(maps))
	for p := range maps {
		parts = append(parts, p)
	}
	sort.Ints(parts)
	if len(parts) == 0 {
		fmt.Fprintln(w, "labels: none (no valid labelled event: nothing to learn from)")
		return
	}
	name := task.String()
	if task == label.Undecided {
		name = "auto"
	}
	fmt.Fprintf(w, "labels (--task %s, mapped per partition as okstream run maps them):\n", name)
	for _, p := range parts {
		fmt.Fprintf(w, "  partition %d: %s\n", p, maps[p])
	}
}
