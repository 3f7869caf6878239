package train

import (
	"flag"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/internal/opq"
)

var memTest = flag.Bool("train.memtest", false, "run TestTrainMemory (100,000 x 512 vectors, minutes)")

// TestTrainMemory trains on 100,000 vectors of 512 values, all of them used
// (no sampling), and reports the peak resident memory of the process, which
// must stay under 2 GiB.
func TestTrainMemory(t *testing.T) {
	if !*memTest {
		t.Skip("enable with -train.memtest")
	}
	const n, dim = 100_000, 512
	r := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, n*dim)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	q, err := Quantizer(x, opq.Config{Sample: -1, OPQIters: 2, Iters: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	_ = q
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			t.Log("peak resident memory:", strings.TrimSpace(line[6:]))
			var kb int64
			for _, c := range line {
				if c >= '0' && c <= '9' {
					kb = kb*10 + int64(c-'0')
				}
			}
			if kb > 2<<20 {
				t.Errorf("peak resident memory %d KiB exceeds 2 GiB", kb)
			}
		}
	}
}
