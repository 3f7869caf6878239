package format

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/wmzip/wmzip/sign"
)

// A signed file (SPEC.md 6.16) is an unsigned file followed by a signature
// record and a signature trailer. The record holds a SHA-256 hash of every
// episode and chunk record, of the bytes before the body and of the index
// and trailer, and an Ed25519 signature over them: a reader given the
// public key checks the signature once, at Open, and each record's hash
// when it reads the record.

const (
	tagSignature     = 'S'
	SignatureVersion = 1 // of the signature record
	sigFixedSize     = 136
	sigHashSize      = sha256.Size
	sigTrailerSize   = 16
	// sigDomain begins the signed message, so that the signature cannot be
	// taken for one over anything but a signature record.
	sigDomain = "wmzip signature record\x00"
)

var sigMagic = [4]byte{'W', 'M', 'Z', 'S'}

// Signature errors. A signed read wraps exactly one of them (a damaged
// signature record is a FormatError, as any damaged structure).
var (
	// ErrUnsigned reports a file without a signature read with a public key.
	ErrUnsigned = errors.New("wmz: file is not signed")
	// ErrCutShort reports a file read with a public key that ends in neither
	// a trailer nor a signature: a signed file cut short, whose valid prefix
	// no signature covers.
	ErrCutShort = errors.New("wmz: file is cut short: no signature covers it")
	// ErrWrongKey reports a file signed by a key other than the one given.
	ErrWrongKey = errors.New("wmz: file signed by another key")
	// ErrBadSignature reports a signature record whose signature does not
	// verify with the given key: the record was altered, or forged.
	ErrBadSignature = errors.New("wmz: signature does not verify")
	// ErrRollback reports a signed file older than the reader requires
	// (WithMinGeneration): an earlier version replayed.
	ErrRollback = errors.New("wmz: signed file older than required")
	// ErrPrefixAltered reports a header, embedded model or level table that
	// differs from the signed one.
	ErrPrefixAltered = errors.New("wmz: header, model or level table differ from the signed ones")
	// ErrIndexAltered reports an index or trailer that differs from the
	// signed one.
	ErrIndexAltered = errors.New("wmz: index differs from the signed index")
	// ErrRecordAltered reports a record whose bytes are not the signed
	// ones (a RecordError names it).
	ErrRecordAltered = errors.New("wmz: record differs from the one signed")
	// ErrRecordForeign reports a record that is none of the signed ones
	// yet passes every check of its own (CRC, structure and, for a chunk,
	// its reconstruction checksum): a whole record put in the place of the
	// signed one, taken from another file or coded anew (a RecordError
	// names it). A reader cannot tell which.
	ErrRecordForeign = errors.New("wmz: record is a valid record, but not one this file's signature covers")
	// ErrRecordMoved reports a record that holds the signed bytes of
	// another record of the file: records swapped, or an index entry
	// redirected (a RecordError names both).
	ErrRecordMoved = errors.New("wmz: record holds another signed record")
	// ErrSigned reports an Append to a signed file that neither re-signs it
	// (WithSigningKey) nor drops its signature (WithDropSignature).
	ErrSigned = errors.New("wmz: file is signed: append must re-sign it or drop its signature")
)

// signatureErrors are the errors above, each its own case.
var signatureErrors = []error{ErrUnsigned, ErrCutShort, ErrWrongKey, ErrBadSignature, ErrRollback,
	ErrPrefixAltered, ErrIndexAltered, ErrRecordAltered, ErrRecordForeign, ErrRecordMoved, ErrSigned}

