package wmzip_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/ctmc"
	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/internal/graphworld"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/opq"
)

// walks stands in for an agent's trajectories: episodes of 50 states of 8
// slot vectors (32 floats each, and their codes), and the actions that
// led into them.
func walks(seed uint64, episodes int) []wmzip.Episode {
	w, err := graphworld.Generate(graphworld.Config{
		Nodes: 40, GraphSeed: 1, Seed: seed, Episodes: episodes, Steps: 50,
		Slots: 8, Subspaces: 8, K: 16, Obs: true, ObsDim: 32,
	})
	if err != nil {
		log.Fatal(err)
	}
	var eps []wmzip.Episode
	n, d := w.S*w.M, w.S*w.ObsDim
	for i := range w.EpisodeStart {
		s, e := w.Span(i)
		eps = append(eps, wmzip.Episode{
			Actions: w.Actions[s:e], Slots: w.S,
			Codes: w.Codes[s*int64(n) : e*int64(n)], Obs: w.Obs[s*int64(d) : e*int64(d)],
		})
	}
	return eps
}

// codesOnly drops the observations: the episodes an agent with its own
// quantizer would have.
func codesOnly(eps []wmzip.Episode) []wmzip.Episode {
	out := slices.Clone(eps)
	for i := range out {
		out[i].Obs = nil
	}
	return out
}

// Lossless codes: train a codec on past episodes, write others, read them
// back exactly.
func Example() {
	ctx := context.Background()
	train, test := codesOnly(walks(1, 8)), codesOnly(walks(2, 2))
	codec, err := wmzip.Train(ctx, train)
	if err != nil {
		log.Fatal(err)
	}

	var file bytes.Buffer
	w, err := wmzip.NewWriter(&file, codec) // lossless by default
	if err != nil {
		log.Fatal(err)
	}
	for i := range test {
		if err := w.WriteEpisodeOf(&test[i]); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil { // does not close file
		log.Fatal(err)
	}

	r, err := wmzip.NewReader(&file, codec)
	if err != nil {
		log.Fatal(err)
	}
	var codes []uint16
	same, states := true, 0
	for e := 0; ; e++ {
		if _, err := r.NextEpisode(); err == io.EOF {
			break
		} else if err != nil {
			log.Fatal(err)
		}
		n := len(test[e].Codes) / len(test[e].Actions)
		for t := 0; ; t++ {
			if _, codes, err = r.ReadState(codes); err == io.EOF {
				break
			} else if err != nil {
				log.Fatal(err)
			}
			same = same && slices.Equal(codes, test[e].Codes[t*n:(t+1)*n])
			states++
		}
	}
	fmt.Printf("%d states, decoded exactly: %v\n", states, same)
	// Output: 100 states, decoded exactly: true
}

// Lossy observations at a distortion target: the codec quantizes float
// observations, and the Writer keeps the states until Close, then writes
// them at the least-storage λ whose mean relative distortion meets the
// target.
func ExampleWithDistortion() {
	ctx := context.Background()
	codec, err := wmzip.Train(ctx, walks(1, 8),
		wmzip.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 1, OPQIters: -1}))
	if err != nil {
		log.Fatal(err)
	}
	test := walks(2, 2)
	const target = 0.05
	var file bytes.Buffer
	acct, err := wmzip.Encode(ctx, &file, codec, test, wmzip.WithDistortion(target))
	if err != nil {
		log.Fatal(err) // wmzip.ErrNoLambda: the target needs lossless coding
	}

	// A reader gets float vectors back: the reconstruction the writer measured.
	f, err := wmzip.NewFile(bytes.NewReader(file.Bytes()), int64(file.Len()), codec)
	if err != nil {
		log.Fatal(err)
	}
	obs, err := f.Obs(1, 20, nil) // episode 1, state 20: 8 slot vectors
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("states:", acct.States, "floats per state:", len(obs))
	info := f.Info()
	fmt.Println("coordinates kept < all:", info.Retained < uint64(info.States)*uint64(codec.Geometry().N()))
	// Output:
	// states: 100 floats per state: 256
	// coordinates kept < all: true
}

