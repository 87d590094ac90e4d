package share

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"
)

// Authenticated control records (issue 37).
//
// The records that steer other instances — the sync topic's deltas and
// decisions, and the effectively-once headers of output records and dead
// letters (consumer/dedup.go) — can carry an HMAC-SHA-256 under a secret
// shared by the instances of a group, in the Kafka header HeaderMAC. The
// record bytes themselves are unchanged (a reader of an older build ignores
// the header), and the MAC is a function of the record alone, so the same
// input and seed still give the same bytes.
//
// The MAC proves that a holder of the secret wrote the record; it does not
// prove that the record is recent (a copy of an old signed record is valid:
// the readers' checks of epochs, slots and offsets, which bind what the MAC
// covers to where it is used, and the topic's ACLs, stand against that).

// HeaderMAC is the Kafka header that carries a record's MAC (base64url,
// unpadded, of the 32-byte HMAC-SHA-256).
const HeaderMAC = "okstream-mac"

// MinSecretBytes is the least length of a control secret.
const MinSecretBytes = 32

// MACLen is the length of an encoded MAC header value.
var MACLen = base64.RawURLEncoding.EncodedLen(sha256.Size)

// Domain separators: a MAC of one kind of record never verifies another.
const (
	domainSync   = "okstream-sync-v1\x00"
	domainOutput = "okstream-output-v1\x00"
)

// ErrSecretTooShort refuses a secret shorter than MinSecretBytes.
var ErrSecretTooShort = fmt.Errorf("a control secret must hold at least %d bytes (make one with: head -c 32 /dev/urandom | base64 > secret)", MinSecretBytes)

// Auth signs and verifies control records under a secret (and, for a
// rotation, accepts the previous ones too). The zero value and nil sign
// nothing. Safe for concurrent use.
type Auth struct {
	secrets [][]byte // [0] signs; every one verifies
	pools   []sync.Pool
}

// NewAuth returns an Auth that signs with secret and verifies under secret
// and every one of previous (nil if secret is empty). Each must hold at
// least MinSecretBytes.
func NewAuth(secret []byte, previous ...[]byte) (*Auth, error) {
	if len(secret) == 0 {
		if len(previous) > 0 {
			return nil, errors.New("previous control secrets without a current one")
		}
		return nil, nil
	}
	a := &Auth{}
	for _, s := range append([][]byte{secret}, previous...) {
		if len(s) < MinSecretBytes {
			return nil, ErrSecretTooShort
		}
		a.secrets = append(a.secrets, append([]byte(nil), s...))
	}
	a.pools = make([]sync.Pool, len(a.secrets))
	for i := range a.pools {
		key := a.secrets[i]
		a.pools[i].New = func() any { return &macState{h: hmac.New(sha256.New, key)} }
	}
	return a, nil
}

// Enabled reports whether a is set (records are signed and checked).
func (a *Auth) Enabled() bool { return a != nil && len(a.secrets) > 0 }

// macState is a pooled HMAC with its scratch (kept with it so that
// nothing escapes per call).
type macState struct {
	h   hash.Hash
	n   [8]byte
	hdr [9]byte // an output claim's unit and kind
	raw [sha256.Size]byte
}

func (m *macState) part(p []byte) {
	putLen(&m.n, len(p))
	m.h.Write(m.n[:])
	m.h.Write(p)
}

// sum appends the encoded MAC of the parts (c may be nil: two parts) under
// secret i to dst.
func (a *Auth) sum(dst []byte, i int, domain string, pa, pb, pc []byte, three bool) []byte {
	return a.sumUnit(dst, i, domain, pa, pb, pc, three, 0, 0)
}

