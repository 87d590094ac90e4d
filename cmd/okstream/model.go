package main

// okstream model export | import | inspect: model files (package
// modelfile; docs/model-files.md) out of and into the checkpoint topic.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"okstream/checkpoint"
	"okstream/consumer"
	"okstream/internal/kafkasec"
	"okstream/internal/kafkautil"
	"okstream/learner"
	"okstream/modelfile"
)

func init() {
	register(command{name: "model", summary: "model files: export checkpoints to a file, import a file as checkpoints, inspect a file", run: runModel})
}

const modelSynopsis = `model export|import|inspect [flags]

  export   write the newest complete checkpoint of one input partition
           (--partition N) or of every partition of --group/--input that
           has checkpoints (the default) to a model file (--out FILE). A
           partition whose checkpoints are all damaged is an error.
  import   seed a pipeline's partitions from a model file (--in FILE):
           each entry's payload is written, as it is, as the only
           checkpoint of a partition of --group/--input, resuming at the
           offset --start-offset/--to-offset says. Which partitions
           (--partitions): same (the default: entry of partition p → input
           partition p), all (a file of one entry → every partition of
           --input), or a list SRC:DST,... of entry partitions (an eval
           file's entry is partition 0) to input partitions. A partition
           that already has checkpoints is refused unless --force (its
           checkpoints are then replaced). Stop okstream run first, or
           import into partitions no instance owns: a running owner
           overwrites the import with its next checkpoint. A missing
           checkpoint topic is created (compacted), as okstream run would.
  inspect  print a model file (--in FILE, or the file as argument): its
           header, and per entry the models' specs, task, classes, named
           features, σ (and σ̂ of sigma=auto), the members auto keeps with
           their weights, sizes and events seen; --json for JSON.

A restored model keeps its name and spec: run okstream run with --model
NAME=SPEC as inspect prints them (another spec is a configuration change:
okstream run refuses it, or starts that model fresh with
--on-model-change=reset). File format and semantics: docs/model-files.md.`

const modelExamples = `  okstream model export --brokers localhost:9092 --group okstream --input events --out events.okm
  okstream model inspect events.okm
  okstream model import --brokers localhost:9092 --group okstream-b --input events --in events.okm --start-offset file
  okstream eval --data a9a --runs 1 --model auto --save a9a.okm
  okstream model import --brokers localhost:9092 --group okstream --input events --in a9a.okm --partitions all --start-offset latest`