// IsSignatureError reports whether err is one of the errors of a read
// with a public key, or of an Append to a signed file: ErrUnsigned to
// ErrSigned above.
func IsSignatureError(err error) bool {
	for _, e := range signatureErrors {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// A RecordError reports an episode or chunk record that fails its signed
// hash. Chunk is −1 for the episode record itself.
type RecordError struct {
	Episode, Chunk int
	Offset         int64
	// Holds names the record whose signed bytes were found instead, for
	// ErrRecordMoved: its episode and chunk.
	Holds [2]int
	Err   error
}

func (e *RecordError) Error() string {
	what := recordName(e.Episode, e.Chunk)
	if errors.Is(e.Err, ErrRecordMoved) {
		return fmt.Sprintf("%v: %s at offset %d holds %s", e.Err, what, e.Offset, recordName(e.Holds[0], e.Holds[1]))
	}
	return fmt.Sprintf("%v: %s at offset %d", e.Err, what, e.Offset)
}

// recordName names chunk c of episode e, or its episode record for c < 0.
func recordName(e, c int) string {
	if c < 0 {
		return fmt.Sprintf("episode %d record", e)
	}
	return fmt.Sprintf("episode %d chunk %d", e, c)
}

func (e *RecordError) Unwrap() error { return e.Err }

// Signature is what a signature record says of its file.
type Signature struct {
	KeyID      sign.KeyID
	FileID     [16]byte // chosen when the file is first signed, kept by re-signing
	Generation uint64   // 1 when first signed, one more at each re-signing
	Time       int64    // Unix seconds at signing, informative
	Bytes      int64    // of the signature record and its trailer, at the end of the file
	// Verified is set when the File was opened with the public key
	// (WithPublicKey) and the signature checked; else the record was only
	// checked for damage.
	Verified bool
}

// sigBlock is a parsed signature record.
type sigBlock struct {
	Signature
	covered int64 // bytes signed: the unsigned file, up to the record
	// BodyStart and IndexOffset of the file signed: the ranges the prefix
	// and index hashes cover, known before the file is parsed.
	bodyStart, indexOffset int64
	length                 int64 // of the record and signature trailer
	prefix                 [sigHashSize]byte
	index                  [sigHashSize]byte
	hashes                 []byte // sigHashSize per record, in file order
	raw                    []byte // the record up to its signature: the signed message, domain apart
	sig                    []byte
	// Set by verify: the records' offsets in file order, and who they are.
	offs []int64
	who  [][2]int // episode, chunk (−1: the episode record)
}

// sigConfig is the signature part of a config.
type sigConfig struct {
	pub    *sign.PublicKey
	minGen uint64
	key    *sign.SecretKey // Append: re-sign at Close
	drop   bool            // Append: drop the signature
}

// WithPublicKey makes Open, ReadInfo, NewReader and Append accept only a
// file signed by pub, and check every record they read against its signed
// hash: a file without a signature, or signed by another key, is refused.
func WithPublicKey(pub *sign.PublicKey) Option {
	return func(c *config) error {
		if pub == nil || len(pub.Key) != 32 {
			return fmt.Errorf("%w: nil or malformed public key", ErrInput)
		}
		c.sig.pub = pub
		return nil
	}
}

// WithMinGeneration makes a read with WithPublicKey refuse a file signed
// at a generation below g (ErrRollback): a reader that remembers the last
// generation it read cannot be given an older version of the file.
func WithMinGeneration(g uint64) Option {
	return func(c *config) error { c.sig.minGen = g; return nil }
}

// WithSigningKey makes Append re-sign a file at Close, keeping its file
// ID and adding one to its generation (signing an unsigned one anew).
func WithSigningKey(k *sign.SecretKey) Option {
	return func(c *config) error {
		if k == nil || len(k.Key) != 64 {
			return fmt.Errorf("%w: nil or malformed secret key", ErrInput)
		}
		c.sig.key = k
		return nil
	}
}

// WithDropSignature lets Append write to a signed file without re-signing
// it: the file becomes unsigned.
func WithDropSignature() Option {
	return func(c *config) error { c.sig.drop = true; return nil }
}

// splitSignature finds a signature record at the end of a file of size
// bytes: it returns the size of the unsigned file before it and the record
// (nil for an unsigned file), checked for damage. With a public key it
// refuses a file without one.
func splitSignature(r io.ReaderAt, size int64, cfg *config) (int64, *sigBlock, error) {
	inner, blk, err := findSignature(r, size, cfg)
	var fe *FormatError
	if err != nil && cfg.recover && cfg.sig.pub == nil && errors.As(err, &fe) {
		// Recovery without a key reads what it can: a damaged signature
		// is one more damaged structure after the records.
		return size, nil, nil
	}
	return inner, blk, err
}

func findSignature(r io.ReaderAt, size int64, cfg *config) (int64, *sigBlock, error) {
	var tail [sigTrailerSize]byte
	if size >= int64(len(tail)) {
		if _, err := r.ReadAt(tail[:], size-int64(len(tail))); err != nil && err != io.EOF {
			return 0, nil, err
		}
	}
	if size < int64(len(tail)) || [4]byte(tail[12:]) != sigMagic {
		if cfg.sig.pub == nil {
			return size, nil, nil
		}
		if size >= TrailerSize {
			var m [4]byte
			if _, err := r.ReadAt(m[:], size-4); err != nil && err != io.EOF {
				return 0, nil, err
			}
			if m == trailerMagic {
				return 0, nil, ErrUnsigned
			}
		}
		return 0, nil, ErrCutShort
	}
	toff := size - sigTrailerSize
	if crc(tail[:8]) != le.Uint32(tail[8:]) {
		return 0, nil, badSum(toff+8, "signature trailer checksum")
	}
	covered := int64(le.Uint64(tail[:]))
	minCovered := int64(HeaderSize + indexHdrSize + TrailerSize)
	if covered < minCovered || covered > toff-sigFixedSize-64-crcSize {
		return 0, nil, corrupt(toff, "signature record at %d outside the file", covered)
	}
	n := toff - covered
	if need := n * 2; need > cfg.maxMemory {
		return 0, nil, tooLarge(toff, need, cfg.maxMemory)
	}
	b := make([]byte, n)
	if k, err := r.ReadAt(b, covered); k != len(b) {
		if err == nil || err == io.EOF {
			err = truncated(covered+int64(k), "signature record")
		}
		return 0, nil, err
	}
	blk, err := parseSignature(b, covered)
	if err != nil {
		return 0, nil, err
	}
	blk.length = size - covered
	blk.Bytes = blk.length
	if cfg.sig.pub != nil {
		if err := blk.verify(r, &cfg.sig); err != nil {
			return 0, nil, err
		}
	}
	return covered, blk, nil
}

// parseSignature parses and checks a signature record at offset off (its
// bytes, without the signature trailer) for damage: CRC, tag, version,
// reserved bytes, sizes. It does not check the signature.
func parseSignature(b []byte, off int64) (*sigBlock, error) {
	if len(b) < sigFixedSize+64+crcSize {
		return nil, truncated(off, "signature record")
	}
	end := len(b) - crcSize
	if crc(b[:end]) != le.Uint32(b[end:]) {
		return nil, badSum(off+int64(end), "signature record checksum")
	}
	switch {
	case b[0] != tagSignature:
		return nil, corrupt(off, "signature record tag %#x", b[0])
	case b[1] != SignatureVersion:
		return nil, &UnsupportedError{Offset: off + 1, Msg: fmt.Sprintf("signature record version %d", b[1]), Err: ErrVersion}
	case b[2] != 0 || b[3] != 0:
		return nil, corrupt(off+2, "reserved bytes of signature record not zero")
	}
	entries := int64(le.Uint32(b[4:]))
	if int64(end) != sigFixedSize+sigHashSize*entries+64 {
		return nil, corrupt(off+4, "signature record of %d bytes for %d records", len(b), entries)
	}
	blk := &sigBlock{covered: off}
	copy(blk.KeyID[:], b[8:16])
	copy(blk.FileID[:], b[16:32])
	blk.Generation = le.Uint64(b[32:])
	blk.Time = int64(le.Uint64(b[40:]))
	if int64(le.Uint64(b[48:])) != off {
		return nil, corrupt(off+48, "signature record says it is at %d", le.Uint64(b[48:]))
	}
	if blk.Generation == 0 {
		return nil, corrupt(off+32, "signature generation 0")
	}
	blk.bodyStart, blk.indexOffset = int64(le.Uint64(b[56:])), int64(le.Uint64(b[64:]))
	if blk.bodyStart < HeaderSize || blk.indexOffset < blk.bodyStart || blk.indexOffset > off-indexHdrSize-TrailerSize {
		return nil, corrupt(off+56, "signed ranges outside the file")
	}
	copy(blk.prefix[:], b[72:104])
	copy(blk.index[:], b[104:136])
	h := sigFixedSize + sigHashSize*int(entries)
	blk.hashes = b[sigFixedSize:h]
	blk.raw = b[:h]
	blk.sig = b[h : h+64]
	return blk, nil
}

func (blk *sigBlock) message() []byte {
	return append([]byte(sigDomain), blk.raw...)
}

// verify checks blk with the public key of cfg: the key, the signature,
// the generation, then the hashes of the bytes before the body and of the
// index and trailer, all before the file is parsed, so that a file altered
// there is refused as altered rather than reported as damaged.
func (blk *sigBlock) verify(r io.ReaderAt, cfg *sigConfig) error {
	if blk.KeyID != cfg.pub.ID {
		return fmt.Errorf("%w: key %s, not %s", ErrWrongKey, blk.KeyID, cfg.pub.ID)
	}
	if !sign.Verify(cfg.pub, blk.message(), blk.sig) {
		return ErrBadSignature
	}
	if blk.Generation < cfg.minGen {
		return fmt.Errorf("%w: generation %d, at least %d required", ErrRollback, blk.Generation, cfg.minGen)
	}
	pre, err := hashRange(r, 0, blk.bodyStart)
	if err != nil {
		return err
	}
	if pre != blk.prefix {
		return ErrPrefixAltered
	}
	ix, err := hashRange(r, blk.indexOffset, blk.covered-blk.indexOffset)
	if err != nil {
		return err
	}
	if ix != blk.index {
		return ErrIndexAltered
	}
	blk.Verified = true
	return nil
}

// bind ties a verified blk to the parsed file f and prepares the lookup of
// records' hashes. What it checks the signer signed: a mismatch is a
// signer's error, reported as corruption.
func (blk *sigBlock) bind(f *File) error {
	offs, who := recordOrder(f.idx)
	switch {
	case f.bodyStart != blk.bodyStart || f.payloadEnd() != blk.indexOffset || f.size != blk.covered:
		return corrupt(blk.covered+56, "signed ranges differ from the file's")
	case len(offs)*sigHashSize != len(blk.hashes):
		return corrupt(blk.covered+4, "signature record lists %d records, the index %d", len(blk.hashes)/sigHashSize, len(offs))
	}
	blk.offs, blk.who = offs, who
	return nil
}

// recordOrder lists the records of x in file order: each episode record,
// then its chunk records.
func recordOrder(x *index) ([]int64, [][2]int) {
	n := int64(len(x.episodes)) + x.chunks
	offs := make([]int64, 0, n)
	who := make([][2]int, 0, n)
	for e := range x.episodes {
		ep := &x.episodes[e]
		offs = append(offs, ep.offset)
		who = append(who, [2]int{e, -1})
		for c := range ep.chunks {
			offs = append(offs, ep.chunks[c].offset)
			who = append(who, [2]int{e, c})
		}
	}
	return offs, who
}

// hashRange returns the SHA-256 of n bytes of r at off, read in pieces.
func hashRange(r io.ReaderAt, off, n int64) ([sigHashSize]byte, error) {
	h := sha256.New()
	k, err := io.Copy(h, io.NewSectionReader(r, off, n))
	if err != nil {
		return [sigHashSize]byte{}, err
	}
	if k != n {
		return [sigHashSize]byte{}, truncated(off+k, "signed range")
	}
	return [sigHashSize]byte(h.Sum(nil)), nil
}

// checkRecord checks the bytes b of the record at off against its signed
// hash, when the file was opened with a public key. For a record that
// matches no signed hash, whole reports whether b passes the record's own
// checks: a whole record substituted (ErrRecordForeign), not one edited
// in place with only some of its checksums made to match
// (ErrRecordAltered). It runs only on that error path.
func (blk *sigBlock) checkRecord(off int64, b []byte, whole func() bool) error {
	if blk == nil || !blk.Verified {
		return nil
	}
	i, ok := slices.BinarySearch(blk.offs, off)
	if !ok {
		return corrupt(off, "no record of the index at %d", off)
	}
	sum := sha256.Sum256(b)
	if bytes.Equal(sum[:], blk.hash(i)) {
		return nil
	}
	e := &RecordError{Episode: blk.who[i][0], Chunk: blk.who[i][1], Offset: off, Err: ErrRecordAltered}
	for j := range blk.offs {
		if bytes.Equal(sum[:], blk.hash(j)) {
			e.Err, e.Holds = ErrRecordMoved, blk.who[j]
			return e
		}
	}
	if whole != nil && whole() {
		e.Err = ErrRecordForeign
	}
	return e
}

func appendHash(b, rec []byte) []byte {
	h := sha256.Sum256(rec)
	return append(b, h[:]...)
}

func (blk *sigBlock) hash(i int) []byte {
	return blk.hashes[i*sigHashSize : (i+1)*sigHashSize]
}

// Signature returns what the file's signature record says, and false for
// an unsigned file. Signature.Verified tells whether it was checked with
// a public key.
func (f *File) Signature() (Signature, bool) {
	if f.sig == nil {
		return Signature{}, false
	}
	return f.sig.Signature, true
}

// ReadSignature reads only the signature record at the end of a file of
// the given size, checked for damage but not verified: what `wmzip info`
// shows. ok is false for an unsigned file.
func ReadSignature(r io.ReaderAt, size int64) (sig Signature, ok bool, err error) {
	cfg, _ := newConfig(nil)
	_, blk, err := splitSignature(r, size, cfg)
	if err != nil || blk == nil {
		return Signature{}, false, err
	}
	return blk.Signature, true, nil
}

// Sign appends a signature record to the unsigned or signed .wmz file f of
// the given size, signed with k, replacing the one it has (whose file ID
// it keeps, with the generation one more); it returns the new size. f is
// checked as Open checks it, with opts, and every record is read and
// hashed once, not decoded (File.Verify decodes). A file signed by another
// key is re-signed only with WithDropSignature among opts, which then
// starts a new file ID and generation.
func Sign(f AppendFile, size int64, k *sign.SecretKey, opts ...Option) (int64, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return 0, err
	}
	inner, old, err := splitSignature(f, size, cfg)
	if err != nil {
		return 0, err
	}
	switch {
	case old == nil:
	case cfg.sig.drop:
		old = nil
	case old.KeyID != k.ID:
		return 0, fmt.Errorf("%w: signed by key %s, re-signing with %s needs WithDropSignature", ErrWrongKey, old.KeyID, k.ID)
	case !old.Verified:
		// The file is checked against the signature it continues, so that
		// re-signing refuses an altered file rather than vouching for it.
		if err := old.verify(f, &sigConfig{pub: k.Public()}); err != nil {
			return 0, err
		}
	}
	return signAt(f, inner, k, old, opts)
}

// resignKey returns opts with a public key added when the file of size
// bytes that Append opens is signed by the key it re-signs with: Open then
// verifies the signature it continues (and signAt every old record).
func resignKey(r io.ReaderAt, size int64, opts []Option) ([]Option, error) {
	cfg, err := newConfig(opts)
	if err != nil || cfg.sig.key == nil || cfg.sig.pub != nil || cfg.sig.drop {
		return opts, err
	}
	_, blk, err := findSignature(r, size, cfg)
	if err != nil || blk == nil || blk.KeyID != cfg.sig.key.ID {
		return opts, nil // Open reports the damage, appendSignature the key
	}
	return append(slices.Clone(opts), WithPublicKey(cfg.sig.key.Public())), nil
}

// signAt signs the unsigned file of the first inner bytes of f, continuing
// the signature old (nil: a new file ID), and writes the signature after
// them. A verified old is the signature of the file before an Append (or
// of this one): every record it covers must still hash as it says.
func signAt(f AppendFile, inner int64, k *sign.SecretKey, old *sigBlock, opts []Option) (int64, error) {
	file, err := openIndex(f, inner, opts)
	if err != nil {
		return 0, err
	}
	if old != nil && old.Verified && old.offs == nil {
		if err := old.bind(file); err != nil {
			return 0, err
		}
	}
	rec, err := file.signatureRecord(k, old)
	if err != nil {
		return 0, err
	}
	if err := f.Truncate(inner); err != nil {
		return 0, err
	}
	if _, err := f.Seek(inner, io.SeekStart); err != nil {
		return 0, err
	}
	if _, err := f.Write(rec); err != nil {
		return 0, err
	}
	return inner + int64(len(rec)), nil
}

// signatureRecord builds the signature record and trailer of the file f
// (opened unsigned, without decoding), continuing old when it is not nil.
func (f *File) signatureRecord(k *sign.SecretKey, old *sigBlock) ([]byte, error) {
	n := len(f.idx.episodes) + int(f.idx.chunks)
	b := make([]byte, sigFixedSize, sigFixedSize+sigHashSize*n+64+crcSize+sigTrailerSize)
	b[0], b[1] = tagSignature, SignatureVersion
	le.PutUint32(b[4:], uint32(n))
	copy(b[8:16], k.ID[:])
	gen := uint64(1)
	if old != nil {
		copy(b[16:32], old.FileID[:])
		gen = old.Generation + 1
	} else if _, err := rand.Read(b[16:32]); err != nil {
		return nil, err
	}
	le.PutUint64(b[32:], gen)
	le.PutUint64(b[40:], uint64(time.Now().Unix()))
	le.PutUint64(b[48:], uint64(f.size))
	end := f.payloadEnd()
	le.PutUint64(b[56:], uint64(f.bodyStart))
	le.PutUint64(b[64:], uint64(end))
	pre, err := hashRange(f.r, 0, f.bodyStart)
	if err != nil {
		return nil, err
	}
	copy(b[72:104], pre[:])
	ix, err := hashRange(f.r, end, f.size-end)
	if err != nil {
		return nil, err
	}
	copy(b[104:136], ix[:])
	// Each record is read whole and checked (tag, sizes against the
	// index, CRC) before its hash is signed.
	// Records old covers are checked against it.
	carried := func(off int64, rb []byte, whole func() bool) error {
		if old == nil || !old.Verified || off >= old.indexOffset {
			return nil
		}
		return old.checkRecord(off, rb, whole)
	}
	for e := range f.idx.episodes {
		ep := &f.idx.episodes[e]
		rb, err := f.episodeRecord(ep)
		if err != nil {
			return nil, err
		}
		if err := carried(ep.offset, rb, func() bool { return true }); err != nil {
			return nil, err
		}
		b = appendHash(b, rb)
		for c := range ep.chunks {
			ref := &ep.chunks[c]
			rb, err := f.chunkRecord(ref)
			if err != nil {
				return nil, err
			}
			if err := carried(ref.offset, rb, func() bool { return f.wholeChunk(ref, rb) }); err != nil {
				return nil, err
			}
			b = appendHash(b, rb)
		}
	}
	b = append(b, sign.Sign(k, append([]byte(sigDomain), b...))...)
	b = le.AppendUint32(b, crc(b))
	t := le.AppendUint64(nil, uint64(f.size))
	t = le.AppendUint32(t, crc(t))
	b = append(b, t...)
	return append(b, sigMagic[:]...), nil
}

// splitOpts is splitSignature with the options of the call.
func splitOpts(r io.ReaderAt, size int64, opts []Option) (int64, *sigBlock, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return 0, nil, err
	}
	return splitSignature(r, size, cfg)
}

