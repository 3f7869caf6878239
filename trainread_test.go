package wmzip

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

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
		got, err := ReadTrainingEpisodes(paths, false, keep)
		if err != nil {
			t.Fatalf("keep %d: %v", keep, err)
		}
		all, err := ReadTrainingEpisodes(paths, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := all
		if keep > 0 {
			want, _, _ = recentStates(all, keep)
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
	if _, err := ReadTrainingEpisodes([]string{filepath.Join(dir, "none.npz")}, false, 3); err == nil {
		t.Error("a missing file gave no error")
	}
	bad := filepath.Join(dir, "bad.npz")
	if err := npz.WriteNPZ(bad, []npz.Array{
		{Name: "codes", Dtype: "uint8", Shape: []int{4, 2}, Data: make([]uint8, 8)},
		{Name: "episode_start", Dtype: "int64", Shape: []int{2}, Data: []int64{0, 9}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTrainingEpisodes([]string{bad}, false, 2); !errors.Is(err, npz.ErrContract) {
		t.Errorf("episode start beyond the file: %v, want npz.ErrContract", err)
	}
}