func runModel(args []string, stdout, stderr io.Writer) int {
	what := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		what, args = args[0], args[1:]
	}
	file := ""
	if what == "inspect" && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		file, args = args[0], args[1:] // okstream model inspect FILE
	}
	fs := newFlagSet("model", modelSynopsis, modelExamples, stderr)
	brokers := fs.String("brokers", "", "export, import: Kafka bootstrap brokers (or OKSTREAM_BROKERS)")
	topic := fs.String("checkpoint-topic", consumer.NewConfig().Checkpoints, "export, import: checkpoint topic")
	group := fs.String("group", consumer.NewConfig().Group, "export, import: consumer group of the pipeline")
	input := fs.String("input", "", "export, import: input topic of the pipeline (required)")
	partition := fs.Int("partition", -1, "export: only this input partition (-1: every partition with checkpoints)")
	out := fs.String("out", "", "export: the model file to write (required)")
	in := fs.String("in", "", "import, inspect: the model file to read")
	partitions := fs.String("partitions", "same", "import: which input partitions get which entry: same, all (one entry to every partition), or SRC:DST,... (entry partition → input partition)")
	toOffset := fs.Int64("to-offset", -1, "import: resume every imported partition at this input offset (within each partition's offsets; default: --start-offset)")
	startOffset := fs.String("start-offset", "earliest", "import, without --to-offset: resume at each partition's first retained offset (earliest), its end (latest), or the entry's own next offset (file: where the exported checkpoint resumed)")
	ckptParts := fs.Int("checkpoint-partitions", consumer.NewConfig().CheckpointPartitions, "import: partitions of the checkpoint topic when import creates it (as okstream run --checkpoint-partitions)")
	force := fs.Bool("force", false, "import: replace the checkpoints of partitions that have some")
	jsonOut := fs.Bool("json", false, "inspect: JSON instead of text")
	maxBytes := fs.Int64("max-bytes", modelfile.DefaultMaxBytes, "import, inspect: refuse a larger model file")
	maxState := fs.Int64("max-state-bytes", checkpoint.DefaultMaxStateBytes, "export, import: the checkpoint payload limit (as okstream run --checkpoint-max-state-bytes)")
	var sf secFlags
	sf.register(fs)
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "okstream model: "+format+"\n", a...)
		return 2
	}
	if file != "" && *in != "" {
		return fail("inspect: give the model file once (--in FILE or as argument)")
	} else if file != "" {
		*in = file
	}
	switch what {
	case "inspect":
		if *in == "" {
			return fail("inspect: give the model file (--in FILE, or as argument)")
		}
		f, err := readModelFile(*in, *maxBytes)
		if err != nil {
			return fail("%v", err)
		}
		rep := inspectModelFile(f)
		if *jsonOut {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			err = enc.Encode(rep)
		} else {
			writeModelReport(stdout, rep, f)
		}
		if err != nil {
			return fail("%v", err)
		}
		return 0
	case "export", "import":
	default:
		return fail("say what to do: export, import or inspect (see okstream model --help)")
	}
	if *input == "" {
		return fail("%s: --input is required: the input topic of the pipeline (see okstream model --help)", what)
	}
	var imp *importPlan
	if what == "export" {
		if *out == "" {
			return fail("export: --out FILE is required: the model file to write")
		}
	} else {
		if *in == "" {
			return fail("import: --in FILE is required: the model file to read")
		}
		toGiven := false
		fs.Visit(func(f *flag.Flag) { toGiven = toGiven || f.Name == "to-offset" })
		if toGiven && *toOffset < 0 {
			return fail("--to-offset %d: an offset is 0 or more; omit --to-offset to resume at --start-offset", *toOffset)
		}
		if !toGiven {
			*toOffset = -1
		}
		switch *startOffset {
		case "earliest", "latest", "file":
		default:
			return fail("--start-offset %q: use earliest, latest or file", *startOffset)
		}
		f, err := readModelFile(*in, *maxBytes)
		if err != nil {
			return fail("%v", err)
		}
		if imp, err = planImport(f, *partitions); err != nil {
			return fail("%v", err)
		}
		if *startOffset == "file" && !toGiven {
			for _, e := range f.Entries {
				if e.Kind != modelfile.KindCheckpoint {
					return fail("--start-offset file: entry %s was not exported from a checkpoint (its next offset counts training events, not input offsets); use --to-offset, earliest or latest", e)
				}
			}
		}
	}
	conn, err := sf.connect(fs, *brokers, "model", stderr)
	if err != nil {
		return fail("%v", err)
	}
	defer conn.close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := checkpoint.Config{Brokers: conn.brokers, Topic: *topic, Client: conn.client, MaxStateBytes: *maxState}
	if what == "import" {
		cfg.Partitions = *ckptParts
	}
	if what == "export" {
		f, err := exportModels(ctx, cfg, *group, *input, *partition)
		if err != nil {
			return fail("export: %v", kafkasec.Explain(err))
		}
		f.Header = modelfile.Header{Creator: "okstream model export", Okstream: versionString(),
			From: fmt.Sprintf("brokers %s, checkpoint topic %s, group %s, input %s", strings.Join(conn.brokers, ","), *topic, *group, *input)}
		var buf bytes.Buffer
		if err := modelfile.Write(&buf, f); err != nil {
			return fail("export: %v", err)
		}
		if err := writeFileAtomic(*out, buf.Bytes()); err != nil {
			return fail("export: %v", err)
		}
		for _, e := range f.Entries {
			fmt.Fprintf(stdout, "exported %s: resumes at offset %d, %d bytes\n", e, e.NextOffset, len(e.Payload))
		}
		fmt.Fprintf(stdout, "wrote %s (%d models sets, %d bytes)\n", *out, len(f.Entries), buf.Len())
		return 0
	}
	imp.group, imp.input, imp.toOffset, imp.start, imp.force = *group, *input, *toOffset, *startOffset, *force
	if err := imp.run(ctx, conn, cfg, stdout); err != nil {
		return fail("import: %v", kafkasec.Explain(err))
	}
	return 0
}

