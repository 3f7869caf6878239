package wmzip_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/walks"
	"github.com/wmzip/wmzip/train"
)

var (
	familyOnce sync.Once
	family     *wmzip.Codec
)

// familyCodec is a codec of float observations trained with the
// defaults: a bundle of members coded by rate and distortion.
func familyCodec(t *testing.T) *wmzip.Codec {
	t.Helper()
	familyOnce.Do(func() {
		c, err := train.Codec(context.Background(), walks.Episodes(1, 8))
		if err != nil {
			panic(err)
		}
		family = c
	})
	return family
}

// sourceDistortion decodes file with c and returns the mean relative
// squared error of its slot vectors against the observations of eps.
func sourceDistortion(t *testing.T, c *wmzip.Codec, file []byte, eps []wmzip.Episode) float64 {
	t.Helper()
	got, err := wmzip.DecodeAll(bytes.NewReader(file), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(eps) {
		t.Fatalf("decoded %d episodes, wrote %d", len(got), len(eps))
	}
	var q opq.Quality
	for i, e := range got {
		qi, err := opq.Compare(eps[i].Obs, e.Obs, c.Quantizer().Dim())
		if err != nil {
			t.Fatal(err)
		}
		q = q.Add(qi)
	}
	return q.Distortion()
}

func TestFamilyIsBundle(t *testing.T) {
	c := familyCodec(t)
	ms := c.Members()
	if len(ms) < 2 {
		t.Fatalf("%d members, want a bundle", len(ms))
	}
	for i, m := range ms {
		if m.Quantizer() == nil || m.Quantizer().Rotated() {
			t.Errorf("member %d: want a product quantizer without rotation", i)
		}
		if len(m.Calibration()) < 2 {
			t.Errorf("member %d: %d calibration points", i, len(m.Calibration()))
		}
		if m.Slots() != c.Slots() {
			t.Errorf("member %d holds %d slot vectors a state, the bundle %d", i, m.Slots(), c.Slots())
		}
	}
	if ms[len(ms)-1].Model().ID() != c.Model().ID() {
		t.Error("the bundle's model is not its last member's")
	}
	b, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := wmzip.UnmarshalCodec(b)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range back.Members() {
		if m.Model().ID() != ms[i].Model().ID() {
			t.Errorf("member %d changed across MarshalBinary", i)
		}
	}
	if _, err := wmzip.UnmarshalCodec(b[:len(b)-1]); err == nil {
		t.Error("a bundle cut short parsed")
	}
}

// TestSourceDistortionLands: a target between the finest member's floor
// and the coarsest calibration lands in [0.9·D, D], is smaller than the
// lossless file, and decodes (through the bundle) to what was measured.
func TestSourceDistortionLands(t *testing.T) {
	c := familyCodec(t)
	test := walks.Episodes(2, 2)
	lossless := encode(t, c, test)
	floor := sourceDistortion(t, c, lossless, test)
	prev := len(lossless)
	for _, f := range []float64{1.5, 3} {
		d := floor * f
		file := encode(t, c, test, wmzip.WithSourceDistortion(d))
		got := sourceDistortion(t, c, file, test)
		if got > d || got < 0.9*d {
			t.Errorf("target %.5f: distortion %.5f, want within [0.9·D, D]", d, got)
		}
		if len(file) > prev {
			t.Errorf("target %.5f: %d bytes, more than the %d of a smaller target", d, len(file), prev)
		}
		prev = len(file)
		f, err := wmzip.NewFile(bytes.NewReader(file), int64(len(file)), c)
		if err != nil {
			t.Fatal(err)
		}
		if rep := f.Info().Report; math.Abs(rep.SourceDistortion()-got) > 1e-9*max(got, 1) {
			t.Errorf("target %.5f: the report says %.6g, the decode %.6g", d, rep.SourceDistortion(), got)
		}
	}
	_, err := wmzip.NewWriter(&bytes.Buffer{}, c, wmzip.WithSourceDistortion(floor/4))
	if err != nil {
		t.Fatal(err)
	}
	w, _ := wmzip.NewWriter(&bytes.Buffer{}, c, wmzip.WithSourceDistortion(floor/4))
	if err := w.WriteAll(test); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); !errors.Is(err, wmzip.ErrInput) {
		t.Errorf("a target below the finest quantizer's floor: %v, want ErrInput", err)
	}
}

