package format

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/wm"
)

// raFile is one file for the random-access tests, with what DecodeEpisode
// gives for it.
type raFile struct {
	name string
	b    []byte
	m    *wm.Model
	opts []Option // what decoding needs (a custom rule)
	want []episode
}

// raFiles writes one set of episodes lossless, lossy under a custom rule,
// lossy under the model's gate and with retention levels, at a keyframe
// interval that leaves short chunks at episode ends.
func raFiles(t *testing.T) []raFile {
	t.Helper()
	g := wm.Geometry{S: 3, M: 4, K: 16}
	eps := genEpisodes(rand.New(rand.NewPCG(61, 62)), g, []int{23, 0, 9, 1, 17})
	m := gateModel(t, g, eps)
	const kf = 8
	custom := withGate(2<<16, testRetain(12))
	levels := []lambda.Lambda{1 << 12, 4 << 16, LambdaLossless}
	setLevel := func(w *Writer, i, k int) error { return w.SetLevel((i + k/3) % len(levels)) }
	files := []raFile{
		{name: "lossless", b: encode(t, m, eps, WithKeyframeInterval(kf))},
		{name: "custom rule", b: encode(t, m, eps, WithKeyframeInterval(kf), custom), opts: []Option{custom}},
		{name: "gate", b: encode(t, m, eps, WithKeyframeInterval(kf), WithLambda(2<<16))},
		{name: "levels", b: encodeHook(t, m, eps, setLevel, WithKeyframeInterval(kf), WithLevels(levels...))},
	}
	for i := range files {
		rf := &files[i]
		rf.m = m
		var err error
		if rf.want, err = openAll(rf.b, m, append(rf.opts, WithCacheBytes(0))...); err != nil {
			t.Fatalf("%s: %v", rf.name, err)
		}
	}
	if sameEpisodes(files[0].want, eps) != nil || sameEpisodes(files[2].want, eps) == nil {
		t.Fatal("want lossless and lossy files")
	}
	return files
}

// readOrders lists the (episode, step) reads of the tests.
func readOrders(eps []episode) map[string][][2]int {
	var seq [][2]int
	for e := range eps {
		for s := range eps[e].Actions {
			seq = append(seq, [2]int{e, s})
		}
	}
	rev := slices.Clone(seq)
	slices.Reverse(rev)
	rnd := slices.Clone(seq)
	rng := rand.New(rand.NewPCG(63, 64))
	rng.Shuffle(len(rnd), func(i, j int) { rnd[i], rnd[j] = rnd[j], rnd[i] })
	var rep [][2]int
	for i, r := range rnd[:len(rnd)/2] {
		rep = append(rep, r, r, rnd[len(rnd)-1-i], r)
	}
	return map[string][][2]int{"sequential": seq, "reversed": rev, "random": rnd, "repeated": rep}
}

// cacheSizes are the cache settings the tests read through: off, the
// default, and caps holding about one live chunk (constant eviction).
func cacheSizes(coder int64) map[string][]Option {
	return map[string][]Option{
		"off":      {WithCacheBytes(0)},
		"default":  nil,
		"one live": {WithCacheBytes(coder + 4<<10)},
		"tiny":     {WithCacheBytes(1)},
	}
}

// checkState compares a read with the decoded episodes.
func checkState(want []episode, n, e, s int, a int64, c []uint16) bool {
	return a == want[e].Actions[s] && slices.Equal(c, want[e].Codes[s*n:(s+1)*n])
}

