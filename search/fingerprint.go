package search

import (
	"io"

	"github.com/wmzip/wmzip/internal/wm"
)

// Fingerprint returns what an index records of the .wmz file it belongs
// to: SHA-256 of the file's header, index and trailer and of the CRC that
// closes each of its records (Check compares it with the file's). r holds
// the file, size bytes long; its small reads are joined into ranges, as
// Check's are, which suits an object in a store.
func Fingerprint(r io.ReaderAt, size int64) ([32]byte, error) {
	id, err := fileIdentity(r, size, nil, remoteReads)
	return id.print, err
}

// File returns the size and fingerprint (Fingerprint) of the .wmz file the
// index was built from, and the ID of the model it was built with: a
// catalog that recorded them for a file tells, without reading the file,
// whether the index serves it.
func (ix *Index) File() (size int64, print [32]byte, model wm.ModelID) {
	return ix.id.size, ix.id.print, ix.id.model
}