// TestRateDistortionStreams: WithLambda and WithLevels code as states
// arrive, the same bytes on one thread and on several, and a larger λ
// keeps more.
func TestRateDistortionStreams(t *testing.T) {
	c := familyCodec(t)
	test := walks.Episodes(3, 2)
	var sizes []int
	for _, l := range []float64{50, 5000} {
		one := encode(t, c, test, wmzip.WithLambda(l), wmzip.WithEncoderThreads(1))
		two := encode(t, c, test, wmzip.WithLambda(l), wmzip.WithEncoderThreads(2))
		if !bytes.Equal(one, two) {
			t.Errorf("λ %v: bytes differ between one and two threads", l)
		}
		sourceDistortion(t, c, one, test) // decodes
		sizes = append(sizes, len(one))
	}
	if sizes[0] > sizes[1] {
		t.Errorf("λ 50 wrote %d bytes, λ 5000 %d: a smaller λ should keep less", sizes[0], sizes[1])
	}
	var b bytes.Buffer
	w, err := wmzip.NewWriter(&b, c, wmzip.WithLevels(50, math.Inf(1)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range test {
		if err := w.SetLevel(i % 2); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteAll(test[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := wmzip.DecodeAll(bytes.NewReader(b.Bytes()), c)
	if err != nil {
		t.Fatal(err)
	}
	// The lossless level's episode decodes to its own member's codes:
	// the same reconstruction as the member's quantizer gives.
	if len(got) != 2 || len(got[1].Codes) != len(got[0].Codes) {
		t.Fatalf("decoded %d episodes", len(got))
	}
}

// TestBundleReaders: every way in finds the member a file names.
func TestBundleReaders(t *testing.T) {
	c := familyCodec(t)
	test := walks.Episodes(4, 1)
	file := encode(t, c, test, wmzip.WithLambda(50))
	f, err := wmzip.NewFile(bytes.NewReader(file), int64(len(file)), c)
	if err != nil {
		t.Fatal(err)
	}
	if f.Codec().Model().ID() == c.Model().ID() {
		t.Fatal("λ 50 wrote with the finest member; the test wants another")
	}
	_, codes, err := f.State(0, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := wmzip.NewReader(bytes.NewReader(file), c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.NextEpisode(); err != nil {
		t.Fatal(err)
	}
	var st []uint16
	for range 4 {
		if _, st, err = r.ReadState(st); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(st, codes) {
		t.Error("Reader and File decode state 3 differently")
	}
	if err := r.Reset(bytes.NewReader(encode(t, c, test))); err != nil {
		t.Errorf("Reset to a file of another member: %v", err)
	}
	var rec bytes.Buffer
	if _, _, err := wmzip.Recover(&rec, bytes.NewReader(file), int64(len(file)), c); err != nil {
		t.Errorf("Recover: %v", err)
	}
	other := codesCodecOf(t)
	if _, err := wmzip.NewFile(bytes.NewReader(file), int64(len(file)), other); !errors.Is(err, wmzip.ErrModelMismatch) {
		t.Errorf("a codec that has no member of the file: %v, want ErrModelMismatch", err)
	}
}

func codesCodecOf(t *testing.T) *wmzip.Codec {
	_, codes, _ := codecs(t)
	return codes
}

// TestSourceDistortionSampled: a file searched on a sample of its chunks
// still lands within the target.
func TestSourceDistortionSampled(t *testing.T) {
	c := familyCodec(t)
	defer wmzip.SetRDSample(40, 10)()
	test := walks.Episodes(5, 3)
	floor := sourceDistortion(t, c, encode(t, c, test), test)
	d := 2 * floor
	got := sourceDistortion(t, c, encode(t, c, test, wmzip.WithSourceDistortion(d)), test)
	if got > d || got < 0.8*d {
		t.Errorf("target %.5f: distortion %.5f of a file searched on a sample", d, got)
	}
}

// TestBundleVectors: the conformance vectors written by members of
// bundle.wmm decode through the bundle, whichever member wrote them.
func TestBundleVectors(t *testing.T) {
	dir := filepath.Join("testdata", "conformance")
	b, err := os.ReadFile(filepath.Join(dir, "bundle.wmm"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := wmzip.UnmarshalCodec(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"bundle-copy.wmz", "bundle-fast.wmz"} {
		f, err := wmzip.Open(filepath.Join(dir, name), c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := f.Verify(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if f.Codec().Model().ID() != f.Info().ModelID {
			t.Errorf("%s: decoded with model %s, the file names %s", name, f.Codec().Model().ID(), f.Info().ModelID)
		}
		f.Close()
	}
}

// TestDistortionNeverLarger: a distortion target, against the lossless
// reconstruction or the source, never writes more than the lossless file,
// even where no coarser member pays on these states.
func TestDistortionNeverLarger(t *testing.T) {
	c := familyCodec(t)
	train := walks.Episodes(1, 8)[:2] // the states the codec was trained on
	lossless := encode(t, c, train)
	for _, o := range []wmzip.WriterOption{wmzip.WithDistortion(0.02), wmzip.WithDistortion(0.1), wmzip.WithSourceDistortion(0.5)} {
		if f := encode(t, c, train, o); len(f) > len(lossless) {
			t.Errorf("%d bytes, the lossless file %d", len(f), len(lossless))
		}
	}
}