// TestFileStateMatchesDecodeEpisode reads every state in several orders,
// with the cache off, on, and too small for more than one chunk: every read
// equals DecodeEpisode, and the cache stays within its cap.
func TestFileStateMatchesDecodeEpisode(t *testing.T) {
	for _, rf := range raFiles(t) {
		coder := coderBytes(rf.m, 8)
		for cname, copts := range cacheSizes(coder) {
			for oname, order := range readOrders(rf.want) {
				t.Run(rf.name+"/"+cname+"/"+oname, func(t *testing.T) {
					f, err := Open(bytes.NewReader(rf.b), int64(len(rf.b)), rf.m, append(slices.Clone(rf.opts), copts...)...)
					if err != nil {
						t.Fatal(err)
					}
					n := rf.m.Geom.N()
					var dst []uint16
					for i, r := range order {
						var a int64
						var c []uint16
						switch i % 3 { // every entry point
						case 0:
							a, c, err = f.StateAction(r[0], r[1])
						case 1:
							c, err = f.State(r[0], r[1])
							a = rf.want[r[0]].Actions[r[1]]
						default:
							a, dst, err = f.ReadState(r[0], r[1], dst)
							c = dst
						}
						if err != nil {
							t.Fatalf("read %d (%d, %d): %v", i, r[0], r[1], err)
						}
						if !checkState(rf.want, n, r[0], r[1], a, c) {
							t.Fatalf("read %d (%d, %d) differs from DecodeEpisode", i, r[0], r[1])
						}
					}
					checkCache(t, f)
				})
			}
		}
	}
}

// checkCache checks the cache's accounting: within its cap, and the sum of
// what its entries hold.
func checkCache(t *testing.T, f *File) {
	t.Helper()
	c := f.cache
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var sum int64
	k := 0
	for e := c.lru.next; e != &c.lru; e = e.next {
		e.mu.Lock()
		if b := e.bytes(f.coderCost); b != e.cost || !e.listed || c.byOff[e.off] != e {
			t.Errorf("entry at %d: cost %d, holds %d, listed %v", e.off, e.cost, b, e.listed)
		}
		e.mu.Unlock()
		sum += e.cost
		k++
	}
	if sum != c.used || k != len(c.byOff) || c.used > c.limit {
		t.Errorf("cache uses %d of %d, entries sum %d; %d listed, %d indexed", c.used, c.limit, sum, k, len(c.byOff))
	}
}

// TestFileStateConcurrentCache reads one File from many goroutines through
// a cache that holds about one live chunk, so that entries are evicted
// while others use them (run under -race).
func TestFileStateConcurrentCache(t *testing.T) {
	files := raFiles(t)
	for _, rf := range []raFile{files[0], files[3]} {
		coder := coderBytes(rf.m, 8)
		for _, limit := range []int64{coder + 4<<10, 3 * coder, DefaultCacheBytes} {
			f, err := Open(bytes.NewReader(rf.b), int64(len(rf.b)), rf.m, append(slices.Clone(rf.opts), WithCacheBytes(limit))...)
			if err != nil {
				t.Fatal(err)
			}
			n := rf.m.Geom.N()
			var wg sync.WaitGroup
			var bad atomic.Int64
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 65))
					var dst []uint16
					for range 150 {
						e := rng.IntN(len(rf.want))
						if len(rf.want[e].Actions) == 0 {
							continue
						}
						s := rng.IntN(len(rf.want[e].Actions))
						if w%2 == 0 { // neighbours: runs of steps
							s = (s/4*4 + rng.IntN(4)) % len(rf.want[e].Actions)
						}
						a, c, err := f.ReadState(e, s, dst)
						if err != nil || !checkState(rf.want, n, e, s, a, c) {
							bad.Add(1)
						}
						dst = c
					}
				}()
			}
			wg.Wait()
			if bad.Load() > 0 {
				t.Fatalf("%s, cache %d: %d reads differ", rf.name, limit, bad.Load())
			}
			checkCache(t, f)
		}
	}
}

