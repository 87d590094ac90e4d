package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"okstream/checkpoint"
	"okstream/codec"
	"okstream/consumer"
	"okstream/dataset"
	"okstream/eval"
	"okstream/features"
	"okstream/internal/kafkatest"
	"okstream/learner/rng"
	"okstream/modelfile"
)

// namedCSV writes a CSV of named features (a missing number, a categorical
// column) with labels 0/1.
func namedCSV(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("amount,country,label\n")
	countries := []string{"FR", "DE", "US"}
	for i := 0; i < n; i++ {
		a := float64(i%37) / 37
		c := countries[i%3]
		y := 0
		if a > 0.5 || c == "DE" {
			y = 1
		}
		amount := fmt.Sprint(a)
		if i%11 == 0 {
			amount = ""
		}
		fmt.Fprintf(&b, "%s,%s,%d\n", amount, c, y)
	}
	path := filepath.Join(t.TempDir(), "d.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// okstream eval --save writes the first run's trained learners (state bytes
// equal to eval's own run 0), model inspect describes them, and score
// gives, row by row, the learner's own score and probability on the row
// encoded by the saved encoder.
func TestModelSaveInspectScore(t *testing.T) {
	data := namedCSV(t, 400)
	okm := filepath.Join(t.TempDir(), "m.okm")
	specs := []string{"fogd:budget=20,sigma=1", "auto:base=fogd"}
	args := []string{"eval", "--quiet", "--runs", "2", "--data", data, "--label", "label", "--save", okm}
	for _, s := range specs {
		args = append(args, "--model", s)
	}
	var out, errb bytes.Buffer
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("eval --save: exit %d: %s", code, errb.String())
	}
	first, _ := os.ReadFile(okm)
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("eval --save again: %s", errb.String())
	}
	if again, _ := os.ReadFile(okm); !bytes.Equal(first, again) {
		t.Fatal("eval --save with the same flags wrote different bytes")
	}
	// eval's own run 0, captured.
	ds, err := dataset.Load(data, dataset.Options{Label: "label", ClassNames: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.BinaryLabels(nil); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	finals := map[string]eval.FinalModel{}
	res, err := eval.Run(ds, specs, nil, eval.Config{Runs: 1, Seed: 1, Workers: 1, Final: func(m eval.FinalModel) {
		mu.Lock()
		finals[m.Spec] = m
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(okm)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modelfile.Read(fh, modelfile.Limits{})
	fh.Close()
	if err != nil || len(f.Entries) != 1 || f.Entries[0].Kind != modelfile.KindEval || f.Entries[0].NextOffset != 400 {
		t.Fatalf("model file: %v %+v", err, f)
	}
	pl, err := consumer.DescribePayload(f.Entries[0].Payload)
	if err != nil || len(pl.Models) != 2 || pl.FeatureKind != "named" || pl.Labels == nil || pl.Labels.Task.String() != "binary" {
		t.Fatalf("payload: %v %+v", err, pl)
	}
	type ref struct {
		fm    eval.FinalModel
		calib eval.Platt
	}
	var refs []ref
	for i, mr := range res.Models {
		fm := finals[mr.Chosen]
		st, _ := fm.Learner.MarshalBinary()
		if !bytes.Equal(st, pl.Models[i].State) || pl.Models[i].Spec != mr.Chosen || pl.Models[i].Updates != 400 {
			t.Fatalf("model %d (%s): the saved state is not eval's run 0 (spec %s, updates %d)", i, mr.Chosen, pl.Models[i].Spec, pl.Models[i].Updates)
		}
		if pl.Models[i].Calib != fm.Calib {
			t.Fatalf("model %d: calibration %+v, eval's %+v", i, pl.Models[i].Calib, fm.Calib)
		}
		refs = append(refs, ref{fm, fm.Calib})
	}

	// inspect --json
	out.Reset()
	if code := run([]string{"model", "inspect", okm, "--json"}, &out, &errb); code != 0 {
		t.Fatalf("inspect: %s", errb.String())
	}
	var rep modelFileReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	e := rep.Entries[0]
	if rep.Creator != "okstream eval --save" || e.Task != "binary" || e.FeatureKind != "named" || len(e.Features) == 0 || len(e.Models) != 2 {
		t.Fatalf("inspect: %+v", rep)
	}
	fogd, auto := e.Models[0], e.Models[1]
	if fogd.Name != "fogd" || fogd.Sigma == nil || *fogd.Sigma != 1 || fogd.Updates != 400 || fogd.MistakeRatePct == nil || fogd.Error != "" {
		t.Fatalf("inspect fogd: %+v", fogd)
	}
	wsum := 0.0
	for _, m := range auto.Members {
		wsum += m.Weight
	}
	if auto.Name != "auto" || auto.AutoBase != "fogd" || len(auto.Members) == 0 || math.Abs(wsum-1) > 1e-9 || auto.SigmaHat == nil {
		t.Fatalf("inspect auto: %+v", auto)
	}
	out.Reset()
	if code := run([]string{"model", "inspect", "--in", okm}, &out, &errb); code != 0 || !strings.Contains(out.String(), "auto keeps") || !strings.Contains(out.String(), "σ̂ = ") {
		t.Fatalf("inspect text: exit %d\n%s", code, out.String())
	}

	// score: every row, as the learner scores it on the row encoded by
	// the saved encoder (a fresh copy per row: score never learns).
	out.Reset()
	if code := run([]string{"score", "--model", okm, "--data", data, "--label", "label"}, &out, &errb); code != 0 {
		t.Fatalf("score: exit %d: %s", code, errb.String())
	}
	encState, _ := pl.Features.MarshalBinary()
	sc := bufio.NewScanner(&out)
	rows := 0
	for ; sc.Scan(); rows++ {
		p, err := codec.DecodePredictionJSON(sc.Bytes())
		if err != nil || int(p.Offset) != rows || len(p.Models) != 2 {
			t.Fatalf("row %d: %v %+v", rows, err, p)
		}
		enc := features.New(pl.Features.Config())
		if err := enc.UnmarshalBinary(encState); err != nil {
			t.Fatal(err)
		}
		x, _ := enc.Encode(ds.Named.Records[rows], nil)
		for i, r := range refs {
			s := r.fm.Learner.Predict(x)
			prob := r.calib.Prob(s)
			if pf := eval.ProbabilityOf(r.fm.Learner); pf != nil {
				prob = pf(s)
			}
			m := p.Models[i]
			if m.Score != s || m.Prob != prob || m.Decision != codec.Decision(s) || m.Updates != 400 {
				t.Fatalf("row %d model %s: score %v prob %v, the learner's %v %v", rows, m.Name, m.Score, m.Prob, s, prob)
			}
		}
	}
	if rows != 400 {
		t.Fatalf("%d rows scored", rows)
	}
	// CSV out: the same scores.
	out.Reset()
	if code := run([]string{"score", "--model", okm, "--data", data, "--label", "label", "--output-format", "csv", "--limit", "2"}, &out, &errb); code != 0 {
		t.Fatalf("score csv: %s", errb.String())
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 3 || lines[0] != "row,id,class,fogd_score,fogd_decision,fogd_prob,auto_score,auto_decision,auto_prob" {
		t.Fatalf("csv:\n%s", out.String())
	}
}

// eval --save refuses what the pipeline could not use as it is.
func TestModelSaveRefusals(t *testing.T) {
	data := namedCSV(t, 50)
	for _, tc := range []struct{ args, want string }{
		{"--scale minmax11", "--save with --scale"},
		{"--positive 1", "--save with --positive"},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"eval", "--quiet", "--runs", "1", "--data", data, "--label", "label", "--model", "linear", "--save", filepath.Join(t.TempDir(), "x.okm")}, strings.Fields(tc.args)...)
		if code := run(args, &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%s: exit %d, stderr %s", tc.args, code, errb.String())
		}
	}
}

// Damaged, truncated and foreign files are refused with an error that
// says which, by inspect, score and import alike.
func TestModelFileRejected(t *testing.T) {
	data := namedCSV(t, 60)
	dir := t.TempDir()
	okm := filepath.Join(dir, "m.okm")
	var out, errb bytes.Buffer
	if code := run([]string{"eval", "--quiet", "--runs", "1", "--data", data, "--label", "label", "--model", "linear", "--save", okm}, &out, &errb); code != 0 {
		t.Fatalf("eval: %s", errb.String())
	}
	good, _ := os.ReadFile(okm)
	flip := append([]byte(nil), good...)
	flip[len(flip)/2] ^= 0x10
	ver := append([]byte(nil), good...)
	ver[len(modelfile.Magic)] = 7
	for name, tc := range map[string]struct {
		b    []byte
		want string
	}{
		"truncated": {good[:len(good)-40], "truncated"},
		"flipped":   {flip, "checksum mismatch"},
		"version":   {ver, "unknown model file version 7"},
		"foreign":   {[]byte("amount,country,label\n1,FR,0\n"), "not an okstream model file"},
		"empty":     {nil, "not an okstream model file"},
	} {
		p := filepath.Join(dir, name+".okm")
		os.WriteFile(p, tc.b, 0o644)
		for _, args := range [][]string{{"model", "inspect", p}, {"score", "--model", p, "--data", data, "--label", "label"},
			{"model", "import", "--brokers", "127.0.0.1:1", "--input", "x", "--in", p}} {
			out.Reset()
			errb.Reset()
			if code := run(args, &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("%s: %v: exit %d, stderr %q", name, args[:2], code, errb.String())
			}
		}
	}
}

// A model exported from a real pipeline's checkpoint scores the events
// after the checkpoint exactly as the pipeline published them (unlabelled
// events: the models do not change), and imported into another group it
// makes okstream run resume from the imported models: the same records
// again.
func TestModelExportScoreImportPipeline(t *testing.T) {
	e := kafkatest.New(t)
	in := e.Name("events")
	e.CreateTopic(t, in, 1, nil)
	const dim, n1, n2 = 3, 500, 150
	src := rng.New(7)
	var msgs []kafka.Message
	var jsonl bytes.Buffer
	for i := 0; i < n1+n2; i++ {
		x := make([]float64, dim)
		for j := range x {
			x[j] = 2*src.Float64() - 1
		}
		ev := codec.Event{Version: 1, ID: fmt.Sprintf("e%d", i), X: x}
		if i < n1 {
			ev.Y, ev.HasY = -1, true
			if x[0]*x[1] > 0 {
				ev.Y = 1
			}
		} else {
			b, err := codec.AppendEventJSON(nil, &ev)
			if err != nil {
				t.Fatal(err)
			}
			jsonl.Write(append(b, '\n'))
		}
		b, _ := codec.AppendEvent(nil, &ev)
		msgs = append(msgs, kafka.Message{Value: b})
	}
	brokers := strings.Join(e.Brokers, ",")
	ckpt := e.Name("ckpt")
	env := func(k string) string { return map[string]string{"OKSTREAM_BROKERS": brokers}[k] }
	models := []string{"--model", "champion=fogd:sigma=1,budget=20", "--model", "lin=linear"}
	runUntil := func(group, output string, want int) []codec.Prediction {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int)
		var out, errb kafkatest.SyncBuffer
		go func() {
			done <- runRunContext(ctx, append([]string{"--input", in, "--output", output, "--dim", fmt.Sprint(dim), "--group", group, "--checkpoint-topic", ckpt,
				"--metrics-addr", "", "--session-timeout", "6s", "--heartbeat-interval", "300ms", "--checkpoint-every", "100000"}, models...), &out, &errb, env)
		}()
		deadline := time.Now().Add(60 * time.Second)
		var recs []kafkatest.Record
		for {
			recs, _ = kafkatest.ReadAll(context.Background(), e.Client, output)
			if len(recs) >= want {
				break
			}
			if time.Now().After(deadline) {
				cancel()
				<-done
				t.Fatalf("%s: %d of %d predictions; stderr:\n%s", group, len(recs), want, errb.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
		cancel()
		if code := <-done; code != 0 {
			t.Fatalf("run %s exited %d:\n%s", group, code, errb.String())
		}
		var ps []codec.Prediction
		for _, r := range recs {
			p, err := codec.DecodePrediction(r.Value)
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
		return ps
	}
	// The labelled head: a pipeline learns it and checkpoints at shutdown.
	e.Produce(t, in, msgs[:n1]...)
	g1 := e.Name("g1")
	runUntil(g1, in+".p1", n1)
	okm := filepath.Join(t.TempDir(), "exported.okm")
	var out, errb bytes.Buffer
	if code := run([]string{"model", "export", "--brokers", brokers, "--checkpoint-topic", ckpt, "--group", g1, "--input", in, "--out", okm}, &out, &errb); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errb.String())
	}
	fh, _ := os.Open(okm)
	f, err := modelfile.Read(fh, modelfile.Limits{})
	fh.Close()
	if err != nil || len(f.Entries) != 1 || f.Entries[0].NextOffset != n1 || f.Entries[0].Partition != 0 {
		t.Fatalf("exported file: %v %+v", err, f)
	}
	// The unlabelled tail: the restored pipeline publishes its predictions.
	e.Produce(t, in, msgs[n1:]...)
	all := runUntil(g1, in+".p1", n1+n2)
	pipe := map[int64]codec.Prediction{}
	for _, p := range all {
		if p.Offset >= n1 {
			pipe[p.Offset] = p
		}
	}
	if len(pipe) != n2 {
		t.Fatalf("%d pipeline predictions after the checkpoint, want %d", len(pipe), n2)
	}
	// score on the same events.
	data := filepath.Join(t.TempDir(), "tail.jsonl")
	os.WriteFile(data, jsonl.Bytes(), 0o644)
	out.Reset()
	if code := run([]string{"score", "--model", okm, "--data", data}, &out, &errb); code != 0 {
		t.Fatalf("score: exit %d: %s", code, errb.String())
	}
	same := func(what string, off int64, a, b codec.Prediction) {
		t.Helper()
		if len(a.Models) != len(b.Models) || a.ID != b.ID || a.Class != b.Class {
			t.Fatalf("%s offset %d: %+v vs %+v", what, off, a, b)
		}
		for i := range a.Models {
			x, y := a.Models[i], b.Models[i]
			if x.Name != y.Name || math.Float64bits(x.Score) != math.Float64bits(y.Score) || x.Decision != y.Decision ||
				math.Float64bits(x.Prob) != math.Float64bits(y.Prob) || x.HasProb != y.HasProb || x.Updates != y.Updates {
				t.Fatalf("%s offset %d model %s: %+v vs the pipeline's %+v", what, off, x.Name, x, y)
			}
		}
	}
	sc := bufio.NewScanner(&out)
	rows := 0
	for ; sc.Scan(); rows++ {
		p, err := codec.DecodePredictionJSON(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		same("score", int64(n1+rows), p, pipe[int64(n1+rows)])
	}
	if rows != n2 {
		t.Fatalf("score wrote %d rows, want %d", rows, n2)
	}
	// import into a new group, resuming where the checkpoint did: a fresh
	// pipeline of that group publishes the same records for the tail.
	g2 := e.Name("g2")
	imp := []string{"model", "import", "--brokers", brokers, "--checkpoint-topic", ckpt, "--group", g2, "--input", in, "--in", okm, "--start-offset", "file"}
	if code := run(imp, &out, &errb); code != 0 {
		t.Fatalf("import: exit %d: %s", code, errb.String())
	}
	errb.Reset()
	if code := run(imp, &out, &errb); code != 2 || !strings.Contains(errb.String(), "already has checkpoints") {
		t.Fatalf("a second import without --force: exit %d: %s", code, errb.String())
	}
	got := runUntil(g2, in+".p2", n2)
	if len(got) != n2 {
		t.Fatalf("the imported group published %d records, want %d (from offset %d)", len(got), n2, n1)
	}
	for _, p := range got {
		same("import", p.Offset, p, pipe[p.Offset])
	}
	if code := run(append(imp, "--force"), &out, &errb); code != 0 {
		t.Fatalf("import --force: exit %d: %s", code, errb.String())
	}
}

// Multi-class (class names) and regression models saved by eval score as
// eval's run 0 predicts: the class of highest probability, named as the
// file names it, and the regression value.
func TestModelSaveMultiAndRegression(t *testing.T) {
	dir := t.TempDir()
	var mc, rg strings.Builder
	mc.WriteString("a,b,animal\n")
	rg.WriteString("a,b,target\n")
	src := rng.New(3)
	names := []string{"cat", "dog", "eel"}
	for i := 0; i < 300; i++ {
		a, b := src.Float64(), src.Float64()
		k := 0
		switch {
		case a > 0.6:
			k = 1
		case b > 0.5:
			k = 2
		}
		fmt.Fprintf(&mc, "%v,%v,%s\n", a, b, names[(k+i/150)%3]) // the first rows meet dog before cat
		fmt.Fprintf(&rg, "%v,%v,%v\n", a, b, 3*a-b+0.1*src.Float64())
	}
	paths := []string{filepath.Join(dir, "mc.csv"), filepath.Join(dir, "rg.csv")}
	os.WriteFile(paths[0], []byte(mc.String()), 0o644)
	os.WriteFile(paths[1], []byte(rg.String()), 0o644)
	for i, tc := range []struct {
		spec, label string
		multi       bool
	}{{"fogd:budget=30,sigma=1", "animal", true}, {"linear:loss=square", "target", false}} {
		okm := filepath.Join(dir, fmt.Sprintf("%d.okm", i))
		var out, errb bytes.Buffer
		if code := run([]string{"eval", "--quiet", "--runs", "1", "--data", paths[i], "--label", tc.label, "--model", tc.spec, "--save", okm}, &out, &errb); code != 0 {
			t.Fatalf("eval %s: %s", tc.spec, errb.String())
		}
		ds, err := dataset.Load(paths[i], dataset.Options{Label: tc.label, ClassNames: true})
		if err != nil {
			t.Fatal(err)
		}
		var fm eval.FinalModel
		res, err := eval.Run(ds, []string{tc.spec}, nil, eval.Config{Runs: 1, Seed: 1, Workers: 1, MultiClass: tc.multi, Final: func(m eval.FinalModel) { fm = m }})
		if err != nil {
			t.Fatal(err)
		}
		out.Reset()
		if code := run([]string{"score", "--model", okm, "--data", paths[i], "--label", tc.label}, &out, &errb); code != 0 {
			t.Fatalf("score: %s", errb.String())
		}
		sc := bufio.NewScanner(&out)
		row := 0
		for ; sc.Scan(); row++ {
			p, err := codec.DecodePredictionJSON(sc.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			m := p.Models[0]
			if !tc.multi {
				if s := fm.Learner.Predict(ds.X[row]); m.Score != s {
					t.Fatalf("regression row %d: score %v, eval's learner %v", row, m.Score, s)
				}
				continue
			}
			q := fm.Multi.PredictProba(ds.X[row], make([]float64, fm.Multi.Classes()))
			best := 0
			for j := range q {
				if q[j] > q[best] {
					best = j
				}
			}
			if want := res.Classes[fm.Classes[best]]; m.Class != want || p.Class != want || m.Score != q[best] {
				t.Fatalf("multi-class row %d: class %q (record %q) p %v, eval's learner %q p %v", row, m.Class, p.Class, m.Score, want, q[best])
			}
		}
		if row != 300 {
			t.Fatalf("%d rows", row)
		}
	}
	// Multi-class auto: inspect lists the members it keeps and their weights.
	okm := filepath.Join(dir, "auto.okm")
	var out, errb bytes.Buffer
	if code := run([]string{"eval", "--quiet", "--runs", "1", "--data", paths[0], "--label", "animal", "--model", "auto", "--save", okm}, &out, &errb); code != 0 {
		t.Fatalf("eval auto: %s", errb.String())
	}
	out.Reset()
	if code := run([]string{"model", "inspect", okm, "--json"}, &out, &errb); code != 0 {
		t.Fatalf("inspect: %s", errb.String())
	}
	var rep modelFileReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	m := rep.Entries[0].Models[0]
	wsum := 0.0
	for _, mm := range m.Members {
		wsum += mm.Weight
	}
	if m.Task != "multiclass" || len(m.Classes) != 3 || m.AutoBase != "fogd" || len(m.Members) == 0 || math.Abs(wsum-1) > 1e-9 || m.SigmaHat == nil {
		t.Fatalf("inspect multi-class auto: %+v", m)
	}
}

// export of every partition, and import's partition mappings: same, a
// SRC:DST list, all (one entry everywhere), refused mappings.
func TestModelExportImportPartitions(t *testing.T) {
	e := kafkatest.New(t)
	in := e.Name("events")
	e.CreateTopic(t, in, 2, nil)
	e.Produce(t, in, events(400, 3, 5)...)
	brokers := strings.Join(e.Brokers, ",")
	ckpt := e.Name("ckpt")
	g1 := e.Name("g1")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var errb kafkatest.SyncBuffer
	go func() {
		done <- runRunContext(ctx, []string{"--input", in, "--dim", "3", "--group", g1, "--checkpoint-topic", ckpt, "--model", "m=fogd:sigma=1,budget=10",
			"--metrics-addr", "", "--session-timeout", "6s", "--heartbeat-interval", "300ms"}, &errb, &errb,
			func(k string) string { return map[string]string{"OKSTREAM_BROKERS": brokers}[k] })
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if recs, _ := kafkatest.ReadAll(context.Background(), e.Client, in+".predictions"); len(recs) >= 400 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no predictions: %s", errb.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("run: %s", errb.String())
	}
	dir := t.TempDir()
	okm := filepath.Join(dir, "all.okm")
	one := filepath.Join(dir, "one.okm")
	var out, eb bytes.Buffer
	base := []string{"--brokers", brokers, "--checkpoint-topic", ckpt, "--input", in}
	cmd := func(want int, args ...string) string {
		t.Helper()
		out.Reset()
		eb.Reset()
		if code := run(append(args, base...), &out, &eb); code != want {
			t.Fatalf("%v: exit %d, want %d: %s", args, code, want, eb.String())
		}
		return eb.String()
	}
	cmd(0, "model", "export", "--group", g1, "--out", okm)
	cmd(0, "model", "export", "--group", g1, "--partition", "1", "--out", one)
	read := func(p string) *modelfile.File {
		fh, _ := os.Open(p)
		defer fh.Close()
		f, err := modelfile.Read(fh, modelfile.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	all := read(okm)
	if len(all.Entries) != 2 || all.Entries[0].Partition != 0 || all.Entries[1].Partition != 1 || all.Entries[0].NextOffset+all.Entries[1].NextOffset != 400 {
		t.Fatalf("export of every partition: %+v", all.Entries)
	}
	if f := read(one); len(f.Entries) != 1 || !bytes.Equal(f.Entries[0].Payload, all.Entries[1].Payload) {
		t.Fatal("export --partition 1 differs from the full export's entry")
	}
	store, err := checkpoint.OpenExisting(context.Background(), checkpoint.Config{Brokers: e.Brokers, Topic: ckpt})
	if err != nil {
		t.Fatal(err)
	}
	payloadOf := func(group string, p int) *checkpoint.Checkpoint {
		cp, _, err := store.Load(context.Background(), checkpoint.ID{Group: group, Topic: in, Partition: p})
		if err != nil || cp == nil {
			t.Fatalf("%s/%d: %v", group, p, err)
		}
		return cp
	}
	g2, g3 := e.Name("g2"), e.Name("g3")
	cmd(0, "model", "import", "--group", g2, "--in", okm, "--partitions", "0:1,1:0", "--start-offset", "latest")
	for p := 0; p < 2; p++ {
		if cp := payloadOf(g2, p); !bytes.Equal(cp.Payload, all.Entries[1-p].Payload) {
			t.Fatalf("--partitions 0:1,1:0: partition %d got the wrong entry", p)
		}
	}
	cmd(0, "model", "import", "--group", g3, "--in", one, "--partitions", "all", "--to-offset", "0")
	for p := 0; p < 2; p++ {
		if cp := payloadOf(g3, p); !bytes.Equal(cp.Payload, all.Entries[1].Payload) || cp.NextOffset != 0 {
			t.Fatalf("--partitions all: partition %d: offset %d", p, cp.NextOffset)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--group", e.Name("g4"), "--in", okm, "--partitions", "all"}, "--partitions all gives one model set"},
		{[]string{"--group", e.Name("g4"), "--in", okm, "--partitions", "5:0"}, "no entry of partition 5"},
		{[]string{"--group", e.Name("g4"), "--in", one, "--partitions", "1:7"}, "has 2 partitions"},
		{[]string{"--group", e.Name("g4"), "--in", okm, "--to-offset", "100000"}, "outside what"},
		{[]string{"--group", g1, "--in", okm, "--start-offset", "file"}, "already has checkpoints"},
		{[]string{"--group", e.Name("g4"), "--in", okm, "--start-offset", "soon"}, "use earliest, latest or file"},
	} {
		if msg := cmd(2, append([]string{"model", "import"}, tc.args...)...); !strings.Contains(msg, tc.want) {
			t.Errorf("%v: %s, want %q", tc.args, msg, tc.want)
		}
	}
	// Nothing was written for a refused import.
	if cp, _, _ := store.Load(context.Background(), checkpoint.ID{Group: e.Name("g4"), Topic: in, Partition: 0}); cp != nil {
		t.Fatal("a refused import wrote a checkpoint")
	}
}

// A model trained by okstream eval --save seeds a pipeline: imported to
// every partition, okstream run with the spec inspect prints restores it
// (its updates go on from eval's) and publishes for each event what
// okstream score gives for it.
func TestModelEvalSaveSeedsPipeline(t *testing.T) {
	dir := t.TempDir()
	const dim = 3
	src := rng.New(11)
	var csv strings.Builder
	csv.WriteString("a,b,c,y\n")
	row := func() ([]float64, float64) {
		x := []float64{2*src.Float64() - 1, 2*src.Float64() - 1, 2*src.Float64() - 1}
		y := -1.0
		if x[0]*x[1] > 0 {
			y = 1
		}
		return x, y
	}
	for i := 0; i < 300; i++ {
		x, y := row()
		fmt.Fprintf(&csv, "%v,%v,%v,%v\n", x[0], x[1], x[2], y)
	}
	data := filepath.Join(dir, "train.csv")
	os.WriteFile(data, []byte(csv.String()), 0o644)
	okm := filepath.Join(dir, "m.okm")
	var out, errb bytes.Buffer
	if code := run([]string{"eval", "--quiet", "--runs", "1", "--data", data, "--label", "y", "--model", "fogd:budget=20,sigma=1", "--save", okm}, &out, &errb); code != 0 {
		t.Fatalf("eval: %s", errb.String())
	}
	fh, _ := os.Open(okm)
	f, err := modelfile.Read(fh, modelfile.Limits{})
	fh.Close()
	if err != nil {
		t.Fatal(err)
	}
	pl, _ := consumer.DescribePayload(f.Entries[0].Payload)
	spec := pl.Models[0].Spec

	e := kafkatest.New(t)
	in := e.Name("events")
	e.CreateTopic(t, in, 2, nil)
	var msgs []kafka.Message
	var jsonl bytes.Buffer
	for i := 0; i < 100; i++ {
		x, _ := row()
		ev := codec.Event{Version: 1, ID: fmt.Sprintf("e%d", i), Key: fmt.Sprint(i % 5), X: x} // unlabelled: the models stay eval's
		b, _ := codec.AppendEvent(nil, &ev)
		j, _ := codec.AppendEventJSON(nil, &ev)
		jsonl.Write(append(j, '\n'))
		msgs = append(msgs, kafka.Message{Key: []byte(ev.Key), Value: b})
	}
	e.Produce(t, in, msgs...)
	brokers := strings.Join(e.Brokers, ",")
	ckpt, group := e.Name("ckpt"), e.Name("g")
	if code := run([]string{"model", "import", "--brokers", brokers, "--checkpoint-topic", ckpt, "--group", group, "--input", in, "--in", okm, "--partitions", "all"}, &out, &errb); code != 0 {
		t.Fatalf("import: %s", errb.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var rerr kafkatest.SyncBuffer
	go func() {
		done <- runRunContext(ctx, []string{"--input", in, "--dim", fmt.Sprint(dim), "--group", group, "--checkpoint-topic", ckpt, "--model", "fogd=" + spec,
			"--metrics-addr", "", "--session-timeout", "6s", "--heartbeat-interval", "300ms"}, &rerr, &rerr,
			func(k string) string { return map[string]string{"OKSTREAM_BROKERS": brokers}[k] })
	}()
	deadline := time.Now().Add(60 * time.Second)
	var recs []kafkatest.Record
	for {
		if recs, _ = kafkatest.ReadAll(context.Background(), e.Client, in+".predictions"); len(recs) >= 100 {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("%d predictions: %s", len(recs), rerr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("run: %s", rerr.String())
	}
	pipe := map[string]codec.Prediction{}
	for _, r := range recs {
		p, err := codec.DecodePrediction(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		pipe[p.ID] = p
	}
	jpath := filepath.Join(dir, "events.jsonl")
	os.WriteFile(jpath, jsonl.Bytes(), 0o644)
	out.Reset()
	if code := run([]string{"score", "--model", okm, "--data", jpath}, &out, &errb); code != 0 {
		t.Fatalf("score: %s", errb.String())
	}
	sc := bufio.NewScanner(&out)
	n := 0
	for ; sc.Scan(); n++ {
		p, err := codec.DecodePredictionJSON(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		q, ok := pipe[p.ID]
		if !ok || len(q.Models) != 1 {
			t.Fatalf("%s: no pipeline record", p.ID)
		}
		a, b := p.Models[0], q.Models[0]
		if a.Score != b.Score || a.Prob != b.Prob || a.Decision != b.Decision || b.Updates != 300 || a.Updates != 300 || p.Class != q.Class {
			t.Fatalf("%s: score %+v, pipeline %+v (the pipeline must restore eval's model: 300 updates)", p.ID, a, b)
		}
	}
	if n != 100 {
		t.Fatalf("%d rows", n)
	}
}
