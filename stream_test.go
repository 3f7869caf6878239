package wmzip_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/internal/graphworld"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/opq"
)

// streamFixture writes a graphworld trajectory of 3 episodes of 50 states
// with float16 obs to dir and returns its path.
func streamFixture(t *testing.T, dir string, deflate bool) string {
	t.Helper()
	res, err := graphworld.Generate(graphworld.Config{
		Nodes: 40, GraphSeed: 1, Seed: 7, Episodes: 3, Steps: 50,
		Slots: 8, Subspaces: 8, K: 16, Obs: true, ObsDim: 32,
	})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Trajectory()
	tr.ObsDtype = "float16"
	path := filepath.Join(dir, "in.npz")
	if err := npz.WriteTrajectory(path, tr, npz.WithDeflate(deflate)); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStreamEncodeDecode: encoding from an npz.TrajectoryReader gives the
// bytes of encoding the trajectory read whole, for codes and for float obs
// quantized state by state; File.WriteNPZ gives the bytes of the whole
// trajectory written by npz.WriteTrajectory, for the whole file (with
// levels) and one episode, and tells the access log of every state.
func TestStreamEncodeDecode(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	withQ, err := wmzip.Train(ctx, walks(1, 8), wmzip.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 1, OPQIters: -1}))
	if err != nil {
		t.Fatal(err)
	}
	codes, err := wmzip.Train(ctx, codesOnly(walks(1, 8)))
	if err != nil {
		t.Fatal(err)
	}
	for _, deflate := range []bool{false, true} {
		in := streamFixture(t, dir, deflate)
		for name, c := range map[string]*wmzip.Codec{"obs": withQ, "codes": codes} {
			// Encode: whole and streaming.
			tr, err := wmzip.ReadTrajectory(in, c)
			if err != nil {
				t.Fatal(err)
			}
			var whole, streamed bytes.Buffer
			// Both see the float obs (the file's report compares them with the
			// reconstruction).
			if _, err := wmzip.Encode(ctx, &whole, c, wmzip.TrajectoryEpisodes(tr, c.Quantizer() != nil), wmzip.WithKeyframeInterval(16)); err != nil {
				t.Fatal(err)
			}
			src, err := npz.OpenTrajectory(in)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := wmzip.EncodeTrajectory(ctx, &streamed, c, src, wmzip.WithKeyframeInterval(16), wmzip.WithThreads(2)); err != nil {
				t.Fatal(err)
			}
			src.Close()
			if !bytes.Equal(whole.Bytes(), streamed.Bytes()) {
				t.Fatalf("%s (deflate %v): EncodeTrajectory differs from Encode of the trajectory read whole: %d and %d bytes, reports %+v and %+v",
					name, deflate, whole.Len(), streamed.Len(), report(t, whole.Bytes(), c), report(t, streamed.Bytes(), c))
			}
			// Decode: whole and streaming, every state and one episode.
			b := whole.Bytes()
			var log [][2]int64
			f, err := wmzip.NewFile(bytes.NewReader(b), int64(len(b)), c, wmzip.WithThreads(2),
				wmzip.WithAccessLog(func(e, s int64) { log = append(log, [2]int64{e, s}) }))
			if err != nil {
				t.Fatal(err)
			}
			got, want := filepath.Join(dir, "got.npz"), filepath.Join(dir, "want.npz")
			back, _, err := f.Trajectory(nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.Quantizer() != nil {
				if err := c.ReconstructTrajectory(back); err != nil {
					t.Fatal(err)
				}
			}
			log = nil
			if err := f.WriteNPZ(got, wmzip.NPZOptions{Episode: -1, Step: -1}); err != nil {
				t.Fatal(err)
			}
			sameFile(t, name+" whole file", got, want, back)
			if len(log) != tr.T || log[60] != [2]int64{1, 10} {
				t.Errorf("%s: access log of %d states, state 60 logged as %v", name, len(log), log[60])
			}
			one, err := f.EpisodeTrajectory(1, -1)
			if err != nil {
				t.Fatal(err)
			}
			if c.Quantizer() != nil {
				c.ReconstructTrajectory(one)
			}
			if err := f.WriteNPZ(got, wmzip.NPZOptions{Episode: 1, Step: -1}); err != nil {
				t.Fatal(err)
			}
			sameFile(t, name+" episode 1", got, want, one)
		}
	}
}

