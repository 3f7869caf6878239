package format

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/wmzip/wmzip/internal/wm"
)

// TestFileConcurrentAllMethods decodes one File from many goroutines at once, every
// method mixed: each result must equal the sequential decode. Run under
// -race (as .ci/run does) this checks that a File is safe for concurrent
// use, as documented.
func TestFileConcurrentAllMethods(t *testing.T) {
	g := wm.Geometry{S: 2, M: 3, K: 9}
	eps := genEpisodes(rand.New(rand.NewPCG(41, 42)), g, []int{9, 0, 13, 4, 7})
	m := trainModel(g, 12, eps)
	for _, lossy := range []bool{false, true} {
		opts := []Option{WithKeyframeInterval(3), WithLanes(2), WithEmbeddedModel(true)}
		if lossy {
			opts = append(opts, withGate(2<<16, testRetain(12)))
		}
		b := encode(t, m, eps, opts...)
		want, err := readAll(b, nil, opts...)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Open(bytes.NewReader(b), int64(len(b)), nil, opts...)
		if err != nil {
			t.Fatal(err)
		}
		n := g.N()
		var wg sync.WaitGroup
		errs := make(chan string, 64)
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(w), 43))
				for range 60 {
					e := rng.IntN(len(want))
					switch op := rng.IntN(4); {
					case op == 0:
						if err := f.Verify(); err != nil {
							errs <- err.Error()
						}
					case op == 1:
						a, c, err := f.DecodeEpisode(e)
						if err != nil || !slices.Equal(a, want[e].Actions) || !slices.Equal(c, want[e].Codes) {
							errs <- "DecodeEpisode differs"
						}
					case op == 2:
						if meta, err := f.Metadata(e); err != nil || !bytes.Equal(meta, want[e].Meta) {
							errs <- "Metadata differs"
						}
					default:
						if len(want[e].Actions) == 0 {
							continue
						}
						s := rng.IntN(len(want[e].Actions))
						a, c, err := f.StateAction(e, s)
						if err != nil || a != want[e].Actions[s] || !slices.Equal(c, want[e].Codes[s*n:(s+1)*n]) {
							errs <- "StateAction differs"
						}
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatalf("lossy=%v: %s", lossy, e)
		}
	}
}
