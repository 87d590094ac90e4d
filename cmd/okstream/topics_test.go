package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"okstream/internal/kafkatest"
	"okstream/internal/kafkautil"
)

func TestTopicsCreate(t *testing.T) {
	e := kafkatest.New(t)
	brokers := strings.Join(e.Brokers, ",")
	in, ckpt := e.Name("tin"), e.Name("tckpt")
	topics := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := topicsCommand(context.Background(), args, &out, &errb, func(string) string { return "" })
		return code, out.String(), errb.String()
	}
	code, out, errs := topics("create", "--brokers", brokers, "--input", in, "--partitions", "3",
		"--checkpoint-topic", ckpt, "--checkpoint-partitions", "2", "--input-config", "retention.ms=-1")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	t.Logf("%s", out)
	for _, want := range []string{"created " + in + ": 3 partitions", "created " + in + ".predictions: 3 partitions",
		"created " + in + ".dlq: 3 partitions", "created " + ckpt + ": 2 partitions", "cleanup.policy=compact", "retention.ms=-1"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for topic, want := range map[string]string{ckpt: "compact", in: "delete"} {
		tc, err := kafkautil.TopicConfig(ctx, e.Client, topic, "cleanup.policy")
		if err != nil {
			t.Fatal(err)
		}
		if tc["cleanup.policy"] != want {
			t.Errorf("%s: cleanup.policy=%q, want %s", topic, tc["cleanup.policy"], want)
		}
	}
	// Again: everything exists, nothing changes.
	if code, out, errs := topics("create", "--brokers", brokers, "--input", in, "--partitions", "5", "--checkpoint-topic", ckpt); code != 0 ||
		strings.Count(out, "exists ") != 4 || !strings.Contains(out, in+": 3 partitions") {
		t.Errorf("second run: exit %d: %s%s", code, out, errs)
	}
	// An existing checkpoint topic that is not compacted is refused.
	plain := e.Name("tplain")
	e.CreateTopic(t, plain, 1, nil)
	if code, _, errs := topics("create", "--brokers", brokers, "--input", e.Name("tin2"), "--checkpoint-topic", plain); code != 1 ||
		!strings.Contains(errs, "cleanup.policy") {
		t.Errorf("non-compacted checkpoint topic: exit %d: %s", code, errs)
	}
	for _, bad := range [][]string{
		{"create", "--input", in},
		{"create", "--brokers", brokers},
		{"create", "--brokers", brokers, "--input", in, "--input-config", "retention.ms"},
		{"create", "--brokers", brokers, "--input", in, "--checkpoint-config", "cleanup.policy=delete"},
		{"create", "--brokers", brokers, "--input", in, "--output", in},
		{"delete", "--brokers", brokers},
		{},
	} {
		if code, _, errs := topics(bad...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q", bad, code, errs)
		}
	}
}
