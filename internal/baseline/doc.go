// Package baseline measures the reference rates wmzip reports itself
// against: what general-purpose compressors, simple per-coordinate models and
// a copy-the-previous-state reconstruction achieve on the same quantized
// codes (docs/results-baseline.md).
//
// Every rate is in bits/state: compressed bytes × 8 ÷ states. Compressors see
// the codes packed one byte per code (two bytes, little-endian, when K > 256),
// time-major, state after state. The fair peer of a model trained on data is a
// compressor given the same data, so when training codes are supplied the
// package also reports conditional sizes: a compressor over train followed by
// test minus the same compressor over train alone, and zstd with a dictionary
// built from the training codes.
//
// External tools (xz, brotli, zstd) are run only when found on PATH; a missing
// tool yields a Result with Available false rather than an error. Results are
// deterministic for a given input and tool versions.
package baseline
