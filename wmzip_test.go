package wmzip_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/walks"
	"github.com/wmzip/wmzip/train"
)

// The codecs the tests share, trained once.
var (
	codecsOnce                           sync.Once
	sharedObs, sharedCodes, sharedNoGate *wmzip.Codec
)

func codecs(t *testing.T) (obs, codes, nogate *wmzip.Codec) {
	t.Helper()
	codecsOnce.Do(func() {
		sharedObs, sharedCodes = obsCodec(), codesCodec()
		var err error
		sharedNoGate, err = train.Codec(context.Background(), walks.CodesOnly(walks.Episodes(1, 4)), train.WithGate(0, gate.CalibOptions{}))
		if err != nil {
			panic(err)
		}
	})
	return sharedObs, sharedCodes, sharedNoGate
}

// encode writes eps to a new file with c and opts.
func encode(t *testing.T, c *wmzip.Codec, eps []wmzip.Episode, opts ...wmzip.WriterOption) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := wmzip.NewWriter(&b, c, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteAll(eps); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestBadInput: every bad argument is an error that errors.Is finds, never
// a panic.
func TestBadInput(t *testing.T) {
	_, codec, nogate := codecs(t)
	var buf bytes.Buffer
	newWriter := func(opts ...wmzip.WriterOption) error {
		_, err := wmzip.NewWriter(&buf, codec, opts...)
		return err
	}
	writeState := func(fn func(w *wmzip.Writer) error, opts ...wmzip.WriterOption) error {
		w, err := wmzip.NewWriter(&buf, codec, opts...)
		if err != nil {
			return err
		}
		if err := w.WriteEpisode(nil); err != nil {
			return err
		}
		return fn(w)
	}
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"nil codec", func() error { _, err := wmzip.NewWriter(&buf, nil); return err }(), wmzip.ErrInput},
		{"negative λ", newWriter(wmzip.WithLambda(-1)), wmzip.ErrInput},
		{"λ too large", newWriter(wmzip.WithLambda(1 << 17)), wmzip.ErrInput},
		{"NaN level", newWriter(wmzip.WithLevels(1, math.NaN())), wmzip.ErrInput},
		{"no levels", newWriter(wmzip.WithLevels()), wmzip.ErrInput},
		{"NaN distortion", newWriter(wmzip.WithDistortion(math.NaN())), wmzip.ErrInput},
		{"distortion 1", newWriter(wmzip.WithSourceDistortion(1)), wmzip.ErrInput},
		{"keyframe interval", newWriter(wmzip.WithKeyframeInterval(0)), wmzip.ErrInput},
		{"two modes", newWriter(wmzip.WithLambda(1), wmzip.WithDistortion(0.1)), wmzip.ErrInput},
		{"lossy without gate", func() error { _, err := wmzip.NewWriter(&buf, nogate, wmzip.WithLambda(1)); return err }(), wmzip.ErrInput},
		{"source target without quantizer", newWriter(wmzip.WithSourceDistortion(0.1)), wmzip.ErrInput},
		{"codes of the wrong length", writeState(func(w *wmzip.Writer) error { return w.WriteCodes(0, []uint16{1}) }), wmzip.ErrInput},
		{"code above K", writeState(func(w *wmzip.Writer) error { c := make([]uint16, 64); c[5] = 16; return w.WriteCodes(0, c) }), wmzip.ErrInput},
		{"held codes of the wrong length", writeState(func(w *wmzip.Writer) error { return w.WriteCodes(0, []uint16{1}) }, wmzip.WithDistortion(0.1)), wmzip.ErrInput},
		{"obs without quantizer", writeState(func(w *wmzip.Writer) error { return w.WriteObs(0, make([]float32, 4)) }), wmzip.ErrInput},
		{"metadata with a distortion target", writeState(func(w *wmzip.Writer) error { return w.WriteEpisode([]byte(`{}`)) }, wmzip.WithDistortion(0.1)), wmzip.ErrInput},
		{"level out of range", writeState(func(w *wmzip.Writer) error { return w.SetLevel(2) }, wmzip.WithLevels(1, 2)), wmzip.ErrInput},
		{"episode of mismatched arrays", func() error {
			w, err := wmzip.NewWriter(&buf, codec)
			if err != nil {
				return err
			}
			return w.WriteAll([]wmzip.Episode{{Actions: []int64{0, 1}, Codes: make([]uint16, 64)}})
		}(), wmzip.ErrInput},
		{"quantize without quantizer", func() error { _, err := codec.Quantize(nil, make([]float32, 8)); return err }(), wmzip.ErrInput},
		{"reconstruct without quantizer", func() error { _, err := codec.Reconstruct(nil, make([]uint16, 64)); return err }(), wmzip.ErrInput},
		{"cut file", func() error { _, err := wmzip.NewFile(bytes.NewReader([]byte("wmz")), 3, codec); return err }(), io.ErrUnexpectedEOF},
		{"not a stream", func() error {
			_, err := wmzip.NewReader(strings.NewReader(strings.Repeat("not a wmz stream ", 20)), codec)
			return err
		}(), wmzip.ErrCorrupt},
		{"no model", func() error {
			_, err := wmzip.DecodeAll(bytes.NewReader(encode(t, codec, walks.CodesOnly(walks.Episodes(2, 1)))), nil)
			return err
		}(), wmzip.ErrNoModel},
		{"another model", func() error {
			_, err := wmzip.DecodeAll(bytes.NewReader(encode(t, codec, walks.CodesOnly(walks.Episodes(2, 1)))), nogate)
			return err
		}(), wmzip.ErrModelMismatch},
		{"not a codec", func() error { _, err := wmzip.UnmarshalCodec([]byte("wmm")); return err }(), nil},
		{"missing codec file", func() error { _, err := wmzip.LoadCodec(filepath.Join(t.TempDir(), "none.wmm")); return err }(), os.ErrNotExist},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.err == nil {
				t.Fatal("no error")
			}
			if c.want != nil && !errors.Is(c.err, c.want) {
				t.Fatalf("%v, want %v", c.err, c.want)
			}
		})
	}
}

