package baseline

import (
	"bytes"
	"errors"
	"github.com/google/go-cmp/cmp"
	"math"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// synth makes t states of n codes < k with the structure of agent memory:
// each step keeps most of the previous state, now and then jumps back to an
// earlier state, and episodes of ep steps start from fresh random states.
func synth(seed uint64, t, n, k, ep int) (codes []uint16, starts []int) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	codes = make([]uint16, t*n)
	for s := range t {
		cur := codes[s*n : (s+1)*n]
		switch {
		case s%ep == 0:
			starts = append(starts, s)
			for i := range cur {
				cur[i] = uint16(r.IntN(k))
			}
		case r.IntN(4) == 0 && s%ep > 1:
			back := s - 1 - r.IntN(s%ep)
			copy(cur, codes[back*n:(back+1)*n])
		default:
			copy(cur, codes[(s-1)*n:s*n])
			for i := range cur {
				if r.IntN(5) == 0 {
					cur[i] = uint16(r.IntN(k))
				}
			}
		}
	}
	return codes, starts
}

func synthInput(k int) Input {
	const n = 64
	codes, starts := synth(1, 120, n, k, 40)
	train, _ := synth(2, 200, n, k, 50)
	return Input{Codes: codes, N: n, K: k, Train: train, EpisodeStart: starts}
}

func byName(rs []Result) map[string]Result {
	m := make(map[string]Result, len(rs))
	for _, r := range rs {
		m[r.Name] = r
	}
	return m
}

// TestRoundTrip decodes every payload Run counts and checks it gives back
// exactly the bytes it claims to compress.
func TestRoundTrip(t *testing.T) {
	for _, k := range []int{64, 300} {
		in := synthInput(k)
		payloads := make(map[string][]byte)
		opts := Options{keep: func(name string, p []byte) { payloads[name] = bytes.Clone(p) }}
		rs, err := Run(in, opts)
		if err != nil {
			t.Fatal(err)
		}
		res := byName(rs)
		test, train := pack(in.Codes, k), pack(in.Train, k)
		both := append(bytes.Clone(train), test...)

		dec := func(name string, opts ...zstd.DOption) []byte {
			t.Helper()
			d, err := zstd.NewReader(nil, append(opts, zstd.WithDecoderConcurrency(1))...)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			out, err := d.DecodeAll(payloads[name], nil)
			if err != nil {
				t.Fatalf("K=%d %s: %v", k, name, err)
			}
			return out
		}
		check := func(name string, got, want []byte) {
			t.Helper()
			if !bytes.Equal(got, want) {
				t.Errorf("K=%d %s: round trip gives %d bytes, differing from the %d in", k, name, len(got), len(want))
			}
		}
		sizeIs := func(name string, want int64) {
			t.Helper()
			if int64(len(payloads[name])) != want {
				t.Errorf("K=%d %s: payload %d bytes, result counts %d", k, name, len(payloads[name]), want)
			}
		}

		check("zstd", dec("zstd"), test)
		sizeIs("zstd", res["zstd"].Bytes)

		s, err := s2.Decode(nil, payloads["s2"])
		if err != nil {
			t.Fatal(err)
		}
		check("s2", s, test)
		sizeIs("s2", res["s2"].Bytes)

		check("delta-zstd", pack(undelta(dec("delta-zstd"), &in), k), test)
		sizeIs("delta-zstd", res["delta-zstd"].Bytes)

		check("zstd given train", dec("zstd given train"), both)
		zt, err := zstdBest(train, windowFor(len(both)))
		if err != nil {
			t.Fatal(err)
		}
		sizeIs("zstd given train", res["zstd given train"].Bytes+int64(len(zt)))

		check("zstd dict(train)", dec("zstd dict(train)", zstd.WithDecoderDicts(payloads["zstd dict(train) dictionary"])), test)
		sizeIs("zstd dict(train)", res["zstd dict(train)"].Bytes)

		check("zstd rawdict(train)", dec("zstd rawdict(train)", zstd.WithDecoderDictRaw(dictID, dictHistory(train))), test)
		sizeIs("zstd rawdict(train)", res["zstd rawdict(train)"].Bytes)

		for _, tl := range tools {
			p, ok := payloads[tl.name]
			if !ok {
				continue
			}
			got, err := tl.run(tl.unpack, p)
			if err != nil {
				t.Fatal(err)
			}
			check(tl.name, got, test)
			sizeIs(tl.name, res[tl.name].Bytes)
			got, err = tl.run(tl.unpack, payloads[tl.name+" given train"])
			if err != nil {
				t.Fatal(err)
			}
			check(tl.name+" given train", got, both)
		}
	}
}

