package capi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/walks"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/search"
	"github.com/wmzip/wmzip/train"
)

// trainOpts are the options of the codec of the tests, in JSON and as
// train takes them.
const trainOpts = `{"subspaces": 8, "centroids": 16, "quantizer_iters": -1}`

var trainGo = []train.Option{train.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 1, OPQIters: -1})}

// trajectory flattens episodes as a trajectory .npz holds them.
func trajectory(eps []wmzip.Episode) Trajectory {
	t := Trajectory{Slots: eps[0].Slots, Subspaces: 8}
	var codes []uint16
	for _, e := range eps {
		t.EpisodeStart = append(t.EpisodeStart, int64(t.States))
		t.States += len(e.Actions)
		t.Actions = append(t.Actions, e.Actions...)
		t.Obs = append(t.Obs, e.Obs...)
		codes = append(codes, e.Codes...)
	}
	t.Dim = len(t.Obs) / t.States / t.Slots
	t.Codes = Codes{U16: codes}
	return t
}

// fixture is a codec handle trained on walks, the episodes, and a
// lossless file of them written through the handles.
type fixture struct {
	codec Handle
	eps   []wmzip.Episode
	codes [][]uint16 // of each episode's observations
	path  string
}

func setup(t *testing.T) fixture {
	t.Helper()
	eps := walks.Episodes(1, 8)
	h, err := Train(context.Background(), trajectory(eps), []byte(trainOpts))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { FreeCodec(h) })
	path := filepath.Join(t.TempDir(), "f.wmz")
	w, err := CreateWriter(path, h, []byte(`{"keyframe": 16}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range eps[:4] {
		if err := WriterBegin(w, []byte(`{"n": 1}`)); err != nil {
			t.Fatal(err)
		}
		if err := WriterObs(w, e.Actions, len(e.Actions), e.Obs); err != nil {
			t.Fatal(err)
		}
	}
	if err := CloseWriter(w); err != nil {
		t.Fatal(err)
	}
	if err := FreeWriter(w); err != nil {
		t.Fatal(err)
	}
	codes := make([][]uint16, len(eps))
	for i, e := range eps {
		codes[i] = make([]uint16, len(e.Codes))
		if err := Quantize(h, e.Obs, Codes{U16: codes[i]}); err != nil {
			t.Fatal(err)
		}
	}
	return fixture{h, eps, codes, path}
}

// TestAsGo: the handles train and write what the Go library does with the
// same inputs and options, byte for byte.
func TestAsGo(t *testing.T) {
	fx := setup(t)
	c, err := train.Codec(context.Background(), fx.eps, trainGo...)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := c.MarshalBinary()
	got, err := CodecBytes(fx.codec)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the codec's bytes differ from train.Codec's (err %v)", err)
	}
	var buf bytes.Buffer
	w, err := wmzip.NewWriter(&buf, c, wmzip.WithKeyframeInterval(16))
	if err != nil {
		t.Fatal(err)
	}
	eps := slices.Clone(fx.eps[:4])
	for i := range eps {
		eps[i].Meta = []byte(`{"n": 1}`)
	}
	if err := w.WriteAll(eps); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(fx.path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, buf.Bytes()) {
		t.Fatal("the file written through the handles differs from the Go Writer's")
	}
}

// TestConcurrentReads reads one file from many goroutines, by state, by
// range and whole, while another closes it at the end: the race detector
// watches.
func TestConcurrentReads(t *testing.T) {
	fx := setup(t)
	f, err := OpenFile(fx.path, fx.codec, []byte(`{"threads": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	in, _ := InfoOfCodec(fx.codec)
	n, d := in.Slots*in.Subspaces, in.Slots*in.Dim
	lens, err := FileEpisodes(f)
	if err != nil || len(lens) != 4 {
		t.Fatalf("episodes %v, %v", lens, err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u8, u16, obs := make([]uint8, n), make([]uint16, n), make([]float32, d)
			for i := range 60 {
				e, s := (g+i)%4, (i*7+g)%lens[0]
				want := fx.codes[e][s*n : (s+1)*n]
				a, err := FileState(f, e, s, Codes{U16: u16})
				if err == nil && !slices.Equal(u16, want) {
					err = fmt.Errorf("state %d,%d: wrong codes", e, s)
				}
				if err == nil && a != fx.eps[e].Actions[s] && s > 0 {
					err = fmt.Errorf("state %d,%d: action %d, want %d", e, s, a, fx.eps[e].Actions[s])
				}
				if err == nil {
					_, err = FileState(f, e, s, Codes{U8: u8})
				}
				if err == nil {
					for j := range u8 {
						if uint16(u8[j]) != want[j] {
							err = fmt.Errorf("state %d,%d: wrong 8-bit codes", e, s)
							break
						}
					}
				}
				if err == nil {
					_, err = FileObs(f, e, s, obs)
				}
				if err == nil && i%10 == 0 {
					k := lens[e]
					acts, codes := make([]int64, k), make([]uint8, k*n)
					err = FileStates(f, e, 0, k, acts, Codes{U8: codes}, make([]float32, k*d))
					if err == nil {
						err = FileStates(f, e, 3, 9, acts[:6], Codes{}, nil)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Close while reads run: each read returns its state or ErrClosed.
	var wg2 sync.WaitGroup
	for range 4 {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			buf := make([]uint16, n)
			for i := range 200 {
				if _, err := FileState(f, i%4, i%lens[0], Codes{U16: buf}); err != nil {
					if Code(err) != ErrClosed {
						t.Errorf("read during close: %v", err)
					}
					return
				}
			}
		}()
	}
	if err := CloseFile(f); err != nil {
		t.Fatal(err)
	}
	wg2.Wait()
	if err := CloseFile(f); err != nil {
		t.Fatalf("closing twice: %v", err)
	}
}

// TestFileStatesMatchState: a range and a whole episode decode to what
// state-by-state reads give, codes and reconstruction.
func TestFileStatesMatchState(t *testing.T) {
	fx := setup(t)
	f, err := OpenFile(fx.path, 0, nil)
	if err == nil || Code(err) != ErrNoModel {
		t.Fatalf("a file without its model, opened without a codec: %v", err)
	}
	if f, err = OpenFile(fx.path, fx.codec, nil); err != nil {
		t.Fatal(err)
	}
	defer CloseFile(f)
	in, _ := InfoOfCodec(fx.codec)
	n, d := in.Slots*in.Subspaces, in.Slots*in.Dim
	k := len(fx.eps[2].Actions)
	acts, codes, obs := make([]int64, k), make([]uint16, k*n), make([]float32, k*d)
	if err := FileStates(f, 2, 0, k, acts, Codes{U16: codes}, obs); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(codes, fx.codes[2]) || !slices.Equal(acts[1:], fx.eps[2].Actions[1:]) {
		t.Fatal("the whole episode's codes or actions differ from those written")
	}
	one := make([]float32, d)
	for _, s := range []int{0, 15, 16, k - 1} {
		if _, err := FileObs(f, 2, s, one); err != nil || !slices.Equal(one, obs[s*d:(s+1)*d]) {
			t.Fatalf("state %d: reconstruction differs from the episode's (%v)", s, err)
		}
	}
	part := make([]uint16, 5*n)
	if err := FileStates(f, 2, 10, 15, nil, Codes{U16: part}, nil); err != nil || !slices.Equal(part, codes[10*n:15*n]) {
		t.Fatalf("steps 10 to 14 differ (%v)", err)
	}
	meta, err := FileMeta(f, 1)
	if err != nil || string(meta) != `{"n": 1}` {
		t.Fatalf("meta %q, %v", meta, err)
	}
	var info map[string]any
	b, err := FileInfo(f)
	if err != nil || json.Unmarshal(b, &info) != nil || info["states"] != float64(4*k) || info["lambda"] != nil {
		t.Fatalf("info %s, %v", b, err)
	}
	if err := FileVerify(f); err != nil {
		t.Fatal(err)
	}
}

// TestReader reads the file in order, with the embedded model or the
// codec given.
func TestReader(t *testing.T) {
	fx := setup(t)
	want, err := os.Open(fx.path)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	c, _ := codecOf(fx.codec)
	eps, err := wmzip.DecodeAll(want, c)
	if err != nil {
		t.Fatal(err)
	}
	r, err := OpenReader(fx.path, fx.codec, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := InfoOfCodec(fx.codec)
	n := in.Slots * in.Subspaces
	buf := make([]uint8, n)
	for _, ep := range eps {
		if err := ReaderNext(r); err != nil {
			t.Fatal(err)
		}
		if m, _ := ReaderMeta(r); string(m) != string(ep.Meta) {
			t.Fatalf("meta %q, want %q", m, ep.Meta)
		}
		for s := range ep.Actions {
			a, err := ReaderState(r, Codes{U8: buf})
			if err != nil || a != ep.Actions[s] {
				t.Fatalf("state %d: action %d (%v)", s, a, err)
			}
			for j, v := range buf {
				if uint16(v) != ep.Codes[s*n+j] {
					t.Fatalf("state %d: codes differ", s)
				}
			}
		}
		if _, err := ReaderState(r, Codes{}); Code(err) != EOF {
			t.Fatalf("past the episode's end: %v", err)
		}
	}
	if err := ReaderNext(r); Code(err) != EOF {
		t.Fatalf("past the last episode: %v", err)
	}
	if err := CloseReader(r); err != nil {
		t.Fatal(err)
	}
	if err := ReaderNext(r); Code(err) != ErrClosed {
		t.Fatalf("a closed reader: %v", err)
	}
}

// TestWriterModes: a distortion target searches at Close, the account
// tells of it; abort removes the file; bad input writes nothing.
func TestWriterModes(t *testing.T) {
	fx := setup(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "d.wmz")
	for _, bad := range []string{`{"keyframe": 0}`, `{"lambda": -1}`, `{"distortion": 0.1, "lambda": 2}`, `{"nope": 1}`, `[1]`, `{"levels": [2, 1]}`} {
		if _, err := CreateWriter(path, fx.codec, []byte(bad)); Code(err) != ErrInput {
			t.Errorf("options %s: %v, want ErrInput", bad, err)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("invalid options created the file: %v", err)
	}
	w, err := CreateWriter(path, fx.codec, []byte(`{"source_distortion": 0.3}`))
	if err != nil {
		t.Fatal(err)
	}
	e := fx.eps[5]
	in, _ := InfoOfCodec(fx.codec)
	per := in.Slots * in.Dim
	if err := WriterObs(w, e.Actions, len(e.Actions), e.Obs); Code(err) != ErrInput {
		t.Fatalf("a state before an episode: %v", err)
	}
	if err := WriterBegin(w, nil); err != nil {
		t.Fatal(err)
	}
	bad := slices.Clone(e.Obs[:3*per])
	bad[2*per+5] = float32(0) / float32(len(bad)-len(bad)) // NaN
	if err := WriterObs(w, e.Actions[:3], 3, bad); Code(err) != ErrInput {
		t.Fatalf("NaN: %v", err)
	}
	if err := WriterObs(w, e.Actions[:2], 3, e.Obs[:3*per]); Code(err) != ErrInput {
		t.Fatalf("2 actions for 3 states: %v", err)
	}
	if err := WriterObs(w, nil, len(e.Actions), e.Obs); err != nil {
		t.Fatal(err)
	}
	if err := CloseWriter(w); err != nil {
		t.Fatal(err)
	}
	var acct struct {
		States int64
		Bytes  int64
		Search *struct{ Distortion float64 }
		Report struct {
			Source float64 `json:"source"`
		}
	}
	b, err := WriterAccount(w)
	if err != nil || json.Unmarshal(b, &acct) != nil {
		t.Fatalf("account %s: %v", b, err)
	}
	if acct.States != int64(len(e.Actions)) || acct.Search == nil || acct.Report.Source > 0.3 {
		t.Fatalf("account %s", b)
	}
	if st, _ := os.Stat(path); st.Size() != acct.Bytes {
		t.Fatalf("account says %d bytes, the file has %d", acct.Bytes, st.Size())
	}
	if err := WriterObs(w, nil, 1, e.Obs[:per]); Code(err) != ErrClosed {
		t.Fatalf("a state after close: %v", err)
	}
	if err := CloseWriter(w); err != nil {
		t.Fatalf("closing twice: %v", err)
	}
	FreeWriter(w)

	w, err = CreateWriter(path, fx.codec, nil)
	if err != nil {
		t.Fatal(err)
	}
	WriterBegin(w, nil)
	WriterObs(w, e.Actions, len(e.Actions), e.Obs)
	if err := AbortWriter(w); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("abort left the file: %v", err)
	}
	if err := CloseWriter(w); Code(err) != ErrClosed {
		t.Fatalf("close after abort: %v", err)
	}
	FreeWriter(w)
}

// TestHandles: misused handles are errors, and the tests leak none.
func TestHandles(t *testing.T) {
	live := Live()
	fx := setup(t)
	f, err := OpenFile(fx.path, fx.codec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := InfoOfCodec(f); Code(err) != ErrInput {
		t.Fatalf("a file as a codec: %v", err)
	}
	if _, err := InfoOfCodec(0); Code(err) != ErrInput {
		t.Fatalf("handle 0: %v", err)
	}
	if _, err := InfoOfCodec(1 << 50); Code(err) != ErrInput {
		t.Fatalf("an unknown handle: %v", err)
	}
	if err := CloseReader(f); Code(err) != ErrInput {
		t.Fatalf("closing a file as a reader: %v", err)
	}
	c, err := FileCodec(f)
	if err != nil {
		t.Fatal(err)
	}
	CloseFile(f)
	if _, err := FileEpisodes(f); Code(err) != ErrClosed {
		t.Fatalf("a closed file: %v", err)
	}
	FreeCodec(c)
	FreeCodec(fx.codec)
	if n := Live(); n != live {
		t.Fatalf("%d handles live, %d before", n, live)
	}
}

// TestBuffers: arrays too small or of the wrong width are refused.
func TestBuffers(t *testing.T) {
	fx := setup(t)
	f, err := OpenFile(fx.path, fx.codec, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer CloseFile(f)
	for _, err := range []error{
		func() error { _, err := FileState(f, 0, 0, Codes{U16: make([]uint16, 3)}); return err }(),
		func() error { _, err := FileObs(f, 0, 0, make([]float32, 3)); return err }(),
		FileStates(f, 0, 0, 10, make([]int64, 9), Codes{}, nil),
		FileStates(f, 0, 5, 4, nil, Codes{}, nil),
		FileStates(f, 9, 0, 1, nil, Codes{}, nil),
		Quantize(fx.codec, make([]float32, 7), Codes{U16: make([]uint16, 64)}),
		Reconstruct(fx.codec, Codes{U16: make([]uint16, 64)}, make([]float32, 3)),
		Reconstruct(fx.codec, Codes{U8: []uint8{99}}, make([]float32, 300)),
	} {
		if Code(err) != ErrInput {
			t.Errorf("%v: want ErrInput", err)
		}
	}
}

// TestTrainInput: trajectories that break the contract are refused.
func TestTrainInput(t *testing.T) {
	tr := trajectory(walks.Episodes(1, 2))
	for name, mod := range map[string]func(*Trajectory){
		"starts":  func(t *Trajectory) { t.EpisodeStart = []int64{5} },
		"actions": func(t *Trajectory) { t.Actions = t.Actions[:3] },
		"slots":   func(t *Trajectory) { t.Slots = 0 },
		"no data": func(t *Trajectory) { t.Obs, t.Codes = nil, Codes{} },
		"shape":   func(t *Trajectory) { t.Obs = t.Obs[:len(t.Obs)-1] },
	} {
		x := tr
		mod(&x)
		if _, err := Train(context.Background(), x, []byte(trainOpts)); Code(err) != ErrInput {
			t.Errorf("%s: %v, want ErrInput", name, err)
		}
	}
	if _, err := Train(context.Background(), tr, []byte(`{"subspaces": 7}`)); Code(err) != ErrInput {
		t.Errorf("7 subspaces of 32 floats: %v, want ErrInput", err)
	}
}

// TestCode maps the library's errors to the codes of wmzip.h.
func TestCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
	}{
		{nil, OK},
		{io.EOF, EOF},
		{fmt.Errorf("x: %w", wmzip.ErrInput), ErrInput},
		{&format.FormatError{Err: wmzip.ErrChecksum}, ErrChecksum},
		{&format.FormatError{Err: io.ErrUnexpectedEOF}, ErrCorrupt},
		{wmzip.ErrModelMismatch, ErrMismatch},
		{fmt.Errorf("%w", npz.ErrContract), ErrInput},
		{&fs.PathError{Op: "open", Path: "x", Err: fs.ErrNotExist}, ErrNotFound},
		{&fs.PathError{Op: "open", Path: "x", Err: fs.ErrPermission}, ErrPermission},
		{&fs.PathError{Op: "read", Path: "x", Err: errors.New("EIO")}, ErrIO},
		{fmt.Errorf("%w: k", search.ErrInput), ErrInput},
		{fmt.Errorf("%w: crc", search.ErrIndex), ErrCorrupt},
		{fmt.Errorf("%w: model", search.ErrStale), ErrMismatch},
		{BufferError(10, 3), ErrBuffer},
		{Recovered("boom"), ErrInternal},
		{errors.New("other"), ErrOther},
	} {
		if got := Code(c.err); got != c.code {
			t.Errorf("Code(%v) = %d, want %d", c.err, got, c.code)
		}
	}
}