// TestRoundTripObs: observations written lossless read back as the
// quantizer's reconstruction, through DecodeAll, the File and the Reader
// alike.
func TestRoundTripObs(t *testing.T) {
	codec, _, _ := codecs(t)
	test := walks.Episodes(2, 1)
	file := encode(t, codec, test)
	want, err := codec.Quantize(nil, test[0].Obs)
	if err != nil {
		t.Fatal(err)
	}
	wantObs, err := codec.Reconstruct(nil, want)
	if err != nil {
		t.Fatal(err)
	}
	all, err := wmzip.DecodeAll(bytes.NewReader(file), codec)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || !slices.Equal(all[0].Codes, want) || !slices.Equal(all[0].Obs, wantObs) || all[0].Slots != 8 {
		t.Fatal("DecodeAll differs from the quantizer's codes and reconstruction")
	}
	f, err := wmzip.NewFile(bytes.NewReader(file), int64(len(file)), codec)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := f.Episode(0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ep.Codes, want) || !slices.Equal(ep.Obs, wantObs) {
		t.Fatal("File.Episode differs from the quantizer's codes and reconstruction")
	}
	r, err := wmzip.NewReader(bytes.NewReader(file), codec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.NextEpisode(); err != nil {
		t.Fatal(err)
	}
	per := len(wantObs) / len(test[0].Actions)
	var got []float32
	for s := range test[0].Actions {
		if _, got, err = r.ReadObs(got); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, wantObs[s*per:(s+1)*per]) {
			t.Fatalf("state %d: Reader.ReadObs differs from the quantizer's reconstruction", s)
		}
		_, obs, err := f.Obs(0, s, got[:0])
		if err != nil || !slices.Equal(obs, wantObs[s*per:(s+1)*per]) {
			t.Fatalf("state %d: File.Obs differs from the quantizer's reconstruction: %v", s, err)
		}
	}
}

