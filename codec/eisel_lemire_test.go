package codec

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestPow10Table recomputes every entry of pow10Table with math/big
// (floor(10^q · 2^k) in [2^127, 2^128)) and checks pow10Exp2 against the
// exact floor(log2(10^q)).
func TestPow10Table(t *testing.T) {
	ten := big.NewInt(10)
	mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 64), big.NewInt(1))
	for q := pow10MinExp; q <= pow10MaxExp; q++ {
		var m *big.Int
		var e2 int // floor(log2(10^q))
		if q >= 0 {
			x := new(big.Int).Exp(ten, big.NewInt(int64(q)), nil)
			e2 = x.BitLen() - 1
			if x.BitLen() > 128 {
				m = x.Rsh(x, uint(x.BitLen()-128))
			} else {
				m = x.Lsh(x, uint(128-x.BitLen()))
			}
		} else {
			d := new(big.Int).Exp(ten, big.NewInt(int64(-q)), nil)
			e2 = -d.BitLen() // 2^(n-1) < d < 2^n, so 2^-n < 10^q < 2^(1-n)
			m = new(big.Int).Lsh(big.NewInt(1), uint(d.BitLen()+127))
			m.Quo(m, d)
		}
		if m.BitLen() != 128 {
			t.Fatalf("1e%d: %d bits", q, m.BitLen())
		}
		hi := new(big.Int).Rsh(m, 64).Uint64()
		lo := new(big.Int).And(m, mask).Uint64()
		if got := pow10Table[q-pow10MinExp]; got != [2]uint64{hi, lo} {
			t.Errorf("1e%d: table %#x, want {%#x, %#x}", q, got, hi, lo)
		}
		if got := pow10Exp2(q); got != e2 {
			t.Errorf("pow10Exp2(%d) = %d, want %d", q, got, e2)
		}
	}
}

// TestEightDigits compares the SWAR digit reader with a byte loop on
// random eight-byte strings, mostly digits with one byte from the edges of
// the digit range (and the bytes whose +6 carries).
func TestEightDigits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	edge := []byte{'/', ':', '.', 'e', 'E', '-', '+', ' ', 0, 0x2a, 0x3a, 0x3f, 0x40, 0x39 + 0x10, 0x30 - 0x10, 0xb0, 0xf9, 0xfa, 0xff, 0x7f, 0x80}
	for i := 0; i < 200000; i++ {
		var b [8]byte
		for k := range b {
			b[k] = '0' + byte(rng.IntN(10))
		}
		switch rng.IntN(4) {
		case 0:
		case 1:
			b[rng.IntN(8)] = edge[rng.IntN(len(edge))]
		case 2:
			b[rng.IntN(8)] = byte(rng.IntN(256))
		default:
			for k := range b {
				if rng.IntN(3) == 0 {
					b[k] = byte(rng.IntN(256))
				}
			}
		}
		want, wok := uint64(0), true
		for _, c := range b {
			if c < '0' || c > '9' {
				wok = false
				break
			}
			want = want*10 + uint64(c-'0')
		}
		got, ok := eightDigits(b[:])
		if ok != wok || ok && got != want {
			t.Fatalf("%q: got %d %v, want %d %v", b[:], got, ok, want, wok)
		}
	}
}

// checkNumber parses s with jsonReader.number and with strconv.ParseFloat
// and fails unless they agree bit for bit (an ErrRange result is ±Inf or
// ±0, which number returns too) and number consumed all of s.
func checkNumber(t testing.TB, j *jsonReader, s string) {
	t.Helper()
	j.reset([]byte(s))
	v, _, _, _, e := j.number("x")
	want, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		t.Fatalf("%s: bad test input: %v", s, err)
	}
	if e != nil || math.Float64bits(v) != math.Float64bits(want) || j.p != len(s) {
		t.Fatalf("%s: got %v (%#x, %v, at %d), want %v (%#x)", s, v, math.Float64bits(v), e, j.p, want, math.Float64bits(want))
	}
}

// randomDigits appends n random digits: uniform, or runs of 9s and 0s (the
// carries of mant+1 and trailing zeros), the first one nonzero when
// nonzero is set.
func randomDigits(rng *rand.Rand, dst []byte, n int, nonzero bool) []byte {
	style := rng.IntN(8)
	for k := 0; k < n; k++ {
		var c byte
		switch {
		case style == 0:
			c = '9'
		case style == 1 && k > 0:
			c = '0'
		case style == 2 && k > n/2:
			c = "09"[rng.IntN(2)]
		default:
			c = '0' + byte(rng.IntN(10))
		}
		if k == 0 && nonzero && c == '0' {
			c = '1' + byte(rng.IntN(9))
		}
		dst = append(dst, c)
	}
	return dst
}

// randomNumber writes a random JSON number: 1–25 significant digits split
// between integer and fraction, leading zeros in the fraction, and an
// exponent that spans subnormals, overflow and far beyond.
func randomNumber(rng *rand.Rand, dst []byte) []byte {
	if rng.IntN(4) == 0 {
		dst = append(dst, '-')
	}
	n := 1 + rng.IntN(25)
	ni := rng.IntN(n + 1) // integer digits
	if rng.IntN(3) == 0 {
		ni = 0
	}
	if ni == 0 {
		dst = append(dst, '0')
	} else {
		dst = randomDigits(rng, dst, ni, true)
	}
	if nf := n - ni; nf > 0 {
		dst = append(dst, '.')
		if rng.IntN(3) == 0 && ni == 0 {
			dst = append(dst, strings.Repeat("0", rng.IntN(30))...)
		}
		dst = randomDigits(rng, dst, nf, ni == 0)
	}
	if rng.IntN(3) != 0 {
		dst = append(dst, "eE"[rng.IntN(2)])
		x := rng.IntN(700) - 360
		switch rng.IntN(20) {
		case 0:
			x = rng.IntN(200000) - 100000
		case 1:
			x = rng.IntN(50) - 25
		}
		switch {
		case x < 0:
			dst = append(dst, '-')
			x = -x
		case rng.IntN(2) == 0:
			dst = append(dst, '+')
		}
		if rng.IntN(10) == 0 {
			dst = append(dst, '0', '0')
		}
		dst = strconv.AppendInt(dst, int64(x), 10)
	}
	return dst
}

