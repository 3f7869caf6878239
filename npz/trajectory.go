package npz

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// NoAction is the action recorded where none is known: at an episode's
// first step, and at every step of a file without an "actions" array.
const NoAction = -1

// Names of the arrays that the trajectory contract defines.
const (
	NameCodes        = "codes"
	NameObs          = "obs"
	NameActions      = "actions"
	NameEpisodeStart = "episode_start"
)

// Trajectory is an agent trajectory of T steps as stored in a trajectory
// .npz: quantized states (codes), raw observations (obs), or both, with
// actions and episode boundaries. Slices are time-major: step t of Codes is
// Codes[t*S*M : (t+1)*S*M].
type Trajectory struct {
	T int // steps

	Codes      []uint16 // [T][S*M], nil if absent; read from uint8 or uint16
	S, M       int      // codes shape [T,S,M], or [T,N] read as S=1, M=N
	CodesDtype string   // "uint8" or "uint16" as read; on write "" picks uint8 when every code is < 256

	Obs        []float32 // [T][ObsS*ObsD], nil if absent; read from float32, float16 or float64 (rounded to nearest)
	ObsS, ObsD int       // obs shape [T,S,d], or [T,D] read as ObsS=1, ObsD=D
	ObsDtype   string    // "float32", "float16" or "float64" as read; on write "" means float32

	Actions    []int64 // len T; NoAction where unknown; read from int32 or int64
	HasActions bool    // false if the file has no "actions" array; then none is written

	EpisodeStart []int64 // ascending, first 0, all < T; [0] if the file has none; nil means one episode

	Extra []Array // other arrays, kept as they are
}

// ReadTrajectory reads a trajectory .npz. It fails with ErrContract when the
// arrays break the contract (see Validate), and with the errors of ReadNPZ
// for files that cannot be read.
func ReadTrajectory(path string, opts ...Option) (*Trajectory, error) {
	arrays, err := ReadNPZ(path, opts...)
	if err != nil {
		return nil, err
	}
	return fromArrays(arrays, path)
}

// DecodeTrajectory is ReadTrajectory for an archive held in the size bytes
// of r.
func DecodeTrajectory(r io.ReaderAt, size int64, opts ...Option) (*Trajectory, error) {
	arrays, err := DecodeNPZ(r, size, opts...)
	if err != nil {
		return nil, err
	}
	return fromArrays(arrays, "")
}

func fromArrays(arrays []Array, path string) (*Trajectory, error) {
	c, err := sortArrays(arrays, path)
	if err != nil {
		return nil, err
	}
	h := &c.h
	tr := &Trajectory{T: h.T, S: h.S, M: h.M, CodesDtype: h.CodesDtype, ObsS: h.ObsS, ObsD: h.ObsD, ObsDtype: h.ObsDtype,
		HasActions: h.HasActions, Extra: c.extra}
	if c.codes != nil {
		if v, ok := c.codes.Data.([]uint8); ok {
			tr.Codes = make([]uint16, len(v))
			for j, c := range v {
				tr.Codes[j] = uint16(c)
			}
		} else {
			tr.Codes = c.codes.Data.([]uint16)
		}
	}
	if c.obs != nil {
		switch v := c.obs.Data.(type) {
		case []float64:
			tr.Obs = make([]float32, len(v))
			for i, x := range v {
				tr.Obs[i] = float32(x)
			}
		default:
			tr.Obs = v.([]float32)
		}
	}
	if c.actions != nil {
		tr.Actions = toInt64(c.actions.Data)
	} else {
		tr.Actions = make([]int64, tr.T)
		for i := range tr.Actions {
			tr.Actions[i] = NoAction
		}
	}
	if c.starts != nil {
		tr.EpisodeStart = toInt64(c.starts.Data)
	} else if tr.T > 0 {
		tr.EpisodeStart = []int64{0}
	}
	if err := tr.validate(path); err != nil {
		return nil, err
	}
	return tr, nil
}

// contract is a file's arrays sorted by their role in the trajectory
// contract, with the trajectory's shape; array Data may be nil.
type contract struct {
	h                           TrajectoryHeader // EpisodeStart and Extra not set
	codes, obs, actions, starts *Array
	extra                       []Array
}

