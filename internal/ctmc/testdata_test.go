package ctmc

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the files under testdata/ctmc")

// webData is where the web-pgdocs step logs live, relative to this package.
const webData = "../../../shared/data/web-pgdocs"

const testdataDir = "../../testdata/ctmc"

// syntheticMixed draws n counts: with probability tail from the discrete
// power law (xmin, alpha), otherwise uniformly from 1..xmin-1.
func syntheticMixed(n int, xmin int64, alpha, tail float64, seed uint64) []int64 {
	p := newPLSampler(xmin, alpha)
	r := rand.New(rand.NewPCG(seed, 2))
	x := make([]int64, n)
	for i := range x {
		if r.Float64() < tail {
			x[i] = p.draw(r)
		} else {
			x[i] = 1 + r.Int64N(xmin-1)
		}
	}
	return x
}

func countsFile(header string, x []int64) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n", header)
	for _, v := range x {
		fmt.Fprintln(&b, v)
	}
	return b.Bytes()
}

// testdataFiles returns the generated test files by name.
func testdataFiles(t *testing.T) map[string][]byte {
	files := map[string][]byte{
		"pl_a2.5_n5000.counts": countsFile("discrete power law, alpha=2.5, xmin=1, n=5000, ctmc.SamplePowerLaw seed 1",
			SamplePowerLaw(5000, 1, 2.5, 1)),
		"pl_a2.2_xmin10_n5000.counts": countsFile("70% discrete power law alpha=2.2 from xmin=10, 30% uniform on 1..9, n=5000, seed 2",
			syntheticMixed(5000, 10, 2.2, 0.7, 2)),
	}
	if !*update {
		return files
	}
	for _, split := range []string{"train", "test"} {
		for _, by := range []VisitKey{ByPage, ByState} {
			f, err := os.Open(filepath.Join(webData, split+"_steps.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			items, err := ReadStepVisits(f, by)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			name := map[VisitKey]string{ByPage: "pages", ByState: "states"}[by]
			files[fmt.Sprintf("web-pgdocs_%s_%s.counts", split, name)] = countsFile(
				fmt.Sprintf("web-pgdocs %s_steps.jsonl: visits per %s, descending", split, name[:len(name)-1]), Counts(items))
		}
	}
	return files
}

// TestTestdata regenerates testdata/ctmc with -update and otherwise checks
// that the synthetic files still come out of their generators.
func TestTestdata(t *testing.T) {
	for name, want := range testdataFiles(t) {
		path := filepath.Join(testdataDir, name)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from its generator; rerun with -update", name)
		}
	}
}