// readModelFile reads and checks a model file, and checks that every
// entry's payload decodes.
func readModelFile(path string, maxBytes int64) (*modelfile.File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	f, err := modelfile.Read(fh, modelfile.Limits{MaxBytes: maxBytes})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, e := range f.Entries {
		if _, err := consumer.DescribePayload(e.Payload); err != nil {
			return nil, fmt.Errorf("%s: entry %s: %w", path, e, err)
		}
	}
	return f, nil
}

// exportModels reads the newest complete checkpoint of partition (or of
// every partition of group/input found on the topic, partition < 0).
func exportModels(ctx context.Context, cfg checkpoint.Config, group, input string, partition int) (*modelfile.File, error) {
	s, err := checkpoint.OpenExisting(ctx, cfg)
	if err != nil {
		return nil, err
	}
	var cps []*checkpoint.Checkpoint
	if partition >= 0 {
		id := checkpoint.ID{Group: group, Topic: input, Partition: partition}
		cp, _, err := s.Load(ctx, id)
		if err != nil {
			return nil, err
		}
		if cp == nil {
			return nil, fmt.Errorf("no checkpoint of %s in %s (check --group, --input and --checkpoint-topic: okstream inspect checkpoints lists them)", id, cfg.Topic)
		}
		cps = append(cps, cp)
	} else {
		sums, err := s.Scan(ctx)
		if err != nil {
			return nil, err
		}
		for _, sm := range sums {
			if sm.ID.Group != group || sm.ID.Topic != input {
				continue
			}
			if sm.Newest == nil {
				return nil, fmt.Errorf("%s has no complete checkpoint (%d rejected: okstream inspect checkpoints says why); export the other partitions one by one with --partition", sm.ID, sm.Rejected)
			}
			cps = append(cps, sm.Newest)
		}
		if len(cps) == 0 {
			return nil, fmt.Errorf("no checkpoint of group %s, input %s in %s (check --group, --input and --checkpoint-topic: okstream inspect checkpoints lists them)", group, input, cfg.Topic)
		}
	}
	f := &modelfile.File{}
	for _, cp := range cps {
		f.Entries = append(f.Entries, modelfile.Entry{Kind: modelfile.KindCheckpoint, Group: cp.ID.Group, Topic: cp.ID.Topic,
			Partition: cp.ID.Partition, NextOffset: cp.NextOffset, Payload: cp.Payload})
	}
	return f, nil
}

// importPlan is what import writes: for each target input partition, the
// entry whose payload it gets (all: every partition of the input topic).
type importPlan struct {
	f        *modelfile.File
	targets  map[int]int // input partition → entry index
	all      bool
	group    string
	input    string
	toOffset int64 // −1: start
	start    string
	force    bool
}