// sortArrays checks the dtypes and shapes of the contract's arrays and that
// they agree on T.
func sortArrays(arrays []Array, path string) (contract, error) {
	c := contract{h: TrajectoryHeader{T: -1}}
	h := &c.h
	var tFrom string
	for i := range arrays {
		a := &arrays[i]
		l := loc{path: path, array: a.Name}
		switch a.Name {
		case NameCodes:
			if err := stateShape(a, l, []string{"uint8", "uint16"}, "[T,S,M] or [T,N]", &h.S, &h.M); err != nil {
				return c, err
			}
			h.HasCodes, h.CodesDtype, c.codes = true, a.Dtype, a
		case NameObs:
			if err := stateShape(a, l, []string{"float32", "float16", "float64"}, "[T,S,d] or [T,D]", &h.ObsS, &h.ObsD); err != nil {
				return c, err
			}
			h.HasObs, h.ObsDtype, c.obs = true, a.Dtype, a
		case NameActions:
			if err := wantDtype(a, l, "int32", "int64"); err != nil {
				return c, err
			}
			if len(a.Shape) != 1 {
				return c, l.errf(ErrContract, nil, "has shape %s, want [T]", fmtShape(a.Shape))
			}
			h.HasActions, c.actions = true, a
		case NameEpisodeStart:
			if err := wantDtype(a, l, "int64", "int32"); err != nil {
				return c, err
			}
			if len(a.Shape) != 1 {
				return c, l.errf(ErrContract, nil, "has shape %s, want [E]", fmtShape(a.Shape))
			}
			c.starts = a
			continue
		default:
			c.extra = append(c.extra, *a)
			continue
		}
		if h.T < 0 {
			h.T, tFrom = a.Shape[0], a.Name
		} else if a.Shape[0] != h.T {
			return c, l.errf(ErrContract, nil, "has %d steps but %q has %d", a.Shape[0], tFrom, h.T)
		}
	}
	if !h.HasCodes && !h.HasObs {
		return c, loc{path: path}.errf(ErrContract, nil, "has no %q or %q array", NameCodes, NameObs)
	}
	return c, nil
}

func wantDtype(a *Array, l loc, want ...string) error {
	for _, w := range want {
		if a.Dtype == w {
			return nil
		}
	}
	list := strings.Join(want[:len(want)-1], ", ") + " or " + want[len(want)-1]
	fix := ""
	switch {
	case a.Name == NameCodes:
		fix = ": save codes.astype(np.uint8), or np.uint16 if a code exceeds 255"
	case a.Name == NameActions || a.Name == NameEpisodeStart:
		fix = fmt.Sprintf(": save %s.astype(np.int64)", a.Name)
	case a.Name == NameObs:
		fix = ": save obs.astype(np.float32)"
	}
	return l.errf(ErrContract, nil, "has dtype %s, want %s%s", a.Dtype, list, fix)
}

// stateShape checks a codes or obs array and sets its slot count and width.
func stateShape(a *Array, l loc, dtypes []string, want string, s, w *int) error {
	if err := wantDtype(a, l, dtypes...); err != nil {
		return err
	}
	switch len(a.Shape) {
	case 3:
		*s, *w = a.Shape[1], a.Shape[2]
	case 2:
		*s, *w = 1, a.Shape[1]
	default:
		return l.errf(ErrContract, nil, "has shape %s, want %s", fmtShape(a.Shape), want)
	}
	if *s == 0 || *w == 0 {
		return l.errf(ErrContract, nil, "has shape %s with an empty state", fmtShape(a.Shape))
	}
	return nil
}

func toInt64(data any) []int64 {
	if v, ok := data.([]int32); ok {
		out := make([]int64, len(v))
		for i, x := range v {
			out[i] = int64(x)
		}
		return out
	}
	return data.([]int64)
}

// Episodes returns the [start, end) step range of each episode.
func (tr *Trajectory) Episodes() [][2]int { return episodes(tr.EpisodeStart, tr.T) }

// Validate checks that tr is consistent: codes or obs present with positive
// state sizes and T steps each; Actions of length T (or nil when HasActions
// is false) with values ≥ NoAction; EpisodeStart nil or strictly ascending
// from 0 with every start < T (empty when T is 0); Extra arrays well formed,
// with unique names that are not the contract's.
func (tr *Trajectory) Validate() error { return tr.validate("") }

func (tr *Trajectory) validate(path string) error {
	fl := loc{path: path}
	if tr.T < 0 {
		return fl.errf(ErrContract, nil, "has T=%d steps", tr.T)
	}
	if tr.Codes == nil && tr.Obs == nil {
		return fl.errf(ErrContract, nil, "has no %q or %q array", NameCodes, NameObs)
	}
	if tr.Codes != nil {
		if err := checkState(len(tr.Codes), tr.T, tr.S, tr.M, loc{path, NameCodes}, "S×M"); err != nil {
			return err
		}
		switch tr.CodesDtype {
		case "", "uint8", "uint16":
		default:
			return loc{path, NameCodes}.errf(ErrContract, nil, "has CodesDtype %q, want uint8 or uint16", tr.CodesDtype)
		}
	}
	if tr.Obs != nil {
		if err := checkState(len(tr.Obs), tr.T, tr.ObsS, tr.ObsD, loc{path, NameObs}, "ObsS×ObsD"); err != nil {
			return err
		}
		switch tr.ObsDtype {
		case "", "float32", "float16", "float64":
		default:
			return loc{path, NameObs}.errf(ErrContract, nil, "has ObsDtype %q, want float32, float16 or float64", tr.ObsDtype)
		}
	}
	la := loc{path, NameActions}
	if tr.HasActions || tr.Actions != nil {
		if len(tr.Actions) != tr.T {
			return la.errf(ErrContract, nil, "has %d steps, want T=%d", len(tr.Actions), tr.T)
		}
	}
	if err := checkStarts(tr.EpisodeStart, tr.T, path); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i := range tr.Extra {
		a := &tr.Extra[i]
		if err := checkExtraName(a.Name, seen, path); err != nil {
			return err
		}
		if _, err := a.check(loc{path: path}); err != nil {
			return err
		}
	}
	return nil
}

