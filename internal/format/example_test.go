package format_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/graphworld"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/train"
)

// walks stands in for an agent's trajectories: episodes of states of
// S×M codes below K, and the actions that led into them.
func walks(seed uint64, episodes int) (wm.Geometry, []wm.Episode) {
	w, err := graphworld.Generate(graphworld.Config{
		Nodes: 40, GraphSeed: 1, Seed: seed, Episodes: episodes, Steps: 50,
		Slots: 8, Subspaces: 8, K: 16,
	})
	if err != nil {
		log.Fatal(err)
	}
	g := wm.Geometry{S: w.S, M: w.M, K: w.K}
	return g, split(g, w.Codes, w.Actions, w.EpisodeStart)
}

// split cuts time-major codes and actions into episodes.
func split(g wm.Geometry, codes []uint16, actions, starts []int64) []wm.Episode {
	var eps []wm.Episode
	for i, s := range starts {
		e := int64(len(actions))
		if i+1 < len(starts) {
			e = starts[i+1]
		}
		n := int64(g.N())
		eps = append(eps, wm.Episode{Codes: codes[s*n : e*n], Actions: actions[s:e]})
	}
	return eps
}

// encode writes episodes as a .wmz file.
func encode(w io.Writer, model *wm.Model, eps []wm.Episode, opts ...format.Option) error {
	fw, err := format.NewWriter(w, model, opts...)
	if err != nil {
		return err
	}
	n := model.Geom.N()
	for _, ep := range eps {
		if err := fw.WriteEpisode(nil); err != nil { // nil or JSON metadata
			return err
		}
		for t, a := range ep.Actions {
			if err := fw.WriteState(a, ep.Codes[t*n:(t+1)*n]); err != nil {
				return err
			}
		}
	}
	return fw.Close() // writes the index and trailer; does not close w
}

// Lossless coding of codes: train a world model, write a file, read it back.
func Example() {
	g, train := walks(1, 8)
	_, test := walks(2, 3)
	model, err := wm.Train(g, train, wm.TrainOptions{})
	if err != nil {
		log.Fatal(err)
	}
	var file bytes.Buffer
	if err := encode(&file, model, test); err != nil {
		log.Fatal(err)
	}

	r, err := format.NewReader(&file, model)
	if err != nil {
		log.Fatal(err)
	}
	n, same, states := g.N(), true, 0
	var codes []uint16
	for e := 0; ; e++ {
		if _, err := r.NextEpisode(); err == io.EOF {
			break // the whole file, index and trailer included, is checked
		} else if err != nil {
			log.Fatal(err)
		}
		for t := 0; ; t++ {
			_, codes, err = r.ReadState(codes)
			if err == io.EOF {
				break
			} else if err != nil {
				log.Fatal(err)
			}
			same = same && slices.Equal(codes, test[e].Codes[t*n:(t+1)*n])
			states++
		}
	}
	info, _ := r.Info()
	fmt.Println(states, "states decoded, equal to the input:", same)
	fmt.Println("smaller than the raw codes:", info.FileBytes*8 < int64(states*n*4))
	// Output:
	// 150 states decoded, equal to the input: true
	// smaller than the raw codes: true
}

// Random access: a File reads the index at the end of the file and decodes
// single states on demand, from the keyframe of their chunk; its chunk
// cache makes the next states of a chunk cheap.
func ExampleOpen() {
	g, train := walks(1, 8)
	_, test := walks(2, 3)
	model, err := wm.Train(g, train, wm.TrainOptions{})
	if err != nil {
		log.Fatal(err)
	}
	var file bytes.Buffer
	if err := encode(&file, model, test, format.WithKeyframeInterval(16)); err != nil {
		log.Fatal(err)
	}

	// Any io.ReaderAt: an *os.File, a memory map, an HTTP range reader.
	f, err := format.Open(bytes.NewReader(file.Bytes()), int64(file.Len()), model,
		format.WithCacheBytes(16<<20))
	if err != nil {
		log.Fatal(err)
	}
	state, err := f.State(2, 40) // a new slice
	if err != nil {
		log.Fatal(err)
	}
	var buf []uint16
	for t := 40; t < f.EpisodeLen(2); t++ {
		// ReadState reuses buf; the cached chunk continues where it stopped.
		if _, buf, err = f.ReadState(2, t, buf); err != nil {
			log.Fatal(err)
		}
	}
	n := g.N()
	fmt.Println(f.Episodes(), "episodes;", f.EpisodeLen(2), "states in episode 2")
	fmt.Println("state 40:", slices.Equal(state, test[2].Codes[40*n:41*n]))
	fmt.Println("last state:", slices.Equal(buf, test[2].Codes[49*n:50*n]))
	// Output:
	// 3 episodes; 50 states in episode 2
	// state 40: true
	// last state: true
}