// planImport reads --partitions against the file's entries.
func planImport(f *modelfile.File, spec string) (*importPlan, error) {
	p := &importPlan{f: f, targets: map[int]int{}}
	if len(f.Entries) == 0 {
		return nil, errors.New("the model file holds no models")
	}
	byPart := map[int]int{}
	for i, e := range f.Entries {
		if _, dup := byPart[e.Partition]; dup {
			return nil, fmt.Errorf("the model file holds two entries of partition %d (of different groups or topics): import it with --partitions SRC:DST from a file of one topic", e.Partition)
		}
		byPart[e.Partition] = i
	}
	switch spec {
	case "same":
		for part, i := range byPart {
			p.targets[part] = i
		}
	case "all":
		if len(f.Entries) != 1 {
			return nil, fmt.Errorf("--partitions all gives one model set to every partition, the file holds %d (use same or SRC:DST,...)", len(f.Entries))
		}
		p.all = true
	default:
		for _, pair := range strings.Split(spec, ",") {
			a, b, ok := strings.Cut(strings.TrimSpace(pair), ":")
			src, err1 := strconv.Atoi(a)
			dst, err2 := strconv.Atoi(b)
			if !ok || err1 != nil || err2 != nil || src < 0 || dst < 0 {
				return nil, fmt.Errorf("--partitions %q: use same, all, or SRC:DST,... (entry partition : input partition, e.g. 0:3,1:4)", spec)
			}
			i, found := byPart[src]
			if !found {
				return nil, fmt.Errorf("--partitions %s: the model file has no entry of partition %d (okstream model inspect lists them)", pair, src)
			}
			if _, dup := p.targets[dst]; dup {
				return nil, fmt.Errorf("--partitions %q: input partition %d is given twice", spec, dst)
			}
			p.targets[dst] = i
		}
	}
	return p, nil
}

// run checks every target (it exists, its offset is in range, it has no
// checkpoint unless force), then writes them; nothing is written when a
// check fails.
func (p *importPlan) run(ctx context.Context, conn *connection, cfg checkpoint.Config, w io.Writer) error {
	parts, err := kafkautil.Partitions(ctx, conn.client, p.input)
	if err != nil {
		return fmt.Errorf("input topic %s: %w (check --input: the topic okstream run reads)", p.input, err)
	}
	if p.all {
		for q := 0; q < parts; q++ {
			p.targets[q] = 0
		}
	}
	store, err := checkpoint.Open(ctx, cfg) // creates a missing topic (compacted), as okstream run would
	if err != nil {
		return err
	}
	defer store.Close()
	dsts := make([]int, 0, len(p.targets))
	for d := range p.targets {
		dsts = append(dsts, d)
	}
	sort.Ints(dsts)
	var fresh []checkpoint.Checkpoint
	for _, d := range dsts {
		e := p.f.Entries[p.targets[d]]
		if d >= parts {
			return fmt.Errorf("entry %s → partition %d: the input topic %s has %d partitions (0..%d); map it with --partitions SRC:DST", e, d, p.input, parts, parts-1)
		}
		first, end, err := kafkautil.Offsets(ctx, conn.client, p.input, d)
		if err != nil {
			return fmt.Errorf("offsets of %s/%d: %w", p.input, d, err)
		}
		off := p.toOffset
		switch {
		case off >= 0:
		case p.start == "latest":
			off = end
		case p.start == "file":
			off = e.NextOffset
		default:
			off = first
		}
		if off < first || off > end {
			return fmt.Errorf("partition %d: offset %d outside what %s/%d holds, [%d, %d]; give --to-offset within it, or --start-offset earliest or latest", d, off, p.input, d, first, end)
		}
		id := checkpoint.ID{Group: p.group, Topic: p.input, Partition: d}
		cp, _, err := store.Load(ctx, id)
		if (cp != nil || errors.Is(err, checkpoint.ErrNoValidCheckpoint)) && !p.force {
			return fmt.Errorf("%s already has checkpoints (its models would be replaced): import into another --group, or give --force", id)
		} else if err != nil && !errors.Is(err, checkpoint.ErrNoValidCheckpoint) {
			return err
		}
		fresh = append(fresh, checkpoint.Checkpoint{ID: id, NextOffset: off, Payload: e.Payload})
	}
	for _, cp := range fresh {
		n, err := store.Reset(ctx, cp.ID, &cp)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "imported %s: %d bytes, resumes at offset %d (%d old records tombstoned)\n", cp.ID, len(cp.Payload), cp.NextOffset, n)
	}
	return nil
}