func checkState(n, t, s, w int, l loc, what string) error {
	if s <= 0 || w <= 0 {
		return l.errf(ErrContract, nil, "has state shape %d×%d, want positive sizes", s, w)
	}
	if w > math.MaxInt/s || t > 0 && s*w > math.MaxInt/t || n != t*s*w {
		return l.errf(ErrContract, nil, "has %d values, want T×%s = %d×%d×%d", n, what, t, s, w)
	}
	return nil
}

// WriteTrajectory checks tr with Validate and writes it to path as a
// trajectory .npz, atomically (see WriteNPZ). Arrays are written in the
// order codes, obs, actions, episode_start, then Extra. Codes are written
// as CodesDtype, or as uint8 when it is empty and every code is < 256 and
// as uint16 otherwise; obs as ObsDtype (default float32); actions, only if
// HasActions, as int32 when every action fits and as int64 otherwise;
// episode_start as int64 ([0] when nil and T > 0). Codes and obs keep a
// 3-dimensional shape unless the slot count is 1.
func WriteTrajectory(path string, tr *Trajectory, opts ...Option) error {
	c, err := newConfig(opts)
	if err != nil {
		return err
	}
	if err := tr.validate(path); err != nil {
		return err
	}
	arrays, err := tr.arrays(path)
	if err != nil {
		return err
	}
	return writeNPZ(path, arrays, c)
}

// EncodeTrajectory is WriteTrajectory to a writer.
func EncodeTrajectory(w io.Writer, tr *Trajectory, opts ...Option) error {
	c, err := newConfig(opts)
	if err != nil {
		return err
	}
	if err := tr.validate(""); err != nil {
		return err
	}
	arrays, err := tr.arrays("")
	if err != nil {
		return err
	}
	return encodeNPZ(w, arrays, c, loc{})
}

func stateDims(t, s, w int) []int {
	if s == 1 {
		return []int{t, w}
	}
	return []int{t, s, w}
}

func (tr *Trajectory) arrays(path string) ([]Array, error) {
	var arrays []Array
	if tr.Codes != nil {
		a := Array{Name: NameCodes, Dtype: tr.CodesDtype, Shape: stateDims(tr.T, tr.S, tr.M)}
		if a.Dtype == "" {
			a.Dtype = "uint8"
			for _, c := range tr.Codes {
				if c > math.MaxUint8 {
					a.Dtype = "uint16"
					break
				}
			}
		}
		if a.Dtype == "uint8" {
			b := make([]uint8, len(tr.Codes))
			for i, c := range tr.Codes {
				if c > math.MaxUint8 {
					return nil, loc{path, NameCodes}.errf(ErrContract, nil, "has code %d at index %d, too large for CodesDtype uint8", c, i)
				}
				b[i] = uint8(c)
			}
			a.Data = b
		} else {
			a.Data = tr.Codes
		}
		arrays = append(arrays, a)
	}
	if tr.Obs != nil {
		dt := tr.ObsDtype
		if dt == "" {
			dt = "float32"
		}
		var data any = tr.Obs
		if dt == "float64" {
			wide := make([]float64, len(tr.Obs))
			for i, x := range tr.Obs {
				wide[i] = float64(x)
			}
			data = wide
		}
		arrays = append(arrays, Array{Name: NameObs, Dtype: dt, Shape: stateDims(tr.T, tr.ObsS, tr.ObsD), Data: data})
	}
	if tr.HasActions {
		a := Array{Name: NameActions, Dtype: "int32", Shape: []int{tr.T}}
		small := make([]int32, len(tr.Actions))
		for i, x := range tr.Actions {
			if x != int64(int32(x)) {
				a.Dtype = "int64"
				break
			}
			small[i] = int32(x)
		}
		if a.Dtype == "int32" {
			a.Data = small
		} else {
			a.Data = tr.Actions
		}
		arrays = append(arrays, a)
	}
	starts := tr.EpisodeStart
	if starts == nil && tr.T > 0 {
		starts = []int64{0}
	}
	if starts == nil {
		starts = []int64{}
	}
	arrays = append(arrays, Array{Name: NameEpisodeStart, Dtype: "int64", Shape: []int{len(starts)}, Data: starts})
	return append(arrays, tr.Extra...), nil
}
