package main

import (
	"bytes"
	"strings"
	"testing"
)

// okstream eval --data drift:KIND,... runs a generated drift stream in its
// order (each run its own draw): a classification stream with the default
// and linear models, a regression stream with the default model (the
// labels decide), and a classification model on a regression stream is
// refused.
func TestEvalDriftStreams(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"eval", "--quiet", "--runs", "2", "--data", "drift:sea,n=3000", "--model", "auto", "--model", "linear"}, &out, &errb); code != 0 {
		t.Fatalf("sea: exit %d: %s", code, errb.String())
	}
	if s := out.String(); !strings.Contains(s, "drift:sea") || !strings.Contains(s, "classification") || !strings.Contains(s, "class prior") {
		t.Fatalf("sea:\n%s", s)
	}
	out.Reset()
	if code := run([]string{"eval", "--quiet", "--runs", "1", "--data", "drift:friedman,n=2000"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "regression") {
		t.Fatalf("friedman: exit %d:\n%s\n%s", code, out.String(), errb.String())
	}
	errb.Reset()
	if code := run([]string{"eval", "--quiet", "--runs", "1", "--data", "drift:friedman,n=2000", "--model", "fogd"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "regression stream") {
		t.Fatalf("a classifier on friedman: exit %d: %s", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"eval", "--quiet", "--data", "drift:sea,bogus=1"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "bogus") {
		t.Fatalf("a bad key: exit %d: %s", code, errb.String())
	}
}

// A multi-class drift stream (led) runs multi-class without --task, in its
// order; asked for binary it is refused with the flag to use.
func TestEvalDriftMultiClass(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"eval", "--quiet", "--runs", "1", "--data", "drift:led,n=3000"}, &out, &errb); code != 0 {
		t.Fatalf("led: exit %d: %s", code, errb.String())
	}
	if s := out.String(); !strings.Contains(s, "drift:led") || !strings.Contains(s, "multiclass") || !strings.Contains(s, "class prior") {
		t.Fatalf("led:\n%s", s)
	}
	errb.Reset()
	if code := run([]string{"eval", "--quiet", "--runs", "1", "--task", "binary", "--data", "drift:led,n=3000"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--task multiclass") {
		t.Fatalf("led as binary: exit %d: %s", code, errb.String())
	}
}
