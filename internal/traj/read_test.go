package traj

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/npz"
)

// TestReadTrainingEpisodesTail checks that a bound keeps the last states
// of the files, in order, as reading them whole and cutting would: whole
// episodes, the end of the one the bound cuts, and nothing of a file
// wholly before it.
func TestReadTrainingEpisodesTail(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, t0, T int, starts []int64, dtype string) string {
		tr := &npz.Trajectory{T: T, S: 2, M: 3, CodesDtype: dtype, HasActions: true, EpisodeStart: starts}
		for i := range T {
			tr.Actions = append(tr.Actions, int64(t0+i))
			for j := range 6 {
				tr.Codes = append(tr.Codes, uint16((t0+i)*6+j)%300)
			}
		}
		p := filepath.Join(dir, name)
		if err := npz.WriteTrajectory(p, tr); err != nil {
			t.Fatal(err)
		}
		return p
	}
	paths := []string{
		write("a.npz", 0, 5, []int64{0, 2}, "uint8"),
		write("b.npz", 5, 10, []int64{0, 3, 7}, "uint16"),
		write("c.npz", 15, 6, []int64{0, 4}, "uint8"),
	}
	for _, keep := range []int{1, 3, 6, 7, 9, 12, 16, 21, 0, 40} {
		got, err := ReadTraining(paths, false, keep)
		if err != nil {
			t.Fatalf("keep %d: %v", keep, err)
		}
		all, err := ReadTraining(paths, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := all
		if keep > 0 {
			want = lastStates(all, keep)
		}
		if len(got) != len(want) {
			t.Fatalf("keep %d: %d episodes, want %d", keep, len(got), len(want))
		}
		for i := range want {
			if !slices.Equal(got[i].Actions, want[i].Actions) || !slices.Equal(got[i].Codes, want[i].Codes) || got[i].Slots != want[i].Slots {
				t.Errorf("keep %d, episode %d: actions %v, want %v", keep, i, got[i].Actions, want[i].Actions)
			}
		}
	}
	// Observations, streamed the same way when the trainer reads them.
	obsPath := filepath.Join(dir, "obs.npz")
	otr := &npz.Trajectory{T: 9, S: 2, M: 3, ObsS: 2, ObsD: 4, HasActions: true, EpisodeStart: []int64{0, 4}}
	for i := range 9 {
		otr.Actions = append(otr.Actions, int64(i))
		for j := range 6 {
			otr.Codes = append(otr.Codes, uint16(i*6+j))
		}
		for j := range 8 {
			otr.Obs = append(otr.Obs, float32(i)+float32(j)/8)
		}
	}
	if err := npz.WriteTrajectory(obsPath, otr); err != nil {
		t.Fatal(err)
	}
	allObs, err := ReadTraining([]string{obsPath}, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []int{2, 5, 8} {
		got, err := ReadTraining([]string{obsPath}, true, keep)
		if err != nil {
			t.Fatalf("obs, keep %d: %v", keep, err)
		}
		want := lastStates(allObs, keep)
		if len(got) != len(want) {
			t.Fatalf("obs, keep %d: %d episodes, want %d", keep, len(got), len(want))
		}
		for i := range want {
			if !slices.Equal(got[i].Actions, want[i].Actions) || !slices.Equal(got[i].Obs, want[i].Obs) || got[i].Codes != nil || got[i].Slots != want[i].Slots {
				t.Errorf("obs, keep %d, episode %d: %v, want %v", keep, i, got[i], want[i])
			}
		}
	}
	if _, err := ReadTraining([]string{filepath.Join(dir, "none.npz")}, false, 3); err == nil {
		t.Error("a missing file gave no error")
	}
	bad := filepath.Join(dir, "bad.npz")
	if err := npz.WriteNPZ(bad, []npz.Array{
		{Name: "codes", Dtype: "uint8", Shape: []int{4, 2}, Data: make([]uint8, 8)},
		{Name: "episode_start", Dtype: "int64", Shape: []int{2}, Data: []int64{0, 9}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTraining([]string{bad}, false, 2); !errors.Is(err, npz.ErrContract) {
		t.Errorf("episode start beyond the file: %v, want npz.ErrContract", err)
	}
}

// TestReadTrainingEpisodesHugeState checks that a header claiming states
// larger than the file could hold is refused before anything is sized by
// it.
func TestReadTrainingEpisodesHugeState(t *testing.T) {
	p := filepath.Join(t.TempDir(), "huge.npz")
	dict := "{'descr': '|u1', 'fortran_order': False, 'shape': (4, 99999999), }"
	for (10+len(dict)+1)%64 != 0 {
		dict += " "
	}
	dict += "\n"
	var npy bytes.Buffer
	npy.WriteString("\x93NUMPY\x01\x00")
	npy.WriteByte(byte(len(dict)))
	npy.WriteByte(byte(len(dict) >> 8))
	npy.WriteString(dict)
	npy.Write(make([]byte, 64))
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	f, err := zw.CreateHeader(&zip.FileHeader{Name: "codes.npy", Method: zip.Deflate})
	if err != nil {
		t.Fatal(err)
	}
	f.Write(npy.Bytes())
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, zb.Bytes(), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTraining([]string{p}, false, 2); err == nil || !strings.Contains(err.Error(), "99999999") {
		t.Errorf("a state larger than its file: %v, want an error naming the shape", err)
	}
}

// lastStates returns the last limit states of eps: whole episodes, and
// the end of the one the limit cuts (what train.WithMaxStates keeps).
func lastStates(eps []wmzip.Episode, limit int) []wmzip.Episode {
	var out []wmzip.Episode
	for i := len(eps) - 1; i >= 0 && limit > 0; i-- {
		e := eps[i]
		n := len(e.Actions)
		if cut := n - limit; cut > 0 {
			e.Actions = e.Actions[cut:]
			if e.Codes != nil {
				e.Codes = e.Codes[cut*(len(e.Codes)/n):]
			}
			if e.Obs != nil {
				e.Obs = e.Obs[cut*(len(e.Obs)/n):]
			}
			n = limit
		}
		out = append([]wmzip.Episode{e}, out...)
		limit -= n
	}
	return out
}
