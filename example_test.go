package wmzip_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/walks"
	"github.com/wmzip/wmzip/train"
)

// obsCodec is a codec of float observations trained on walks: 8 subspaces
// of 16 centroids per 32-float slot vector.
func obsCodec() *wmzip.Codec {
	c, err := train.Codec(context.Background(), walks.Episodes(1, 8),
		train.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 1, OPQIters: -1}))
	if err != nil {
		log.Fatal(err)
	}
	return c
}

// codesCodec is a codec of codes trained on walks.
func codesCodec() *wmzip.Codec {
	c, err := train.Codec(context.Background(), walks.CodesOnly(walks.Episodes(1, 8)))
	if err != nil {
		log.Fatal(err)
	}
	return c
}

// Lossless codes: write episodes with a codec trained on past ones, read
// them back exactly.
func Example() {
	codec := codesCodec()
	test := walks.CodesOnly(walks.Episodes(2, 2))

	var file bytes.Buffer
	w, err := wmzip.NewWriter(&file, codec) // lossless by default
	if err != nil {
		log.Fatal(err)
	}
	if err := w.WriteAll(test); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil { // does not close file
		log.Fatal(err)
	}

	back, err := wmzip.DecodeAll(&file, codec)
	if err != nil {
		log.Fatal(err)
	}
	same := len(back) == len(test)
	for i := range back {
		same = same && slices.Equal(back[i].Codes, test[i].Codes) && slices.Equal(back[i].Actions[1:], test[i].Actions[1:])
	}
	fmt.Printf("%d episodes, decoded exactly: %v\n", len(back), same)
	// Output: 2 episodes, decoded exactly: true
}

// Lossy observations at a distortion target against them: the Writer
// keeps the states until Close, then writes the least storage whose mean
// relative squared error against the observations meets the target.
func ExampleWithSourceDistortion() {
	codec := obsCodec()
	test := walks.Episodes(2, 2)

	var file bytes.Buffer
	w, err := wmzip.NewWriter(&file, codec, wmzip.WithSourceDistortion(0.2))
	if err != nil {
		log.Fatal(err)
	}
	if err := w.WriteAll(test); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err) // ErrInput: a target below what the quantizer alone loses
	}
	rep := w.Account().Report
	fmt.Printf("distortion against the observations at most 0.2: %v\n", rep.SourceDistortion() <= 0.2)

	// A reader gets float vectors back: the reconstruction the writer measured.
	f, err := wmzip.NewFile(bytes.NewReader(file.Bytes()), int64(file.Len()), codec)
	if err != nil {
		log.Fatal(err)
	}
	_, obs, err := f.Obs(1, 20, nil) // episode 1, state 20: 8 slot vectors
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("floats per state:", len(obs), "recorded in the file:", f.Info().Report == rep)
	// Output:
	// distortion against the observations at most 0.2: true
	// floats per state: 256 recorded in the file: true
}

// One retention trade-off for every state: larger λ keeps more.
func ExampleWithLambda() {
	codec := codesCodec()
	test := walks.CodesOnly(walks.Episodes(2, 2))
	size := func(opts ...wmzip.WriterOption) int {
		var file bytes.Buffer
		w, err := wmzip.NewWriter(&file, codec, opts...)
		if err != nil {
			log.Fatal(err)
		}
		if err := w.WriteAll(test); err != nil {
			log.Fatal(err)
		}
		if err := w.Close(); err != nil {
			log.Fatal(err)
		}
		return file.Len()
	}
	lossless, lossy := size(), size(wmzip.WithLambda(4))
	fmt.Println("smaller than lossless:", lossy < lossless)
	// Output: smaller than lossless: true
}