// Random access: Open reads the index at the end of the file; a state
// decodes from its chunk's keyframe, and a File is safe for concurrent use.
func ExampleOpen() {
	ctx := context.Background()
	codec, err := wmzip.Train(ctx, codesOnly(walks(1, 8)))
	if err != nil {
		log.Fatal(err)
	}
	path := filepath.Join(os.TempDir(), "example-open.wmz")
	defer os.Remove(path)
	out, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	test := codesOnly(walks(2, 2))
	if _, err := wmzip.Encode(ctx, out, codec, test, wmzip.WithKeyframeInterval(16)); err != nil {
		log.Fatal(err)
	}
	if err := out.Close(); err != nil {
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
	fmt.Println(f.Episodes(), "episodes; state (1, 40) exact:", slices.Equal(state, test[1].Codes[40*n:41*n]))
	// Output: 2 episodes; state (1, 40) exact: true
}

// Append and recovery: Append continues a closed file in place; what a
// Writer flushed survives a crash, and Recover keeps it.
func ExampleAppend() {
	ctx := context.Background()
	codec, err := wmzip.Train(ctx, codesOnly(walks(1, 8)))
	if err != nil {
		log.Fatal(err)
	}
	test := codesOnly(walks(2, 3))
	path := filepath.Join(os.TempDir(), "example-append.wmz")
	defer os.Remove(path)
	out, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := wmzip.Encode(ctx, out, codec, test[:1]); err != nil {
		log.Fatal(err)
	}
	out.Close()

	// Later: one more episode.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	w, err := wmzip.Append(f, codec)
	if err != nil {
		log.Fatal(err)
	}
	if err := w.WriteEpisodeOf(&test[1]); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	// A writer that flushed and then died: its file has no index.
	var disk bytes.Buffer
	w, err = wmzip.NewWriter(&disk, codec, wmzip.WithKeyframeInterval(16))
	if err != nil {
		log.Fatal(err)
	}
	for i := range test {
		if err := w.WriteEpisodeOf(&test[i]); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	var fixed bytes.Buffer
	if _, _, err := wmzip.Recover(&fixed, bytes.NewReader(disk.Bytes()), int64(disk.Len()), codec); err != nil {
		log.Fatal(err)
	}
	recovered, err := wmzip.NewFile(bytes.NewReader(fixed.Bytes()), int64(fixed.Len()), codec)
	if err != nil {
		log.Fatal(err)
	}

	st, _ := f.Stat()
	appended, err := wmzip.NewFile(f, st.Size(), codec)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("appended file:", appended.Episodes(), "episodes")
	fmt.Println("recovered:", recovered.Episodes(), "episodes")
	// Output:
	// appended file: 2 episodes
	// recovered: 3 episodes
}

// Storage by access: states read often keep more, the file within a
// budget. The counts come from an access trace (WithAccessLog writes one
// as a File is read).
func ExampleStoreByAccess() {
	ctx := context.Background()
	codec, err := wmzip.Train(ctx, codesOnly(walks(1, 8)))
	if err != nil {
		log.Fatal(err)
	}
	test := codesOnly(walks(2, 2))
	var trace []ctmc.Access
	for k := range 20 { // the first states of episode 0 are read often
		trace = append(trace, ctmc.Access{Episode: 0, Step: int64(k % 10)}, ctmc.Access{Episode: 1, Step: int64(k)})
	}
	counts, _ := wmzip.AccessCounts(trace, test)

	const budget = 40 // bits/state; lossless takes 76 here
	var file bytes.Buffer
	res, err := wmzip.StoreByAccess(ctx, &file, codec, test, counts, budget)
	if err != nil {
		log.Fatal(err) // wmzip.ErrBudget: below the lowest level's rate
	}
	var hot, cold int // the read states' levels against the unread ones' of episode 0
	for t := range 20 {
		if t < 10 {
			hot += res.Levels[t]
		} else {
			cold += res.Levels[t]
		}
	}
	fmt.Println("within budget:", res.Bits <= budget, "read states keep more:", hot > cold)
	// Output: within budget: true read states keep more: true
}

// Audit: is an access trace heavy-tailed enough for storage by access to
// pay? (package ctmc).
func Example_audit() {
	counts := make([]int64, 200)
	for i := range counts {
		counts[i] = int64(1000 / (i + 1)) // a Zipf-like trace
	}
	rep, err := ctmc.Audit(counts, ctmc.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("Gini %.2f, top-10%% share %.2f\n", rep.Concentration.Gini, rep.Concentration.Top10Share)
	// Output: Gini 0.68, top-10% share 0.62
}

// A codec is saved once and shared by every writer and reader.
func ExampleCodec() {
	codec, err := wmzip.Train(context.Background(), codesOnly(walks(1, 8)))
	if err != nil {
		log.Fatal(err)
	}
	path := filepath.Join(os.TempDir(), "example.wmm")
	defer os.Remove(path)
	if err := codec.Save(path); err != nil {
		log.Fatal(err)
	}
	loaded, err := wmzip.LoadCodec(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("same model:", loaded.ID() == codec.ID(), "gate:", loaded.HasGate(), "quantizer:", loaded.Quantizer() != nil)
	// Output: same model: true gate: true quantizer: false
}

// Train on float observations: the codec learns a quantizer (here 8
// subspaces of 16 centroids per 32-float slot vector), the world model and
// the retention gate.
func ExampleTrain() {
	codec, err := wmzip.Train(context.Background(), walks(1, 8),
		wmzip.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 1, OPQIters: -1}),
		wmzip.WithProgress(func(stage string, done, total int) {})) // a progress bar plugs in here
	if err != nil {
		log.Fatal(err)
	}
	g := codec.Geometry()
	fmt.Printf("%d slots × %d codes < %d; slot vectors of %d floats; gate: %v\n", g.S, g.M, g.K, codec.Dim(), codec.HasGate())
	// Output: 8 slots × 8 codes < 16; slot vectors of 32 floats; gate: true
}

// Per-state levels: the writer declares retention levels and picks one
// before each state; a reader reports the level of every state it reads.
func ExampleNewWriter() {
	ctx := context.Background()
	codec, err := wmzip.Train(ctx, codesOnly(walks(1, 8)))
	if err != nil {
		log.Fatal(err)
	}
	test := codesOnly(walks(2, 1))[0]
	var file bytes.Buffer
	// Level 0 keeps little (λ = 1 in 16.16 fixed point), level 1 everything.
	w, err := wmzip.NewWriter(&file, codec, wmzip.WithLevels(1<<16, format.LambdaLossless))
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

// A Reader gives states back as float vectors, the quantizer's
// reconstruction of their codes.
func ExampleNewReader() {
	ctx := context.Background()
	codec, err := wmzip.Train(ctx, walks(1, 8), wmzip.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 1, OPQIters: -1}))
	if err != nil {
		log.Fatal(err)
	}
	var file bytes.Buffer
	if _, err := wmzip.Encode(ctx, &file, codec, walks(2, 1)); err != nil {
		log.Fatal(err)
	}
	r, err := wmzip.NewReader(&file, codec)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := r.NextEpisode(); err != nil {
		log.Fatal(err)
	}
	var obs []float32
	for {
		if _, obs, err = r.ReadObs(obs); err == io.EOF {
			break
		} else if err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("floats read:", len(obs)) // 50 states × 8 slots × 32
	// Output: floats read: 12800
}

// Trajectory .npz files of any length, state by state: a TrajectoryReader
// feeds the encoder and File.WriteNPZ writes the decode, each holding a
// block of states at a time.
func ExampleEncodeTrajectory() {
	ctx := context.Background()
	codec, err := wmzip.Train(ctx, codesOnly(walks(1, 8)))
	if err != nil {
		log.Fatal(err)
	}
	res, err := graphworld.Generate(graphworld.Config{Nodes: 40, GraphSeed: 1, Seed: 2, Episodes: 2, Steps: 50, Slots: 8, Subspaces: 8, K: 16})
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "wmzip-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	in, wmz, back := filepath.Join(dir, "in.npz"), filepath.Join(dir, "x.wmz"), filepath.Join(dir, "back.npz")
	if err := npz.WriteTrajectory(in, res.Trajectory()); err != nil {
		log.Fatal(err)
	}

	src, err := npz.OpenTrajectory(in)
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	out, err := os.Create(wmz)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := wmzip.EncodeTrajectory(ctx, out, codec, src); err != nil {
		log.Fatal(err)
	}
	if err := out.Close(); err != nil {
		log.Fatal(err)
	}
	f, err := wmzip.Open(wmz, codec)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	if err := f.WriteNPZ(back, wmzip.NPZOptions{Episode: -1, Step: -1}); err != nil {
		log.Fatal(err)
	}

	tr, err := npz.ReadTrajectory(back)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tr.T, "states,", len(tr.EpisodeStart), "episodes; exact:", slices.Equal(tr.Codes, res.Trajectory().Codes))
	// Output: 100 states, 2 episodes; exact: true
}
