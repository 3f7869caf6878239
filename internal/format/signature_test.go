package format

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/sign"
)

// signFixture is a small signed file and what made it.
type signFixture struct {
	m        *wm.Model
	eps      []episode
	unsigned []byte
	signed   []byte
	key      *sign.SecretKey
}

func testKey(t testing.TB, seed uint64) *sign.SecretKey {
	t.Helper()
	k, err := sign.GenerateKey(rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)}))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func signBytes(t testing.TB, b []byte, k *sign.SecretKey, opts ...Option) []byte {
	t.Helper()
	f := &memFile{B: bytes.Clone(b)}
	n, err := Sign(f, int64(len(f.B)), k, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(f.B)) {
		t.Fatalf("Sign returned size %d, file has %d", n, len(f.B))
	}
	return f.B
}

// newSignFixture writes episodes of one state per chunk, so that chunk
// records of equal length but other bytes are easy to find.
func newSignFixture(t testing.TB, seed uint64, lens []int) *signFixture {
	t.Helper()
	g := wm.Geometry{S: 2, M: 2, K: 6}
	eps := genEpisodes(rand.New(rand.NewPCG(seed, 7)), g, lens)
	m := trainModel(g, 12, nil)
	b := encode(t, m, eps, WithKeyframeInterval(1), WithLanes(1))
	k := testKey(t, 1)
	return &signFixture{m: m, eps: eps, unsigned: b, signed: signBytes(t, b, k), key: k}
}

func (s *signFixture) pub() Option { return WithPublicKey(s.key.Public()) }

