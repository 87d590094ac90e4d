// Command okstream learns online with kernel methods on Kafka streams, and
// evaluates the same learners offline.
//
// Run `okstream help` for the subcommands and `okstream help <command>` (or
// `okstream <command> --help`) for their flags.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise it is taken from the module build info.
var version = ""

type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands []command

func register(c command) { commands = append(commands, c) }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "help", "-h", "--help", "-help":
		return help(args[1:], stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "okstream", versionString())
		return 0
	}
	for _, c := range commands {
		if c.name == name {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "okstream: unknown command %q\n\n", name)
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `okstream learns online with kernel methods on Kafka streams: it predicts every
event before learning from its label, publishes predictions, and checkpoints
models so that a crash or a rebalance resumes exactly.

Usage: okstream <command> [flags]

Commands:
`)
	sort.Slice(commands, func(i, j int) bool { return commands[i].name < commands[j].name })
	for _, c := range commands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "  %-12s %s\n", "help", "show help for a command, or `help learners` for the learner specs")
	fmt.Fprintf(w, "  %-12s %s\n", "version", "print the version")
	fmt.Fprint(w, "\nRun `okstream help <command>` for a command's flags and examples.\n")
}

func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stdout)
		return 0
	}
	switch args[0] {
	case "learners":
		writeLearnerHelp(stdout, args[1:])
		return 0
	case "version":
		fmt.Fprint(stdout, `Usage: okstream version

Prints the version: the one stamped at build time (go build -ldflags
"-X main.version=$(git describe --always --dirty)" ./cmd/okstream; the
Dockerfile's VERSION build argument), else the module version and VCS
revision Go recorded, and the Go version. Also: okstream --version.
`)
		return 0
	case "help":
		usage(stdout)
		return 0
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run([]string{"--help"}, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "okstream: no help for unknown command %q\n", args[0])
	return 2
}

func versionString() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += " " + rev + dirty
	}
	return v + " " + strings.TrimPrefix(bi.GoVersion, "go")
}