// sumUnit is sum, with pb replaced by the unit and kind when kind is not 0
// (encoded in the pooled scratch: nothing escapes).
func (a *Auth) sumUnit(dst []byte, i int, domain string, pa, pb, pc []byte, three bool, unit int64, kind byte) []byte {
	m := a.pools[i].Get().(*macState)
	m.h.Reset()
	m.h.Write(domainBytes(domain))
	m.part(pa)
	if kind != 0 {
		putI64(m.hdr[:], unit)
		m.hdr[8] = kind
		pb = m.hdr[:]
	}
	m.part(pb)
	if three {
		m.part(pc)
	}
	dst = base64.RawURLEncoding.AppendEncode(dst, m.h.Sum(m.raw[:0]))
	a.pools[i].Put(m)
	return dst
}

var (
	domainSyncBytes   = []byte(domainSync)
	domainOutputBytes = []byte(domainOutput)
)

func domainBytes(d string) []byte {
	if d == domainSync {
		return domainSyncBytes
	}
	return domainOutputBytes
}

func putLen(b *[8]byte, n int) {
	for i := range b {
		b[i] = byte(uint64(n) >> (8 * i))
	}
}

// verify reports whether mac is the MAC of the parts under one of the
// secrets.
func (a *Auth) verify(mac []byte, domain string, pa, pb, pc []byte, three bool) bool {
	if len(mac) != MACLen {
		return false
	}
	var buf [64]byte
	for i := range a.secrets {
		if hmac.Equal(a.sum(buf[:0], i, domain, pa, pb, pc, three), mac) {
			return true
		}
	}
	return false
}

// SyncMAC appends the MAC of a sync-topic record (its key and value) to dst.
func (a *Auth) SyncMAC(dst, key, value []byte) []byte {
	return a.sum(dst, 0, domainSync, key, value, nil, false)
}

// VerifySync reports whether mac is a valid MAC of the sync record.
func (a *Auth) VerifySync(mac, key, value []byte) bool {
	return a.verify(mac, domainSync, key, value, nil, false)
}

// SyncVerifier returns a writer to stream a sync record's value through
// (after its key) and a function reporting whether mac is valid for what
// was written, for a reader that does not keep the value (one it skips).
// It checks against the current secret only.
func (a *Auth) SyncVerifier(key []byte, valueLen int) (io.Writer, func(mac []byte) bool) {
	h := hmac.New(sha256.New, a.secrets[0])
	io.WriteString(h, domainSync)
	var n [8]byte
	putLen(&n, len(key))
	h.Write(n[:])
	h.Write(key)
	putLen(&n, valueLen)
	h.Write(n[:])
	return h, func(mac []byte) bool {
		var raw [sha256.Size]byte
		var enc [64]byte
		return len(mac) == MACLen && hmac.Equal(base64.RawURLEncoding.AppendEncode(enc[:0], h.Sum(raw[:0])), mac)
	}
}

// OutputMAC appends to dst the MAC of an output record's effectively-once
// claim: the consumer group, the unit (okstream-unit), the kind ('p': a
// prediction, whose value holds the source topic, partition and offset;
// 'd': a dead letter, whose okstream-source header does) and that value or
// header.
func (a *Auth) OutputMAC(dst []byte, group []byte, unit int64, kind byte, claim []byte) []byte {
	return a.sumUnit(dst, 0, domainOutput, group, nil, claim, true, unit, outputKind(kind))
}

// outputKind maps a claim's kind to a non-zero byte ('p' unless 'd').
func outputKind(kind byte) byte {
	if kind == 'd' {
		return 'd'
	}
	return 'p'
}

// VerifyOutput reports whether mac is a valid MAC of the claim (source for
// a dead letter, value for a prediction; see OutputMAC).
func (a *Auth) VerifyOutput(mac []byte, group []byte, unit int64, kind byte, source, value []byte) bool {
	claim := value
	if kind == 'd' {
		claim = source
	}
	if len(mac) != MACLen {
		return false
	}
	var buf [64]byte
	for i := range a.secrets {
		if hmac.Equal(a.sumUnit(buf[:0], i, domainOutput, group, nil, claim, true, unit, outputKind(kind)), mac) {
			return true
		}
	}
	return false
}

func putI64(b []byte, v int64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(uint64(v) >> (8 * i))
	}
}