// undelta inverts deltaPrev on packed bytes.
func undelta(b []byte, in *Input) []uint16 {
	d := make([]uint16, len(in.Codes))
	for i := range d {
		if in.K > 256 {
			d[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
		} else {
			d[i] = uint16(b[i])
		}
	}
	n := in.N
	first := in.episodeFirst(len(d) / n)
	for s := range len(d) / n {
		if first[s] {
			continue
		}
		for i := s * n; i < (s+1)*n; i++ {
			d[i] = uint16((int(d[i]) + int(d[i-n])) % in.K)
		}
	}
	return d
}

func TestDeterministic(t *testing.T) {
	in := synthInput(64)
	a, err := Run(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("two runs differ (-first +second):\n%s", d)
	}
}

func TestNamesAndAvailability(t *testing.T) {
	in := synthInput(64)
	with, err := Run(in, Options{SkipExternal: true})
	if err != nil {
		t.Fatal(err)
	}
	in.Train = nil
	without, err := Run(in, Options{SkipExternal: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(with) != len(without) {
		t.Fatalf("%d results with train, %d without", len(with), len(without))
	}
	for i, r := range with {
		w := without[i]
		if r.Name != w.Name {
			t.Errorf("result %d named %q with train, %q without", i, r.Name, w.Name)
		}
		external := false
		for _, tl := range tools {
			external = external || strings.HasPrefix(r.Name, tl.name)
		}
		conditional := strings.Contains(r.Name, "train")
		if r.Available == external {
			t.Errorf("%s: Available = %v with train and external tools skipped", r.Name, r.Available)
		}
		if w.Available == (external || conditional) {
			t.Errorf("%s: Available = %v without train", w.Name, w.Available)
		}
		if !r.Available && (r.Bytes != 0 || r.Note == "") {
			t.Errorf("%s: unavailable with %d bytes and note %q", r.Name, r.Bytes, r.Note)
		}
	}
}

func TestExternalMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	rs, err := Run(synthInput(64), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if strings.HasPrefix(r.Name, "xz") && (r.Available || !strings.Contains(r.Note, "not on PATH")) {
			t.Errorf("%s with xz off PATH: %+v", r.Name, r)
		}
	}
}

func TestRaw(t *testing.T) {
	for _, c := range []struct{ k, bits int }{{1, 0}, {2, 1}, {64, 6}, {65, 7}, {256, 8}, {257, 9}, {MaxK, 16}} {
		if got := codeBits(c.k); got != c.bits {
			t.Errorf("codeBits(%d) = %d, want %d", c.k, got, c.bits)
		}
	}
	rs, err := Run(Input{Codes: make([]uint16, 30), N: 10, K: 64}, Options{SkipExternal: true})
	if err != nil {
		t.Fatal(err)
	}
	raw := byName(rs)["raw"]
	if raw.Bytes != 23 || raw.BitsPerState != 23*8/3.0 { // 180 bits
		t.Errorf("raw = %+v, want 23 bytes", raw)
	}
}

func TestOrder0(t *testing.T) {
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	// Coordinate 0 sees 0,0; coordinate 1 sees 1,0; K = 2.
	codes := []uint16{0, 1, 0, 0}
	want := (1 + math.Log2(3.0/2)) + (1 + math.Log2(3))
	if got := order0Adaptive(codes, nil, 2, 2); !near(got, want) {
		t.Errorf("order0Adaptive = %v, want %v", got, want)
	}
	// A prior of one 0 at each coordinate: counts {2,1}, total 3.
	want = (math.Log2(3.0/2) + math.Log2(4.0/3)) + (math.Log2(3) + math.Log2(4.0/2))
	if got := order0Adaptive(codes, []uint16{0, 0}, 2, 2); !near(got, want) {
		t.Errorf("order0Adaptive with prior = %v, want %v", got, want)
	}
	// Static from train {0,0}: p(0) = 2/3, p(1) = 1/3 at both coordinates.
	want = 3*math.Log2(3.0/2) + math.Log2(3)
	if got := order0Static(codes, []uint16{0, 0}, 2, 2); !near(got, want) {
		t.Errorf("order0Static = %v, want %v", got, want)
	}
}

func TestCopyPrevAndDelta(t *testing.T) {
	// Two episodes: states 0,1 and 2,3 (N = 2, K = 4).
	in := Input{Codes: []uint16{1, 2, 1, 3, 0, 0, 3, 0}, N: 2, K: 4, EpisodeStart: []int{0, 2}}
	if d := cmp.Diff([]uint16{1, 2, 0, 1, 0, 0, 3, 0}, deltaPrev(&in, 4)); d != "" {
		t.Errorf("deltaPrev (-want +got):\n%s", d)
	}
	r := copyPrev(&in, 4)
	if !strings.HasPrefix(r.Note, "50.00% ") || r.Bytes != 0 {
		t.Errorf("copyPrev = %+v, want 50%% and 0 bytes", r)
	}
}

func TestMeasure(t *testing.T) {
	// N = 4, tiles of 2. Train holds tile (9,9) at slot 1 and state (5,5,6,6).
	in := Input{
		N: 4, K: 10,
		Codes: []uint16{
			1, 1, 2, 2, // episode 0: all new; (2,2) is not in train
			1, 1, 3, 3, // slot 0 same as previous
			3, 3, 1, 1, // both tiles seen earlier, at other slots; no slot repeats
			9, 9, 9, 9, // episode 1: (9,9) in train at slot 1; slot 1 repeats slot 0 within the state
			5, 5, 6, 6, // the train state
			9, 9, 9, 9, // repeats state 3
		},
		Train:        []uint16{0, 0, 9, 9, 5, 5, 6, 6},
		EpisodeStart: []int{0, 3},
	}
	st, err := Measure(in, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{
		States: 6, Tiles: 12, Tile: 2,
		CodeSamePrev:        float64(2+0+0+0) / 16,
		TileSamePrev:        float64(1+0+0+0) / 12,
		TileEarlierState:    float64(0+1+2+0+0+2) / 12,
		TileEarlier:         float64(0+1+2+1+0+2) / 12,
		TileInTrain:         float64(2+2+2) / 12,
		TileInTrainSameSlot: float64(1+2+1) / 12,
		TileSeen:            float64(0+1+2+2+2+2) / 12,
		StateEarlier:        1.0 / 6,
		StateInTrain:        1.0 / 6,
		DistinctTiles:       6,
	}
	if st != want {
		t.Errorf("Measure =\n%+v\nwant\n%+v", st, want)
	}
	if _, err := Measure(in, 3); !errors.Is(err, ErrInput) {
		t.Errorf("tile 3 of N 4: err = %v, want ErrInput", err)
	}
}

func TestInvalid(t *testing.T) {
	ok := Input{Codes: []uint16{0, 1, 2, 3}, N: 2, K: 4}
	for name, mod := range map[string]func(*Input){
		"N zero":         func(in *Input) { in.N = 0 },
		"K zero":         func(in *Input) { in.K = 0 },
		"K too big":      func(in *Input) { in.K = MaxK + 1 },
		"ragged":         func(in *Input) { in.Codes = in.Codes[:3] },
		"empty":          func(in *Input) { in.Codes = nil },
		"code too big":   func(in *Input) { in.Codes = []uint16{0, 4} },
		"train ragged":   func(in *Input) { in.Train = []uint16{0} },
		"train too big":  func(in *Input) { in.Train = []uint16{0, 9} },
		"start not zero": func(in *Input) { in.EpisodeStart = []int{1} },
		"start past end": func(in *Input) { in.EpisodeStart = []int{0, 2} },
		"start repeated": func(in *Input) { in.EpisodeStart = []int{0, 0} },
	} {
		in := ok
		mod(&in)
		if _, err := Run(in, Options{SkipExternal: true}); !errors.Is(err, ErrInput) {
			t.Errorf("%s: err = %v, want ErrInput", name, err)
		}
	}
	if _, err := Run(ok, Options{SkipExternal: true}); err != nil {
		t.Errorf("valid input: %v", err)
	}
}

func TestToolsDecompress(t *testing.T) {
	// The unpack arguments must invert the pack arguments even for input a
	// Run would not produce, such as empty input.
	for _, tl := range tools {
		if _, err := exec.LookPath(tl.bin); err != nil {
			t.Logf("%s not on PATH", tl.bin)
			continue
		}
		for _, src := range [][]byte{{}, []byte("abcabcabc")} {
			c, err := tl.run(tl.args, src)
			if err != nil {
				t.Fatal(err)
			}
			d, err := tl.run(tl.unpack, c)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(d, src) {
				t.Errorf("%s: %q round-trips to %q", tl.name, src, d)
			}
		}
	}
}