// Append adds episodes to a closed file in place: the result is the file
// that writing all the episodes at once would have given.
func ExampleAppend() {
	g, train := walks(1, 8)
	_, test := walks(2, 3)
	model, err := wm.Train(g, train, wm.TrainOptions{})
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "wmzip-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "memory.wmz")
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := encode(f, model, test[:2]); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}

	// Later: one more episode.
	f, err = os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	w, err := format.Append(f, model)
	if err != nil {
		log.Fatal(err)
	}
	n := g.N()
	if err := w.WriteEpisode(nil); err != nil {
		log.Fatal(err)
	}
	for t, a := range test[2].Actions {
		if err := w.WriteState(a, test[2].Codes[t*n:(t+1)*n]); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	appended, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var once bytes.Buffer
	if err := encode(&once, model, test); err != nil {
		log.Fatal(err)
	}
	fmt.Println("same bytes as writing all at once:", bytes.Equal(appended, once.Bytes()))
	// Output:
	// same bytes as writing all at once: true
}

// A writer that dies before Close leaves a file without an index. What it
// wrote before its last Flush is recovered: Recover writes that prefix as
// a complete file (wmzip recover does the same).
func ExampleRecover() {
	g, train := walks(1, 8)
	_, test := walks(2, 3)
	model, err := wm.Train(g, train, wm.TrainOptions{})
	if err != nil {
		log.Fatal(err)
	}
	var disk bytes.Buffer // what reached the disk
	w, err := format.NewWriter(&disk, model)
	if err != nil {
		log.Fatal(err)
	}
	n := g.N()
	for e, ep := range test {
		if err := w.WriteEpisode(nil); err != nil {
			log.Fatal(err)
		}
		for t, a := range ep.Actions {
			if e == 2 && t == 20 {
				break // the process dies here, before Close
			}
			if err := w.WriteState(a, ep.Codes[t*n:(t+1)*n]); err != nil {
				log.Fatal(err)
			}
		}
		if e < 2 {
			if err := w.Flush(); err != nil { // durable from here on
				log.Fatal(err)
			}
		}
	}

	var fixed bytes.Buffer
	rec, info, err := format.Recover(&fixed, bytes.NewReader(disk.Bytes()), int64(disk.Len()), model)
	if err != nil {
		log.Fatal(err)
	}
	f, err := format.Open(bytes.NewReader(fixed.Bytes()), int64(fixed.Len()), model)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("nothing lost:", rec.Complete)
	fmt.Println("recovered", info.Episodes, "episodes,", info.States, "states; verified:", f.Verify() == nil)
	// Output:
	// nothing lost: false
	// recovered 2 episodes, 100 states; verified: true
}

// Lossy coding at a distortion target, on float observations: a quantizer
// turns each slot vector into codes, the retention gate is calibrated on
// held-out episodes in the quantizer's distances, and SearchLambda finds
// the least-storage λ whose reconstruction meets the target.
func ExampleSearchLambda() {
	w, err := graphworld.Generate(graphworld.Config{
		Nodes: 40, GraphSeed: 1, Seed: 1, Episodes: 10, Steps: 50,
		Slots: 8, Subspaces: 16, K: 32, Obs: true, ObsDim: 64, ObsSigma: 0.3,
	})
	if err != nil {
		log.Fatal(err)
	}
	q, err := train.Quantizer(w.Obs, opq.Config{Dim: w.ObsDim, M: 16, K: 32, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	codes := make([]uint16, len(w.Obs)/q.Dim()*q.M())
	if err := q.Encode(w.Obs, codes); err != nil {
		log.Fatal(err)
	}
	g := wm.Geometry{S: w.S, M: q.M(), K: q.K()}
	eps := split(g, codes, w.Actions, w.EpisodeStart)
	trainEps, held, test := eps[:7], eps[7:8], eps[8:]

	model, err := wm.Train(g, trainEps, wm.TrainOptions{})
	if err != nil {
		log.Fatal(err)
	}
	// Distortion is measured in the quantizer's space: squared distances
	// between codes, relative to the mean squared norm of a slot vector.
	dist := q.DistanceTables(16)
	_, slotNorm, err := gate.EmbeddingScale(dist, g, held[0].Codes, q.Dim(), q.Decode)
	if err != nil {
		log.Fatal(err)
	}
	params, err := gate.Calibrate(model, held, gate.CalibOptions{Dist: dist, SlotNorm: slotNorm})
	if err != nil {
		log.Fatal(err)
	}
	if model, err = gate.Apply(model, params); err != nil {
		log.Fatal(err)
	}
	qb, _ := q.MarshalBinary() // decoders of the model get the quantizer too
	if model, err = model.WithSection(gate.QuantizerTag, qb); err != nil {
		log.Fatal(err)
	}

	const target = 0.05
	res, err := format.SearchLambda(context.Background(), model, test, target, nil)
	if err != nil {
		log.Fatal(err)
	}
	var lossless bytes.Buffer
	if err := encode(&lossless, model, test); err != nil {
		log.Fatal(err)
	}
	fmt.Println("distortion within the target:", res.Distortion <= target)
	fmt.Println("within a fifth of it:", res.Distortion >= 0.8*target)
	fmt.Println("smaller than lossless:", len(res.File) < lossless.Len())
	// Output:
	// distortion within the target: true
	// within a fifth of it: true
	// smaller than lossless: true
}