// TestDstReuse: every decoding method writes its result into dst when it
// is large enough, and returns a slice of the right length either way.
func TestDstReuse(t *testing.T) {
	codec, _, _ := codecs(t)
	test := walks.Episodes(2, 1)
	file := encode(t, codec, test)
	f, err := wmzip.NewFile(bytes.NewReader(file), int64(len(file)), codec)
	if err != nil {
		t.Fatal(err)
	}
	n := codec.Model().Geom.N()
	big := make([]uint16, 4*n)
	_, codes, err := f.State(0, 3, big)
	if err != nil || len(codes) != n || &codes[0] != &big[0] {
		t.Fatalf("File.State: len %d, reused %v, %v", len(codes), len(codes) > 0 && &codes[0] == &big[0], err)
	}
	fbig := make([]float32, 1, 1<<16)
	_, obs, err := f.Obs(0, 3, fbig)
	if err != nil || len(obs) != 256 || &obs[0] != &fbig[0] {
		t.Fatalf("File.Obs: len %d, %v", len(obs), err)
	}
	q, err := codec.Quantize(big[:7], test[0].Obs[:256])
	if err != nil || len(q) != n || &q[0] != &big[0] {
		t.Fatalf("Quantize: len %d, %v", len(q), err)
	}
	rec, err := codec.Reconstruct(fbig[:5], q)
	if err != nil || len(rec) != 256 || &rec[0] != &fbig[0] {
		t.Fatalf("Reconstruct: len %d, %v", len(rec), err)
	}
	if _, codes, err = f.State(0, 4, nil); err != nil || len(codes) != n {
		t.Fatalf("File.State into nil: len %d, %v", len(codes), err)
	}
}

// TestCreateOpen: Create writes a file that Open reads; Close is
// idempotent on both.
func TestCreateOpen(t *testing.T) {
	_, codec, _ := codecs(t)
	test := walks.CodesOnly(walks.Episodes(2, 2))
	path := filepath.Join(t.TempDir(), "x.wmz")
	w, err := wmzip.Create(path, codec, wmzip.WithEncoderThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteAll(test); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Writer.Close: %v", err)
	}
	if err := w.WriteEpisode(nil); !errors.Is(err, wmzip.ErrClosed) {
		t.Fatalf("WriteEpisode after Close: %v", err)
	}
	want := encode(t, codec, test)
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Create wrote other bytes than NewWriter: %v", err)
	}
	f, err := wmzip.Open(path, codec, wmzip.WithDecoderThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	if lens := f.Episodes(); !slices.Equal(lens, []int{50, 50}) {
		t.Fatalf("Episodes %v", lens)
	}
	if err := f.Verify(); err != nil {
		t.Fatal(err)
	}
	if f.Codec() != codec || f.Info().States != 100 || !math.IsInf(f.Info().Lambda, 1) {
		t.Fatalf("Codec or Info wrong: %+v", f.Info())
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("second File.Close: %v", err)
	}
	if _, err := wmzip.Create(filepath.Join(t.TempDir(), "no", "such", "dir.wmz"), codec); err == nil {
		t.Fatal("Create in a missing folder: no error")
	}
}

// TestWriterReset: a Writer reset to a new destination writes the same
// bytes as a new Writer, whatever it was doing before, in every mode.
func TestWriterReset(t *testing.T) {
	obsCodec, codec, _ := codecs(t)
	for _, c := range []struct {
		name  string
		codec *wmzip.Codec
		eps   []wmzip.Episode
		opts  []wmzip.WriterOption
	}{
		{"lossless", codec, walks.CodesOnly(walks.Episodes(2, 2)), nil},
		{"lambda", codec, walks.CodesOnly(walks.Episodes(2, 2)), []wmzip.WriterOption{wmzip.WithLambda(3)}},
		{"distortion", codec, walks.CodesOnly(walks.Episodes(2, 2)), []wmzip.WriterOption{wmzip.WithDistortion(0.05)}},
		{"source distortion", obsCodec, walks.Episodes(2, 2), []wmzip.WriterOption{wmzip.WithSourceDistortion(0.2)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := encode(t, c.codec, c.eps, c.opts...)
			var first, second bytes.Buffer
			w, err := wmzip.NewWriter(&first, c.codec, c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.WriteAll(c.eps[:1]); err != nil { // abandoned midway
				t.Fatal(err)
			}
			if err := w.Reset(&second); err != nil {
				t.Fatal(err)
			}
			if err := w.WriteAll(c.eps); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(second.Bytes(), want) {
				t.Fatal("a reset Writer wrote other bytes")
			}
			acct := w.Account()
			if err := w.Reset(&first); err != nil { // after Close, too
				t.Fatal(err)
			}
			first.Reset()
			if err := w.WriteAll(c.eps); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first.Bytes(), want) || w.Account() != acct {
				t.Fatal("a Writer reset after Close wrote other bytes or accounts")
			}
		})
	}
}