// attach gives f the signature record found after its trailer and, with a
// public key, verifies it.
func (f *File) attach(blk *sigBlock) error {
	f.sig = blk
	if blk == nil || !blk.Verified {
		return nil
	}
	return blk.bind(f)
}

// bytes is the size of the signature record and trailer, 0 for none.
func (blk *sigBlock) bytes() int64 {
	if blk == nil {
		return 0
	}
	return blk.length
}

// appendSignature decides what Append does with the signature of old: it
// returns the re-signing to run at Close (WithSigningKey), nil to leave the
// file unsigned, or ErrSigned for a signed file and neither choice made.
func appendSignature(f AppendFile, old *File) (func(int64) error, error) {
	c := old.cfg.sig
	switch {
	case c.key != nil:
		prev := old.sig
		switch {
		case prev == nil:
		case c.drop:
			prev = nil
		case prev.KeyID != c.key.ID:
			return nil, fmt.Errorf("%w: signed by key %s, re-signing with %s needs WithDropSignature", ErrWrongKey, prev.KeyID, c.key.ID)
		case prev.Verified:
			// Refuse an altered file before the Writer cuts its index off.
			if err := old.checkRecords(); err != nil {
				return nil, err
			}
		}
		opts := []Option{WithMaxMemory(old.cfg.maxMemory)}
		return func(size int64) error {
			_, err := signAt(f, size, c.key, prev, opts)
			return err
		}, nil
	case old.sig != nil && !c.drop:
		return nil, ErrSigned
	}
	return nil, nil
}

