package plot

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/wmzip/wmzip/internal/ctmc"
)

// TestCCDF draws an audit of power-law counts into a PNG image.
func TestCCDF(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]int64, 3000)
	for i := range x {
		x[i] = int64(10 / (1 - rng.Float64()))
	}
	r, err := ctmc.Audit(x, ctmc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := CCDF(&b, x, r, "test"); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b.Bytes(), []byte("\x89PNG\r\n\x1a\n")) || b.Len() < 5000 {
		t.Errorf("not a PNG image (%d bytes)", b.Len())
	}
	if _, _, err := ctmc.CCDF([]int64{0, -1}); err == nil {
		t.Error("CCDF of no positive count: no error")
	}
}