// TestReaderReset: a Reader reset to another stream reads it as a new
// Reader does, its codec taken from the stream when it was given none.
func TestReaderReset(t *testing.T) {
	_, codec, nogate := codecs(t)
	a := encode(t, codec, walks.CodesOnly(walks.Episodes(2, 1)))
	b := encode(t, nogate, walks.CodesOnly(walks.Episodes(3, 2)), wmzip.WithEmbeddedModel(true))
	r, err := wmzip.NewReader(bytes.NewReader(a), codec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.NextEpisode(); err != nil {
		t.Fatal(err)
	}
	if err := r.Reset(bytes.NewReader(a)); err != nil {
		t.Fatal(err)
	}
	if n := countStates(t, r); n != 50 {
		t.Fatalf("%d states after Reset, want 50", n)
	}
	if err := r.Reset(bytes.NewReader(b)); !errors.Is(err, wmzip.ErrModelMismatch) {
		t.Fatalf("Reset to a stream of another model: %v", err)
	}
	r, err = wmzip.NewReader(bytes.NewReader(b), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Reset(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	if n := countStates(t, r); n != 100 {
		t.Fatalf("%d states of the embedded-model stream, want 100", n)
	}
}

func countStates(t *testing.T, r *wmzip.Reader) int {
	t.Helper()
	n := 0
	for {
		if _, err := r.NextEpisode(); err == io.EOF {
			return n
		} else if err != nil {
			t.Fatal(err)
		}
		for {
			if _, _, err := r.ReadState(nil); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
}

// TestNeverLarger: a lossy file is never larger than the lossless one, at
// any λ.
func TestNeverLarger(t *testing.T) {
	_, codec, _ := codecs(t)
	test := walks.CodesOnly(walks.Episodes(2, 2))
	lossless := len(encode(t, codec, test))
	for _, l := range []float64{0, 0.5, 4, 64, 1000, 60000} {
		if n := len(encode(t, codec, test, wmzip.WithLambda(l))); n > lossless {
			t.Errorf("λ %g: %d bytes, lossless %d", l, n, lossless)
		}
	}
}

// TestNonFiniteObs (issue 24, point 2): NaN or an infinity in
// observations is an ErrInput naming the state and slot, from WriteObs and
// WriteAll, never codes of something else.
func TestNonFiniteObs(t *testing.T) {
	codec, _, _ := codecs(t)
	eps := walks.Episodes(1, 3)
	per := len(eps[0].Obs) / len(eps[0].Actions) // 8 slots of 32
	bad := slices.Clone(eps)
	bad[1].Obs = slices.Clone(eps[1].Obs)
	bad[1].Obs[4*per+2*32+5] = float32(math.Inf(-1)) // episode 1, state 4, slot 2
	w, err := wmzip.NewWriter(io.Discard, codec)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteAll(bad[1:2]); !errors.Is(err, wmzip.ErrInput) || !strings.Contains(err.Error(), "obs at state 4, slot 2 holds -Inf") {
		t.Fatalf("WriteAll: %v", err)
	}
	state := slices.Clone(eps[0].Obs[:per])
	state[7*32] = float32(math.NaN())
	if err := w.WriteEpisode(nil); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteObs(-1, state); !errors.Is(err, wmzip.ErrInput) || !strings.Contains(err.Error(), "slot 7 holds NaN") {
		t.Fatalf("WriteObs: %v", err)
	}
}
