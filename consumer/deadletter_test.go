package consumer

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/segmentio/kafka-go"
)

// Which write errors are final for the record (never retried as it is) and
// which are retried.
func TestRefusedClassifiesWriteErrors(t *testing.T) {
	tooLarge := kafka.MessageTooLargeError{Message: kafka.Message{Value: []byte("x")}}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{tooLarge, true},
		{kafka.MessageSizeTooLarge, true},
		{fmt.Errorf("produce: %w", kafka.RecordListTooLarge), true},
		{kafka.InvalidMessageSize, true},
		{kafka.InvalidRecord, true},
		{kafka.InvalidTimestamp, true},
		{kafka.WriteErrors{nil, kafka.MessageSizeTooLarge, kafka.InvalidRecord}, true},
		{kafka.WriteErrors{nil, nil}, false},
		// Transient, or fixed by an operator for every record at once.
		{kafka.WriteErrors{kafka.MessageSizeTooLarge, kafka.NotEnoughReplicas}, false},
		{kafka.NotEnoughReplicas, false},
		{kafka.InvalidMessage, false}, // CORRUPT_MESSAGE: a checksum failure in transit
		{kafka.TopicAuthorizationFailed, false},
		{kafka.UnknownTopicOrPartition, false},
		{kafka.RequestTimedOut, false},
		{errors.New("dial tcp: connection refused"), false},
	} {
		if got := refused(c.err); got != c.want {
			t.Errorf("refused(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestDeadLetterMsgTruncation(t *testing.T) {
	key, value := []byte(strings.Repeat("k", 30)), []byte(strings.Repeat("v", 100))
	whole := deadLetterMsg(key, value, 130, "r", "d", "t/0/1")
	if string(whole.Key) != string(key) || string(whole.Value) != string(value) || header(whole, HeaderTruncated) != "" {
		t.Fatalf("a record of exactly the limit was cut: %+v", whole)
	}
	cut := deadLetterMsg(key, value, 129, "r", "d", "t/0/1")
	if len(cut.Key) != 30 || len(cut.Value) != 99 || header(cut, HeaderTruncated) != "true" ||
		header(cut, HeaderKeyBytes) != "30" || header(cut, HeaderValueBytes) != "100" || header(cut, HeaderSource) != "t/0/1" {
		t.Fatalf("cut to 129: key %d, value %d, headers %v", len(cut.Key), len(cut.Value), cut.Headers)
	}
	if &cut.Value[0] == &value[0] {
		t.Fatal("a truncated value must be a copy (the original is not pinned)")
	}
	longKey := deadLetterMsg([]byte(strings.Repeat("k", 100)), value, 60, "r", "d", "s")
	if len(longKey.Key) != 30 || len(longKey.Value) != 30 {
		t.Fatalf("a long key keeps half the limit: key %d, value %d", len(longKey.Key), len(longKey.Value))
	}
	nilKey := deadLetterMsg(nil, value, 10, "r", "d", "s")
	if nilKey.Key != nil || len(nilKey.Value) != 10 {
		t.Fatalf("a null key stays null: %q, value %d", nilKey.Key, len(nilKey.Value))
	}
	detail := deadLetterMsg(nil, nil, 10, "r", strings.Repeat("é", 2000), "s")
	if d := header(detail, HeaderDetail); len(d) > maxDetailBytes || !utf8.ValidString(d) || !strings.HasSuffix(d, "(cut)") {
		t.Fatalf("detail of %d bytes not cut to %d on a rune boundary", len(d), maxDetailBytes)
	}
	ref := referenceOnly(whole)
	if ref.Key != nil || ref.Value != nil || header(ref, HeaderTruncated) != "true" || header(ref, HeaderValueBytes) != "100" || header(ref, HeaderReason) != "r" {
		t.Fatalf("reference-only dead letter: %+v", ref)
	}
	if ref2 := referenceOnly(cut); header(ref2, HeaderValueBytes) != "100" || len(ref2.Headers) != len(cut.Headers) {
		t.Fatalf("a truncated dead letter's reference keeps the original sizes once: %v", ref2.Headers)
	}
}

// The writers' record limits follow the topic's max.message.bytes, below
// kafka-go's 1,000,000-byte writer limit.
func TestRecordLimit(t *testing.T) {
	for topicMax, want := range map[int]int{0: 1000000, 1048588: 1000000, 20000: 20000 - recordHeadroom, 100: 2 * deadLetterHeaderRoom} {
		if got := recordLimit(topicMax); got != want {
			t.Errorf("recordLimit(%d) = %d, want %d", topicMax, got, want)
		}
	}
}
