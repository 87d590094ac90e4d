package features

// The named-feature encoder: a feature dictionary learned online in order of
// first appearance, capped at Dim coordinates; one-hot indicators for string
// values; mean imputation with a missing indicator.
//
// References: one-hot ("dummy") coding of categorical values and the
// missing-indicator method with mean imputation — Little & Rubin,
// Statistical Analysis with Missing Data (3rd ed., Wiley 2019), §3.4.2 and
// §3.4.3 (unconditional mean imputation; indicator method); the running mean
// and sum of squares — Welford, Technometrics 4(3), 1962. The alternative
// not taken, feature hashing — Weinberger et al., "Feature Hashing for Large
// Scale Multitask Learning", ICML 2009, §2 — is discussed in doc.go.
// Deviations from the textbook: the mean is the running mean of the values
// seen before the event (an online method has no complete column to average
// over), and the dictionary, the value lists and the missing indicators are
// allocated online in order of first appearance, capped (doc.go).

import (
	"errors"
	"fmt"
	"math"

	"okstream/codec"
	"okstream/learner/state"
)

// Missing is the policy for a missing value: a FieldMissing field (msgpack
// nil, JSON null, NaN) or a name the dictionary knows that the record leaves
// out.
type Missing uint8

const (
	// MissingImpute (the default): a numeric feature takes its running mean
	// and its missing-indicator coordinate (allocated on its first missing
	// value) is 1; a categorical feature has all its indicators 0 (and its
	// "name=<missing>" indicator 1 if Config.MissingCategory is set).
	MissingImpute Missing = iota
	// MissingRefuse: Encode returns a *MissingError and changes nothing; the
	// caller dead-letters the event (reason MissingReason).
	MissingRefuse
)

func (m Missing) String() string {
	switch m {
	case MissingImpute:
		return "impute"
	case MissingRefuse:
		return "refuse"
	}
	return fmt.Sprintf("Missing(%d)", uint8(m))
}

// ParseMissing reads a policy name ("impute" or "refuse").
func ParseMissing(s string) (Missing, error) {
	switch s {
	case "impute", "":
		return MissingImpute, nil
	case "refuse":
		return MissingRefuse, nil
	}
	return 0, fmt.Errorf("missing-value policy %q: want impute or refuse", s)
}

// DefaultMaxValuesPerName is Config.MaxValuesPerName when that is 0.
const DefaultMaxValuesPerName = 64

// MaxDim bounds Config.Dim (the state's sizes are checked against it).
const MaxDim = 1 << 20

// Config fixes an Encoder. Two encoders of equal Config given the same fields
// in the same order have bit-identical outputs and states.
type Config struct {
	// Dim is the output dimension D, the models' input dimension: the cap on
	// coordinates (1 ≤ Dim ≤ MaxDim).
	Dim int
	// MaxValuesPerName caps the indicator coordinates of one name's string
	// values (0: DefaultMaxValuesPerName, or Dim if smaller; at most Dim).
	// Later values share the name's
	// "name=<other>" coordinate.
	MaxValuesPerName int
	// Missing is the missing-value policy (default MissingImpute).
	Missing Missing
	// MissingCategory gives a categorical feature a "name=<missing>"
	// indicator, allocated on its first missing value, like a numeric one's
	// missing indicator. Off by default: all indicators 0 already tells a
	// missing category apart (a linear model's bias plays its role).
	MissingCategory bool
}

// Kind is what a coordinate holds.
type Kind uint8

const (
	// KindUnused: no feature has this coordinate yet (it is always 0).
	KindUnused Kind = iota
	// KindNumeric: a number or bool feature's value (imputed when missing).
	KindNumeric
	// KindIndicator: 1 when a string feature has this value ("name=value"),
	// or any other value beyond the cap ("name=<other>"), else 0.
	KindIndicator
	// KindMissing: 1 when the feature is missing ("name=<missing>"), else 0.
	KindMissing
)

