package format

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/wmzip/wmzip/internal/wm"
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
	if err := f.Verify(); err != nil {
		return nil, err
	}
	n := f.Model().Geom.N()
	for e := range seq {
		for s := range seq[e].Actions {
			c, err := f.State(e, s)
			if err != nil {
				return nil, err
			}
			if !bytes.Equal(u16bytes(c), u16bytes(seq[e].Codes[s*n:(s+1)*n])) {
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
		{8, 1<<32 - 1, ErrCorrupt},               // stream length beyond the limit
		{8, MaxStreamBytes, io.ErrUnexpectedEOF}, // within the limit, beyond the file
		{4, 1<<32 - 1, ErrCorrupt},               // states beyond G
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

// TestDecoderDisagrees decodes with a retention rule other than the
// writer's: the stream checks or the reconstruction checksum must catch it.
func TestDecoderDisagrees(t *testing.T) {
	g := wm.Geometry{S: 2, M: 4, K: 9}
	rng := rand.New(rand.NewPCG(25, 26))
	eps := genEpisodes(rng, g, []int{12})
	m := trainModel(g, 12, eps)
	b := encode(t, m, eps, withGate(1<<16, func(j int, _ *wm.Predictor) bool { return j != 3 }), WithKeyframeInterval(4))
	other := withGate(1<<16, func(j int, _ *wm.Predictor) bool { return j != 5 })
	for name, dec := range map[string]func([]byte, *wm.Model, ...Option) ([]episode, error){"Reader": readAll, "Open": openAll} {
		_, err := dec(b, m, other)
		if !errors.Is(err, ErrChecksum) && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s with another gate: %v", name, err)
		}
	}
}

// TestErrorOffsets checks that errors point at the damaged structure.
func TestErrorOffsets(t *testing.T) {
	b, m, _ := smallFile(t, false)
	tr := int64(len(b) - TrailerSize)
	for _, tc := range []struct {
		flip   int64 // byte to damage
		offset int64 // reported offset
		want   error
	}{
		{0, 0, ErrCorrupt},    // magic
		{13, 60, ErrChecksum}, // geometry: header CRC
		{tr + 3, tr + 20, ErrChecksum},
		{tr + 25, tr + 24, ErrCorrupt},
	} {
		mut := bytes.Clone(b)
		mut[tc.flip] ^= 0x40
		_, err := Open(bytes.NewReader(mut), int64(len(mut)), m)
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Offset != tc.offset || !errors.Is(err, tc.want) {
			t.Errorf("byte %d damaged: %v, want %v at offset %d", tc.flip, err, tc.want, tc.offset)
		}
	}
	// A damaged chunk payload is reported at its record's CRC field.
	f, err := Open(bytes.NewReader(b), int64(len(b)), m)
	if err != nil {
		t.Fatal(err)
	}
	c := f.idx.episodes[0].chunks[0]
	mut := bytes.Clone(b)
	mut[c.offset+chunkHdrSize] ^= 1
	_, err = readAll(mut, m)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Offset != c.offset+c.length-crcSize || !errors.Is(err, ErrChecksum) {
		t.Errorf("damaged chunk at %d: %v", c.offset, err)
	}
}

// TestForgedIdealBits changes the index's ideal code length and fixes the
// checksums: Open accepts it (the number is a report), Verify and the
// Reader, which recompute it, do not.
func TestForgedIdealBits(t *testing.T) {
	b, m, _ := smallFile(t, false)
	tr := len(b) - TrailerSize
	ix := int(le.Uint64(b[tr:]))
	le.PutUint64(b[ix+24:], le.Uint64(b[ix+24:])+1)
	le.PutUint32(b[tr+16:], crc(b[ix:tr]))
	le.PutUint32(b[tr+20:], crc(b[tr:tr+20]))
	f, err := Open(bytes.NewReader(b), int64(len(b)), m)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Verify(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Verify: %v", err)
	}
	if _, err := readAll(b, m); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Reader: %v", err)
	}
}
