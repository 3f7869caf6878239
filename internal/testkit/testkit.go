// Package testkit holds the test helpers that the packages' tests and the
// fuzz targets share: episode generators, decode-everything helpers and
// their comparison, and the switch of the long suites (Long, Stride). It
// does not import format, whose internal tests import it; readers and
// files come in through the small interfaces below.
package testkit

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"

	"github.com/wmzip/wmzip/internal/wm"
)

// Episode is one test episode.
type Episode struct {
	Meta    []byte
	Actions []int64
	Codes   []uint16 // len(Actions) × N
}

// GenEpisodes builds episodes of the given lengths with persistent,
// skewed codes and a few action kinds, including extreme actions.
func GenEpisodes(rng *rand.Rand, g wm.Geometry, lens []int) []Episode {
	n := g.N()
	eps := make([]Episode, len(lens))
	for i, T := range lens {
		e := &eps[i]
		if i%2 == 0 {
			e.Meta = fmt.Appendf(nil, `{"episode":%d,"note":"test"}`, i)
		}
		e.Actions = make([]int64, T)
		e.Codes = make([]uint16, T*n)
		prev := make([]uint16, n)
		for j := range prev {
			prev[j] = uint16(rng.IntN(g.K))
		}
		for t := 0; t < T; t++ {
			switch r := rng.IntN(20); {
			case t == 0:
				e.Actions[t] = wm.NoAction
			case r < 12:
				e.Actions[t] = e.Actions[t-1]
			case r < 18:
				e.Actions[t] = int64(rng.IntN(7))
			case r == 18:
				e.Actions[t] = rng.Int64() - rng.Int64()
			default:
				e.Actions[t] = []int64{-1 << 63, 1<<63 - 1, -17, 16, 1 << 40}[rng.IntN(5)]
			}
			for j := 0; j < n; j++ {
				v := prev[j]
				if rng.IntN(10) >= 7 {
					v = uint16(min(rng.ExpFloat64()*float64(g.K)/8, float64(g.K-1)))
				}
				e.Codes[t*n+j] = v
				prev[j] = v
			}
		}
	}
	return eps
}

// StreamReader is what ReadAll needs of a sequential reader
// (format.Reader).
type StreamReader interface {
	NextEpisode() (meta []byte, err error)
	ReadState(dst []uint16) (action int64, codes []uint16, err error)
}

// ReadAll decodes every episode of a stream, reusing one state buffer.
func ReadAll(r StreamReader) ([]Episode, error) {
	var eps []Episode
	for {
		meta, err := r.NextEpisode()
		if err == io.EOF {
			return eps, nil
		}
		if err != nil {
			return nil, err
		}
		e := Episode{Meta: meta}
		var codes []uint16
		for {
			a, c, err := r.ReadState(codes)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			e.Actions = append(e.Actions, a)
			e.Codes = append(e.Codes, c...)
			codes = c
		}
		eps = append(eps, e)
	}
}

// EpisodeFile is what FileEpisodes needs of a random-access file
// (format.File).
type EpisodeFile interface {
	Episodes() int
	Metadata(e int) ([]byte, error)
	DecodeEpisode(e int) (actions []int64, codes []uint16, err error)
}

// FileEpisodes decodes every episode of a file through its index.
func FileEpisodes(f EpisodeFile) ([]Episode, error) {
	eps := make([]Episode, f.Episodes())
	for i := range eps {
		var err error
		if eps[i].Meta, err = f.Metadata(i); err != nil {
			return nil, err
		}
		if eps[i].Actions, eps[i].Codes, err = f.DecodeEpisode(i); err != nil {
			return nil, err
		}
	}
	return eps, nil
}

// SameEpisodes says how a differs from b, or returns nil.
func SameEpisodes(a, b []Episode) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d episodes, want %d", len(a), len(b))
	}
	for i := range a {
		if !bytes.Equal(a[i].Meta, b[i].Meta) {
			return fmt.Errorf("episode %d: metadata %q, want %q", i, a[i].Meta, b[i].Meta)
		}
		if !slices.Equal(a[i].Actions, b[i].Actions) {
			return fmt.Errorf("episode %d: actions differ (%d vs %d)", i, len(a[i].Actions), len(b[i].Actions))
		}
		if !slices.Equal(a[i].Codes, b[i].Codes) {
			return fmt.Errorf("episode %d: codes differ", i)
		}
	}
	return nil
}

// Reconstruct is the writer's reconstruction of eps computed with the
// model's predictor alone, independently of the chunk coder: coded
// coordinates keep their value, omitted ones take the rule's fill, and the
// predictor restarts where restart(i, t, inChunk) says (state t of episode
// i, inChunk states into its chunk). rules(i, t) is the retention rule of
// that state, nil for every coordinate coded. With omitted set (container
// version 4) an omitted value is committed as omitted, else as evidence.
func Reconstruct(m *wm.Model, eps []Episode, restart func(i, t, inChunk int) bool, rules func(i, t int) func(int, *wm.Predictor) (bool, uint16), omitted bool) []Episode {
	n := m.Geom.N()
	p := m.NewPredictor()
	out := make([]Episode, len(eps))
	for i, e := range eps {
		out[i] = Episode{Meta: e.Meta, Actions: e.Actions, Codes: make([]uint16, len(e.Codes))}
		inChunk := 0
		for t, a := range e.Actions {
			if restart(i, t, inChunk) {
				p.Reset()
				inChunk = 0
			}
			inChunk++
			rule := rules(i, t)
			p.Begin(a)
			M := m.Geom.M
			for j := 0; j < n; j++ {
				if j%M == 0 && p.CopySlot(j, e.Codes[t*n+j:t*n+j+M]) {
					copy(out[i].Codes[t*n+j:], e.Codes[t*n+j:t*n+j+M])
					j += M - 1
					continue
				}
				v := e.Codes[t*n+j]
				p.Predict(j)
				keep := true
				if rule != nil {
					var fill uint16
					if keep, fill = rule(j, p); !keep {
						v = fill
					}
				}
				if !keep && omitted {
					p.CommitOmitted(j, v)
				} else {
					p.Commit(j, v)
				}
				out[i].Codes[t*n+j] = v
			}
		}
	}
	return out
}