func (k Kind) String() string {
	switch k {
	case KindUnused:
		return "unused"
	case KindNumeric:
		return "numeric"
	case KindIndicator:
		return "indicator"
	case KindMissing:
		return "missing"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// MissingReason is the dead-letter reason for an event refused under
// MissingRefuse.
const MissingReason = "missing_feature"

// MissingError is Encode's error under MissingRefuse.
type MissingError struct {
	Name   string // the feature that is missing
	Absent bool   // the record leaves the name out (else its value is nil/NaN)
}

func (e *MissingError) Error() string {
	if e.Absent {
		return fmt.Sprintf("%s: feature %q is absent from the record (policy refuse)", MissingReason, e.Name)
	}
	return fmt.Sprintf("%s: feature %q is missing (nil or NaN; policy refuse)", MissingReason, e.Name)
}

// Reason is the dead-letter reason, MissingReason.
func (e *MissingError) Reason() string { return MissingReason }

// Stats are the encoder's counters, for metrics.
type Stats struct {
	Coords  int    // coordinates in use (≤ Dim)
	Names   int    // names in the dictionary
	Events  uint64 // events encoded
	Dropped uint64 // field occurrences that found no coordinate (the Dim cap)
	Folded  uint64 // string values encoded as "name=<other>" (the per-name cap)
	Imputed uint64 // missing numeric values replaced by the running mean
}

// entry is one name of the dictionary. Coordinates are −1 until allocated.
type entry struct {
	name  string
	num   int32            // numeric coordinate
	miss  int32            // missing-indicator coordinate
	other int32            // "name=<other>" coordinate
	vals  map[string]int32 // string value → indicator coordinate
	order []string         // the values in order of allocation (for the state)
	last  string           // the last value encoded and its coordinate (a cache, not state)
	lastC int32
	n     uint64  // numeric values seen
	mean  float64 // their running mean (Welford)
	m2    float64 // their sum of squared deviations (Welford)
	seen  uint64  // gen of the last event that had this name (not state)
}

// Encoder maps named fields to a dense vector of dimension Config.Dim. It is
// a deterministic state machine: Encode updates the dictionary and the
// running means, so the runtime encodes each event exactly once, in offset
// order, and checkpoints the state (MarshalBinary) with the models. Not safe
// for concurrent use.
type Encoder struct {
	cfg     Config
	entries []*entry
	index   map[string]int32 // name → entries index
	kind    []Kind           // per coordinate (len Dim)
	owner   []int32          // per coordinate: entries index, −1 if unused
	used    int
	gen     uint64
	stats   Stats
	// pos[f] is the entry the f-th field had in the previous event: records
	// of one producer carry their names in the same order, so a string
	// comparison (pointer-equal for the codec's interned names) usually
	// replaces the map lookup. Not state: a cache.
	pos  []int32
	prev int32 // the entry of the previous field (−1 at the start of a record)
}

// New returns an empty Encoder. It panics on a Config outside its documented
// range (a programming error; Validate reports it as an error).
func New(cfg Config) *Encoder {
	cfg, err := cfg.normalise()
	if err != nil {
		panic(err)
	}
	e := &Encoder{cfg: cfg}
	e.reset()
	return e
}

// Validate reports whether cfg is acceptable to New.
func (cfg Config) Validate() error { _, err := cfg.normalise(); return err }

func (cfg Config) normalise() (Config, error) {
	if cfg.Dim < 1 || cfg.Dim > MaxDim {
		return cfg, fmt.Errorf("features: Dim %d outside [1, %d]", cfg.Dim, MaxDim)
	}
	if cfg.MaxValuesPerName == 0 {
		cfg.MaxValuesPerName = min(DefaultMaxValuesPerName, cfg.Dim)
	}
	if cfg.MaxValuesPerName < 1 || cfg.MaxValuesPerName > cfg.Dim {
		return cfg, fmt.Errorf("features: MaxValuesPerName %d outside [1, Dim=%d]", cfg.MaxValuesPerName, cfg.Dim)
	}
	if cfg.Missing > MissingRefuse {
		return cfg, fmt.Errorf("features: unknown missing-value policy %v", cfg.Missing)
	}
	return cfg, nil
}

func (e *Encoder) reset() {
	e.entries = nil
	e.index = make(map[string]int32)
	e.kind = make([]Kind, e.cfg.Dim)
	e.owner = make([]int32, e.cfg.Dim)
	for j := range e.owner {
		e.owner[j] = -1
	}
	e.used = 0
	e.gen = 0
	e.stats = Stats{}
}

// Config returns the encoder's configuration (defaults filled in).
func (e *Encoder) Config() Config { return e.cfg }

// Dim is the output dimension.
func (e *Encoder) Dim() int { return e.cfg.Dim }

// Stats returns the counters.
func (e *Encoder) Stats() Stats {
	s := e.stats
	s.Coords, s.Names = e.used, len(e.entries)
	return s
}

// alloc gives the next free coordinate to entry i with kind k, or −1 when
// all Dim are in use.
func (e *Encoder) alloc(i int32, k Kind) int32 {
	if e.used >= e.cfg.Dim {
		return -1
	}
	j := int32(e.used)
	e.used++
	e.kind[j], e.owner[j] = k, i
	return j
}

// lookup returns the entry of name, the f-th field, creating it if there is
// a coordinate left for it (an entry always owns at least one coordinate,
// so the dictionary holds at most Dim names); nil and the index −1 if not.
func (e *Encoder) lookup(f int, name string, k Kind) (*entry, int32) {
	if f < len(e.pos) {
		if i := e.pos[f]; i >= 0 && e.entries[i].name == name {
			e.prev = i
			return e.entries[i], i
		}
	}
	// The names after the previous field's, in dictionary order (a record
	// that leaves a name or two out).
	for i := e.prev + 1; i <= e.prev+2 && int(i) < len(e.entries); i++ {
		if i >= 0 && e.entries[i].name == name {
			e.cache(f, i)
			return e.entries[i], i
		}
	}
	if i, ok := e.index[name]; ok {
		e.cache(f, i)
		return e.entries[i], i
	}
	if e.used >= e.cfg.Dim {
		return nil, -1
	}
	i := int32(len(e.entries))
	en := &entry{name: name, num: -1, miss: -1, other: -1, lastC: -1}
	switch k {
	case KindNumeric:
		en.num = e.alloc(i, k)
	case KindMissing:
		en.miss = e.alloc(i, k)
	} // KindIndicator: the caller allocates the value's coordinate.
	e.entries = append(e.entries, en)
	e.index[name] = i
	e.cache(f, i)
	return en, i
}

// cache remembers entry i at field position f (positions beyond Dim fields
// are not cached, so the cache stays within O(Dim)).
func (e *Encoder) cache(f int, i int32) {
	e.prev = i
	if f >= e.cfg.Dim {
		return
	}
	for len(e.pos) <= f {
		e.pos = append(e.pos, -1)
	}
	e.pos[f] = i
}

// Encode writes the vector of one event's named fields into dst (resized to
// Dim, reusing its capacity; every coordinate is written) and returns it.
//
// It changes the state: a new name or string value gets the next free
// coordinate (in the order of the fields, then for absent names in the
// order of the dictionary), and each numeric value updates its name's
// running mean after it is written, so the vector uses the state before the
// event's own contribution (a value present in the event is used as it is;
// a missing one is imputed from the earlier values only). The runtime must
// therefore encode each event exactly once, in offset order, before the
// models see it. Fields should have distinct names (codec guarantees it); a
// repeated name is ignored after its first occurrence. A field whose name
// or value finds no coordinate (the Dim cap) is dropped and counted in
// Stats.Dropped.
//
// Under MissingRefuse a missing value (FieldMissing, or a known name absent
// from the record) returns a *MissingError and the state is unchanged;
// otherwise the error is nil. On error dst is all zeros. A field of an unknown Kind counts as missing.
// In steady state (no new names or values) Encode does not allocate.
func (e *Encoder) Encode(fields []codec.Field, dst []float64) ([]float64, error) {
	if cap(dst) < e.cfg.Dim {
		dst = make([]float64, e.cfg.Dim)
	}
	dst = dst[:e.cfg.Dim]
	clear(dst)
	e.gen++
	if e.cfg.Missing == MissingRefuse {
		if err := e.refuse(fields); err != nil {
			return dst, err
		}
		e.gen++ // the stamps of refuse do not count as "written"
	}
	gen := e.gen
	for f := range fields {
		fl := &fields[f]
		switch fl.Kind {
		case codec.FieldNumber, codec.FieldBool:
			en, i := e.lookup(f, fl.Name, KindNumeric)
			if en == nil {
				e.stats.Dropped++
				continue
			}
			if en.seen == gen {
				continue
			}
			en.seen = gen
			if en.num < 0 {
				if en.num = e.alloc(i, KindNumeric); en.num < 0 {
					e.stats.Dropped++
					continue
				}
			}
			v := fl.Num
			if math.IsNaN(v) || math.IsInf(v, 0) { // codec never sends these; treat as missing
				e.missing(en, dst)
				continue
			}
			dst[en.num] = v
			en.n++
			d := v - en.mean
			en.mean += d / float64(en.n)
			en.m2 += d * (v - en.mean)
		case codec.FieldString:
			en, i := e.lookup(f, fl.Name, KindIndicator)
			if en == nil {
				e.stats.Dropped++
				continue
			}
			if en.seen == gen {
				continue
			}
			en.seen = gen
			if en.num >= 0 { // a numeric name with a string value: missing as a number
				e.imputeNum(en, dst)
			}
			c, ok := en.lastC, en.lastC >= 0 && en.last == fl.Str
			if !ok {
				c, ok = en.vals[fl.Str]
			}
			if ok {
				en.last, en.lastC = fl.Str, c
			} else {
				c = -1
				if len(en.order) < e.cfg.MaxValuesPerName {
					if c = e.alloc(i, KindIndicator); c >= 0 {
						if en.vals == nil {
							en.vals = make(map[string]int32)
						}
						en.vals[fl.Str] = c
						en.order = append(en.order, fl.Str)
					}
				}
				if c < 0 {
					if en.other < 0 {
						en.other = e.alloc(i, KindIndicator)
					}
					if c = en.other; c < 0 {
						e.stats.Dropped++
						continue
					}
					e.stats.Folded++
				}
			}
			dst[c] = 1
		default: // FieldMissing (and unknown kinds)
			en, _ := e.lookup(f, fl.Name, KindMissing)
			if en == nil {
				e.stats.Dropped++
				continue
			}
			if en.seen == gen {
				continue
			}
			en.seen = gen
			e.missing(en, dst)
		}
	}
	for _, en := range e.entries {
		if en.seen != gen {
			e.missing(en, dst)
		}
	}
	e.stats.Events++
	return dst, nil
}

// refuse is the MissingRefuse check: the first missing value, without
// changing the state (only the transient stamps).
func (e *Encoder) refuse(fields []codec.Field) error {
	gen, present := e.gen, 0
	for f := range fields {
		fl := &fields[f]
		if fl.Kind != codec.FieldNumber && fl.Kind != codec.FieldBool && fl.Kind != codec.FieldString ||
			fl.Kind != codec.FieldString && (math.IsNaN(fl.Num) || math.IsInf(fl.Num, 0)) {
			return &MissingError{Name: fl.Name}
		}
		if i, ok := e.index[fl.Name]; ok && e.entries[i].seen != gen {
			e.entries[i].seen = gen
			present++
		}
	}
	if present < len(e.entries) {
		for _, en := range e.entries {
			if en.seen != gen {
				return &MissingError{Name: en.name, Absent: true}
			}
		}
	}
	return nil
}

// missing encodes a missing value of en: the running mean in its numeric
// coordinate, and its missing indicator (allocated now if it has a numeric
// coordinate, or with Config.MissingCategory a categorical one).
func (e *Encoder) missing(en *entry, dst []float64) {
	if en.num >= 0 {
		e.imputeNum(en, dst)
	}
	if en.miss < 0 && (en.num >= 0 || e.cfg.MissingCategory && len(en.order) > 0) {
		en.miss = e.alloc(e.index[en.name], KindMissing)
		if en.miss < 0 {
			e.stats.Dropped++
		}
	}
	if en.miss >= 0 {
		dst[en.miss] = 1
	}
}

func (e *Encoder) imputeNum(en *entry, dst []float64) {
	dst[en.num] = en.mean // 0 before the first value
	e.stats.Imputed++
}

// Kind returns the kind of coordinate j (KindUnused out of range).
func (e *Encoder) Kind(j int) Kind {
	if j < 0 || j >= len(e.kind) {
		return KindUnused
	}
	return e.kind[j]
}

// Kinds returns a copy of every coordinate's kind (length Dim).
func (e *Encoder) Kinds() []Kind { return append([]Kind(nil), e.kind...) }

// Group returns the dictionary index of the name that owns coordinate j (its
// numeric, indicator and missing coordinates share it), or −1 if unused.
func (e *Encoder) Group(j int) int {
	if j < 0 || j >= len(e.owner) {
		return -1
	}
	return int(e.owner[j])
}

// NumStats returns the count, running mean and standard deviation of the
// numeric values of the feature whose numeric coordinate is j (ok false if
// j is not one).
func (e *Encoder) NumStats(j int) (n uint64, mean, sd float64, ok bool) {
	if e.Kind(j) != KindNumeric {
		return 0, 0, 0, false
	}
	en := e.entries[e.owner[j]]
	if en.n > 1 {
		sd = math.Sqrt(en.m2 / float64(en.n))
	}
	return en.n, en.mean, sd, true
}

// Names returns the name of every coordinate (length Dim; "" for unused):
// "name" for a numeric feature, "name=value" for an indicator,
// "name=<other>" and "name=<missing>" for the shared ones. (A name
// containing "=" can make two labels look alike; the coordinates differ.)
func (e *Encoder) Names() []string {
	out := make([]string, e.cfg.Dim)
	for _, en := range e.entries {
		if en.num >= 0 {
			out[en.num] = en.name
		}
		if en.miss >= 0 {
			out[en.miss] = en.name + "=<missing>"
		}
		if en.other >= 0 {
			out[en.other] = en.name + "=<other>"
		}
		for _, v := range en.order {
			out[en.vals[v]] = en.name + "=" + v
		}
	}
	return out
}

// State format (learner/state conventions: little-endian; strings carry a
// u32 length prefix):
//
//	u32 stateMagic, u8 stateVersion
//	int Dim, int MaxValuesPerName, u8 Missing, bool MissingCategory
//	u64 Events, Dropped, Folded, Imputed
//	int names (≤ Dim), then per name in dictionary order:
//	  string name, int num, int miss, int other (−1 or a coordinate)
//	  u64 n, f64 mean, f64 m2
//	  int values (≤ MaxValuesPerName), then per value: string value, int coordinate
//
// Every coordinate in use appears exactly once, and they are 0..used−1.
const (
	stateMagic   uint32 = 0x4546534f // "OSFE" little-endian
	stateVersion uint8  = 1
)

// ErrMismatch is wrapped by UnmarshalBinary's error for a well-formed state
// of an encoder with another Config.
var ErrMismatch = errors.New("features: state of a differently configured encoder")

// MarshalBinary returns the complete state. Equal states give equal bytes.
func (e *Encoder) MarshalBinary() ([]byte, error) {
	s := state.NewEncoder(64 + 48*len(e.entries) + 24*e.used)
	s.U32(stateMagic)
	s.U8(stateVersion)
	s.Int(e.cfg.Dim)
	s.Int(e.cfg.MaxValuesPerName)
	s.U8(uint8(e.cfg.Missing))
	s.Bool(e.cfg.MissingCategory)
	s.U64(e.stats.Events)
	s.U64(e.stats.Dropped)
	s.U64(e.stats.Folded)
	s.U64(e.stats.Imputed)
	s.Int(len(e.entries))
	for _, en := range e.entries {
		s.String(en.name)
		s.Int(int(en.num))
		s.Int(int(en.miss))
		s.Int(int(en.other))
		s.U64(en.n)
		s.F64(en.mean)
		s.F64(en.m2)
		s.Int(len(en.order))
		for _, v := range en.order {
			s.String(v)
			s.Int(int(en.vals[v]))
		}
	}
	return s.Bytes(), nil
}

// UnmarshalBinary restores a state written by MarshalBinary of an encoder
// with the same Config. The bytes are untrusted: a malformed state returns
// an error wrapping state.ErrCorrupt (ErrMismatch for another Config), never
// panics, allocates O(len(b)) + O(Dim), and leaves e unchanged.
func (e *Encoder) UnmarshalBinary(b []byte) error {
	d := state.NewDecoder(b)
	if d.U32() != stateMagic || d.U8() != stateVersion {
		if d.Err() != nil {
			return d.Err()
		}
		return fmt.Errorf("%w: not a feature-encoder state (magic or version)", state.ErrCorrupt)
	}
	dim, maxv := d.Int(), d.Int()
	miss, mcat := Missing(d.U8()), d.Bool()
	if d.Err() != nil {
		return d.Err()
	}
	if dim != e.cfg.Dim || maxv != e.cfg.MaxValuesPerName || miss != e.cfg.Missing || mcat != e.cfg.MissingCategory {
		return fmt.Errorf("%w: state has Dim=%d MaxValuesPerName=%d Missing=%v MissingCategory=%v, encoder %+v",
			ErrMismatch, dim, maxv, miss, mcat, e.cfg)
	}
	n := &Encoder{cfg: e.cfg}
	n.reset()
	n.stats.Events, n.stats.Dropped, n.stats.Folded, n.stats.Imputed = d.U64(), d.U64(), d.U64(), d.U64()
	names := d.IntIn(0, e.cfg.Dim, "feature names")
	// Each name takes at least 60 bytes (4-byte length, three ints, n, mean,
	// m2, value count): check before sizing anything by the count.
	if !d.Need(names, 4+7*8, "feature names") {
		return d.Err()
	}
	coord := func(i int32, k Kind) int32 {
		c := d.IntIn(-1, e.cfg.Dim-1, "coordinate")
		if d.Err() != nil || c < 0 {
			return -1
		}
		if n.kind[c] != KindUnused {
			d.Fail("coordinate %d given twice", c)
			return -1
		}
		n.kind[c], n.owner[c] = k, i
		n.used++
		return int32(c)
	}
	n.entries = make([]*entry, 0, names)
	for i := int32(0); int(i) < names && d.Err() == nil; i++ {
		en := &entry{name: d.String(), lastC: -1}
		if _, dup := n.index[en.name]; dup && d.Err() == nil {
			d.Fail("feature name %q given twice", en.name)
		}
		en.num, en.miss, en.other = coord(i, KindNumeric), coord(i, KindMissing), coord(i, KindIndicator)
		en.n, en.mean, en.m2 = d.U64(), d.F64(), d.F64()
		if math.IsNaN(en.mean) || math.IsInf(en.mean, 0) || math.IsNaN(en.m2) || math.IsInf(en.m2, 0) || en.m2 < 0 {
			d.Fail("feature %q: running statistics not finite", en.name)
		}
		if en.num < 0 && en.n != 0 {
			d.Fail("feature %q: numeric count without a numeric coordinate", en.name)
		}
		nv := d.IntIn(0, e.cfg.MaxValuesPerName, "feature values")
		if !d.Need(nv, 4+8, "feature values") { // 4-byte length, coordinate
			break
		}
		if nv > 0 {
			en.vals = make(map[string]int32, nv)
			en.order = make([]string, 0, nv)
		}
		for k := 0; k < nv && d.Err() == nil; k++ {
			v := d.String()
			if _, dup := en.vals[v]; dup && d.Err() == nil {
				d.Fail("feature %q: value %q given twice", en.name, v)
			}
			c := coord(i, KindIndicator)
			if d.Err() == nil && c < 0 {
				d.Fail("feature %q: value %q without a coordinate", en.name, v)
			}
			en.vals[v] = c
			en.order = append(en.order, v)
		}
		if d.Err() == nil && en.num < 0 && en.miss < 0 && en.other < 0 && nv == 0 {
			d.Fail("feature %q owns no coordinate", en.name)
		}
		n.entries = append(n.entries, en)
		n.index[en.name] = i
	}
	if err := d.Done(); err != nil {
		return err
	}
	for j := 0; j < n.used; j++ { // coordinates are allocated densely from 0
		if n.kind[j] == KindUnused {
			return fmt.Errorf("%w: coordinate %d unused below %d in use", state.ErrCorrupt, j, n.used)
		}
	}
	*e = *n
	return nil
}