// wholeChunk reports whether the chunk record b of ref, which matches no
// signed hash, passes every check of its own: structure and CRC, and a
// decode to its reconstruction checksum (every chunk starts with a
// keyframe, so it decodes alone). It decodes into buffers of its own. A
// File opened without its model (Sign's) cannot decode: it says false.
func (f *File) wholeChunk(ref *chunkRef, b []byte) bool {
	if f.checkChunk(ref, b) != nil || f.model == nil || f.rules == nil {
		return false
	}
	cc := f.coder()
	defer f.pool.Put(cc)
	levels := cc.levels
	cc.levels = nil
	defer func() { cc.levels = levels }()
	n := int(ref.states)
	actions, codes := make([]int64, n), make([]uint16, n*f.h.Geom.N())
	return cc.decodeChunk(b[chunkHdrSize:len(b)-crcSize], modeOf(b), n, le.Uint32(b[12:]), actions, codes, ref.offset) == nil
}

// checkRecords reads every record of f once, as Open with a public key
// checks it: its signed hash, structure and CRC; nothing is decoded
// beyond what tells a substituted record from an edited one.
func (f *File) checkRecords() error {
	for e := range f.idx.episodes {
		ep := &f.idx.episodes[e]
		if _, err := f.episodeRecord(ep); err != nil {
			return err
		}
		for c := range ep.chunks {
			if _, err := f.chunkRecord(&ep.chunks[c]); err != nil {
				return err
			}
		}
	}
	return nil
}