// TestFileStateCorruptChunk damages one chunk's stream. With its CRC
// left as it is, every read of the chunk fails with ErrChecksum, whatever
// the cache holds of other chunks. With the CRC recomputed (damage the CRC
// cannot see), no read panics, errors are format errors, and a read of the
// chunk's last state, which checks the chunk whole, fails or returns the
// original state.
func TestFileStateCorruptChunk(t *testing.T) {
	rf := raFiles(t)[1]
	f0, err := Open(bytes.NewReader(rf.b), int64(len(rf.b)), rf.m, rf.opts...)
	if err != nil {
		t.Fatal(err)
	}
	ep := &f0.idx.episodes[0]
	ref := ep.chunks[1] // states 8..15 of episode 0
	n := rf.m.Geom.N()
	for _, fix := range []bool{false, true} {
		for bit := int64(0); bit < 8*(ref.length-chunkHdrSize-crcSize); bit += 7 {
			mut := bytes.Clone(rf.b)
			mut[ref.offset+chunkHdrSize+bit/8] ^= 1 << (bit % 8)
			if fix {
				end := ref.offset + ref.length - crcSize
				le.PutUint32(mut[end:], crc(mut[ref.offset:end]))
			}
			for cname, copts := range cacheSizes(f0.coderCost) {
				f, err := Open(bytes.NewReader(mut), int64(len(mut)), rf.m, append(slices.Clone(rf.opts), copts...)...)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range []int{0, 9, 12, 8, 15, 10, 22} {
					a, c, err := f.StateAction(0, s)
					inChunk := s >= 8 && s < 16
					switch {
					case !inChunk && (err != nil || !checkState(rf.want, n, 0, s, a, c)):
						t.Fatalf("bit %d, cache %s: state %d of an intact chunk: %v", bit, cname, s, err)
					case inChunk && !fix && !errors.Is(err, ErrChecksum):
						t.Fatalf("bit %d, cache %s: state %d: %v, want ErrChecksum", bit, cname, s, err)
					case err != nil && !isFileError(err):
						t.Fatalf("bit %d, cache %s: state %d: %v is not a format error", bit, cname, s, err)
					case s == 15 && err == nil && !checkState(rf.want, n, 0, s, a, c):
						t.Fatalf("bit %d, cache %s: the chunk's last state decoded wrong without error", bit, cname)
					}
				}
				checkCache(t, f)
			}
		}
	}
}

// flakyReaderAt fails the reads of one range until it is healed.
type flakyReaderAt struct {
	r       io.ReaderAt
	off     int64
	healthy atomic.Bool
}

var errFlaky = errors.New("flaky read")

func (r *flakyReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if !r.healthy.Load() && off <= r.off && r.off < off+int64(len(p)) {
		return 0, errFlaky
	}
	return r.r.ReadAt(p, off)
}

// TestFileStateErrorNotCached: a failed read leaves nothing in the cache;
// the same read succeeds once the file reads again.
func TestFileStateErrorNotCached(t *testing.T) {
	rf := raFiles(t)[0]
	f0, err := Open(bytes.NewReader(rf.b), int64(len(rf.b)), rf.m)
	if err != nil {
		t.Fatal(err)
	}
	fr := &flakyReaderAt{r: bytes.NewReader(rf.b), off: f0.idx.episodes[0].chunks[1].offset + 20}
	f, err := Open(fr, int64(len(rf.b)), rf.m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.State(0, 10); !errors.Is(err, errFlaky) {
		t.Fatalf("read through a failing ReaderAt: %v", err)
	}
	checkCache(t, f)
	fr.healthy.Store(true)
	a, c, err := f.StateAction(0, 10)
	if err != nil || !checkState(rf.want, rf.m.Geom.N(), 0, 10, a, c) {
		t.Fatalf("read after the ReaderAt healed: %v", err)
	}
}

// TestFileStateAllocs: a read served from the cache into a buffer of the
// caller allocates nothing, and continuing a cached decode allocates no
// more than restarting it (the world model's own allocations aside, what
// either adds is the record, an entry and the growth of its states).
func TestFileStateAllocs(t *testing.T) {
	rf := raFiles(t)[0]
	f, err := Open(bytes.NewReader(rf.b), int64(len(rf.b)), rf.m)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]uint16, rf.m.Geom.N())
	if _, _, err := f.ReadState(0, 7, dst); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(50, func() { f.ReadState(0, 3, dst) }); n != 0 {
		t.Errorf("cached read: %v allocations, want 0", n)
	}
	step := 16
	cont := testing.AllocsPerRun(6, func() { f.ReadState(0, step, dst); step++ })
	off, err := Open(bytes.NewReader(rf.b), int64(len(rf.b)), rf.m, WithCacheBytes(0))
	if err != nil {
		t.Fatal(err)
	}
	step = 16
	restart := testing.AllocsPerRun(6, func() { off.ReadState(0, step, dst); step++ })
	t.Logf("allocations per read of the next state: %v continuing, %v restarting", cont, restart)
	if cont > restart {
		t.Errorf("continuing a decode: %v allocations, restarting it %v", cont, restart)
	}
}

