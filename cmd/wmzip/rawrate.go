package main

import (
	"fmt"
	"os"

	wmzlib "github.com/wmzip/wmzip"
)

// warnAboveRaw warns, on the standard error whatever -q says, when the
// file of size bytes written with c for states states codes them above
// their raw rate: the model predicts them worse than no model, as one
// trained on other data does (`info` says the same of the file).
func warnAboveRaw(c *wmzlib.Codec, out string, states int, size int64, embedded bool) {
	if embedded {
		if b, err := c.MarshalBinary(); err == nil {
			size -= int64(len(b))
		}
	}
	bits, raw := float64(size)*8/float64(max(states, 1)), c.Model().Geom.RawBits()
	if bits > raw {
		fmt.Fprintf(os.Stderr, "wmzip: warning: %s codes %.1f bits/state, above the raw %.0f of its states: the model predicts them worse than no model; train one on trajectories like these (wmzip train)\n", out, bits, raw)
	}
}
