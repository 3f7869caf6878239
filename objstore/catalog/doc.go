// Package catalog keeps a manifest of the many .wmz memories under one
// root: an S3 prefix (s3://bucket/prefix/) or a local folder. The manifest
// (docs/catalog.md specifies it) is one JSON object at
// root/wmzip-catalog.json naming every memory's key, size, ETag, the
// SHA-256 of its index, its fingerprint (what a search index records of
// the file), model, episodes, chunks, bits per state and distortion, and
// the few bytes that open it (its header and index). Reading it costs one
// request, so a fleet of memories opens as one dataset without a request
// per memory.
//
// An entry is never trusted: Update lists the root and reads again every
// memory whose size or ETag (local files: size, modification time or
// index hash) differ from its entry; a file opened from an entry names
// the entry's ETag in every read it sends, so a memory replaced since
// gives ErrStale, never another file's bytes; Index checks a memory's
// ETag and its search index's fingerprint against the entry before it
// uses the index, and rebuilds or reloads otherwise.
package catalog
