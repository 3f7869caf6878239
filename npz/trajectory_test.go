package npz

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestReadNumpyTrajectories(t *testing.T) {
	tr, err := ReadTrajectory(fixture("traj_codes.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.T != 5 || tr.S != 2 || tr.M != 3 || tr.CodesDtype != "uint8" || len(tr.Codes) != 30 || tr.Obs != nil {
		t.Errorf("codes: T=%d S=%d M=%d %s len %d obs %v", tr.T, tr.S, tr.M, tr.CodesDtype, len(tr.Codes), tr.Obs != nil)
	}
	if !tr.HasActions || !slices.Equal(tr.Actions, []int64{-1, 0, 1, -1, 5}) {
		t.Errorf("actions %v %v", tr.HasActions, tr.Actions)
	}
	if !slices.Equal(tr.Episodes(), [][2]int{{0, 3}, {3, 5}}) {
		t.Errorf("episodes %v", tr.Episodes())
	}
	if len(tr.Extra) != 1 || tr.Extra[0].Name != "entropy_bits_per_state" || tr.Extra[0].Dtype != "float64" ||
		len(tr.Extra[0].Shape) != 0 || !sameData(tr.Extra[0].Data, []float64{12.5}) {
		t.Errorf("extra %+v", tr.Extra)
	}

	tr, err = ReadTrajectory(fixture("traj_obs16.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.T != 4 || tr.ObsS != 2 || tr.ObsD != 3 || tr.ObsDtype != "float16" || len(tr.Obs) != 24 || tr.Codes != nil {
		t.Errorf("obs: T=%d %d×%d %s", tr.T, tr.ObsS, tr.ObsD, tr.ObsDtype)
	}
	if !slices.Equal(tr.Actions, []int64{-1, 2, 2, 7}) || !slices.Equal(tr.EpisodeStart, []int64{0}) {
		t.Errorf("actions %v starts %v", tr.Actions, tr.EpisodeStart)
	}

	tr, err = ReadTrajectory(fixture("traj_2d.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.T != 3 || tr.S != 1 || tr.M != 4 || tr.CodesDtype != "uint16" || tr.ObsS != 1 || tr.ObsD != 6 {
		t.Errorf("2d: T=%d codes %d×%d %s obs %d×%d", tr.T, tr.S, tr.M, tr.CodesDtype, tr.ObsS, tr.ObsD)
	}
	if tr.HasActions || !slices.Equal(tr.Actions, []int64{NoAction, NoAction, NoAction}) {
		t.Errorf("absent actions read as %v %v", tr.HasActions, tr.Actions)
	}
	if !slices.Equal(tr.EpisodeStart, []int64{0}) || !slices.Equal(tr.Episodes(), [][2]int{{0, 3}}) {
		t.Errorf("absent episode_start read as %v", tr.EpisodeStart)
	}
	if slices.Max(tr.Codes) < 256 {
		t.Error("fixture codes should exceed uint8")
	}
}

func sameTrajectory(t *testing.T, got, want *Trajectory) {
	t.Helper()
	if got.T != want.T || got.S != want.S || got.M != want.M || got.ObsS != want.ObsS || got.ObsD != want.ObsD ||
		got.HasActions != want.HasActions || got.CodesDtype != want.CodesDtype || got.ObsDtype != want.ObsDtype {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if !slices.Equal(got.Codes, want.Codes) || !sameData(got.Obs, want.Obs) ||
		!slices.Equal(got.Actions, want.Actions) || !slices.Equal(got.EpisodeStart, want.EpisodeStart) {
		t.Error("data differ")
	}
	sameArrays(t, got.Extra, want.Extra)
}

func TestTrajectoryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, file := range []string{"traj_codes.npz", "traj_obs16.npz", "traj_2d.npz"} {
		t.Run(file, func(t *testing.T) {
			tr, err := ReadTrajectory(fixture(file))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, file)
			if err := WriteTrajectory(path, tr); err != nil {
				t.Fatal(err)
			}
			got, err := ReadTrajectory(path)
			if err != nil {
				t.Fatal(err)
			}
			sameTrajectory(t, got, tr)
		})
	}

	// Defaults on write: uint8 codes when they fit, float32 obs, episode_start [0].
	tr := &Trajectory{T: 2, Codes: []uint16{1, 2, 3, 4}, S: 2, M: 1, Obs: []float32{0.5, 1.5}, ObsS: 1, ObsD: 1,
		Actions: []int64{-1, 3}, HasActions: true}
	var buf bytes.Buffer
	if err := EncodeTrajectory(&buf, tr, WithDeflate(false)); err != nil {
		t.Fatal(err)
	}
	arrays, err := DecodeNPZ(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	sameArrays(t, arrays, []Array{
		{"codes", "uint8", []int{2, 2, 1}, []uint8{1, 2, 3, 4}},
		{"obs", "float32", []int{2, 1}, []float32{0.5, 1.5}},
		{"actions", "int32", []int{2}, []int32{-1, 3}},
		{"episode_start", "int64", []int{1}, []int64{0}},
	})

	tr.Codes[3] = 300
	tr.CodesDtype = "uint8"
	err = EncodeTrajectory(&buf, tr)
	wantErr(t, err, ErrContract, nil, `array "codes" has code 300 at index 3, too large for CodesDtype uint8`)
	tr.CodesDtype = ""
	tr.ObsDtype = "float16"
	tr.Obs[0] = 0.1
	tr.Actions[1] = math.MaxInt32 + 1
	buf.Reset()
	if err := EncodeTrajectory(&buf, tr); err != nil {
		t.Fatal(err)
	}
	got, err := DecodeTrajectory(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if got.CodesDtype != "uint16" || got.ObsDtype != "float16" || got.Obs[0] != 0.099975586 || got.Actions[1] != math.MaxInt32+1 {
		t.Errorf("got %+v", got)
	}
}

func TestTrajectoryContractErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "test.npz")
	codes := func(shape ...int) Array {
		a := Array{Name: "codes", Dtype: "uint8", Shape: shape}
		a.Data = make([]uint8, a.Len())
		return a
	}
	i64 := func(name string, v ...int64) Array {
		return Array{Name: name, Dtype: "int64", Shape: []int{len(v)}, Data: v}
	}
	for _, tc := range []struct {
		name   string
		arrays []Array
		msg    string
	}{
		{"no state", []Array{i64("actions", 1)}, `npz: PATH: has no "codes" or "obs" array`},
		{"codes dtype", []Array{{Name: "codes", Dtype: "int32", Shape: []int{1, 1}, Data: []int32{1}}}, `array "codes" has dtype int32, want uint8 or uint16: save codes.astype(np.uint8), or np.uint16 if a code exceeds 255`},
		{"codes ndim", []Array{codes(4)}, `array "codes" has shape (4,), want [T,S,M] or [T,N]`},
		{"codes 4d", []Array{codes(1, 1, 1, 1)}, `array "codes" has shape (1, 1, 1, 1), want [T,S,M] or [T,N]`},
		{"codes empty state", []Array{codes(2, 0)}, `array "codes" has shape (2, 0) with an empty state`},
		{"obs dtype", []Array{{Name: "obs", Dtype: "int32", Shape: []int{1, 1}, Data: []int32{1}}}, `array "obs" has dtype int32, want float32, float16 or float64: save obs.astype(np.float32)`},
		{"obs T", []Array{codes(2, 3), {Name: "obs", Dtype: "float32", Shape: []int{3, 1}, Data: make([]float32, 3)}}, `array "obs" has 3 steps but "codes" has 2`},
		{"actions dtype", []Array{codes(2, 3), {Name: "actions", Dtype: "float32", Shape: []int{2}, Data: []float32{1, 2}}}, `npz: PATH: array "actions" has dtype float32, want int32 or int64: save actions.astype(np.int64)`},
		{"actions ndim", []Array{codes(1, 3), {Name: "actions", Dtype: "int32", Shape: []int{1, 1}, Data: []int32{1}}}, `array "actions" has shape (1, 1), want [T]`},
		{"actions T", []Array{codes(2, 3), i64("actions", 1)}, `array "actions" has 1 steps but "codes" has 2`},
		{"starts dtype", []Array{codes(2, 3), {Name: "episode_start", Dtype: "uint8", Shape: []int{1}, Data: []uint8{0}}}, `array "episode_start" has dtype uint8, want int64 or int32: save episode_start.astype(np.int64)`},
		{"starts ndim", []Array{codes(2, 3), {Name: "episode_start", Dtype: "int64", Shape: []int{}, Data: []int64{0}}}, `array "episode_start" has shape (), want [E]`},
		{"starts first", []Array{codes(4, 3), i64("episode_start", 1, 2)}, `array "episode_start" does not start with 0`},
		{"starts empty", []Array{codes(4, 3), i64("episode_start")}, `array "episode_start" does not start with 0`},
		{"starts order", []Array{codes(4, 3), i64("episode_start", 0, 2, 2)}, `array "episode_start" is not strictly ascending at index 2 (2 after 2)`},
		{"starts past T", []Array{codes(4, 3), i64("episode_start", 0, 4)}, `array "episode_start" has start 4 at index 1, want < T=4`},
		{"starts no steps", []Array{codes(0, 3), i64("episode_start", 0)}, `array "episode_start" has 1 entries but the trajectory has no steps`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := WriteNPZ(path, tc.arrays); err != nil {
				t.Fatal(err)
			}
			_, err := ReadTrajectory(path)
			wantErr(t, err, ErrContract, nil)
			want := tc.msg
			if want[:4] != "npz:" {
				want = "npz: PATH: " + want
			}
			want = string(bytes.ReplaceAll([]byte(want), []byte("PATH"), []byte(path)))
			if err != nil && err.Error() != want {
				t.Errorf("error\n%q\nwant\n%q", err, want)
			}
		})
	}
	// Empty trajectories and int32 episode starts are fine.
	for _, arrays := range [][]Array{
		{codes(0, 3)},
		{codes(3, 3), {Name: "episode_start", Dtype: "int32", Shape: []int{2}, Data: []int32{0, 2}}},
	} {
		if err := WriteNPZ(path, arrays); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadTrajectory(path); err != nil {
			t.Error(err)
		}
	}
}

func TestValidate(t *testing.T) {
	good := func() *Trajectory {
		return &Trajectory{T: 3, Codes: make([]uint16, 6), S: 1, M: 2, Actions: []int64{-1, 0, 1}, HasActions: true,
			EpisodeStart: []int64{0, 2}}
	}
	if err := good().Validate(); err != nil {
		t.Fatal(err)
	}
	if eps := (&Trajectory{T: 4}).Episodes(); !slices.Equal(eps, [][2]int{{0, 4}}) {
		t.Errorf("nil EpisodeStart: %v", eps)
	}
	for _, tc := range []struct {
		name string
		edit func(*Trajectory)
		msg  string
	}{
		{"negative T", func(tr *Trajectory) { tr.T = -1 }, "T=-1"},
		{"no state", func(tr *Trajectory) { tr.Codes = nil }, `no "codes" or "obs"`},
		{"codes len", func(tr *Trajectory) { tr.Codes = tr.Codes[:5] }, `array "codes" has 5 values, want T×S×M = 3×1×2`},
		{"codes dims", func(tr *Trajectory) { tr.S = 0 }, "want positive sizes"},
		{"codes dtype", func(tr *Trajectory) { tr.CodesDtype = "int8" }, `CodesDtype "int8"`},
		{"obs len", func(tr *Trajectory) { tr.Obs, tr.ObsS, tr.ObsD = make([]float32, 5), 1, 2 }, `array "obs" has 5 values`},
		{"obs dtype", func(tr *Trajectory) { tr.Obs, tr.ObsS, tr.ObsD, tr.ObsDtype = make([]float32, 3), 1, 1, "int32" }, `ObsDtype "int32"`},
		{"actions len", func(tr *Trajectory) { tr.Actions = tr.Actions[:2] }, `array "actions" has 2 steps, want T=3`},
		{"actions missing", func(tr *Trajectory) { tr.Actions = nil }, `array "actions" has 0 steps`},
		{"starts", func(tr *Trajectory) { tr.EpisodeStart = []int64{0, 3} }, "want < T=3"},
		{"extra reserved", func(tr *Trajectory) {
			tr.Extra = []Array{{Name: "obs", Dtype: "uint8", Shape: []int{}, Data: []uint8{1}}}
		}, "is a trajectory array"},
		{"extra twice", func(tr *Trajectory) {
			a := Array{Name: "x", Dtype: "uint8", Shape: []int{}, Data: []uint8{1}}
			tr.Extra = []Array{a, a}
		}, "twice"},
		{"extra bad", func(tr *Trajectory) {
			tr.Extra = []Array{{Name: "x", Dtype: "uint8", Shape: []int{2}, Data: []uint8{1}}}
		}, `array "x" has shape (2,)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := good()
			tc.edit(tr)
			err := tr.Validate()
			if err == nil {
				t.Fatal("no error")
			}
			wantErr(t, err, err.(*Error).Kind, nil, tc.msg)
			if path := filepath.Join(t.TempDir(), "x.npz"); WriteTrajectory(path, tr) == nil {
				t.Error("WriteTrajectory accepted it")
			} else if _, serr := os.Stat(path); !errors.Is(serr, os.ErrNotExist) {
				t.Error("failed WriteTrajectory left a file")
			}
		})
	}
	tr := good()
	tr.HasActions, tr.Actions = false, nil
	if err := tr.Validate(); err != nil {
		t.Errorf("nil actions without HasActions: %v", err)
	}
}

// The real web-pgdocs test split (see ../shared/data/web-pgdocs/README.md).
var realData = filepath.Join("..", "..", "shared", "data", "web-pgdocs")

func realFile(t testing.TB, name string) string {
	path := filepath.Join(realData, name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not available: %v", path, err)
	}
	return path
}

func TestRealCodes(t *testing.T) {
	tr, err := ReadTrajectory(realFile(t, "test_codes.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.T != 600 || tr.S != 32 || tr.M != 32 || tr.CodesDtype != "uint8" || len(tr.Codes) != 600*32*32 {
		t.Errorf("T=%d S=%d M=%d %s", tr.T, tr.S, tr.M, tr.CodesDtype)
	}
	if slices.Max(tr.Codes) >= 64 {
		t.Errorf("6-bit codes reach %d", slices.Max(tr.Codes))
	}
	if !tr.HasActions || len(tr.Episodes()) != 6 || tr.Actions[0] != NoAction {
		t.Errorf("actions %v, episodes %v", tr.HasActions, tr.Episodes())
	}
	for _, ep := range tr.Episodes() {
		if ep[1]-ep[0] != 100 {
			t.Errorf("episode %v is not 100 steps", ep)
		}
	}
}

func TestRealObs(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 39 MB of observations")
	}
	tr, err := ReadTrajectory(realFile(t, "test.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.T != 600 || tr.ObsS != 32 || tr.ObsD != 512 || tr.ObsDtype != "float32" || len(tr.Obs) != 600*32*512 || tr.Codes != nil {
		t.Errorf("T=%d obs %d×%d %s", tr.T, tr.ObsS, tr.ObsD, tr.ObsDtype)
	}
	lo, hi := slices.Min(tr.Obs), slices.Max(tr.Obs)
	if lo < -0.5 || hi > 0.5 {
		t.Errorf("obs range [%g, %g], want within [-0.5, 0.5]", lo, hi)
	}
}

func BenchmarkReadTrajectory(b *testing.B) {
	for _, name := range []string{"test.npz", "test_codes.npz"} {
		b.Run(name, func(b *testing.B) {
			path := realFile(b, name)
			tr, err := ReadTrajectory(path)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(4*len(tr.Obs) + 2*len(tr.Codes) + 8*len(tr.Actions)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ReadTrajectory(path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
