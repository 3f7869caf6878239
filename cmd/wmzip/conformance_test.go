package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/npz"
)

// TestDecodeConformance walks every valid conformance vector (SPEC.md 8.3)
// through `wmzip decode`: each must decode, to the states and actions the
// library decodes (whose digests TestConformance checks), every action of
// the format included (any i64: -2^63, -300, ...). Episodes without states
// are left out of the .npz, which cannot hold them.
func TestDecodeConformance(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "conformance")
	raw, err := os.ReadFile(filepath.Join(dir, "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct {
		File  string `json:"file"`
		Model string `json:"model"`
		Embed bool   `json:"embed_model"`
	}
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors) < 40 {
		t.Fatalf("vectors.json lists %d vectors", len(vectors))
	}
	out := t.TempDir()
	for _, v := range vectors {
		t.Run(v.File, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, v.File)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"decode", "-q", "-o", filepath.Join(out, v.File+".npz")}
			var m *wm.Model
			if !v.Embed {
				mp := filepath.Join(dir, v.Model)
				args = append(args, "-m", mp)
				m = vectorModel(t, mp, b)
			}
			mustRun(t, append(args, path)...)
			tr, err := npz.ReadTrajectory(filepath.Join(out, v.File+".npz"))
			if err != nil {
				t.Fatal(err)
			}
			f, err := format.Open(bytes.NewReader(b), int64(len(b)), m)
			if err != nil {
				t.Fatal(err)
			}
			n := f.Model().Geom.N()
			var actions []int64
			var codes []uint16
			var starts []int64
			for e := range f.Episodes() {
				if f.EpisodeLen(e) > 0 {
					starts = append(starts, int64(len(actions)))
				}
				for s := range f.EpisodeLen(e) {
					a, c, err := f.StateAction(e, s)
					if err != nil {
						t.Fatal(err)
					}
					actions, codes = append(actions, a), append(codes, c...)
				}
			}
			if tr.T != len(actions) || tr.S*tr.M != n {
				t.Fatalf("decoded %d states of %d×%d codes, want %d of %d", tr.T, tr.S, tr.M, len(actions), n)
			}
			if !slices.Equal(tr.Actions, actions) || !slices.Equal(tr.Codes, codes) || !slices.Equal(tr.EpisodeStart, starts) {
				t.Fatal("the decoded .npz differs from the library's decode")
			}
		})
	}
}

// vectorModel returns the model of the file b from the model file or
// bundle at path: for a bundle, the member whose ID the header names
// (SPEC.md 3.6, 6.2).
func vectorModel(t *testing.T, path string, b []byte) *wm.Model {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !wm.IsBundle(raw) {
		m, err := wm.UnmarshalModel(raw)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	ms, err := wm.UnmarshalBundle(raw, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if id := m.ID(); len(b) >= 48 && bytes.Equal(id[:], b[32:48]) {
			return m
		}
	}
	t.Fatalf("%s: no member has the file's model ID", path)
	return nil
}
