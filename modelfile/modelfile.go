// Package modelfile reads and writes okstream model files: a versioned,
// checksummed file holding one or more models, each the checkpoint payload
// of one partition exactly as the pipeline writes it to the checkpoint topic
// (package consumer encodes and decodes those payloads:
// consumer.DescribePayload, consumer.NewScorer).
//
// # Format (version 1)
//
// All integers little-endian, strings and byte strings prefixed by a u32
// length (the encoding of package learner/state):
//
//	magic        8 bytes  "OKMODEL\x00"
//	version      u32      1
//	body length  u64      bytes of body that follow
//	body:
//	  creator    string   the command that wrote the file ("okstream model export", "okstream eval --save")
//	  okstream   string   the okstream version that wrote it
//	  from       string   where the models come from (brokers and topic, or the dataset and flags)
//	  entries    u32      count, then per entry:
//	    kind         string  "checkpoint" (a partition's checkpoint) or "eval" (trained by okstream eval)
//	    group        string  consumer group ("" for eval)
//	    topic        string  input topic (eval: the dataset's name)
//	    partition    i64     input partition (eval: 0)
//	    next offset  i64     the first input offset the payload does not reflect (eval: events trained on)
//	    payload      bytes   the checkpoint payload
//	    crc          u32     CRC-32C (Castagnoli) of the entry's bytes above
//	sha256       32 bytes SHA-256 of everything before it (magic to body end)
//
// # Guarantees
//
// Write is deterministic: the same File gives the same bytes (no time is
// recorded). Read treats its input as hostile: it never panics, reads at
// most Limits.MaxBytes (+1, to tell an over-long file) from the reader,
// allocates at most about twice what it read, and every error says what is
// wrong: ErrNotModelFile (no magic), ErrVersion (a format version this build
// does not read), ErrTruncated (fewer bytes than the header declares),
// ErrTooLarge (over the limit), ErrChecksum (the SHA-256 or an entry's CRC
// does not match: the file was damaged; the entry is named when its CRC
// tells which), ErrMalformed (checksums right but the structure wrong:
// forged, or a bug). The payloads themselves are decoded by package
// consumer, which validates them as it validates checkpoints.
package modelfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"okstream/learner/state"
)

// Magic starts every model file.
const Magic = "OKMODEL\x00"

// Version is the format version Write writes and Read reads.
const Version = 1

// Entry kinds.
const (
	KindCheckpoint = "checkpoint" // a partition's checkpoint (okstream model export)
	KindEval       = "eval"       // models trained by okstream eval --save
)

// DefaultMaxBytes is Limits.MaxBytes's default: 1 GiB, the checkpoint
// store's default bound on one payload (checkpoint.DefaultMaxStateBytes).
const DefaultMaxBytes = 1 << 30

// MaxEntries bounds the entry count a file may declare (a pipeline's input
// topic has at most this many partitions in practice).
const MaxEntries = 1 << 16

// Errors Read returns (wrapped, with details).
var (
	ErrNotModelFile = errors.New("not an okstream model file")
	ErrVersion      = errors.New("unknown model file version")
	ErrTruncated    = errors.New("model file truncated")
	ErrTooLarge     = errors.New("model file too large")
	ErrChecksum     = errors.New("model file checksum mismatch (the file is damaged)")
	ErrMalformed    = errors.New("model file malformed")
)

// Header describes who wrote the file and from what.
type Header struct {
	Creator  string // e.g. "okstream model export"
	Okstream string // okstream version
	From     string // e.g. "brokers localhost:9092, topic okstream.checkpoints"
}

// Entry is one model set: the checkpoint payload of one partition (or of
// one okstream eval training), with where it comes from.
type Entry struct {
	Kind       string // KindCheckpoint or KindEval
	Group      string
	Topic      string
	Partition  int
	NextOffset int64
	Payload    []byte
}

// String names the entry for messages: group/topic/partition, or eval:topic.
func (e Entry) String() string {
	if e.Kind == KindEval {
		return "eval:" + e.Topic
	}
	return fmt.Sprintf("%s/%s/%d", e.Group, e.Topic, e.Partition)
}

// File is a model file's content.
type File struct {
	Header  Header
	Entries []Entry
}

