package bench

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/npz"
)

// Storage is a file's account of storage with its shared model (MemoWM
// A.4): the model amortized over the file's states plus the episodes, and
// the horizons at which this model breaks even with general-purpose
// compressors of the same codes.
type Storage struct {
	Horizon           int64       `json:"-"` // the file's states
	SharedModelBytes  int64       `json:"shared_model_bytes,omitempty"`
	EpisodeBits       float64     `json:"-"` // bits per state of the episodes
	TotalBitsPerState float64     `json:"total_bits_per_state,omitempty"`
	BreakEvens        []BreakEven `json:"break_evens,omitempty"`
}

// NewStorage accounts a file of states at bits per state (episodes only)
// whose model takes modelBytes (0: not known).
func NewStorage(states, modelBytes int64, bits float64) Storage {
	s := Storage{Horizon: states, SharedModelBytes: modelBytes, EpisodeBits: bits}
	if modelBytes > 0 && states > 0 {
		s.TotalBitsPerState = StorageCoder{ModelBytes: modelBytes, BitsPerState: bits}.Total(states)
	}
	return s
}

// MeasureBreakEvens compresses codes (n per state, alphabet k) with the
// general-purpose compressors and sets the break-even horizon of this
// model against each.
func (s *Storage) MeasureBreakEvens(codes []uint16, n, k int) error {
	general, err := GeneralRates(codes, n, k, false)
	if err != nil {
		return err
	}
	self := StorageCoder{Name: "this model", ModelBytes: s.SharedModelBytes, BitsPerState: s.EpisodeBits}
	s.BreakEvens = s.BreakEvens[:0]
	for _, g := range general {
		s.BreakEvens = append(s.BreakEvens, BreakEvenOf(self, g))
	}
	return nil
}

// Text returns the account as lines of `wmzip info`.
func (s Storage) Text() string {
	if s.TotalBitsPerState == 0 {
		return "storage      model not given (-m model.wmm): total per state unknown"
	}
	t := fmt.Sprintf("storage      %.1f bits/state at this horizon (%d states): model %d bytes amortized (%.1f) + episodes %.1f",
		s.TotalBitsPerState, s.Horizon, s.SharedModelBytes, s.TotalBitsPerState-s.EpisodeBits, s.EpisodeBits)
	for _, be := range s.BreakEvens {
		other := be.Smaller
		if other == "this model" {
			other = be.Larger
		}
		if be.Never {
			t += fmt.Sprintf("\nbreak-even   against %s: never (its states are not costlier)", other)
		} else {
			t += fmt.Sprintf("\nbreak-even   against %s: %.0f states", other, be.States)
		}
	}
	return t
}

// Pair reads the train and test trajectories of a benchmark from two
// .npz paths, or, given none, generates the graphworld pair of `wmzip
// demo` (with float observations when obs); it returns them with a name
// for reports.
func Pair(paths []string, obs bool) (train, test *npz.Trajectory, name string, err error) {
	switch len(paths) {
	case 0:
		train, test, err = Graphworld(obs)
		return train, test, "graphworld (uniform, 200 nodes; train 8×250 steps, test 2×200)", err
	case 2:
		if train, err = npz.ReadTrajectory(paths[0]); err != nil {
			return nil, nil, "", err
		}
		if test, err = npz.ReadTrajectory(paths[1]); err != nil {
			return nil, nil, "", err
		}
		return train, test, fmt.Sprintf("%s (trained on %s)", filepath.Base(paths[1]), filepath.Base(paths[0])), nil
	}
	return nil, nil, "", errors.New("want train.npz and test.npz, or nothing for graphworld")
}

// SavePNG writes the report's plot to path (atomically, like every
// output file).
func (r *CapacityReport) SavePNG(path string) error {
	var buf bytes.Buffer
	if err := r.WritePNG(&buf); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, buf.Bytes())
}
