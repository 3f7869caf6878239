package testkit

import (
	"hash/fnv"
	"os"
	"testing"
)

// LongEnv is the environment variable that turns the long suites on:
// `WMZIP_LONG=1 go test ./...` runs every exhaustive sweep in full (CI
// does, in .ci/run), where a plain `go test ./...` runs a sample of each.
// The go command caches a package's test result with the value of every
// variable its tests read, so after a plain run the long run repeats only
// the packages that have long suites.
const LongEnv = "WMZIP_LONG"

// Long reports whether the long suites run in full: WMZIP_LONG is set to
// something other than "" or "0", and -short is not given (-short wins).
func Long() bool {
	v := os.Getenv(LongEnv)
	return v != "" && v != "0" && !testing.Short()
}

// Stride returns the step and first position of a sweep over positions
// 0, 1, 2, ...: every position (1, 0) in a long run; otherwise every
// step-th, from an offset below step fixed by name, so that a default run
// checks a sample spread over the whole input and different sweeps sample
// different positions. With -short the step is short instead.
func Stride(name string, step, short int) (stride, first int) {
	switch {
	case Long():
		return 1, 0
	case testing.Short():
		step = short
	}
	if step <= 1 {
		return 1, 0
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return step, int(h.Sum32() % uint32(step))
}
