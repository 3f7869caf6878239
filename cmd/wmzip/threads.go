package main

import (
	"flag"
	"math"
	"os"
	"runtime/debug"
)

// threadsFlag defines -j and its long form --threads on fs; the returned
// function gives the value: how many chunks are coded at once.
func threadsFlag(fs *flag.FlagSet, what string) func() int {
	n := new(int)
	fs.IntVar(n, "threads", 0, "goroutines coding chunks at once when "+what+" (0: every core); bytes and results do not depend on it")
	fs.IntVar(n, "j", 0, "short for --threads")
	checkInt("threads", n, 0, math.MaxInt32, "a thread count ≥ 0 (0: every core)")
	return func() int { return *n }
}

// streamingGC halves the garbage collector's headroom (GOGC=50, unless
// GOGC is set) for a verb that streams: its live heap is the model, and
// it makes little garbage per state, so this lowers peak RSS by a third
// at no measured CPU cost (docs/results-parallel.md, "Flat memory").
func streamingGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
}