// modelFileReport is okstream model inspect's output (--json).
type modelFileReport struct {
	Creator  string        `json:"creator"`
	Okstream string        `json:"okstream"`
	From     string        `json:"from"`
	Entries  []entryReport `json:"entries"`
}

type entryReport struct {
	Source       string          `json:"source"`
	Kind         string          `json:"kind"`
	Group        string          `json:"group,omitempty"`
	Topic        string          `json:"topic"`
	Partition    int             `json:"partition"`
	NextOffset   int64           `json:"next_offset"`
	PayloadBytes int             `json:"payload_bytes"`
	Dim          int             `json:"dim"`
	Task         string          `json:"task,omitempty"`
	Classes      []string        `json:"classes,omitempty"`
	Labels       string          `json:"labels,omitempty"`
	FeatureKind  string          `json:"feature_kind"`
	Features     []featureReport `json:"features,omitempty"`
	Pending      int             `json:"pending_impressions"`
	Models       []modelReport   `json:"models"`
}

type featureReport struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

type modelReport struct {
	Name     string   `json:"name"`
	Spec     string   `json:"spec"`
	Learner  string   `json:"learner"`
	Task     string   `json:"task"`
	Classes  []string `json:"classes,omitempty"` // multi-class: its classes (model class order)
	Updates  uint64   `json:"updates"`
	Labeled  uint64   `json:"labeled"`
	Mistakes uint64   `json:"mistakes"`
	// MistakeRatePct (classifiers) and MSE (regression) are the progressive
	// statistics (null before the first label).
	MistakeRatePct *float64 `json:"mistake_rate_pct,omitempty"`
	MSE            *float64 `json:"mse,omitempty"`
	Resets         uint64   `json:"resets,omitempty"`
	// CalibA, CalibB: the Platt calibration σ(A·score + B) of a classifier
	// without a probability of its own.
	CalibA     *float64 `json:"calib_a,omitempty"`
	CalibB     *float64 `json:"calib_b,omitempty"`
	StateBytes int      `json:"state_bytes"`
	Budget     int      `json:"budget"`
	Used       int      `json:"used"`
	Bytes      int      `json:"bytes"`
	// Sigma is the kernel width of the spec (sigma=...), SigmaHat the
	// data-driven σ̂ of sigma=auto (auto's members' σ are multiples of it).
	Sigma     *float64       `json:"sigma,omitempty"`
	SigmaHat  *float64       `json:"sigma_hat,omitempty"`
	WarmingUp bool           `json:"warming_up,omitempty"`
	AutoBase  string         `json:"auto_base,omitempty"`
	Members   []memberReport `json:"auto_members,omitempty"`
	Error     string         `json:"error,omitempty"` // the state did not restore
	// Candidates: the regression / multi-class candidates an undecided
	// partition still runs beside the model.
	Candidates []string `json:"candidates,omitempty"`
}

type memberReport struct {
	Learner     string   `json:"learner"`
	SigmaFactor float64  `json:"sigma_factor,omitempty"`
	Sigma       *float64 `json:"sigma,omitempty"`
	Params      string   `json:"params"`
	Weight      float64  `json:"weight"`
	Loss        float64  `json:"loss"`
}

func fptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// inspectModelFile describes every entry (readModelFile checked that the
// payloads decode).
func inspectModelFile(f *modelfile.File) modelFileReport {
	rep := modelFileReport{Creator: f.Header.Creator, Okstream: f.Header.Okstream, From: f.Header.From, Entries: []entryReport{}}
	for _, e := range f.Entries {
		pl, _ := consumer.DescribePayload(e.Payload)
		er := entryReport{Source: e.String(), Kind: e.Kind, Group: e.Group, Topic: e.Topic, Partition: e.Partition, NextOffset: e.NextOffset,
			PayloadBytes: len(e.Payload), Dim: pl.Dim, FeatureKind: pl.FeatureKind, Pending: pl.Pending, Models: []modelReport{}}
		if pl.Labels != nil {
			er.Task, er.Classes, er.Labels = pl.Labels.Task.String(), pl.Labels.Classes, pl.Labels.String()
		}
		if enc := pl.Features; enc != nil {
			names := enc.Names()
			for j := 0; j < enc.Stats().Coords; j++ {
				er.Features = append(er.Features, featureReport{Name: names[j], Kind: enc.Kind(j).String()})
			}
		}
		for _, m := range pl.Models {
			er.Models = append(er.Models, describeModel(m, pl))
		}
		rep.Entries = append(rep.Entries, er)
	}
	return rep
}

// describeModel restores m's learner (a private copy) and describes it.
func describeModel(m consumer.ModelSummary, pl consumer.Payload) modelReport {
	r := modelReport{Name: m.Name, Spec: m.Spec, Updates: m.Updates, Labeled: m.Stats.Labeled, Mistakes: m.Stats.Mistakes, Resets: m.Stats.Resets, StateBytes: len(m.State)}
	r.Learner, _, _ = learner.ParseSpec(m.Spec)
	if m.Alt != nil {
		r.Candidates = append(r.Candidates, "regression: "+m.Alt.Spec)
	}
	if m.MultiAlt != nil {
		r.Candidates = append(r.Candidates, "multi-class: "+m.MultiAlt.Spec)
	}
	dim := max(pl.Dim, 1)
	var info learner.Info
	var l learner.Learner
	var mc learner.Multi
	if m.Multi {
		r.Task = "multiclass"
		for _, c := range m.Classes {
			if pl.Labels != nil {
				r.Classes = append(r.Classes, pl.Labels.ClassNameOf(c))
			}
		}
		var err error
		mc, err = learner.NewMulti(m.Spec, dim)
		if err == nil {
			err = mc.UnmarshalBinary(m.State)
		}
		if err != nil {
			r.Error = err.Error()
			return r
		}
		info = mc.Info()
		if m.Stats.Labeled > 0 {
			r.MistakeRatePct = fptr(100 * m.Stats.MistakeRate())
		}
	} else {
		var err error
		l, err = learner.New(m.Spec, dim)
		if err == nil {
			err = l.UnmarshalBinary(m.State)
		}
		if err != nil {
			r.Error = err.Error()
			return r
		}
		info = l.Info()
		r.Task = info.Task.String()
		if m.Stats.Labeled > 0 {
			if info.Task == learner.Classification {
				r.MistakeRatePct = fptr(100 * m.Stats.MistakeRate())
			} else {
				r.MSE = fptr(m.Stats.MSE())
			}
		}
		if info.Task == learner.Classification {
			r.CalibA, r.CalibB = fptr(m.Calib.A), fptr(m.Calib.B)
		}
	}
	r.Budget, r.Used, r.Bytes = info.Budget, info.Used, info.Bytes
	if _, kv, err := learner.ParseSpec(m.Spec); err == nil {
		if v, err := strconv.ParseFloat(kv["sigma"], 64); err == nil {
			r.Sigma = fptr(v)
		}
	}
	var d learner.StateDescription
	if l != nil {
		d = learner.DescribeState(l)
	} else if mc != nil {
		d = learner.DescribeMultiState(mc)
	}
	{
		if d.SigmaHat > 0 {
			r.SigmaHat = fptr(d.SigmaHat)
		}
		r.WarmingUp, r.AutoBase = d.WarmingUp, d.Base
		for _, mm := range d.Members {
			mr := memberReport{Learner: mm.Learner, SigmaFactor: mm.SigmaFactor, Params: mm.Params, Weight: mm.Weight, Loss: mm.Loss}
			if mm.SigmaFactor > 0 && d.SigmaHat > 0 {
				mr.Sigma = fptr(mm.SigmaFactor * d.SigmaHat)
			}
			r.Members = append(r.Members, mr)
		}
	}
	return r
}

