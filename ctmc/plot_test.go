package ctmc

import (
	"bytes"
	"testing"
)

func TestPlotCCDF(t *testing.T) {
	x := readTestCounts(t, "pl_a2.2_xmin10_n5000.counts")
	r, err := Audit(x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := PlotCCDF(&b, x, r, "test"); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b.Bytes(), []byte("\x89PNG\r\n\x1a\n")) || b.Len() < 5000 {
		t.Errorf("not a PNG image (%d bytes)", b.Len())
	}
}