// Limits bound what Read accepts.
type Limits struct {
	// MaxBytes bounds the file's size (0: DefaultMaxBytes).
	MaxBytes int64
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

const (
	prefixLen = len(Magic) + 4 + 8
	sumLen    = sha256.Size
)

// Marshal encodes f (deterministically).
func Marshal(f *File) ([]byte, error) {
	if len(f.Entries) > MaxEntries {
		return nil, fmt.Errorf("modelfile: %d entries, at most %d", len(f.Entries), MaxEntries)
	}
	size := 3*4 + len(f.Header.Creator) + len(f.Header.Okstream) + len(f.Header.From) + 4
	for _, e := range f.Entries {
		if e.Kind != KindCheckpoint && e.Kind != KindEval {
			return nil, fmt.Errorf("modelfile: entry %s: kind %q, want %q or %q", e, e.Kind, KindCheckpoint, KindEval)
		}
		if e.Partition < 0 || e.NextOffset < 0 {
			return nil, fmt.Errorf("modelfile: entry %s: partition %d, next offset %d: both must be 0 or more", e, e.Partition, e.NextOffset)
		}
		size += entrySize(e)
	}
	b := make([]byte, 0, prefixLen+size+sumLen)
	b = append(b, Magic...)
	b = binary.LittleEndian.AppendUint32(b, Version)
	b = binary.LittleEndian.AppendUint64(b, uint64(size))
	enc := state.NewEncoder(size)
	enc.String(f.Header.Creator)
	enc.String(f.Header.Okstream)
	enc.String(f.Header.From)
	enc.U32(uint32(len(f.Entries)))
	for _, e := range f.Entries {
		start := len(enc.Bytes())
		enc.String(e.Kind)
		enc.String(e.Group)
		enc.String(e.Topic)
		enc.Int(e.Partition)
		enc.I64(e.NextOffset)
		enc.Blob(e.Payload)
		enc.U32(crc32.Checksum(enc.Bytes()[start:], crcTable))
	}
	b = append(b, enc.Bytes()...)
	sum := sha256.Sum256(b)
	return append(b, sum[:]...), nil
}

func entrySize(e Entry) int {
	return 4 + len(e.Kind) + 4 + len(e.Group) + 4 + len(e.Topic) + 8 + 8 + 4 + len(e.Payload) + 4
}

// Write writes f to w.
func Write(w io.Writer, f *File) error {
	b, err := Marshal(f)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Read reads a model file from r (see the package documentation for what
// it checks and its errors).
func Read(r io.Reader, lim Limits) (*File, error) {
	max := lim.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(r, max+1)); err != nil {
		return nil, fmt.Errorf("reading the model file: %w", err)
	}
	if int64(buf.Len()) > max {
		return nil, fmt.Errorf("%w: more than %d bytes (raise the limit: --max-bytes)", ErrTooLarge, max)
	}
	return Unmarshal(buf.Bytes())
}

// Unmarshal decodes a model file held in b (see Read). The entries'
// payloads are copies: b may be reused.
func Unmarshal(b []byte) (*File, error) {
	if len(b) < len(Magic) || string(b[:len(Magic)]) != Magic {
		if len(b) < len(Magic) && len(b) > 0 && string(b) == Magic[:len(b)] {
			return nil, fmt.Errorf("%w: %d bytes, shorter than the header", ErrTruncated, len(b))
		}
		return nil, fmt.Errorf("%w (no %q magic at its start)", ErrNotModelFile, Magic[:len(Magic)-1])
	}
	if len(b) < prefixLen {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the header (%d)", ErrTruncated, len(b), prefixLen)
	}
	if v := binary.LittleEndian.Uint32(b[len(Magic):]); v != Version {
		return nil, fmt.Errorf("%w %d: this build reads version %d (a newer okstream wrote it?)", ErrVersion, v, Version)
	}
	bodyLen := binary.LittleEndian.Uint64(b[len(Magic)+4:])
	have := uint64(len(b) - prefixLen)
	switch {
	case have < sumLen || bodyLen > have-sumLen:
		return nil, fmt.Errorf("%w: the header declares %d bytes of models and a 32-byte checksum, the file holds %d bytes after its header", ErrTruncated, bodyLen, have)
	case bodyLen < have-sumLen:
		return nil, fmt.Errorf("%w: %d trailing bytes after the checksum", ErrMalformed, have-sumLen-bodyLen)
	}
	end := prefixLen + int(bodyLen)
	sum := sha256.Sum256(b[:end])
	f, derr := decodeBody(b[prefixLen:end])
	if !bytes.Equal(sum[:], b[end:]) {
		var ce *crcError
		if errors.As(derr, &ce) {
			return nil, fmt.Errorf("%w: %v", ErrChecksum, derr)
		}
		return nil, fmt.Errorf("%w: SHA-256 of the content differs from the one recorded", ErrChecksum)
	}
	if derr != nil {
		return nil, derr
	}
	return f, nil
}

// crcError is an entry whose CRC does not match.
type crcError struct {
	index int
	name  string
}

func (e *crcError) Error() string {
	return fmt.Sprintf("entry %d (%s): CRC-32C mismatch", e.index, e.name)
}

// Unwrap makes a CRC mismatch an ErrChecksum also when the SHA-256 matches
// (a file whose checksum was recomputed over a damaged entry).
func (e *crcError) Unwrap() error { return ErrChecksum }

// decodeBody decodes the body; a CRC mismatch is a *crcError, a structural
// problem wraps ErrMalformed.
func decodeBody(body []byte) (*File, error) {
	d := state.NewDecoder(body)
	f := &File{Header: Header{Creator: d.String(), Okstream: d.String(), From: d.String()}}
	n := int(d.U32())
	if d.Err() == nil && n > MaxEntries {
		d.Fail("%d entries, at most %d", n, MaxEntries)
	}
	// Each entry takes at least 40 bytes: check before sizing the slice.
	if d.Need(n, 40, "entries") {
		f.Entries = make([]Entry, 0, n)
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		start := len(body) - d.Remaining()
		e := Entry{Kind: d.String(), Group: d.String(), Topic: d.String(), Partition: d.Int(), NextOffset: d.I64(), Payload: d.Blob()}
		stop := len(body) - d.Remaining()
		crc := d.U32()
		if d.Err() != nil {
			break
		}
		if crc32.Checksum(body[start:stop], crcTable) != crc {
			return nil, &crcError{index: i, name: e.String()}
		}
		if e.Kind != KindCheckpoint && e.Kind != KindEval {
			d.Fail("entry %d: kind %q", i, e.Kind)
		}
		if e.Partition < 0 || e.NextOffset < 0 {
			d.Fail("entry %d: partition %d, next offset %d", i, e.Partition, e.NextOffset)
		}
		f.Entries = append(f.Entries, e)
	}
	if err := d.Done(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return f, nil
}