// writeModelReport prints rep as text.
func writeModelReport(w io.Writer, rep modelFileReport, f *modelfile.File) {
	fmt.Fprintf(w, "model file by %s (okstream %s)\n  from: %s\n", rep.Creator, rep.Okstream, rep.From)
	for i, e := range rep.Entries {
		fmt.Fprintf(w, "\nentry %d: %s (%s), next offset %d, payload %d bytes\n", i, e.Source, e.Kind, e.NextOffset, e.PayloadBytes)
		fmt.Fprintf(w, "  dimension %d, %d impressions awaiting feedback\n", e.Dim, e.Pending)
		if e.Labels != "" {
			fmt.Fprintf(w, "  labels: %s\n", e.Labels)
		}
		pl, _ := consumer.DescribePayload(f.Entries[i].Payload)
		writeFeatures(w, pl)
		for _, m := range e.Models {
			fmt.Fprintf(w, "  model %s: %s\n", m.Name, m.Spec)
			if m.Error != "" {
				fmt.Fprintf(w, "    state does not restore: %s\n", m.Error)
				continue
			}
			stat := ""
			switch {
			case m.MistakeRatePct != nil:
				stat = fmt.Sprintf(", mistake rate %.3f%%", *m.MistakeRatePct)
			case m.MSE != nil:
				stat = fmt.Sprintf(", MSE %.4g", *m.MSE)
			}
			fmt.Fprintf(w, "    task %s, %d updates, %d labelled%s", m.Task, m.Updates, m.Labeled, stat)
			if m.Resets > 0 {
				fmt.Fprintf(w, ", reset %d times", m.Resets)
			}
			fmt.Fprintf(w, "\n    size: budget %d, used %d, %d bytes in memory, state %d bytes\n", m.Budget, m.Used, m.Bytes, m.StateBytes)
			if len(m.Classes) > 0 {
				fmt.Fprintf(w, "    classes: %s\n", strings.Join(m.Classes, ", "))
			}
			if m.CalibA != nil && m.CalibB != nil {
				fmt.Fprintf(w, "    probability (when the learner has none of its own): σ(%.4g·score %+.4g)\n", *m.CalibA, *m.CalibB)
			}
			if m.Sigma != nil {
				fmt.Fprintf(w, "    σ = %.4g\n", *m.Sigma)
			}
			if m.SigmaHat != nil {
				warm := ""
				if m.WarmingUp {
					warm = " (provisional: still warming up)"
				}
				fmt.Fprintf(w, "    σ̂ = %.4g (sigma=auto, median trick)%s\n", *m.SigmaHat, warm)
			}
			if m.AutoBase != "" {
				fmt.Fprintf(w, "    auto keeps %d members (base %s):\n", len(m.Members), m.AutoBase)
				for _, mm := range m.Members {
					sig := ""
					if mm.Sigma != nil {
						sig = fmt.Sprintf(" σ = %g·σ̂ = %.4g", mm.SigmaFactor, *mm.Sigma)
					} else if mm.SigmaFactor > 0 {
						sig = fmt.Sprintf(" σ = %g·σ̂", mm.SigmaFactor)
					}
					fmt.Fprintf(w, "      %-8s weight %.4f, loss %.4g%s  %s\n", mm.Learner, mm.Weight, mm.Loss, sig, mm.Params)
				}
			}
			for _, c := range m.Candidates {
				fmt.Fprintf(w, "    candidate (the task is undecided): %s\n", c)
			}
		}
	}
}