// readEvery reads every state and every episode's metadata of b through
// Open with opts, and returns the first error.
func readEvery(b []byte, m *wm.Model, opts ...Option) error {
	f, err := Open(bytes.NewReader(b), int64(len(b)), m, opts...)
	if err != nil {
		return err
	}
	for e := range f.Episodes() {
		if _, err := f.Metadata(e); err != nil {
			return err
		}
		for t := range f.EpisodeLen(e) {
			if _, _, err := f.ReadState(e, t, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// chunks lists the chunk records of b (an unsigned or signed file) in
// file order.
func chunks(t testing.TB, b []byte, m *wm.Model) []chunkRef {
	t.Helper()
	f, err := Open(bytes.NewReader(b), int64(len(b)), m)
	if err != nil {
		t.Fatal(err)
	}
	var out []chunkRef
	for _, ep := range f.idx.episodes {
		out = append(out, ep.chunks...)
	}
	return out
}

func TestSignRoundTrip(t *testing.T) {
	s := newSignFixture(t, 1, []int{5, 0, 7})
	if len(s.signed) <= len(s.unsigned) || !bytes.Equal(s.signed[:len(s.unsigned)], s.unsigned) {
		t.Fatal("signing changed the bytes of the unsigned file")
	}
	for name, opts := range map[string][]Option{"with key": {s.pub()}, "without key": nil} {
		got, err := openAll(s.signed, s.m, opts...)
		if err != nil {
			t.Fatalf("%s: Open: %v", name, err)
		}
		if err := sameEpisodes(got, s.eps); err != nil {
			t.Fatalf("%s: Open: %v", name, err)
		}
		got, err = readAll(s.signed, s.m, opts...)
		if err != nil {
			t.Fatalf("%s: Reader: %v", name, err)
		}
		if err := sameEpisodes(got, s.eps); err != nil {
			t.Fatalf("%s: Reader: %v", name, err)
		}
	}
	f, err := Open(bytes.NewReader(s.signed), int64(len(s.signed)), s.m, s.pub())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Verify(); err != nil {
		t.Fatal(err)
	}
	sig, ok := f.Signature()
	if !ok || !sig.Verified || sig.KeyID != s.key.ID || sig.Generation != 1 {
		t.Fatalf("Signature() = %+v, %v", sig, ok)
	}
	if fb := f.Info().FileBytes; fb != int64(len(s.signed)) {
		t.Errorf("Info().FileBytes = %d, file has %d", fb, len(s.signed))
	}
	if _, info, err := ReadInfo(bytes.NewReader(s.signed), int64(len(s.signed)), s.pub()); err != nil || info.States != 12 {
		t.Fatalf("ReadInfo: %v %v", info.States, err)
	}
	if rs, ok, err := ReadSignature(bytes.NewReader(s.signed), int64(len(s.signed))); err != nil || !ok || rs.FileID != sig.FileID || rs.Verified {
		t.Fatalf("ReadSignature: %+v %v %v", rs, ok, err)
	}
	if _, ok, err := ReadSignature(bytes.NewReader(s.unsigned), int64(len(s.unsigned))); err != nil || ok {
		t.Fatalf("ReadSignature of an unsigned file: %v %v", ok, err)
	}
	// Re-signing keeps the file ID and counts the generation.
	again := signBytes(t, s.signed, s.key)
	f2, err := Open(bytes.NewReader(again), int64(len(again)), s.m, s.pub(), WithMinGeneration(2))
	if err != nil {
		t.Fatal(err)
	}
	if sig2, _ := f2.Signature(); sig2.FileID != sig.FileID || sig2.Generation != 2 {
		t.Fatalf("re-signed: %+v after %+v", sig2, sig)
	}
	// Re-signing with another key needs the old signature dropped.
	k2 := testKey(t, 2)
	if _, err := Sign(&memFile{B: bytes.Clone(s.signed)}, int64(len(s.signed)), k2); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("re-signing with another key: %v", err)
	}
	other := signBytes(t, s.signed, k2, WithDropSignature())
	if err := readEvery(other, s.m, WithPublicKey(k2.Public())); err != nil {
		t.Fatal(err)
	}
}

// TestSignTamper: each way of altering a signed file that its checksums
// cannot catch is refused by a reader with the key, with its own error.
func TestSignTamper(t *testing.T) {
	s := newSignFixture(t, 2, []int{9, 8})
	b2 := newSignFixture(t, 3, []int{9, 8}) // another file, same key and model
	b2.signed = signBytes(t, b2.unsigned, s.key)
	cs := chunks(t, s.signed, s.m)

	// A pair of chunk records of equal length and other bytes, in this
	// file and across the two.
	samePair := func(a, b []byte, ca, cb []chunkRef, self bool) (int, int) {
		for i, x := range ca {
			for j, y := range cb {
				if (!self || i != j) && x.length == y.length &&
					!bytes.Equal(a[x.offset:x.offset+x.length], b[y.offset:y.offset+y.length]) {
					return i, j
				}
			}
		}
		t.Fatal("no two chunk records of equal length")
		return 0, 0
	}
	where := func(i int) (int, int) { // episode and chunk of chunk i
		if i < 9 {
			return 0, i
		}
		return 1, i - 9
	}

	type tamper struct {
		name string
		file func() []byte
		opts []Option
		want error
		// chunk named by the RecordError, −2 if none
		chunk int
		// one of the cases the signature must tell apart, each by its
		// own error
		distinct bool
	}
	// A chunk replaced by the coding of other states, with every checksum
	// of its record valid: the writer's own coding of a forged state.
	var forged []byte
	rng := rand.New(rand.NewPCG(9, 9))
	for try := 0; forged == nil; try++ {
		if try == 500 {
			t.Fatal("no forged chunk of the length of chunk 3")
		}
		alt := cloneEpisodes(s.eps)
		for j := range s.m.Geom.N() {
			alt[0].Codes[3*s.m.Geom.N()+j] = uint16(rng.IntN(s.m.Geom.K))
		}
		ab := encode(t, s.m, alt, WithKeyframeInterval(1), WithLanes(1))
		c := chunks(t, ab, s.m)[3]
		if c.length == cs[3].length && !bytes.Equal(ab[c.offset:c.offset+c.length], s.signed[c.offset:c.offset+c.length]) {
			forged = ab[c.offset : c.offset+c.length]
		}
	}
	recoded := func() []byte {
		b := bytes.Clone(s.signed)
		copy(b[cs[3].offset:], forged)
		return b
	}
	replaced := func() []byte {
		// Bytes of chunk 3's stream replaced, the record's CRC recomputed:
		// what the checksums of an unsigned read accept.
		b := bytes.Clone(s.signed)
		c := cs[3]
		for i := c.offset + chunkHdrSize; i < c.offset+c.length-crcSize; i++ {
			b[i] ^= 0x5a
		}
		end := c.offset + c.length - crcSize
		le.PutUint32(b[end:], crc(b[c.offset:end]))
		return b
	}
	ii, jj := samePair(s.signed, s.signed, cs, cs, true)
	swapped := func() []byte {
		// Two chunk records of equal length swapped: each index entry now
		// points at another chunk of the file.
		b := bytes.Clone(s.signed)
		x, y := cs[ii], cs[jj]
		copy(b[x.offset:], s.signed[y.offset:y.offset+y.length])
		copy(b[y.offset:], s.signed[x.offset:x.offset+x.length])
		return b
	}
	redirected := func() []byte {
		// An index entry pointed at another chunk, index and trailer CRCs
		// recomputed.
		b := bytes.Clone(s.signed)
		toff := int64(len(s.unsigned)) - TrailerSize
		ioff, ilen := int64(le.Uint64(b[toff:])), int64(le.Uint64(b[toff+8:]))
		e0 := ioff + indexHdrSize + indexEpisodeLen // the first chunk entry
		le.PutUint64(b[e0+indexChunkLen:], le.Uint64(b[e0:]))
		le.PutUint32(b[toff+16:], crc(b[ioff:ioff+ilen]))
		le.PutUint32(b[toff+20:], crc(b[toff:toff+20]))
		return b
	}
	c2 := chunks(t, b2.signed, s.m)
	ia, ib := samePair(s.signed, b2.signed, cs, c2, false)
	foreign := func() []byte {
		// A chunk record of another file signed by the same key.
		b := bytes.Clone(s.signed)
		copy(b[cs[ia].offset:], b2.signed[c2[ib].offset:c2[ib].offset+c2[ib].length])
		return b
	}
	cut := func() []byte {
		// Cut inside the records: the valid prefix is what recovery reads.
		return bytes.Clone(s.signed[:cs[10].offset+5])
	}
	stripped := func() []byte { return bytes.Clone(s.unsigned) }
	otherKey := func() []byte { return signBytes(t, s.unsigned, testKey(t, 9)) }
	forgedKey := func() []byte {
		// Another key's signature, relabelled with this key's ID.
		b := otherKey()
		at := int64(len(s.unsigned))
		copy(b[at+8:], s.key.ID[:])
		end := int64(len(b)) - sigTrailerSize - crcSize
		le.PutUint32(b[end:], crc(b[at:end]))
		return b
	}
	header := func() []byte {
		// The header's λ changed and its CRC recomputed.
		b := bytes.Clone(s.signed)
		le.PutUint32(b[28:], 12345)
		le.PutUint32(b[60:], crc(b[:60]))
		return b
	}
	old := s.signed
	current := signBytes(t, s.signed, s.key) // generation 2
	cases := []tamper{
		{"chunk replaced, CRC recomputed", replaced, nil, ErrRecordAltered, 3, true},
		{"chunk coded anew, every checksum valid", recoded, nil, ErrRecordForeign, 3, false},
		{"chunk records swapped", swapped, nil, ErrRecordMoved, ii, false},
		{"index entry redirected", redirected, nil, ErrIndexAltered, -2, true},
		{"chunk of another signed file", foreign, nil, ErrRecordForeign, ia, true},
		{"cut to a valid prefix", cut, []Option{WithRecovery(true)}, ErrCutShort, -2, true},
		{"signature cut off", stripped, nil, ErrUnsigned, -2, false},
		{"signed by another key", otherKey, nil, ErrWrongKey, -2, true},
		{"another key's signature relabelled", forgedKey, nil, ErrBadSignature, -2, false},
		{"header altered", header, nil, ErrPrefixAltered, -2, false},
		{"older version replayed", func() []byte { return old }, []Option{WithMinGeneration(2)}, ErrRollback, -2, true},
	}
	seen := map[error]string{}
	for _, c := range cases {
		if !c.distinct {
			continue
		}
		if other, ok := seen[c.want]; ok {
			t.Errorf("%q and %q share the error %v", c.name, other, c.want)
		}
		seen[c.want] = c.name
	}
	for _, c := range cases {
		b := c.file()
		opts := append([]Option{s.pub()}, c.opts...)
		err := readEvery(b, s.m, opts...)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
			continue
		}
		// Exactly one signature error: its own.
		for _, e := range signatureErrors {
			if e != c.want && errors.Is(err, e) {
				t.Errorf("%s: %v is also %v", c.name, err, e)
			}
		}
		if c.chunk >= -1 {
			var re *RecordError
			e, ch := where(c.chunk)
			if !errors.As(err, &re) || re.Episode != e || re.Chunk != ch {
				t.Errorf("%s: %v does not name episode %d chunk %d", c.name, err, e, ch)
			}
		}
		// The streaming Reader refuses it too (cut files apart: the
		// Reader is given what Open recovers).
		if _, err := readAll(b, s.m, opts...); !errors.Is(err, c.want) {
			t.Errorf("%s: the Reader: %v, want %v", c.name, err, c.want)
		}
		// What checksums alone see.
		t.Logf("%s: refused with %v; without the key: %v", c.name, err, readEvery(b, s.m, c.opts...))
	}
	if err := readEvery(current, s.m, s.pub(), WithMinGeneration(2)); err != nil {
		t.Fatalf("the current version: %v", err)
	}
	// A random read checks only the chunk it reads: the others still read.
	f, err := Open(bytes.NewReader(replaced()), int64(len(s.signed)), s.m, s.pub())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.ReadState(0, 4, nil); err != nil {
		t.Fatalf("an intact chunk of a tampered file: %v", err)
	}
}

func cloneEpisodes(eps []episode) []episode {
	out := make([]episode, len(eps))
	for i, e := range eps {
		out[i] = e
		out[i].Codes = append([]uint16(nil), e.Codes...)
	}
	return out
}

// TestSignMetadataMoved: episode records of equal length swapped.
func TestSignMetadataMoved(t *testing.T) {
	g := wm.Geometry{S: 2, M: 2, K: 6}
	eps := genEpisodes(rand.New(rand.NewPCG(4, 4)), g, []int{2, 2})
	eps[0].Meta, eps[1].Meta = []byte(`{"a":1}`), []byte(`{"a":2}`)
	m := trainModel(g, 12, nil)
	k := testKey(t, 1)
	b := signBytes(t, encode(t, m, eps), k)
	f, _ := Open(bytes.NewReader(b), int64(len(b)), m)
	e0, e1 := f.idx.episodes[0], f.idx.episodes[1]
	n := episodeHdrSize + e0.metaLen + crcSize
	x := bytes.Clone(b)
	copy(x[e0.offset:], b[e1.offset:e1.offset+n])
	copy(x[e1.offset:], b[e0.offset:e0.offset+n])
	err := readEvery(x, m, WithPublicKey(k.Public()))
	var re *RecordError
	if !errors.Is(err, ErrRecordMoved) || !errors.As(err, &re) || re.Chunk != -1 || re.Holds != [2]int{1, -1} {
		t.Fatalf("swapped episode records: %v", err)
	}
	if !strings.Contains(err.Error(), "episode 0 record at offset") || !strings.HasSuffix(err.Error(), "holds episode 1 record") {
		t.Errorf("swapped episode records: %q does not name both", err)
	}
	if err := readEvery(x, m); err != nil {
		t.Logf("without the key: %v", err)
	} else {
		t.Log("without the key the swap reads as valid")
	}
}

func TestSignAppend(t *testing.T) {
	s := newSignFixture(t, 5, []int{4, 3})
	n := s.m.Geom.N()
	more := genEpisodes(rand.New(rand.NewPCG(6, 6)), s.m.Geom, []int{5})
	// Neither re-signing nor dropping: refused, file untouched.
	f := &memFile{B: bytes.Clone(s.signed)}
	if _, err := Append(f, s.m); !errors.Is(err, ErrSigned) {
		t.Fatalf("Append to a signed file: %v", err)
	}
	if !bytes.Equal(f.B, s.signed) {
		t.Fatal("refused Append changed the file")
	}
	// Dropping: the result is unsigned and reads without a key.
	w, err := Append(f, s.m, WithDropSignature())
	if err != nil {
		t.Fatal(err)
	}
	writeEpisodes(t, w, n, more)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := readEvery(f.B, s.m, s.pub()); !errors.Is(err, ErrUnsigned) {
		t.Fatalf("after an Append that drops the signature: %v", err)
	}
	if err := readEvery(f.B, s.m); err != nil {
		t.Fatal(err)
	}
	// Re-signing: generation 2, same file ID, the whole file covered.
	f = &memFile{B: bytes.Clone(s.signed)}
	w, err = Append(f, s.m, s.pub(), WithSigningKey(s.key))
	if err != nil {
		t.Fatal(err)
	}
	writeEpisodes(t, w, n, more)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := openAll(f.B, s.m, s.pub(), WithMinGeneration(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := sameEpisodes(got, append(append([]episode(nil), s.eps...), more...)); err != nil {
		t.Fatal(err)
	}
	of, _ := Open(bytes.NewReader(s.signed), int64(len(s.signed)), s.m)
	nf, _ := Open(bytes.NewReader(f.B), int64(len(f.B)), s.m)
	os, _ := of.Signature()
	ns, _ := nf.Signature()
	if ns.FileID != os.FileID || ns.Generation != 2 {
		t.Fatalf("re-signed by Append: %+v after %+v", ns, os)
	}
	// The old version is refused by a reader that saw the new one.
	if err := readEvery(s.signed, s.m, s.pub(), WithMinGeneration(ns.Generation)); !errors.Is(err, ErrRollback) {
		t.Fatalf("old version: %v", err)
	}
}

// TestSignReaderNeedsRandomAccess: a keyed Reader over a plain io.Reader
// cannot see the signature first, and says so.
func TestSignReaderNeedsRandomAccess(t *testing.T) {
	s := newSignFixture(t, 7, []int{3})
	if _, err := NewReader(io.MultiReader(bytes.NewReader(s.signed)), s.m, s.pub()); !errors.Is(err, ErrInput) {
		t.Fatalf("keyed Reader over an io.Reader: %v", err)
	}
}

// TestSignDamage flips every bit of the signature record and trailer: a
// reader with the key refuses every one, a reader without it reports
// damage or, where the flipped byte is not checked without a key, reads.
func TestSignDamage(t *testing.T) {
	s := newSignFixture(t, 8, []int{3, 2})
	for i := len(s.unsigned); i < len(s.signed); i++ {
		for bit := range 8 {
			b := bytes.Clone(s.signed)
			b[i] ^= 1 << bit
			if err := readEvery(b, s.m, s.pub()); err == nil {
				t.Fatalf("byte %d bit %d: accepted with the key", i, bit)
			}
			if err := readEvery(b, s.m); err != nil && !isFileError(err) {
				t.Fatalf("byte %d bit %d: %v", i, bit, err)
			}
		}
	}
}

// editChunk returns b with the stream of chunk record c edited and the
// record's CRC recomputed.
func editChunk(b []byte, c chunkRef) []byte {
	b = bytes.Clone(b)
	for i := c.offset + chunkHdrSize; i < c.offset+c.length-crcSize; i++ {
		b[i] ^= 0x5a
	}
	end := c.offset + c.length - crcSize
	le.PutUint32(b[end:], crc(b[c.offset:end]))
	return b
}

// TestSignResignChecks: re-signing with the key that signed a file, by
// Sign or by an Append, checks the file against its signature first, so
// that an altered file is refused, untouched, rather than signed anew;
// only WithDropSignature signs it as it stands, as a new file.
func TestSignResignChecks(t *testing.T) {
	s := newSignFixture(t, 11, []int{4, 3})
	cs := chunks(t, s.signed, s.m)
	altered := editChunk(s.signed, cs[2])
	header := bytes.Clone(s.signed)
	le.PutUint32(header[28:], 12345)
	le.PutUint32(header[60:], crc(header[:60]))
	for _, c := range []struct {
		name string
		b    []byte
		want error
	}{
		{"chunk edited", altered, ErrRecordAltered},
		{"header edited", header, ErrPrefixAltered},
	} {
		f := &memFile{B: bytes.Clone(c.b)}
		if _, err := Sign(f, int64(len(f.B)), s.key); !errors.Is(err, c.want) {
			t.Errorf("%s: Sign: %v, want %v", c.name, err, c.want)
		}
		if !bytes.Equal(f.B, c.b) {
			t.Errorf("%s: a refused Sign changed the file", c.name)
		}
		if _, err := Append(f, s.m, WithSigningKey(s.key)); !errors.Is(err, c.want) {
			t.Errorf("%s: Append: %v, want %v", c.name, err, c.want)
		}
		if !bytes.Equal(f.B, c.b) {
			t.Errorf("%s: a refused Append changed the file", c.name)
		}
	}
	// An intact file re-signs by Append without the public key given.
	f := &memFile{B: bytes.Clone(s.signed)}
	w, err := Append(f, s.m, WithSigningKey(s.key))
	if err != nil {
		t.Fatal(err)
	}
	writeEpisodes(t, w, s.m.Geom.N(), genEpisodes(rand.New(rand.NewPCG(12, 12)), s.m.Geom, []int{3}))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := readEvery(f.B, s.m, s.pub(), WithMinGeneration(2)); err != nil {
		t.Fatal(err)
	}
	// Dropping the signature signs the altered file as it stands: a new
	// file ID at generation 1, which a reader pinning generation 2 refuses.
	old, _, _ := ReadSignature(bytes.NewReader(s.signed), int64(len(s.signed)))
	again := signBytes(t, altered, s.key, WithDropSignature())
	sig, ok, err := ReadSignature(bytes.NewReader(again), int64(len(again)))
	if err != nil || !ok || sig.Generation != 1 || sig.FileID == old.FileID {
		t.Fatalf("re-signed as it stands: %+v %v %v", sig, ok, err)
	}
	if err := readEvery(again, s.m, s.pub(), WithMinGeneration(2)); !errors.Is(err, ErrRollback) {
		t.Fatalf("a new file ID at generation 1, read with generation 2 pinned: %v", err)
	}
}
