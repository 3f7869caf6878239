package wm

import (
	"bytes"
	"testing"
)

// TestNoFilePredictsAsFile checks that a model trained without a file
// predicts every coordinate as the model read back from its file, and
// that it refuses to be written.
func TestNoFilePredictsAsFile(t *testing.T) {
	for _, g := range []Geometry{{S: 4, M: 8, K: 16}, {S: 3, M: 5, K: 300}} {
		eps := synth(1, g, 6, 30)
		file, err := Train(g, eps, TrainOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mem, err := Train(g, eps, TrainOptions{NoFile: true})
		if err != nil {
			t.Fatal(err)
		}
		test := synth(2, g, 2, 30)
		if !bytes.Equal(run(t, file, test), run(t, mem, test)) {
			t.Errorf("%+v: a model without a file predicts otherwise", g)
		}
		if _, err := mem.MarshalBinary(); err == nil {
			t.Error("MarshalBinary of a model without a file succeeded")
		}
		if _, err := mem.WithSection("TEST", nil); err == nil {
			t.Error("WithSection of a model without a file succeeded")
		}
		if mem.FileVersion() != 0 {
			t.Errorf("file version %d, want 0", mem.FileVersion())
		}
	}
}
