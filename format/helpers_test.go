package format

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wmzip/wmzip/wm"
)

// episode is one test episode.
type episode struct {
	meta    []byte
	actions []int64
	codes   []uint16 // len(actions) × N
}

// genEpisodes builds episodes of the given lengths with persistent,
// skewed codes and a few action kinds, including extreme actions.
func genEpisodes(rng *rand.Rand, g wm.Geometry, lens []int) []episode {
	n := g.N()
	eps := make([]episode, len(lens))
	for i, T := range lens {
		e := &eps[i]
		if i%2 == 0 {
			e.meta = fmt.Appendf(nil, `{"episode":%d,"note":"test"}`, i)
		}
		e.actions = make([]int64, T)
		e.codes = make([]uint16, T*n)
		prev := make([]uint16, n)
		for j := range prev {
			prev[j] = uint16(rng.IntN(g.K))
		}
		for t := 0; t < T; t++ {
			switch r := rng.IntN(20); {
			case t == 0:
				e.actions[t] = wm.NoAction
			case r < 12:
				e.actions[t] = e.actions[t-1]
			case r < 18:
				e.actions[t] = int64(rng.IntN(7))
			case r == 18:
				e.actions[t] = rng.Int64() - rng.Int64()
			default:
				e.actions[t] = []int64{-1 << 63, 1<<63 - 1, -17, 16, 1 << 40}[rng.IntN(5)]
			}
			for j := 0; j < n; j++ {
				v := prev[j]
				if rng.IntN(10) >= 7 {
					v = uint16(min(rng.ExpFloat64()*float64(g.K)/8, float64(g.K-1)))
				}
				e.codes[t*n+j] = v
				prev[j] = v
			}
		}
	}
	return eps
}

// trainModel trains a small model on the episodes (nil: untrained).
func trainModel(g wm.Geometry, prec uint, eps []episode) *wm.Model {
	if len(eps) == 0 {
		eps = genEpisodes(rand.New(rand.NewPCG(0, 0)), g, []int{3})
	}
	tr := make([]wm.Episode, len(eps))
	for i, e := range eps {
		tr[i] = wm.Episode{Codes: e.codes, Actions: e.actions}
	}
	m, err := wm.Train(g, tr, wm.TrainOptions{Precision: prec, MaxRefStates: 256})
	if err != nil {
		panic(err)
	}
	return m
}

// encode writes episodes with a fresh Writer.
func encode(t testing.TB, m *wm.Model, eps []episode, opts ...Option) []byte {
	t.Helper()
	return encodeHook(t, m, eps, nil, opts...)
}

// encodeHook is encode calling before(w, i, k), if not nil, before state k
// of episode i is written.
func encodeHook(t testing.TB, m *wm.Model, eps []episode, before func(w *Writer, i, k int) error, opts ...Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, m, opts...)
	if err != nil {
		t.Fatal(err)
	}
	n := m.Geom.N()
	for i, e := range eps {
		if err := w.WriteEpisode(e.meta); err != nil {
			t.Fatal(err)
		}
		for k, a := range e.actions {
			if before != nil {
				if err := before(w, i, k); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.WriteState(a, e.codes[k*n:(k+1)*n]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readAll decodes a whole file with a Reader.
func readAll(b []byte, m *wm.Model, opts ...Option) ([]episode, error) {
	r, err := NewReader(bytes.NewReader(b), m, opts...)
	if err != nil {
		return nil, err
	}
	var eps []episode
	for {
		meta, err := r.NextEpisode()
		if err == io.EOF {
			return eps, nil
		}
		if err != nil {
			return nil, err
		}
		e := episode{meta: meta}
		var codes []uint16
		for {
			a, c, err := r.ReadState(codes)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			e.actions = append(e.actions, a)
			e.codes = append(e.codes, c...)
			codes = c
		}
		eps = append(eps, e)
	}
}

// openAll decodes a whole file through Open, episode by episode.
func openAll(b []byte, m *wm.Model, opts ...Option) ([]episode, error) {
	f, err := Open(bytes.NewReader(b), int64(len(b)), m, opts...)
	if err != nil {
		return nil, err
	}
	eps := make([]episode, f.Episodes())
	for i := range eps {
		if eps[i].meta, err = f.Metadata(i); err != nil {
			return nil, err
		}
		if eps[i].actions, eps[i].codes, err = f.DecodeEpisode(i); err != nil {
			return nil, err
		}
	}
	return eps, nil
}

func sameEpisodes(a, b []episode) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d episodes, want %d", len(a), len(b))
	}
	for i := range a {
		if !bytes.Equal(a[i].meta, b[i].meta) {
			return fmt.Errorf("episode %d: metadata %q, want %q", i, a[i].meta, b[i].meta)
		}
		if !slices.Equal(a[i].actions, b[i].actions) {
			return fmt.Errorf("episode %d: actions differ (%d vs %d)", i, len(a[i].actions), len(b[i].actions))
		}
		if !slices.Equal(a[i].codes, b[i].codes) {
			return fmt.Errorf("episode %d: codes differ", i)
		}
	}
	return nil
}

// isFileError reports whether err is one of the decoding errors a damaged
// file may produce.
func isFileError(err error) bool {
	var fe *FormatError
	var ue *UnsupportedError
	return errors.As(err, &fe) || errors.As(err, &ue)
}
