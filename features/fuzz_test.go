package features

import (
	"bytes"
	"math"
	"testing"

	"okstream/codec"
)

// FuzzUnmarshal: arbitrary state bytes never panic; an accepted state
// round-trips to the same bytes and then encodes without panicking.
func FuzzUnmarshal(f *testing.F) {
	cfg := Config{Dim: 32, MaxValuesPerName: 4}
	e := New(cfg)
	r := rng(5)
	var fl []codec.Field
	for ev := 0; ev < 20; ev++ {
		fl = event(&r, 0.2, fl)
		e.Encode(fl[:10], nil)
	}
	good, _ := e.MarshalBinary()
	f.Add(good)
	empty, _ := New(cfg).MarshalBinary()
	f.Add(empty)
	f.Fuzz(func(t *testing.T, b []byte) {
		d := New(cfg)
		if d.UnmarshalBinary(b) != nil {
			return
		}
		again, _ := d.MarshalBinary()
		if !bytes.Equal(again, b) {
			t.Fatal("accepted state does not round-trip")
		}
		d.Encode(fl, nil)
	})
}

// FuzzEncode: arbitrary fields (names, kinds, values, repeats) never panic,
// keep the vector's length Dim with finite values, and two encoders given
// the same fields agree bit for bit, as does one restored from the state.
func FuzzEncode(f *testing.F) {
	f.Add([]byte("a\x00b\x01c\x02d\x03a\x02"), uint8(3), false)
	f.Add([]byte("x\x02y\x02z\x02"), uint8(1), true)
	f.Fuzz(func(t *testing.T, data []byte, maxv uint8, refuse bool) {
		cfg := Config{Dim: 8, MaxValuesPerName: 1 + int(maxv%8)}
		if refuse {
			cfg.Missing = MissingRefuse
		}
		a, b := New(cfg), New(cfg)
		var fields []codec.Field
		var xa, xb []float64
		for i := 0; i+1 < len(data); i += 2 {
			name := string(data[i : i+1])
			k := codec.FieldKind(data[i+1] % 5)
			fl := codec.Field{Name: name, Kind: k}
			switch k {
			case codec.FieldNumber:
				fl.Num = float64(int8(data[i+1]))
				if data[i+1] == 255 {
					fl.Num = math.NaN()
				}
			case codec.FieldString:
				fl.Str = string(data[i+1 : i+2])
			}
			fields = append(fields, fl)
			if len(fields) == 3 || i+3 >= len(data) {
				ea, erra := a.Encode(fields, xa)
				eb, errb := b.Encode(fields, xb)
				xa, xb = ea, eb
				if (erra == nil) != (errb == nil) || len(xa) != cfg.Dim {
					t.Fatalf("errors %v %v, len %d", erra, errb, len(xa))
				}
				for j := range xa {
					if math.Float64bits(xa[j]) != math.Float64bits(xb[j]) || math.IsNaN(xa[j]) || math.IsInf(xa[j], 0) {
						t.Fatalf("coordinate %d: %v vs %v", j, xa[j], xb[j])
					}
				}
				s, _ := a.MarshalBinary()
				b = New(cfg)
				if err := b.UnmarshalBinary(s); err != nil {
					t.Fatalf("own state refused: %v", err)
				}
				fields = fields[:0]
			}
		}
	})
}
