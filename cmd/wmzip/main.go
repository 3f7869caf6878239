// Command wmzip compresses agent trajectories into .wmz files and back.
//
// Usage:
//
//	wmzip <verb> [flags] [args]
//
// Run "wmzip help" for the list of verbs, "wmzip <verb> -h" for one verb
// and "wmzip version" for the build and its format versions.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/wm"
)

// verb is one CLI sub-command. run parses its own flags from args and
// returns an error that main prints as one line.
type verb struct {
	summary string
	run     func(args []string) error
}

// verbs is filled by the init functions of the verb files.
var verbs = map[string]verb{}

func register(name, summary string, run func(args []string) error) {
	verbs[name] = verb{summary, run}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: wmzip <verb> [flags] [args]\n\nverbs:")
	names := make([]string, 0, len(verbs))
	for n := range verbs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-9s %s\n", n, verbs[n].summary)
	}
	fmt.Fprintln(os.Stderr, "\nRun 'wmzip <verb> -h' for the flags of one verb, 'wmzip version' for the version.")
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "help" || os.Args[1] == "-h" || os.Args[1] == "--help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	switch os.Args[1] {
	case "version", "-version", "--version":
		printVersion(os.Stdout)
		return
	}
	v, ok := verbs[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "wmzip: unknown verb %q (run 'wmzip help')\n", os.Args[1])
		os.Exit(2)
	}
	err := v.run(os.Args[2:])
	if err == nil {
		err = s3Commit()
	}
	for _, c := range cleanups {
		c()
	}
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		os.Stderr.Write(verbOutput.Bytes())
	case flagsFailed && verbFlags != nil:
		fmt.Fprintf(os.Stderr, "wmzip %s: %v; see wmzip %s -h\n", verbFlags.Name(), err, verbFlags.Name())
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "wmzip %s: %s\n", os.Args[1], s3Names(explainInput(err).Error()))
		os.Exit(1)
	}
}

// verbFlags is the FlagSet of the verb being run (the last newFlags made),
// verbOutput what the flag package and its Usage printed, and flagsFailed
// reports that parsing failed or help was asked: main then prints the
// usage for -h, or the error as one line with a hint.
var (
	verbFlags   *flag.FlagSet
	verbOutput  bytes.Buffer
	flagsFailed bool
)

// newFlags returns a FlagSet for a verb whose errors are returned, not
// printed, so main reports them as one line. Usage strings may name a
// flag's value in backquotes (flag.PrintDefaults); a bool flag's must not.
func newFlags(name, usageLine string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	verbOutput.Reset()
	fs.SetOutput(&verbOutput)
	fs.Usage = func() {
		flagsFailed = true
		fmt.Fprintf(fs.Output(), "usage: wmzip %s %s\n\nflags:\n", name, usageLine)
		fs.PrintDefaults()
	}
	verbFlags = fs
	flagChecks = nil
	return fs
}

// printVersion prints the module version (with the VCS revision the
// binary was built from, when stamped) and the format versions it writes.
func printVersion(w io.Writer) {
	v, rev := "(devel)", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		var r, t string
		var dirty bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				r = s.Value
			case "vcs.time":
				t = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if r != "" {
			rev = " (revision " + r[:min(12, len(r))]
			if t != "" {
				rev += ", " + t
			}
			if dirty {
				rev += ", modified"
			}
			rev += ")"
		}
	}
	fmt.Fprintf(w, "wmzip %s%s\n", v, rev)
	fmt.Fprintf(w, "formats: container %d, model %d, bundle %d, quantizer section %d, gate section %d\n", format.Version, wm.ModelVersion, wm.BundleVersion, opq.FormatVersion, gate.Version)
	fmt.Fprintf(w, "%s %s/%s\n", strings.TrimSpace(runtime.Version()), runtime.GOOS, runtime.GOARCH)
}
