package main

import (
	"flag"

	"github.com/wmzip/wmzip/format"
)

// threadsFlag defines -j and its long form --threads on fs and returns
// the option they set: how many chunks are coded at once.
func threadsFlag(fs *flag.FlagSet, what string) func() format.Option {
	n := new(int)
	fs.IntVar(n, "threads", 0, "goroutines coding chunks at once when "+what+" (0: every core); bytes and results do not depend on it")
	fs.IntVar(n, "j", 0, "short for --threads")
	return func() format.Option { return format.WithThreads(*n) }
}
