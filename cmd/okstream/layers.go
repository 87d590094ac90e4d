package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
)

// Configuration precedence for the long-running commands, highest first:
//
//  1. command-line flags (--dim 8),
//  2. environment variables, OKSTREAM_ + the flag name upper-cased with
//     dashes as underscores (OKSTREAM_DIM=8); a repeatable flag takes several
//     values separated by ';' (OKSTREAM_MODEL='a=fogd;b=nogd'),
//  3. the config file named by --config (or OKSTREAM_CONFIG): one
//     "name = value" per line with the flag names, '#' comments, a
//     repeatable flag on several lines,
//  4. the flags' defaults.

// envName is the environment variable of a flag.
func envName(flagName string) string {
	return "OKSTREAM_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

type repeatable interface{ isRepeatable() }

func (l *listFlag) isRepeatable() {}

// envNotFlags are OKSTREAM_ variables that are not flags (read by the
// dataset catalogue, the tests, CI and docker-compose.yml), and envNotFlagPrefixes
// the prefixes of the tests' and benchmarks' knobs.
var (
	envNotFlags = map[string]bool{"OKSTREAM_CONFIG": true, "OKSTREAM_DATA_ROOT": true, "OKSTREAM_KAFKA_HOME": true,
		"OKSTREAM_PYTHON": true, "OKSTREAM_VERSION": true, "OKSTREAM_KONS_RUNS": true, "OKSTREAM_ALD_RUNS": true}
	envNotFlagPrefixes = []string{"OKSTREAM_TEST_", "OKSTREAM_BENCH_", "OKSTREAM_REQUIRE_"}
)

// unknownEnv returns a warning for every OKSTREAM_ variable of environ
// ("NAME=value" entries) that names no flag of fs, with the nearest flag's
// variable when one is close: a misspelt variable would otherwise be
// ignored without a word. skip names variables used otherwise (e.g. the one
// --sasl-password-env names). Values are never included.
func unknownEnv(fs *flag.FlagSet, environ []string, skip ...string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		rest, ok := strings.CutPrefix(name, "OKSTREAM_")
		if !ok || envNotFlags[name] || slices.Contains(skip, name) {
			continue
		}
		if slices.ContainsFunc(envNotFlagPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
			continue
		}
		flagName := strings.ToLower(strings.ReplaceAll(rest, "_", "-"))
		if fs.Lookup(flagName) != nil && envName(flagName) == name {
			continue
		}
		msg := fmt.Sprintf("environment variable %s is not a setting of okstream %s and is ignored", name, fs.Name())
		if c := closestFlag(fs, flagName); c != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", envName(c))
		}
		out = append(out, msg)
	}
	sort.Strings(out)
	return out
}

// applyLayers fills every flag not given on the command line from the
// environment, then from the config file. It returns an error naming the
// source of a bad value.
func applyLayers(fs *flag.FlagSet, configPath string, getenv func(string) string) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if configPath == "" {
		configPath = getenv("OKSTREAM_CONFIG")
	}
	file := map[string][]string{}
	if configPath != "" {
		var err error
		if file, err = readConfigFile(configPath, fs); err != nil {
			return err
		}
	}
	var firstErr error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || f.Name == "config" || firstErr != nil {
			return
		}
		_, multi := f.Value.(repeatable)
		if v := getenv(envName(f.Name)); v != "" {
			vals := []string{v}
			if multi {
				vals = strings.Split(v, ";")
			}
			for _, x := range vals {
				if err := fs.Set(f.Name, strings.TrimSpace(x)); err != nil {
					firstErr = fmt.Errorf("%s=%q: invalid value for --%s: %v", envName(f.Name), v, f.Name, err)
					return
				}
			}
			return
		}
		for _, x := range file[f.Name] {
			if err := fs.Set(f.Name, x); err != nil {
				firstErr = fmt.Errorf("%s: %s = %q: invalid value for --%s: %v", configPath, f.Name, x, f.Name, err)
				return
			}
		}
	})
	return firstErr
}

// Limits on a config file: it is read whole into flag values, so its size
// bounds what it can make the command allocate.
const (
	maxConfigBytes = 1 << 20  // the whole file
	maxConfigLine  = 64 << 10 // one line
)

func readConfigFile(path string, fs *flag.FlagSet) (map[string][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > maxConfigBytes {
		return nil, fmt.Errorf("config file %s: %d bytes, more than the limit of %d", path, st.Size(), maxConfigBytes)
	}
	out := map[string][]string{}
	// The limit also holds for a file that is not regular (a pipe) or grows.
	lr := &io.LimitedReader{R: f, N: maxConfigBytes + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 4<<10), maxConfigLine)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		k, v, ok := strings.Cut(s, "=")
		k = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(k), "--"))
		if !ok || k == "" {
			return nil, fmt.Errorf("%s:%d: want name = value, got %q", path, line, s)
		}
		if fs.Lookup(k) == nil || k == "config" {
			var names []string
			fs.VisitAll(func(f *flag.Flag) {
				if f.Name != "config" {
					names = append(names, f.Name)
				}
			})
			sort.Strings(names)
			return nil, fmt.Errorf("%s:%d: unknown setting %q (settings are the flag names: %s)", path, line, k, strings.Join(names, ", "))
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		out[k] = append(out[k], v)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: line longer than the limit of %d bytes", path, line+1, maxConfigLine)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if lr.N == 0 {
		return nil, fmt.Errorf("config file %s: more than the limit of %d bytes", path, maxConfigBytes)
	}
	return out, nil
}
