package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"okstream/dataset/kuairec"
)

const committedSample = "../../testdata/kuairec-synthetic"

// okstream demo --feedback on the committed SYNTHETIC KuaiRec sample: the
// delayed-feedback pipeline with a crash completes, recovers exactly, and
// both models' mistake rates, computed from the prediction topic's outcome
// records, beat always predicting the stream's majority class.
func TestDemoFeedbackKuaiRec(t *testing.T) {
	s, err := kuairec.Open(committedSample, kuairec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pos := 0
	for i := range s.Events {
		if s.Events[i].Label(s.Options.Thresh()) > 0 {
			pos++
		}
	}
	majority := 100 * float64(min(pos, len(s.Events)-pos)) / float64(len(s.Events))

	var out, errb bytes.Buffer
	code := runDemo([]string{"--data", "kuairec:" + committedSample, "--feedback", "--partitions", "2",
		"--model", "forks=forks:sigma=2,budget=50", "--model", "nogd=nogd:sigma=2,budget=50"}, &out, &errb)
	o := out.String()
	if code != 0 {
		t.Fatalf("demo exited %d:\n%s\n%s", code, o, errb.String())
	}
	for _, want := range []string{
		"computed from the prediction topic",
		"outcome records",
		"the same counts as the models' own checkpointed statistics",
		"SYNTHETIC",
		"exact recovery: every partition's final models are bit-identical",
		"killed the consumer at",
	} {
		if !strings.Contains(o+errb.String(), want) {
			t.Errorf("the output lacks %q:\n%s\n%s", want, o, errb.String())
		}
	}
	events := 2 * int64(len(s.Events)) // an impression and a feedback event each
	if !strings.Contains(o, "Result after "+strconv.FormatInt(events, 10)+" events") {
		t.Errorf("want %d events (impressions and feedback):\n%s", events, o)
	}
	for _, name := range []string{"forks", "nogd"} {
		m := regexp.MustCompile(`(?m)^  ` + name + ` +progressive mistake rate +([0-9.]+)% +\((\d+) mistakes in (\d+) labelled events\)`).FindStringSubmatch(o)
		if m == nil {
			t.Fatalf("no mistake rate for %s:\n%s", name, o)
		}
		rate, _ := strconv.ParseFloat(m[1], 64)
		if m[3] != strconv.Itoa(len(s.Events)) {
			t.Errorf("%s: %s labelled events, want one per interaction (%d)", name, m[3], len(s.Events))
		}
		if rate >= majority {
			t.Errorf("%s: mistake rate %.2f%%, not below the majority-class rate %.2f%%", name, rate, majority)
		}
		t.Logf("SYNTHETIC KuaiRec, delayed feedback: %s %.2f%% (majority class %.2f%%)", name, rate, majority)
	}
}

// --feedback needs KuaiRec data, and the feedback flags need --feedback:
// both are refused at start with a message that says how to fix it.
func TestDemoFeedbackRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--feedback"}, "--feedback needs KuaiRec data: add --data kuairec:DIR"},
		{[]string{"--feedback", "--data", "german"}, "--feedback needs KuaiRec data: add --data kuairec:DIR"},
		{[]string{"--feedback-buffer", "10"}, "--feedback-buffer applies only with --feedback"},
		{[]string{"--feedback", "--data", "kuairec:" + committedSample, "--events", "100"}, "--events does not apply with --feedback"},
		{[]string{"--feedback", "--data", "kuairec:" + committedSample, "--feedback-buffer", "0"}, "--feedback-buffer 0"},
	} {
		var out, errb bytes.Buffer
		code := runDemo(c.args, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("demo %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(c.args, " "), code, errb.String(), c.want)
		}
		if out.Len() > 0 {
			t.Errorf("demo %s: started anyway:\n%s", strings.Join(c.args, " "), out.String())
		}
	}
}