// sameFile writes tr with npz.WriteTrajectory to want and compares the
// bytes with those of got.
func sameFile(t *testing.T, what, got, want string, tr *npz.Trajectory) {
	t.Helper()
	if err := npz.WriteTrajectory(want, tr); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(got)
	b, _ := os.ReadFile(want)
	if !bytes.Equal(a, b) {
		t.Errorf("%s: File.WriteNPZ wrote %d bytes unlike npz.WriteTrajectory's %d", what, len(a), len(b))
	}
}

// TestStreamLevels: a file with retention levels decodes with each
// state's level, as Reader.Trajectory gives them.
func TestStreamLevels(t *testing.T) {
	ctx := context.Background()
	c, err := wmzip.Train(ctx, codesOnly(walks(1, 8)))
	if err != nil {
		t.Fatal(err)
	}
	if !c.HasGate() {
		t.Skip("no gate")
	}
	var file bytes.Buffer
	w, err := wmzip.NewWriter(&file, c, wmzip.WithLevels(1<<16, format.LambdaLossless), wmzip.WithKeyframeInterval(8))
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range codesOnly(walks(3, 2)) {
		if err := w.WriteEpisode(nil); err != nil {
			t.Fatal(err)
		}
		n := len(ep.Codes) / len(ep.Actions)
		for s, a := range ep.Actions {
			w.SetLevel(s / 7 % 2)
			if err := w.WriteCodes(a, ep.Codes[s*n:(s+1)*n]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := file.Bytes()
	r, err := wmzip.NewReader(bytes.NewReader(b), c)
	if err != nil {
		t.Fatal(err)
	}
	tr, levels, err := r.Trajectory(nil)
	if err != nil {
		t.Fatal(err)
	}
	tr.Extra = []npz.Array{{Name: "levels", Dtype: "uint8", Shape: []int{len(levels)}, Data: levels}}
	f, err := wmzip.NewFile(bytes.NewReader(b), int64(len(b)), c)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	got := filepath.Join(dir, "got.npz")
	if err := f.WriteNPZ(got, wmzip.NPZOptions{Episode: -1, Step: -1}); err != nil {
		t.Fatal(err)
	}
	sameFile(t, "levels", got, filepath.Join(dir, "want.npz"), tr)
	if !slices.Contains(levels, 0) || !slices.Contains(levels, 1) {
		t.Errorf("levels %v", levels)
	}
}

// TestStreamBadSource: codes that do not fit the codec are refused with
// the messages of ReadTrajectory.
func TestStreamBadSource(t *testing.T) {
	ctx := context.Background()
	c, err := wmzip.Train(ctx, codesOnly(walks(1, 4)))
	if err != nil {
		t.Fatal(err)
	}
	g := c.Geometry()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		tr   *npz.Trajectory
		msg  string
	}{
		{"shape", &npz.Trajectory{T: 2, S: 2, M: g.N() / 2, Codes: make([]uint16, 2*g.N()), CodesDtype: "uint16"}, "codes have shape"},
		{"code", &npz.Trajectory{T: 3, S: g.S, M: g.M, Codes: slices.Concat(make([]uint16, 2*g.N()+5), []uint16{uint16(g.K)}, make([]uint16, g.N()-6)), CodesDtype: "uint16"},
			fmt.Sprintf("code %d at state 2, slot %d, subspace %d is >= K=%d", g.K, 5/g.M, 5%g.M, g.K)},
		{"obs", &npz.Trajectory{T: 1, ObsS: 1, ObsD: 4, Obs: make([]float32, 4)}, "no quantizer"},
	} {
		path := filepath.Join(dir, tc.name+".npz")
		if err := npz.WriteTrajectory(path, tc.tr); err != nil {
			t.Fatal(err)
		}
		src, err := npz.OpenTrajectory(path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = wmzip.EncodeTrajectory(ctx, &bytes.Buffer{}, c, src)
		src.Close()
		if err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.msg)
		}
	}
}

// report returns the report file b's index records.
func report(t *testing.T, b []byte, c *wmzip.Codec) format.Report {
	f, err := format.Open(bytes.NewReader(b), int64(len(b)), c.Model())
	if err != nil {
		t.Fatal(err)
	}
	return f.Info().Report
}
