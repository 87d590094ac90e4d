package modelfile

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func sample() *File {
	return &File{
		Header: Header{Creator: "test", Okstream: "v0", From: "unit test"},
		Entries: []Entry{
			{Kind: KindCheckpoint, Group: "g", Topic: "events", Partition: 3, NextOffset: 120, Payload: []byte("payload-3")},
			{Kind: KindEval, Topic: "a9a", NextOffset: 32561, Payload: bytes.Repeat([]byte{7}, 1000)},
		},
	}
}

func TestModelFileRoundTrip(t *testing.T) {
	f := sample()
	b, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := Marshal(sample())
	if !bytes.Equal(b, b2) {
		t.Fatal("Marshal is not deterministic")
	}
	g, err := Read(bytes.NewReader(b), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f, g) {
		t.Fatalf("round trip: got %+v, want %+v", g, f)
	}
	if _, err := Read(bytes.NewReader(b), Limits{MaxBytes: int64(len(b) - 1)}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
	if _, err := Read(bytes.NewReader(b), Limits{MaxBytes: int64(len(b))}); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
}

func TestModelFileDamage(t *testing.T) {
	b, _ := Marshal(sample())
	check := func(name string, data []byte, want error, text string) {
		t.Helper()
		_, err := Unmarshal(data)
		if !errors.Is(err, want) || !strings.Contains(err.Error(), text) {
			t.Errorf("%s: error %v, want %v containing %q", name, err, want, text)
		}
	}
	for _, n := range []int{0, 3, 8, 15, 20, len(b) / 2, len(b) - 1} {
		want := error(ErrTruncated)
		if n == 0 {
			want = ErrNotModelFile
		}
		check("truncated", b[:n], want, "")
	}
	check("not a model file", []byte("hello, world, this is text"), ErrNotModelFile, "magic")
	v := append([]byte(nil), b...)
	v[8] = 9
	check("version", v, ErrVersion, "version 9")
	// A flipped byte inside entry 1's payload: the SHA-256 fails and the CRC names the entry.
	c := append([]byte(nil), b...)
	i := bytes.Index(c, bytes.Repeat([]byte{7}, 10))
	c[i+5] ^= 1
	check("payload bit flip", c, ErrChecksum, "entry 1 (eval:a9a)")
	// The checksum itself damaged.
	s := append([]byte(nil), b...)
	s[len(s)-1] ^= 0xff
	check("checksum bit flip", s, ErrChecksum, "SHA-256")
	check("trailing bytes", append(append([]byte(nil), b...), 0), ErrMalformed, "trailing")
}

// TestModelFileForged: right checksums around a wrong structure (a
// forged entry count) is ErrMalformed, never a large allocation.
func TestModelFileForged(t *testing.T) {
	f := &File{Header: Header{Creator: "x"}}
	b, _ := Marshal(f)
	// The entry count is the body's last 4 bytes: declare 2^31 entries.
	body := b[prefixLen : len(b)-sumLen]
	body[len(body)-1] = 0x80
	b = reseal(b)
	if _, err := Unmarshal(b); !errors.Is(err, ErrMalformed) {
		t.Fatalf("forged count: %v", err)
	}
}

func reseal(b []byte) []byte {
	out := append([]byte(nil), b[:len(b)-sumLen]...)
	sum := sha(out)
	return append(out, sum...)
}

func FuzzModelFile(f *testing.F) {
	b, _ := Marshal(sample())
	f.Add(b)
	f.Add(b[:40])
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(data []byte) {
			g, err := Unmarshal(data)
			if err != nil {
				for _, want := range []error{ErrNotModelFile, ErrVersion, ErrTruncated, ErrTooLarge, ErrChecksum, ErrMalformed} {
					if errors.Is(err, want) {
						return
					}
				}
				t.Fatalf("error %v wraps none of the package's errors", err)
			}
			// What decodes re-encodes to the same bytes.
			again, err := Marshal(g)
			if err != nil || !bytes.Equal(again, data) {
				t.Fatalf("decoded file re-encodes differently (err %v)", err)
			}
		}
		check(data)
		// The same bytes with a valid SHA-256, so that mutations reach the
		// structure behind the checksum.
		if len(data) > sumLen {
			check(reseal(data))
		}
	})
}

func sha(b []byte) []byte { s := sha256.Sum256(b); return s[:] }
