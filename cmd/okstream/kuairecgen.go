package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"okstream/dataset/kuairec"
	"okstream/internal/progress"
)

func init() {
	register(command{name: "kuairec-gen", summary: "write a SYNTHETIC sample in the exact KuaiRec 2.0 file format", run: runKuaiRecGen})
}

const kuairecGenSynopsis = `kuairec-gen --out DIR [--users N --videos M] [--seed S] [flags]

Writes a SYNTHETIC sample of the KuaiRec 2.0 recommendation logs (Gao et al.,
CIKM 2022) to DIR/"KuaiRec 2.0"/data/: all seven CSV files with the real
files' names, columns and formatting (float dates in the small matrix, Beijing
times with trimmed fractions, empty NaNs, quoted lists, user-major storage
with the untimed rows last), the population structure and value
distributions of KuaiRec 2.0's published statistics, and user and video effects that
make watch_ratio > 0.75 learnable (P ≈ 0.51). Nothing comes from the real
data. DIR/"KuaiRec 2.0"/SYNTHETIC.md says so and records the command; okstream
labels such a folder "SYNTHETIC" wherever it reads it (replay --source
kuairec, eval --data kuairec:DIR). The same flags give the same bytes on
every machine.

--users × --videos is the small matrix (the real one: 1,411 × 3,327, about
4.7 M rows and 400 MB; the big matrix then has about 12 M rows and 1 GB).
Use small sizes for tests and demos.`

const kuairecGenExamples = `  # A demo sample (a few MB):
  okstream kuairec-gen --out /tmp/kuairec --users 100 --videos 300 --seed 1

  # Replay it into Kafka, an hour of event time per second, with delayed feedback:
  okstream replay --source kuairec --data /tmp/kuairec --speedup 3600 --feedback \
    --brokers localhost:9092 --topic kuairec --create-topic --partitions 3

  # Evaluate learners on its event stream offline:
  okstream eval --data kuairec:/tmp/kuairec --runs 1 --model 'fogd:budget=200,sigma=2'

  # A full-size replica of the small matrix (1,411 × 3,327):
  okstream kuairec-gen --out /data/kuairec-synthetic`

func runKuaiRecGen(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("kuairec-gen", kuairecGenSynopsis, kuairecGenExamples, stderr)
	out := fs.String("out", "", "output folder; the files go to OUT/\"KuaiRec 2.0\"/data (required)")
	users := fs.Int("users", kuairec.RealSmallUsers, "small-matrix users")
	videos := fs.Int("videos", kuairec.RealSmallVideos, "small-matrix videos")
	bigUsers := fs.Int("big-users", 0, "big-matrix users, a superset of the small matrix's (0: users × 7176/1411, at most 7176)")
	bigVideos := fs.Int("big-videos", 0, "big-matrix videos, a superset of the small matrix's (0: videos × 10728/3327, at most 10728)")
	bigDensity := fs.Float64("big-density", kuairec.DefaultBigDensity, "median share of the big-matrix videos each big-matrix user watched")
	seed := fs.Uint64("seed", 1, "seed; the same flags give the same bytes")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "okstream kuairec-gen: %v\n", err)
		return code
	}
	if strings.TrimSpace(*out) == "" {
		return fail(2, errors.New("--out is required: the folder to write the synthetic KuaiRec 2.0 files to"))
	}
	// Never overwrite real KuaiRec files.
	if d, err := kuairec.Locate(*out); err == nil && !d.Synthetic {
		return fail(2, fmt.Errorf("%s already holds KuaiRec files without a %s marker (real data?); choose another --out", d.Data, kuairec.SyntheticMarker))
	}
	cfg := kuairec.GenConfig{Users: *users, Videos: *videos, BigUsers: *bigUsers, BigVideos: *bigVideos,
		BigDensity: *bigDensity, Seed: *seed, Command: commandLine("okstream kuairec-gen", args)}
	var bar *progress.Bar
	if !*quiet {
		cfg.Progress = func(done, total int64) {
			if bar == nil {
				bar = progress.New(stderr, "kuairec-gen (synthetic)", total, "rows")
			}
			bar.Set(done)
		}
	}
	sum, err := kuairec.Generate(*out, cfg)
	bar.Finish()
	if err != nil {
		return fail(1, err)
	}
	c := sum.Config
	fmt.Fprintf(stdout, "wrote a SYNTHETIC KuaiRec 2.0-format sample (not real KuaiRec data) to %s\n", sum.Dir)
	fmt.Fprintf(stdout, "  %s: %d rows (%d users × %d videos, %d untimed); P(watch_ratio > 0.75) = %.3f over the timed rows\n",
		kuairec.SmallMatrixFile, sum.SmallRows, c.Users, c.Videos, sum.SmallUntimed, sum.LabelRate())
	fmt.Fprintf(stdout, "  %s: %d rows (%d users × %d videos, %d exact duplicates)\n", kuairec.BigMatrixFile, sum.BigRows, c.BigUsers, c.BigVideos, sum.BigDuplicates)
	if sum.BigRows == 0 {
		fmt.Fprintf(stdout, "  note: the big matrix is empty: no small-matrix (user, video) pair may appear in it, and --big-users/--big-videos leave no other pair; raise them\n")
	}
	fmt.Fprintf(stdout, "  %s: %d, %s: %d, %s: %d, %s: %d, %s: %d rows\n",
		kuairec.UserFeaturesFile, sum.UserRows, kuairec.CategoriesFile, sum.VideoRows, kuairec.DailyFile, sum.DailyRows,
		kuairec.SocialFile, sum.SocialRows, kuairec.CaptionFile, sum.VideoRows)
	fmt.Fprintf(stdout, "  marked synthetic by %s\n", filepath.Join(filepath.Dir(sum.Dir), kuairec.SyntheticMarker))
	return 0
}

// commandLine renders a command line with shell quoting where needed.
func commandLine(prog string, args []string) string {
	parts := []string{prog}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
