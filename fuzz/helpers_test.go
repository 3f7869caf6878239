package fuzz

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/testkit"
	"github.com/wmzip/wmzip/internal/wm"
)

// Memory limits the targets give decoders, and the allocation each target
// tolerates beyond them: fixed structures, the bytes of the input itself,
// and the runtime's rounding.
const (
	memLimit = 16 << 20
	slack    = 4 << 20
)

// modelAlloc bounds what loading model bytes b (a model file, or a file
// that may embed one) may allocate beyond slack. A model of version 1 or 2
// parses to a few times its bytes; version 3 decodes a coded reference
// store of at most 1,024 codes and derives tables of at most 64 entries a
// byte of the file (SPEC.md 3.1), each some 16 bytes of memory.
func modelAlloc(b []byte) uint64 {
	if bytes.Contains(b, []byte("WMZM\x03\x00")) {
		return uint64(len(b)) * (16*1024 + 16*64)
	}
	return 64 * uint64(len(b))
}

// seedFiles returns the contents of the testdata files matching the glob
// patterns, relative to the repository's testdata, that are at most max
// bytes (small seeds keep minimization quick).
func seedFiles(tb testing.TB, max int, patterns ...string) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, p := range patterns {
		names, err := filepath.Glob(filepath.Join("testdata", p))
		if err != nil {
			tb.Fatal(err)
		}
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				tb.Fatal(err)
			}
			if len(b) <= max {
				out = append(out, b)
			}
		}
	}
	if len(out) == 0 {
		tb.Fatalf("no seeds match %v", patterns)
	}
	return out
}

// models loads the committed models that fuzzed containers may refer to,
// and nil (a container must then embed its model).
func models(tb testing.TB) []*wm.Model {
	ms := []*wm.Model{nil}
	for _, raw := range seedFiles(tb, 1<<20, "conformance/*.wmm") {
		if m, err := wm.UnmarshalModel(raw); err == nil {
			ms = append(ms, m)
		}
	}
	return ms
}

// allocated returns the bytes allocated while running fn.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// isFileError reports whether err is one of the errors a decoder reports
// for bad input.
func isFileError(err error) bool {
	var fe *format.FormatError
	var ue *format.UnsupportedError
	return errors.As(err, &fe) || errors.As(err, &ue)
}

// episode is one decoded episode.
type episode = testkit.Episode

// readAll decodes a whole container with a Reader.
func readAll(b []byte, m *wm.Model, opts ...format.Option) ([]episode, error) {
	r, err := format.NewReader(bytes.NewReader(b), m, opts...)
	if err != nil {
		return nil, err
	}
	return testkit.ReadAll(r)
}

// fileEpisodes decodes every episode of an opened container.
func fileEpisodes(f *format.File) ([]episode, error) { return testkit.FileEpisodes(f) }

func sameEpisodes(a, b []episode) bool { return testkit.SameEpisodes(a, b) == nil }
