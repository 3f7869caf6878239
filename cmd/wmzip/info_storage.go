package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/wmzip/wmzip/bench"
)

// storage fills the shared model's size (embedded, or the file given with
// -m) and the total storage per state at this file's horizon: the model
// amortized over the file's states plus its episodic rate (MemoWM A.4).
func (j *infoJSON) storage(modelPath string) {
	switch {
	case j.ModelEmbedded:
		j.SharedModelBytes = j.ModelBytes
	case modelPath != "":
		if st, err := os.Stat(modelPath); err == nil {
			j.SharedModelBytes = st.Size()
		}
	}
	if j.SharedModelBytes > 0 && j.States > 0 {
		c := bench.StorageCoder{ModelBytes: j.SharedModelBytes, BitsPerState: j.BitsPerState}
		j.TotalBitsPerState = c.Total(j.States)
	}
}

// measureBaselines decodes the file and measures the general-purpose
// compressors on its states: the break-even horizons of its model against
// them.
func (j *infoJSON) measureBaselines(path, modelPath string) error {
	if j.SharedModelBytes == 0 || j.States == 0 {
		return errors.New("--baselines needs the model (-m model.wmm, or an embedded one) and states")
	}
	f, fh, err := openWMZ(path, modelPath)
	if err != nil {
		return err
	}
	defer fh.Close()
	tr, _, err := f.Trajectory(nil)
	if err != nil {
		return wmzError(path, err)
	}
	general, err := bench.GeneralRates(tr.Codes, tr.S*tr.M, j.Alphabet, false)
	if err != nil {
		return err
	}
	self := bench.StorageCoder{Name: "this model", ModelBytes: j.SharedModelBytes, BitsPerState: j.BitsPerState}
	for _, g := range general {
		j.BreakEvens = append(j.BreakEvens, bench.BreakEvenOf(self, g))
	}
	return nil
}

// storageLine is the text form of storage and its break-evens.
func (j *infoJSON) storageLine() string {
	if j.TotalBitsPerState == 0 {
		return "storage      model not given (-m model.wmm): total per state unknown"
	}
	s := fmt.Sprintf("storage      %.1f bits/state at this horizon (%d states): model %d bytes amortized (%.1f) + episodes %.1f",
		j.TotalBitsPerState, j.States, j.SharedModelBytes, j.TotalBitsPerState-j.BitsPerState, j.BitsPerState)
	for _, be := range j.BreakEvens {
		other := be.Smaller
		if other == "this model" {
			other = be.Larger
		}
		if be.Never {
			s += fmt.Sprintf("\nbreak-even   against %s: never (its states are not costlier)", other)
		} else {
			s += fmt.Sprintf("\nbreak-even   against %s: %.0f states", other, be.States)
		}
	}
	return s
}