// Random access: Open reads the index at the end of the file; a state
// decodes from its chunk's keyframe, and a File is safe for concurrent use.
func ExampleOpen() {
	codec := codesCodec()
	test := walks.CodesOnly(walks.Episodes(2, 2))
	path := filepath.Join(os.TempDir(), "example-open.wmz")
	defer os.Remove(path)
	w, err := wmzip.Create(path, codec, wmzip.WithKeyframeInterval(16))
	if err != nil {
		log.Fatal(err)
	}
	if err := w.WriteAll(test); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil { // completes and closes the file
		log.Fatal(err)
	}

	f, err := wmzip.Open(path, codec)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	_, state, err := f.State(1, 40, nil)
	if err != nil {
		log.Fatal(err)
	}
	n := len(state)
	fmt.Println("states per episode:", f.Episodes(), "state (1, 40) exact:", slices.Equal(state, test[1].Codes[40*n:41*n]))
	// Output: states per episode: [50 50] state (1, 40) exact: true
}

// Append and recovery: Append continues a closed file in place; what a
// Writer flushed survives a crash, and Recover keeps it.
func ExampleAppend() {
	codec := codesCodec()
	test := walks.CodesOnly(walks.Episodes(2, 3))
	path := filepath.Join(os.TempDir(), "example-append.wmz")
	defer os.Remove(path)
	w, err := wmzip.Create(path, codec)
	if err != nil {
		log.Fatal(err)
	}
	if err := w.WriteAll(test[:1]); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	// Later: one more episode.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	if w, err = wmzip.Append(f, codec); err != nil {
		log.Fatal(err)
	}
	if err := w.WriteAll(test[1:2]); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	st, _ := f.Stat()
	appended, err := wmzip.NewFile(f, st.Size(), codec)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("appended file:", len(appended.Episodes()), "episodes")

	// A writer that flushed and then died: its file has no index.
	var disk bytes.Buffer
	if w, err = wmzip.NewWriter(&disk, codec, wmzip.WithKeyframeInterval(16)); err != nil {
		log.Fatal(err)
	}
	if err := w.WriteAll(test); err != nil {
		log.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	var fixed bytes.Buffer
	_, info, err := wmzip.Recover(&fixed, bytes.NewReader(disk.Bytes()), int64(disk.Len()), codec)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("recovered:", info.Episodes, "episodes")
	// Output:
	// appended file: 2 episodes
	// recovered: 3 episodes
}

