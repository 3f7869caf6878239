package format

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/wm"
)

// FuzzDecode feeds arbitrary bytes to every decoding path: it must never
// panic, and what decodes must decode the same sequentially and by random
// access, on one thread and decoding ahead on three.
func FuzzDecode(f *testing.F) {
	if b, err := os.ReadFile(goldenDir + "/golden.wmz"); err == nil {
		f.Add(b)
	}
	var models []*wm.Model
	if raw, err := os.ReadFile(goldenDir + "/golden.wmm"); err == nil {
		if m, err := wm.UnmarshalModel(raw); err == nil {
			models = append(models, m)
		}
	}
	models = append(models, nil)
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := ReadHeader(bytes.NewReader(b)); err != nil && !isFileError(err) {
			t.Fatalf("ReadHeader: unexpected error type %v", err)
		}
		for _, m := range models {
			seq, err1 := readAll(b, m, WithMaxMemory(64<<20), WithThreads(1))
			ra, err2 := openAll(b, m, WithMaxMemory(64<<20), WithThreads(1))
			// Decoding ahead changes neither what decodes nor the error.
			par, err3 := readAll(b, m, WithMaxMemory(64<<20), WithThreads(3))
			if fmt.Sprint(err3) != fmt.Sprint(err1) {
				t.Fatalf("Reader: %v on 3 threads, %v on one", err3, err1)
			}
			if err1 == nil {
				if err := sameEpisodes(par, seq); err != nil {
					t.Fatalf("Reader on 3 threads: %v", err)
				}
			}
			if _, err4 := openAll(b, m, WithMaxMemory(64<<20), WithThreads(3)); fmt.Sprint(err4) != fmt.Sprint(err2) {
				t.Fatalf("File: %v on 3 threads, %v on one", err4, err2)
			}
			if err1 == nil && err2 == nil {
				if err := sameEpisodes(ra, seq); err != nil {
					t.Fatal(err)
				}
			}
			if err1 == nil && err2 != nil {
				t.Fatalf("sequential decode succeeded, random access failed: %v", err2)
			}
		}
	})
}

// parallelFuzz is the model and states FuzzParallelWrite feeds from.
var parallelFuzz struct {
	once sync.Once
	m    *wm.Model // with a retention gate
	eps  []episode
}

// FuzzParallelWrite reads b as a feeding pattern (episodes with or
// without metadata, states, flushes, level changes, Account calls; the
// first byte picks the keyframe interval) and writes it serially and on 2
// and 3 threads: the files must be the same bytes, and decode alike with
// read-ahead.
func FuzzParallelWrite(f *testing.F) {
	f.Add([]byte{2, 0, 5, 6, 7, 1, 8, 9, 0, 10, 2, 11, 12, 3, 13, 14})
	f.Add([]byte{0, 0, 8, 16, 24, 0, 0, 32, 40, 1, 48})
	f.Add(bytes.Repeat([]byte{7, 15, 23, 31, 2, 39, 47, 1, 0, 55}, 12))
	levels := []lambda.Lambda{1 << 12, 4 << 16, LambdaLossless}
	f.Fuzz(func(t *testing.T, b []byte) {
		pf := &parallelFuzz
		pf.once.Do(func() {
			g := wm.Geometry{S: 3, M: 4, K: 16}
			pf.eps = genEpisodes(rand.New(rand.NewPCG(151, 152)), g, []int{24, 24})
			pf.m = gateModel(t, g, pf.eps)
		})
		if len(b) == 0 || len(b) > 4096 {
			return
		}
		n := pf.m.Geom.N()
		write := func(threads int) []byte {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, pf.m, WithKeyframeInterval(1+int(b[0]%7)), WithLevels(levels...), WithThreads(threads))
			if err != nil {
				t.Fatal(err)
			}
			started := false
			for i, op := range b[1:] {
				switch op % 8 {
				case 0, 1:
					var meta []byte
					if op%2 == 1 {
						meta = fmt.Appendf(nil, `{"i":%d}`, i)
					}
					err = w.WriteEpisode(meta)
					started = true
				case 2:
					err = w.Flush()
				case 3:
					err = w.SetLevel(int(op>>3) % len(levels))
				case 4:
					w.Account()
				default:
					if !started {
						continue
					}
					e := pf.eps[int(op>>3)%len(pf.eps)]
					k := int(op>>4) % len(e.Actions)
					err = w.WriteState(e.Actions[k], e.Codes[k*n:(k+1)*n])
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}
		want := write(1)
		for _, threads := range []int{2, 3} {
			if got := write(threads); !bytes.Equal(got, want) {
				t.Fatalf("%d threads: %d bytes differ from the serial %d", threads, len(got), len(want))
			}
		}
		seq, err := readAll(want, pf.m, WithThreads(1))
		if err != nil {
			t.Fatal(err)
		}
		par, err := readAll(want, pf.m, WithThreads(3))
		if err != nil {
			t.Fatal(err)
		}
		if err := sameEpisodes(par, seq); err != nil {
			t.Fatal(err)
		}
	})
}
