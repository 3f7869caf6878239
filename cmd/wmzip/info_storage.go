package main

import (
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

// storageLine is the text form of storage.
func (j *infoJSON) storageLine() string {
	if j.TotalBitsPerState == 0 {
		return "storage      model not given (-m model.wmm): total per state unknown"
	}
	return fmt.Sprintf("storage      %.1f bits/state at this horizon (%d states): model %d bytes amortized (%.1f) + episodes %.1f",
		j.TotalBitsPerState, j.States, j.SharedModelBytes, j.TotalBitsPerState-j.BitsPerState, j.BitsPerState)
}
