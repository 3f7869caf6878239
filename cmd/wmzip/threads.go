package main

import "flag"

// threadsFlag defines -j and its long form --threads on fs; the returned
// function gives the value: how many chunks are coded at once.
func threadsFlag(fs *flag.FlagSet, what string) func() int {
	n := new(int)
	fs.IntVar(n, "threads", 0, "goroutines coding chunks at once when "+what+" (0: every core); bytes and results do not depend on it")
	fs.IntVar(n, "j", 0, "short for --threads")
	return func() int { return *n }
}
