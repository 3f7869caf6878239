// Package rans implements the interleaved rANS entropy coder of wmzip and the
// integer quantization of probability tables it codes under. The byte format
// is normative and specified in SPEC.md, section "Entropy coding".
//
// # Coder
//
// Each of N lanes (1 <= N <= MaxLanes) holds a 32-bit state in [2^24, 2^32).
// Probabilities have P bits of precision (MinPrecision <= P <= MaxPrecision)
// and renormalization moves bytes, at most two per symbol. (Bytes rather than
// 16-bit words keep state/2^P >= 2^8, which holds the coding loss at P = 16
// to about 0.001%; 16-bit words lose about 0.1% there.) All lanes share one
// byte stream, stored in the order the decoder consumes it. The encoder buffers symbols as
// (start, freq) pairs with Put and codes them back to front in Finish; the
// decoder returns them front to back, in Put order, with Decode. Which lane a
// symbol uses is the caller's choice, but encoder and decoder must agree; the
// container uses coordinate index mod N.
//
// A stream is the N final lane states (4 bytes each, little-endian, lane 0
// first) followed by the renormalization bytes in consumption order. Its
// length is not stored; the container frames it. After the last symbol the
// decoder must have consumed every byte and every lane must be back at its
// initial state 2^24; Close checks both.
//
// # Tables
//
// A table for an alphabet of K symbols is cum []uint16 of length K with
// cum[0] = 0, strictly increasing; symbol s has start cum[s] and frequency
// cum[s+1]-cum[s], the last symbol 2^P-cum[K-1]. Quantize builds one from
// integer weights with a normative integer algorithm; CheckTable validates an
// untrusted one.
//
// # Trust
//
// Decode, DecodeN, Put and PutSymbol do not validate the table: that would
// cost as much as the search itself. Callers that build tables with Quantize
// need no check; tables read from a file must pass CheckTable once. Whatever
// the table and whatever the stream bytes, the decoder never panics, never
// reads out of range and never loops: a malformed table only yields wrong
// symbols, which the end-of-stream checks in Close then almost surely report
// as ErrCorrupt. An empty table is reported as ErrTable.
//
// # Implementations
//
// On amd64 with AVX2, BMI2 and POPCNT the decoder searches 64-symbol tables
// with a vector compare-and-count and DecodeN runs whole runs of symbols in
// assembly; Finish codes in assembly. The pure-Go code is always compiled,
// serves every other case and is the reference the assembly is tested
// against. The build tag noasm forces it.
package rans
