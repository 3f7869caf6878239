package main

import (
	"errors"

	"github.com/wmzip/wmzip/cmd/wmzip/internal/bench"
	"github.com/wmzip/wmzip/internal/traj"
)

// sharedModelBytes is the size of the model a file is read with: embedded,
// or the file given with -m (0 if neither).
func sharedModelBytes(embedded bool, embeddedBytes int64, modelPath string) int64 {
	if embedded {
		return embeddedBytes
	}
	if size, err := inputSize(modelPath); modelPath != "" && err == nil {
		return size
	}
	return 0
}

// measureBaselines decodes the file and measures the general-purpose
// compressors on its states: the break-even horizons of its model.
func measureBaselines(s *bench.Storage, path, modelPath string, k int) error {
	if s.SharedModelBytes == 0 || s.Horizon == 0 {
		return errors.New("--baselines needs the model (-m model.wmm, or an embedded one) and states")
	}
	f, fh, err := openWMZ(path, modelPath)
	if err != nil {
		return err
	}
	defer fh.Close()
	tr, _, err := traj.Decode(f, nil)
	if err != nil {
		return wmzError(path, err, modelPath)
	}
	return s.MeasureBreakEvens(tr.Codes, tr.S*tr.M, k)
}
