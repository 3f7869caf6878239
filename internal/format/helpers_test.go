package format

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/wmzip/wmzip/internal/testkit"
	"github.com/wmzip/wmzip/internal/wm"
)

// episode is one test episode.
type episode = testkit.Episode

// genEpisodes is testkit.GenEpisodes.
func genEpisodes(rng *rand.Rand, g wm.Geometry, lens []int) []episode {
	return testkit.GenEpisodes(rng, g, lens)
}

// trainModel trains a small model on the episodes (nil: untrained).
func trainModel(g wm.Geometry, prec uint, eps []episode) *wm.Model {
	if len(eps) == 0 {
		eps = genEpisodes(rand.New(rand.NewPCG(0, 0)), g, []int{3})
	}
	tr := make([]wm.Episode, len(eps))
	for i, e := range eps {
		tr[i] = wm.Episode{Codes: e.Codes, Actions: e.Actions}
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
		if err := w.WriteEpisode(e.Meta); err != nil {
			t.Fatal(err)
		}
		for k, a := range e.Actions {
			if before != nil {
				if err := before(w, i, k); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.WriteState(a, e.Codes[k*n:(k+1)*n]); err != nil {
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
	return testkit.ReadAll(r)
}

// openAll decodes a whole file through Open, episode by episode.
func openAll(b []byte, m *wm.Model, opts ...Option) ([]episode, error) {
	f, err := Open(bytes.NewReader(b), int64(len(b)), m, opts...)
	if err != nil {
		return nil, err
	}
	return testkit.FileEpisodes(f)
}

func sameEpisodes(a, b []episode) error { return testkit.SameEpisodes(a, b) }

// isFileError reports whether err is one of the decoding errors a damaged
// file may produce.
func isFileError(err error) bool {
	var fe *FormatError
	var ue *UnsupportedError
	return errors.As(err, &fe) || errors.As(err, &ue)
}
