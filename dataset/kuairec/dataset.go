package kuairec

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"okstream/dataset"
)

// Options say how to turn a KuaiRec folder into a labelled event sequence.
type Options struct {
	// Matrix is "small" (small_matrix.csv, the FORKS stream; default) or
	// "big" (big_matrix.csv).
	Matrix string
	// Threshold is the label threshold: +1 when watch_ratio > Threshold.
	// 0 means DefaultThreshold (0.75).
	Threshold float64
	// Features configure the feature construction.
	Features FeatureOptions
	// Dedup drops repeated events (see OrderOptions); for the big matrix.
	Dedup bool
	// Limit keeps the first Limit events of the replay order (0: all).
	Limit int
}

// MatrixFileName returns the file Options.Matrix names.
func (o Options) MatrixFileName() (string, error) {
	switch o.Matrix {
	case "", "small":
		return SmallMatrixFile, nil
	case "big":
		return BigMatrixFile, nil
	}
	return "", fmt.Errorf("kuairec: matrix %q: use small or big", o.Matrix)
}

// Thresh returns the effective label threshold.
func (o Options) Thresh() float64 {
	if o.Threshold == 0 {
		return DefaultThreshold
	}
	return o.Threshold
}

// Stream is a KuaiRec matrix in replay order with its features, the input
// of both the offline Dataset and the Kafka replay.
type Stream struct {
	Dir      Dir
	Matrix   string // file name of the matrix
	Events   []Event
	Stats    OrderStats
	Features *Features
	Options  Options
}

// Open locates the files under dir, reads the matrix into replay order and
// fits the features on the side tables.
func Open(dir string, opts Options) (*Stream, error) {
	d, err := Locate(dir)
	if err != nil {
		return nil, err
	}
	name, err := opts.MatrixFileName()
	if err != nil {
		return nil, err
	}
	if math.IsNaN(opts.Threshold) || math.IsInf(opts.Threshold, 0) {
		return nil, fmt.Errorf("kuairec: label threshold %v is not a finite number", opts.Threshold)
	}
	if opts.Limit < 0 {
		return nil, fmt.Errorf("kuairec: negative event limit %d", opts.Limit)
	}
	ev, st, err := LoadEvents(d.Path(name), OrderOptions{Dedup: opts.Dedup})
	if err != nil {
		return nil, err
	}
	if opts.Limit > 0 && opts.Limit < len(ev) {
		ev = ev[:opts.Limit:opts.Limit]
	}
	feats, err := LoadFeatures(d, opts.Features)
	if err != nil {
		return nil, err
	}
	return &Stream{Dir: d, Matrix: name, Events: ev, Stats: st, Features: feats, Options: opts}, nil
}

// Name names the stream for tables and logs, e.g.
// "kuairec-synthetic/small_matrix [kuairec-v1]".
func (s *Stream) Name() string {
	base := "kuairec"
	if s.Dir.Synthetic {
		base = "kuairec-synthetic"
	}
	name := base + "/" + strings.TrimSuffix(s.Matrix, ".csv") + " [" + s.Features.SchemaVersion()
	if s.Features.Options().SameDay {
		name += ",same-day"
	}
	if t := s.Options.Thresh(); t != DefaultThreshold {
		name += ",wr>" + strconv.FormatFloat(t, 'g', -1, 64)
	}
	return name + "]"
}

// Dataset builds the events' features and labels as a *dataset.Dataset in
// replay order (rows must not be permuted to keep the stream's meaning:
// run it with eval's NoPermute). X takes len(Events)·Dim float64s: 3.1 GB
// for the real small matrix with the full profile, so use Options.Limit or
// the compact profile on small machines.
func (s *Stream) Dataset() (*dataset.Dataset, error) {
	n, dim := len(s.Events), s.Features.Dim()
	if int64(n)*int64(dim) > 1<<31 {
		return nil, fmt.Errorf("kuairec: %d events × %d features is too large to hold in memory; set a limit", n, dim)
	}
	back := make([]float64, n*dim)
	ds := &dataset.Dataset{Name: s.Name(), Path: s.Dir.Path(s.Matrix), Dim: dim,
		X: make([][]float64, n), Y: make([]float64, n),
		FeatureNames: s.Features.Names(), LabelName: "watch_ratio>" + strconv.FormatFloat(s.Options.Thresh(), 'g', -1, 64)}
	t := s.Options.Thresh()
	for i := range s.Events {
		row := back[i*dim : (i+1)*dim : (i+1)*dim]
		s.Features.BuildEvent(row, &s.Events[i])
		ds.X[i] = row
		ds.Y[i] = s.Events[i].Label(t)
	}
	return ds, nil
}

// DataPrefix starts a dataset argument that names a KuaiRec folder (see
// ParseDataArg).
const DataPrefix = "kuairec"

// ParseDataArg reads a dataset argument of the form
//
//	kuairec:DIR
//	kuairec,OPT,OPT=VALUE,...:DIR
//
// with options matrix=small|big, threshold=F, profile=full|compact,
// same-day, dedup and limit=N; ok is false when arg does not start with
// "kuairec:" or "kuairec,". DIR is everything after the first ':'.
func ParseDataArg(arg string) (dir string, opts Options, ok bool, err error) {
	head, dir, found := strings.Cut(arg, ":")
	if !found {
		return "", opts, false, nil
	}
	name, optText, _ := strings.Cut(head, ",")
	if name != DataPrefix {
		return "", opts, false, nil
	}
	if dir == "" {
		return "", opts, true, fmt.Errorf("%s: no directory after %q (e.g. kuairec:testdata/kuairec-synthetic)", arg, head+":")
	}
	if optText == "" {
		return dir, opts, true, nil
	}
	for _, o := range strings.Split(optText, ",") {
		k, v, hasV := strings.Cut(strings.TrimSpace(o), "=")
		bad := func(what string) error {
			return fmt.Errorf("%s: option %q: %s", arg, o, what)
		}
		switch k {
		case "matrix":
			if v != "small" && v != "big" {
				return "", opts, true, bad("use matrix=small or matrix=big")
			}
			opts.Matrix = v
		case "threshold":
			t, e := strconv.ParseFloat(v, 64)
			if e != nil || math.IsNaN(t) || math.IsInf(t, 0) {
				return "", opts, true, bad("want a number, e.g. threshold=0.75")
			}
			opts.Threshold = t
		case "profile":
			p, e := ParseProfile(v)
			if e != nil {
				return "", opts, true, bad(e.Error())
			}
			opts.Features.Profile = p
		case "same-day", "same_day":
			if hasV && v != "true" && v != "1" {
				return "", opts, true, bad("same-day takes no value")
			}
			opts.Features.SameDay = true
		case "dedup":
			opts.Dedup = true
		case "limit":
			n, e := strconv.Atoi(v)
			if e != nil || n < 0 {
				return "", opts, true, bad("want a count, e.g. limit=100000")
			}
			opts.Limit = n
		default:
			return "", opts, true, bad("unknown option; known: matrix=small|big, threshold=F, profile=full|compact, same-day, dedup, limit=N")
		}
	}
	return dir, opts, true, nil
}
