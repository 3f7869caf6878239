// Package capi is the work of wmzip's C library (the cgo package at
// capi/, built with -buildmode=c-shared) in Go's own types: the table of
// handles that C holds in place of Go pointers, the error codes, the JSON
// options, and each call of the C interface on slices. It uses no cgo, so
// its tests run under the race detector; the C library only turns C
// pointers into slices and calls it.
//
// Every object a handle names is safe for concurrent use: a Codec is
// immutable, a File reads concurrently (its Close waits for the reads in
// flight), a Search runs searches concurrently (its Close waits for
// them), and a Writer or Reader serializes its calls.
package capi
