// Package format implements the wmzip container (.wmz), version 4 (it
// reads version 3 too), as specified in SPEC.md, section 6 "Container"
// (whose source is docs/spec-format.md).
//
// A .wmz file holds episodes of states (vectors of codes) and the actions
// that led into them. Each state is entropy coded with the rANS coder of
// package rans under the per-coordinate frequency tables that the shared
// world model of package wm predicts from the reconstructed history. States
// are grouped in chunks of at most G states (the keyframe interval); the
// predictor is reset at the start of every chunk, so any chunk decodes on its
// own. An index at the end of the file, found from a fixed-size trailer,
// gives random access to every chunk.
//
//	header · [embedded model] · [level table] · (episode record · chunk record*)* · index · trailer
//
// Ways in:
//
//   - Writer streams episodes and states to an io.Writer, holding at most
//     one chunk plus the index in memory; WithLambda makes it lossy under
//     the retention gate of package gate (SPEC.md 5, "Retention gate"), and
//     WithLevels with Writer.SetLevel gives each state one of up to 16
//     lambdas (storage by access rank, package ctmc). Flush ends the
//     current chunk and makes everything written durable.
//   - SearchLambda encodes episodes at the least-storage λ it finds whose
//     distortion meets a target, in a few encodes of the file.
//   - Append continues a closed file with more episodes, giving the same
//     bytes as writing everything at once.
//   - Reader decodes a file sequentially from an io.Reader and checks every
//     byte, including the index and trailer at the end.
//   - Open reads the index of an io.ReaderAt and decodes single episodes or
//     states on demand (safe for concurrent use); a state decodes from its
//     chunk's keyframe up to itself only, and a cache of the chunks read
//     last (WithCacheBytes) makes reading their other states cheap;
//     File.Verify checks the whole file from there; WithAccessLog records
//     which states are read.
//   - WithRecovery opens a file cut short by a crash, or damaged, with
//     exactly its valid episodes and chunks (a damaged episode up to the
//     damage); Recover writes them as a valid file.
//
// Chunks are coded on every core: WithThreads(n) (default
// runtime.GOMAXPROCS(0); 1 codes on the caller's goroutine) makes the
// Writer encode up to n chunks at once while the caller goes on writing,
// and the Reader, File.DecodeEpisode and File.Verify decode up to 2·n
// chunks ahead of the one returned. Records are placed and checked in file
// order on the caller's goroutine: the bytes written and the states and
// errors read are the same for every n (tested at several GOMAXPROCS and
// feeding patterns, and fuzzed).
//
// ReadHeader inspects only the fixed-size header; ReadInfo also the level
// table, index and trailer, without a model.
//
// Errors from decoding are *FormatError (the input is not a valid file) or
// *UnsupportedError (a valid file using a feature this package does not
// implement). Both carry the byte offset where the problem was found and
// wrap one of the sentinel errors below, so errors.Is works; a file cut short
// wraps io.ErrUnexpectedEOF.
package format
