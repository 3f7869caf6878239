// Command wmzip compresses agent trajectories into .wmz files and back.
//
// Usage:
//
//	wmzip <verb> [flags] [args]
//
// Run "wmzip help" for the list of verbs and "wmzip <verb> -h" for one verb.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
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
	fmt.Fprintln(os.Stderr, "\nRun 'wmzip <verb> -h' for the flags of one verb.")
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "help" || os.Args[1] == "-h" || os.Args[1] == "--help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	v, ok := verbs[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "wmzip: unknown verb %q (run 'wmzip help')\n", os.Args[1])
		os.Exit(2)
	}
	if err := v.run(os.Args[2:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintf(os.Stderr, "wmzip %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

// newFlags returns a FlagSet for a verb whose errors are returned, not
// printed-and-exited, so main reports them as one line.
func newFlags(name, usageLine string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: wmzip %s %s\n\nflags:\n", name, usageLine)
		fs.PrintDefaults()
	}
	return fs
}
