package baseline

import (
	"flag"
	"fmt"
	"math/bits"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/wmzip/wmzip/npz"
)

var pgdocs = flag.String("pgdocs", "", "directory holding web-pgdocs train_codes.npz and test_codes.npz; prints the baseline table")

// codesFile is a trajectory's codes as read from a wmzip .npz.
type codesFile struct {
	codes  []uint16
	n      int
	starts []int
}

// readCodes reads `codes` (uint8 or uint16, [T,S,M] or [T,N]) and
// `episode_start` (int64, optional) from a trajectory .npz.
func readCodes(path string) (codesFile, error) {
	arrays, err := npz.ReadNPZ(path)
	if err != nil {
		return codesFile{}, err
	}
	var f codesFile
	var found bool
	for _, a := range arrays {
		switch a.Name {
		case "codes":
			if len(a.Shape) < 2 {
				return codesFile{}, fmt.Errorf("%s: codes shape %v, want [T,N] or [T,S,M]", path, a.Shape)
			}
			f.n = 1
			for _, d := range a.Shape[1:] {
				f.n *= d
			}
			switch d := a.Data.(type) {
			case []uint8:
				f.codes = make([]uint16, len(d))
				for i, v := range d {
					f.codes[i] = uint16(v)
				}
			case []uint16:
				f.codes = d
			default:
				return codesFile{}, fmt.Errorf("%s: codes dtype %s, want uint8 or uint16", path, a.Dtype)
			}
			found = true
		case "episode_start":
			es, ok := a.Data.([]int64)
			if !ok {
				return codesFile{}, fmt.Errorf("%s: episode_start dtype %s, want int64", path, a.Dtype)
			}
			for _, s := range es {
				f.starts = append(f.starts, int(s))
			}
		}
	}
	if !found {
		return codesFile{}, fmt.Errorf("%s: no codes array", path)
	}
	return f, nil
}

// TestPgdocs prints the baseline table and repetition statistics for the
// web-pgdocs codes:
//
//	go test ./internal/baseline -run TestPgdocs -v -args -pgdocs ../shared/data/web-pgdocs
func TestPgdocs(t *testing.T) {
	if *pgdocs == "" {
		t.Skip("no -pgdocs directory")
	}
	train, err := readCodes(filepath.Join(*pgdocs, "train_codes.npz"))
	if err != nil {
		t.Fatal(err)
	}
	test, err := readCodes(filepath.Join(*pgdocs, "test_codes.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if train.n != test.n {
		t.Fatalf("train N %d, test N %d", train.n, test.n)
	}
	// The files do not record K; the codes are b-bit, so K is the power of
	// two above the largest (64 for faiss's 6-bit codes).
	var top uint16
	for _, v := range append(test.codes[:len(test.codes):len(test.codes)], train.codes...) {
		top = max(top, v)
	}
	in := Input{Codes: test.codes, N: test.n, K: 1 << bits.Len16(top), Train: train.codes, EpisodeStart: test.starts}

	start := time.Now()
	rs, err := Run(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	fmt.Printf("test %d states × N=%d, K=%d, %d episodes; train %d states; %s, %s, %d CPUs; Run took %.1f s\n\n",
		len(in.Codes)/in.N, in.N, in.K, max(1, len(in.EpisodeStart)), len(in.Train)/in.N,
		runtime.Version(), runtime.GOARCH, runtime.NumCPU(), elapsed.Seconds())
	fmt.Println("| baseline | bytes | bits/state | note |")
	fmt.Println("|---|---:|---:|---|")
	for _, r := range rs {
		if !r.Available {
			fmt.Printf("| %s | – | – | unavailable: %s |\n", r.Name, r.Note)
			continue
		}
		fmt.Printf("| %s | %d | %.1f | %s |\n", r.Name, r.Bytes, r.BitsPerState, r.Note)
	}

	m := in.N / 32 // codes per slot: the data is [T, 32 slots, M]
	st, err := Measure(in, m)
	if err != nil {
		t.Fatal(err)
	}
	pct := func(f float64) string { return fmt.Sprintf("%.2f%%", 100*f) }
	fmt.Printf("\n| statistic (tile = one slot, %d codes) | value |\n|---|---:|\n", st.Tile)
	for _, row := range [][2]string{
		{"test states / tiles", fmt.Sprintf("%d / %d", st.States, st.Tiles)},
		{"codes equal to the previous state's, same coordinate", pct(st.CodeSamePrev)},
		{"tiles identical to the same slot of the previous state", pct(st.TileSamePrev)},
		{"tiles identical to a tile (any slot) of an earlier state in the episode", pct(st.TileEarlierState)},
		{"… or to an earlier tile of the same state", pct(st.TileEarlier)},
		{"tiles identical to a training tile (any slot)", pct(st.TileInTrain)},
		{"tiles identical to a training tile at the same slot", pct(st.TileInTrainSameSlot)},
		{"tiles seen before (earlier in the episode or in train)", pct(st.TileSeen)},
		{"states identical to an earlier state in the episode", pct(st.StateEarlier)},
		{"states identical to a training state", pct(st.StateInTrain)},
		{"distinct tiles among test tiles", fmt.Sprint(st.DistinctTiles)},
	} {
		fmt.Printf("| %s | %s |\n", row[0], row[1])
	}
}