// Streaming: a Writer takes one state at a time and a Reader gives them
// back in order, as float vectors (the quantizer's reconstruction of
// their codes); neither holds more than a chunk of states.
func ExampleNewReader() {
	codec := obsCodec()
	ep := walks.Episodes(2, 1)[0]
	var file bytes.Buffer
	w, err := wmzip.NewWriter(&file, codec)
	if err != nil {
		log.Fatal(err)
	}
	if err := w.WriteEpisode([]byte(`{"task":"walk"}`)); err != nil {
		log.Fatal(err)
	}
	per := len(ep.Obs) / len(ep.Actions) // floats per state
	for t, a := range ep.Actions {
		if err := w.WriteObs(a, ep.Obs[t*per:(t+1)*per]); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	r, err := wmzip.NewReader(&file, codec)
	if err != nil {
		log.Fatal(err)
	}
	meta, err := r.NextEpisode()
	if err != nil {
		log.Fatal(err)
	}
	var obs []float32 // reused by every call
	states := 0
	for {
		if _, obs, err = r.ReadObs(obs); err == io.EOF {
			break
		} else if err != nil {
			log.Fatal(err)
		}
		states++
	}
	fmt.Println(string(meta), states, "states of", len(obs), "floats")
	// Output: {"task":"walk"} 50 states of 256 floats
}

// Per-state levels: the writer declares retention levels and picks one
// before each state; a reader reports the level of every state it reads.
func ExampleWithLevels() {
	codec := codesCodec()
	test := walks.CodesOnly(walks.Episodes(2, 1))[0]
	var file bytes.Buffer
	// Level 0 keeps little, level 1 everything.
	w, err := wmzip.NewWriter(&file, codec, wmzip.WithLevels(1, math.Inf(1)))
	if err != nil {
		log.Fatal(err)
	}
	if err := w.WriteEpisode(nil); err != nil {
		log.Fatal(err)
	}
	n := len(test.Codes) / len(test.Actions)
	for t, a := range test.Actions {
		if err := w.SetLevel(min(t/25, 1)); err != nil { // the last 25 states lossless
			log.Fatal(err)
		}
		if err := w.WriteCodes(a, test.Codes[t*n:(t+1)*n]); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	r, err := wmzip.NewReader(&file, codec)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := r.NextEpisode(); err != nil {
		log.Fatal(err)
	}
	exact := 0
	for t := 0; ; t++ {
		_, codes, err := r.ReadState(nil)
		if err == io.EOF {
			break
		} else if err != nil {
			log.Fatal(err)
		}
		if r.Level() == 1 && slices.Equal(codes, test.Codes[t*n:(t+1)*n]) {
			exact++
		}
	}
	fmt.Println("lossless states decoded exactly:", exact)
	// Output: lossless states decoded exactly: 25
}

// A codec is saved once and shared by every writer and reader; a file
// that embeds it decodes without it.
func ExampleLoadCodec() {
	codec := codesCodec()
	path := filepath.Join(os.TempDir(), "example.wmm")
	defer os.Remove(path)
	b, err := codec.MarshalBinary()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		log.Fatal(err)
	}
	loaded, err := wmzip.LoadCodec(path)
	if err != nil {
		log.Fatal(err)
	}

	var file bytes.Buffer
	w, err := wmzip.NewWriter(&file, loaded, wmzip.WithEmbeddedModel(true))
	if err != nil {
		log.Fatal(err)
	}
	if err := w.WriteAll(walks.CodesOnly(walks.Episodes(2, 1))); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	eps, err := wmzip.DecodeAll(&file, nil) // no codec: the file's own
	if err != nil {
		log.Fatal(err)
	}
	g := loaded.Model().Geom
	fmt.Printf("same model: %v; %d slots × %d codes < %d; %d states decoded\n", loaded.Model().ID() == codec.Model().ID(), g.S, g.M, g.K, len(eps[0].Actions))
	// Output: same model: true; 8 slots × 8 codes < 16; 50 states decoded
}

// A distortion target against the lossless reconstruction: what
// retention alone may lose, whatever the quantizer loses besides.
func ExampleWithDistortion() {
	codec := codesCodec()
	test := walks.CodesOnly(walks.Episodes(2, 2))
	var file bytes.Buffer
	w, err := wmzip.NewWriter(&file, codec, wmzip.WithDistortion(0.02))
	if err != nil {
		log.Fatal(err)
	}
	if err := w.WriteAll(test); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil { // searches λ, then writes the file
		log.Fatal(err)
	}
	acct := w.Account()
	fmt.Println("at most 0.02:", acct.Report.RetentionDistortion() <= 0.02, "coordinates kept < all:", acct.Retained < uint64(acct.States)*64)
	// Output: at most 0.02: true coordinates kept < all: true
}

// One Writer writes many files: Reset points it at the next, with the
// same codec and options.
func ExampleWriter_Reset() {
	codec := codesCodec()
	days := [][]wmzip.Episode{walks.CodesOnly(walks.Episodes(2, 1)), walks.CodesOnly(walks.Episodes(3, 1))}
	w, err := wmzip.NewWriter(io.Discard, codec, wmzip.WithKeyframeInterval(32))
	if err != nil {
		log.Fatal(err)
	}
	for i, day := range days {
		var file bytes.Buffer
		if err := w.Reset(&file); err != nil {
			log.Fatal(err)
		}
		if err := w.WriteAll(day); err != nil {
			log.Fatal(err)
		}
		if err := w.Close(); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("day %d: %d states\n", i, w.Account().States)
	}
	// Output:
	// day 0: 50 states
	// day 1: 50 states
}
