package traj_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/graphworld"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/traj"
	"github.com/wmzip/wmzip/internal/walks"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/train"
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
	tr := traj.FromWalk(res)
	tr.ObsDtype = "float16"
	path := filepath.Join(dir, "in.npz")
	if err := npz.WriteTrajectory(path, tr, npz.WithDeflate(deflate)); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStreamEncodeDecode: writing from an npz.TrajectoryReader gives the
// bytes of encoding the trajectory read whole, for codes and for float obs
// quantized state by state; WriteDecoded gives the bytes of the whole
// trajectory written by npz.WriteTrajectory, for the whole file (with
// levels) and one episode, and tells the access log of every state.
func TestStreamEncodeDecode(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	withQ, err := train.Codec(ctx, walks.Episodes(1, 8), train.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 1, OPQIters: -1}))
	if err != nil {
		t.Fatal(err)
	}
	codes, err := train.Codec(ctx, walks.CodesOnly(walks.Episodes(1, 8)))
	if err != nil {
		t.Fatal(err)
	}
	for _, deflate := range []bool{false, true} {
		in := streamFixture(t, dir, deflate)
		for name, c := range map[string]*wmzip.Codec{"obs": withQ, "codes": codes} {
			// Encode: whole and streaming.
			tr, err := traj.ReadCodes(in, c)
			if err != nil {
				t.Fatal(err)
			}
			var whole, streamed bytes.Buffer
			// Both see the float obs (the file's report compares them with the
			// reconstruction).
			encodeAll(t, &whole, c, train.SplitTrajectory(tr, c.Quantizer() != nil), wmzip.WithKeyframeInterval(16))
			src, err := npz.OpenTrajectory(in)
			if err != nil {
				t.Fatal(err)
			}
			if err := encodeSource(&streamed, c, src, wmzip.WithKeyframeInterval(16), wmzip.WithEncoderThreads(2)); err != nil {
				t.Fatal(err)
			}
			src.Close()
			if !bytes.Equal(whole.Bytes(), streamed.Bytes()) {
				t.Fatalf("%s (deflate %v): traj.Write differs from WriteAll of the trajectory read whole: %d and %d bytes, reports %+v and %+v",
					name, deflate, whole.Len(), streamed.Len(), report(t, whole.Bytes(), c), report(t, streamed.Bytes(), c))
			}
			// Decode: whole and streaming, every state and one episode.
			b := whole.Bytes()
			var log [][2]int64
			f, err := wmzip.NewFile(bytes.NewReader(b), int64(len(b)), c, wmzip.WithDecoderThreads(2),
				wmzip.WithAccessLog(func(e, s int64) { log = append(log, [2]int64{e, s}) }))
			if err != nil {
				t.Fatal(err)
			}
			got, want := filepath.Join(dir, "got.npz"), filepath.Join(dir, "want.npz")
			back, _, err := traj.Decode(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			reconstruct(t, back, c)
			log = nil
			if err := traj.WriteDecoded(got, f, traj.DecodeOptions{Episode: -1, Step: -1}); err != nil {
				t.Fatal(err)
			}
			sameFile(t, name+" whole file", got, want, back)
			if len(log) != tr.T || log[60] != [2]int64{1, 10} {
				t.Errorf("%s: access log of %d states, state 60 logged as %v", name, len(log), log[60])
			}
			ep, err := f.Episode(1)
			if err != nil {
				t.Fatal(err)
			}
			g := c.Model().Geom
			one := &npz.Trajectory{T: len(ep.Actions), S: g.S, M: g.M, Codes: ep.Codes, CodesDtype: "uint8", Actions: ep.Actions, HasActions: true, EpisodeStart: []int64{0}}
			reconstruct(t, one, c)
			if err := traj.WriteDecoded(got, f, traj.DecodeOptions{Episode: 1, Step: -1}); err != nil {
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
		t.Errorf("%s: traj.WriteDecoded wrote %d bytes unlike npz.WriteTrajectory's %d", what, len(a), len(b))
	}
}

// TestStreamLevels: a file with retention levels decodes with each
// state's level, as a Reader gives them.
func TestStreamLevels(t *testing.T) {
	ctx := context.Background()
	c, err := train.Codec(ctx, walks.CodesOnly(walks.Episodes(1, 8)))
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	w, err := wmzip.NewWriter(&file, c, wmzip.WithLevels(1, math.Inf(1)), wmzip.WithKeyframeInterval(8))
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range walks.CodesOnly(walks.Episodes(3, 2)) {
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
	tr, levels := readLevels(t, r, c)
	tr.Extra = []npz.Array{{Name: "levels", Dtype: "uint8", Shape: []int{len(levels)}, Data: levels}}
	f, err := wmzip.NewFile(bytes.NewReader(b), int64(len(b)), c)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	got := filepath.Join(dir, "got.npz")
	if err := traj.WriteDecoded(got, f, traj.DecodeOptions{Episode: -1, Step: -1}); err != nil {
		t.Fatal(err)
	}
	sameFile(t, "levels", got, filepath.Join(dir, "want.npz"), tr)
	if !slices.Contains(levels, 0) || !slices.Contains(levels, 1) {
		t.Errorf("levels %v", levels)
	}
}

// TestStreamBadSource: codes that do not fit the codec are refused with
// the messages of ReadCodes.
func TestStreamBadSource(t *testing.T) {
	ctx := context.Background()
	c, err := train.Codec(ctx, walks.CodesOnly(walks.Episodes(1, 4)))
	if err != nil {
		t.Fatal(err)
	}
	g := c.Model().Geom
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
		err = encodeSource(&bytes.Buffer{}, c, src)
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

// encodeAll writes eps to w in a new file.
func encodeAll(t *testing.T, w io.Writer, c *wmzip.Codec, eps []wmzip.Episode, opts ...wmzip.WriterOption) {
	t.Helper()
	wr, err := wmzip.NewWriter(w, c, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := wr.WriteAll(eps); err != nil {
		t.Fatal(err)
	}
	if err := wr.Close(); err != nil {
		t.Fatal(err)
	}
}

// encodeSource writes the trajectory src reads to w in a new file.
func encodeSource(w io.Writer, c *wmzip.Codec, src *npz.TrajectoryReader, opts ...wmzip.WriterOption) error {
	wr, err := wmzip.NewWriter(w, c, opts...)
	if err != nil {
		return err
	}
	if err := traj.Write(wr, c, src, nil); err != nil {
		return err
	}
	return wr.Close()
}

// reconstruct sets tr's obs to the reconstruction of its codes, when c
// has a quantizer.
func reconstruct(t *testing.T, tr *npz.Trajectory, c *wmzip.Codec) {
	t.Helper()
	if c.Quantizer() == nil {
		return
	}
	obs, err := c.Reconstruct(nil, tr.Codes)
	if err != nil {
		t.Fatal(err)
	}
	tr.Obs, tr.ObsS, tr.ObsD, tr.ObsDtype = obs, tr.S, c.Quantizer().Dim(), "float32"
}

// readLevels reads a stream whole into a trajectory of codes, with each
// state's level.
func readLevels(t *testing.T, r *wmzip.Reader, c *wmzip.Codec) (*npz.Trajectory, []uint8) {
	t.Helper()
	g := c.Model().Geom
	tr := &npz.Trajectory{S: g.S, M: g.M, CodesDtype: "uint8", HasActions: true}
	var levels []uint8
	for {
		if _, err := r.NextEpisode(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		tr.EpisodeStart = append(tr.EpisodeStart, int64(len(tr.Actions)))
		for {
			a, codes, err := r.ReadState(nil)
			if err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			tr.Actions, tr.Codes = append(tr.Actions, a), append(tr.Codes, codes...)
			levels = append(levels, uint8(r.Level()))
		}
	}
	tr.T = len(tr.Actions)
	return tr, levels
}
