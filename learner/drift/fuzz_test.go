package drift

import (
	"testing"
)

// FuzzUnmarshal: no state bytes make UnmarshalBinary panic, and a state
// it accepts works and round-trips (go test -fuzz FuzzUnmarshal).
func FuzzUnmarshal(f *testing.F) {
	xs := driftStream(26, 3000)
	for _, mk := range stateMakers {
		d := mk.mk(f)
		alarms(d, xs)
		b, err := d.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, mk := range stateMakers {
			d := mk.mk(t)
			if d.UnmarshalBinary(b) != nil {
				continue
			}
			for _, x := range xs[:200] {
				d.Add(x)
			}
			again := mk.mk(t)
			if err := again.UnmarshalBinary(mustMarshal(t, d)); err != nil {
				t.Fatalf("%s: accepted state does not round-trip: %v", mk.name, err)
			}
		}
	})
}
