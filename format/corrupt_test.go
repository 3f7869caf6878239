package format

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/wmzip/wmzip/wm"
)

// decodeEverything decodes a file every way there is: sequentially, by
// episode and state by state. It returns the first error, or the episodes
// if all three agree.
func decodeEverything(b []byte, m *wm.Model) ([]episode, error) {
	seq, err := readAll(b, m)
	if err != nil {
		return nil, err
	}
	ra, err := openAll(b, m)
	if err != nil {
		return nil, err
	}
	if err := sameEpisodes(ra, seq); err != nil {
		return nil, err
	}
	f, err := Open(bytes.NewReader(b), int64(len(b)), m)
	if err != nil {
		return nil, err
	}
	n := f.Model().Geom.N()
	for e := range seq {
		for s := range seq[e].actions {
			c, err := f.State(e, s)
			if err != nil {
				return nil, err
			}
			if !bytes.Equal(u16bytes(c), u16bytes(seq[e].codes[s*n:(s+1)*n])) {
				return nil, errors.New("State differs from sequential decode")
			}
		}
	}
	return seq, nil
}

func u16bytes(v []uint16) []byte {
	b := make([]byte, 0, 2*len(v))
	for _, x := range v {
		b = le.AppendUint16(b, x)
	}
	return b
}

func smallFile(t *testing.T, embed bool) ([]byte, *wm.Model, []episode) {
	g := wm.Geometry{S: 2, M: 3, K: 5}
	rng := rand.New(rand.NewPCG(21, 22))
	eps := genEpisodes(rng, g, []int{3, 0, 2})
	m := trainModel(g, 10, eps)
	return encode(t, m, eps, WithKeyframeInterval(2), WithLanes(2), WithEmbeddedModel(embed)), m, eps
}

// TestCorruptEveryBit flips every bit of a small file: decoding must fail
// with a format error or give exactly the original data, and never panic.
func TestCorruptEveryBit(t *testing.T) {
	b, m, eps := smallFile(t, false)
	if got, err := decodeEverything(b, m); err != nil || sameEpisodes(got, eps) != nil {
		t.Fatalf("pristine file: %v", err)
	}
	mut := bytes.Clone(b)
	for i := range 8 * len(b) {
		mut[i/8] ^= 1 << (i % 8)
		got, err := decodeEverything(mut, m)
		switch {
		case err == nil:
			if d := sameEpisodes(got, eps); d != nil {
				t.Fatalf("bit %d flipped: decoded different data: %v", i, d)
			}
		case !isFileError(err):
			t.Fatalf("bit %d flipped: error %v is not a format error", i, err)
		}
		mut[i/8] ^= 1 << (i % 8)
	}
}

// TestTruncated cuts a file at every offset: sequential decoding must
// report io.ErrUnexpectedEOF, random access some format error.
func TestTruncated(t *testing.T) {
	b, _, _ := smallFile(t, true)
	for n := range len(b) {
		_, err := readAll(b[:n], nil)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut at %d of %d: sequential decode: %v", n, len(b), err)
		}
		if _, err := openAll(b[:n], nil); !isFileError(err) {
			t.Fatalf("cut at %d of %d: random access: %v", n, len(b), err)
		}
	}
	if _, err := readAll(append(bytes.Clone(b), 0), nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("trailing byte: %v", err)
	}
}

// TestCorruptEmbeddedModel flips bits of the embedded model: the model ID
// check must catch every one.
func TestCorruptEmbeddedModel(t *testing.T) {
	b, _, _ := smallFile(t, true)
	h, err := ReadHeader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(23, 24))
	for range 200 {
		i := HeaderSize*8 + rng.IntN(int(h.ModelSize)*8)
		mut := bytes.Clone(b)
		mut[i/8] ^= 1 << (i % 8)
		if _, err := readAll(mut, nil); !errors.Is(err, ErrChecksum) {
			t.Fatalf("bit %d: %v", i, err)
		}
		if _, err := openAll(mut, nil); !errors.Is(err, ErrChecksum) {
			t.Fatalf("bit %d: %v", i, err)
		}
	}
}

// TestHugeCounts forges counts near the limits with valid checksums: the
// decoder must reject them without allocating for them.
func TestHugeCounts(t *testing.T) {
	b, m, _ := smallFile(t, false)
	// The first chunk record follows the first episode record.
	off := HeaderSize + episodeHdrSize + crcSize + len(`{"episode":0,"note":"test"}`)
	if b[off] != tagChunk {
		t.Fatalf("no chunk at %d", off)
	}
	forge := func(field int, v uint32) []byte {
		mut := bytes.Clone(b)
		le.PutUint32(mut[off+field:], v)
		sl := int(le.Uint32(mut[off+8:]))
		end := off + chunkHdrSize + min(sl, len(mut)-off-chunkHdrSize-crcSize)
		le.PutUint32(mut[end:], crc(mut[off:end]))
		return mut
	}
	for _, tc := range []struct {
		field int
		v     uint32
		want  error
	}{
		{8, 1<<32 - 1, ErrCorrupt},            // stream length beyond the limit
		{8, MaxStreamBytes, io.ErrUnexpectedEOF}, // within the limit, beyond the file
		{4, 1<<32 - 1, ErrCorrupt},            // states beyond G
		{4, 0, ErrCorrupt},
	} {
		if _, err := readAll(forge(tc.field, tc.v), m); !errors.Is(err, tc.want) {
			t.Errorf("field %d = %d: %v, want %v", tc.field, tc.v, err, tc.want)
		}
	}
	// An index claiming 2^24 episodes in a few bytes.
	mut := bytes.Clone(b)
	tr := len(mut) - TrailerSize
	ix := int(le.Uint64(mut[tr:]))
	le.PutUint32(mut[ix+4:], MaxEpisodes)
	le.PutUint32(mut[tr+16:], crc(mut[ix:tr]))
	le.PutUint32(mut[tr+20:], crc(mut[tr:tr+20]))
	if _, err := Open(bytes.NewReader(mut), int64(len(mut)), m); !errors.Is(err, ErrCorrupt) {
		t.Errorf("forged episode count: %v", err)
	}
}