// exactDecimal returns the exact decimal expansion of m · 2^e.
func exactDecimal(m uint64, e int) string {
	x := new(big.Float).SetPrec(200).SetUint64(m)
	x.SetMantExp(x, e)
	s := x.Text('e', 800)
	mant, exp, _ := strings.Cut(s, "e")
	mant = strings.TrimRight(mant, "0")
	mant = strings.TrimSuffix(mant, ".")
	return mant + "e" + exp
}

// TestJSONNumberStrconv: number agrees with strconv.ParseFloat on random
// numbers of every shape (millions without -short), on exact halfway points
// between adjacent float64s (normal and subnormal) and those cut to 17–25
// digits or nudged by a trailing digit, and on hand-picked edge cases.
func TestJSONNumberStrconv(t *testing.T) {
	j := &jsonReader{}
	for _, s := range []string{"9007199254740993", "9007199254740992", "9007199254740995", "-0", "0e999999", "-0.0e-5",
		"0.0000000000000000000000000000", "0.00000000000000000000000001", "18446744073709551615", "18446744073709551616",
		"9999999999999999999", "99999999999999999999", "9999999999999999999.5", "10000000000000000000000000",
		"1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308", "2.2250738585072011e-308",
		"2.2250738585072014e-308", "4.9406564584124654e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
		"1e-400", "1e400", "123456789012345678901234567890e-30", "0.1234567890123456789012345", "7.2057594037927933e16",
		"1e23", "8.98846567431158e307", "5e-324", "1.00000000000000011102230246251565404236316680908203125",
		"1.00000000000000011102230246251565404236316680908203124", "1.00000000000000011102230246251565404236316680908203126"} {
		checkNumber(t, j, s)
	}
	rng := rand.New(rand.NewPCG(43, 1))
	n := 2000000
	if testing.Short() {
		n = 200000
	}
	buf := make([]byte, 0, 128)
	for i := 0; i < n; i++ {
		buf = randomNumber(rng, buf[:0])
		checkNumber(t, j, string(buf))
	}
	// Halfway points: (2m+1) · 2^(e-1) for m a random 53-bit mantissa (or a
	// small one, in the subnormals) and e across the range.
	halves := 100000
	if testing.Short() {
		halves = 10000
	}
	for i := 0; i < halves; i++ {
		m := uint64(1)<<52 | rng.Uint64N(1<<52)
		if rng.IntN(5) == 0 {
			m = rng.Uint64N(1 << 52)
		}
		e := rng.IntN(2098) - 1074 - 52
		if rng.IntN(3) == 0 {
			e = -1074
		}
		s := exactDecimal(2*m+1, e-1)
		checkNumber(t, j, s)
		mant, exp, _ := strings.Cut(s, "e")
		checkNumber(t, j, mant+"1e"+exp) // just above (or a digit beyond)
		if len(mant) > 20 {
			cut := 18 + rng.IntN(8)
			if cut < len(mant) {
				checkNumber(t, j, mant[:cut]+"e"+exp)
			}
		}
	}
}

var jsonNumberRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// FuzzJSONNumber: number never panics, agrees with strconv.ParseFloat bit
// for bit on what it accepts, and accepts exactly the JSON numbers (plus
// NaN, Infinity, -Infinity) among inputs it reads to the end.
func FuzzJSONNumber(f *testing.F) {
	for _, s := range []string{"0", "-0", "1.5", "9007199254740993", "0.30000000000000004", "1e23", "2.2250738585072011e-308",
		"4.9e-324", "1e-400", "1e400", "123456789012345678901234567890", "0.000000000000000000000000001234567890123456789",
		"-1.2345678901234567e-05", "NaN", "-Infinity", "1.", "01", "-", "1e", "1e+", "12345678.12345678e1"} {
		f.Add(s)
	}
	j := &jsonReader{}
	f.Fuzz(func(t *testing.T, s string) {
		j.reset([]byte(s))
		v, _, _, _, e := j.number("x")
		valid := jsonNumberRE.MatchString(s)
		if e != nil {
			if valid {
				t.Fatalf("%q: refused a JSON number: %v", s, e)
			}
			return
		}
		txt := s[:j.p]
		if j.p == len(s) && !valid && txt != "NaN" && txt != "Infinity" && txt != "-Infinity" {
			t.Fatalf("%q: accepted, not a JSON number", s)
		}
		if valid && j.p != len(s) {
			t.Fatalf("%q: stopped at %d", s, j.p)
		}
		want, err := strconv.ParseFloat(txt, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			t.Fatalf("%q: number accepted %q, strconv refuses it: %v", s, txt, err)
		}
		if math.Float64bits(v) != math.Float64bits(want) && !(math.IsNaN(v) && math.IsNaN(want)) {
			t.Fatalf("%q: got %v (%#x), strconv %v (%#x)", txt, v, math.Float64bits(v), want, math.Float64bits(want))
		}
	})
}