// TestWithCacheBytes rejects a negative cap, and 0 disables the cache.
func TestWithCacheBytes(t *testing.T) {
	rf := raFiles(t)[0]
	if _, err := Open(bytes.NewReader(rf.b), int64(len(rf.b)), rf.m, WithCacheBytes(-1)); !errors.Is(err, ErrInput) {
		t.Fatalf("negative cache: %v", err)
	}
	f, err := Open(bytes.NewReader(rf.b), int64(len(rf.b)), rf.m, WithCacheBytes(0))
	if err != nil || f.cache != nil {
		t.Fatalf("cache 0: %v, cache %v", err, f.cache)
	}
}

// TestCoderBytesBound measures a coder that has decoded a chunk of 1,024
// coordinates per state, K = 64, with a model whose fallback rows mix two
// contexts (their cache fills): its memory must stay within coderBytes,
// the estimate the chunk cache charges for it.
func TestCoderBytesBound(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model of 1,024 coordinates")
	}
	g := wm.Geometry{S: 32, M: 32, K: 64}
	eps := markovEpisodes(rand.New(rand.NewPCG(31, 32)), g, []int{64, 64, 64, 64, 64, 64})
	m := trainModel(g, 15, eps[:5])
	const kf = 64
	b := encode(t, m, eps[5:], WithKeyframeInterval(kf))
	f, err := Open(bytes.NewReader(b), int64(len(b)), m)
	if err != nil {
		t.Fatal(err)
	}
	ref := &f.idx.episodes[0].chunks[0]
	rec, err := f.chunkRecord(ref)
	if err != nil {
		t.Fatal(err)
	}
	actions := make([]int64, kf)
	codes := make([]uint16, kf*g.N())
	before := liveHeap()
	cc := newChunkCoder(&f.h, f.model, f.rules)
	if err := cc.decodeChunk(rec[chunkHdrSize:len(rec)-crcSize], modeOf(rec), int(ref.states), le.Uint32(rec[12:]), actions, codes, ref.offset); err != nil {
		t.Fatal(err)
	}
	got := int64(liveHeap()) - int64(before)
	runtime.KeepAlive(cc)
	if est := coderBytes(m, kf); got > est {
		t.Errorf("a coder holds %d bytes, estimated %d: update coderBytes (cache.go)", got, est)
	} else {
		t.Logf("a coder holds %d bytes, estimated %d", got, est)
	}
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// markovEpisodes builds episodes of tiles that persist, revisit earlier
// tiles of the episode, or are new with codes that follow a random walk
// along the tile (context a model's fallback rows pick up).
func markovEpisodes(rng *rand.Rand, g wm.Geometry, lens []int) []episode {
	n := g.N()
	eps := make([]episode, len(lens))
	for i, T := range lens {
		e := &eps[i]
		e.Actions = make([]int64, T)
		e.Codes = make([]uint16, T*n)
		for t := range T {
			e.Actions[t] = int64(rng.IntN(4))
			for s := range g.S {
				tile := e.Codes[t*n+s*g.M : t*n+(s+1)*g.M]
				switch r := rng.IntN(10); {
				case t > 0 && r < 5:
					copy(tile, e.Codes[(t-1)*n+s*g.M:])
				case t > 3 && r < 7:
					u := rng.IntN(t)
					copy(tile, e.Codes[u*n+s*g.M:])
				default:
					v := rng.IntN(g.K)
					for m := range tile {
						if rng.IntN(4) == 0 {
							v = rng.IntN(g.K)
						} else {
							v = (v + rng.IntN(3)) % g.K
						}
						tile[m] = uint16(v)
					}
				}
			}
		}
	}
	return eps
}
