// Package fuzz holds wmzip's cross-package fuzz targets: opening and fully
// decoding a container, random access to one state, the rANS decoder,
// model files, trajectory .npz files, and round trips through the world
// model and the container in lossless and lossy modes. It has no API; the
// targets are in its tests.
//
// The corpora live in the repository's testdata/fuzz/FuzzXxx (the
// package's testdata is a link to the repository's), so crashers found by
//
//	go test ./fuzz -run '^$' -fuzz '^FuzzOpen$' -fuzztime 60s
//
// land there, are committed, and run as ordinary tests with go test ./...
// Seeds come from the conformance vectors and the other files of testdata.
// .ci/run runs every target for a fixed number of executions.
package fuzz
