package search

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/wm"
)

// MaxK is the largest alphabet an index holds: codes are stored in one
// byte each.
const MaxK = 256

// Errors of this package, to test with errors.Is.
var (
	// ErrStale reports an index whose file or model is not the one it was
	// built from: the file changed since (appended, re-encoded, replaced)
	// or another model is given.
	ErrStale = errors.New("search: index is stale")
	// ErrIndex reports bytes that are not a valid index.
	ErrIndex = errors.New("search: not a valid index")
	// ErrInput reports an invalid query or option.
	ErrInput = errors.New("search: invalid input")
)

// Index is one .wmz file's states decoded into codes and laid out for
// scanning, with an optional coarse partition of its states (IVF), tagged
// with the identity of the file and model it was built from. It can always
// be rebuilt from the file (Build), is never needed to decode it, and is
// saved beside it (IndexPath, Save, Load). An Index is immutable and safe
// for concurrent use.
type Index struct {
	id     identity
	geom   wm.Geometry
	epLens []int

	// codes holds every state's N = S·M codes, in file order, or in the
	// order of perm when there is a partition: stored state i is state
	// perm[i] of the file.
	codes []byte
	perm  []uint32
	part  *partition

	bytes int64 // size of the index file it was read from, or would be written as
}

// identity is what an index is tied to: the file's size and fingerprint
// and the model's ID.
type identity struct {
	size  int64
	print [32]byte
	model wm.ModelID
}

// BuildOptions configure Build.
type BuildOptions struct {
	// Threads decode chunks and assign states on that many goroutines
	// (0: every core). The index does not depend on it.
	Threads int
	// Cells is the number of cells of the coarse partition: 0 picks one
	// from the number of states (none below MinPartitionStates), a negative
	// value builds none.
	Cells int
	// Progress, if set, is told how many states are decoded ("decoding")
	// and assigned to cells ("partitioning"); calls are serialized.
	Progress func(stage string, done, total int64)
}

// MinPartitionStates is the fewest states for which Build partitions by
// default: below it a flat scan takes well under a millisecond a query.
const MinPartitionStates = 20000

// DefaultCells returns the partition size Build picks for a file of n
// states: about √n cells, at most 4,096, none below MinPartitionStates.
// (On a million states of web-pgdocs tiled, 1,000 cells found 0.96 of the
// flat scan's neighbours probing 64 of them; 4,000 cells, 0.77 probing 128:
// near states split between cells the sketch cannot tell apart.)
func DefaultCells(n int64) int {
	if n < MinPartitionStates {
		return 0
	}
	c := 1
	for int64(c)*int64(c) < n {
		c++
	}
	return min(c, 4096)
}

// Build decodes the .wmz file name with codec c (nil: the model the file
// embeds) and returns its index. Chunks are decoded on every core, in
// order; ctx stops it between states.
func Build(ctx context.Context, name string, c *wmzip.Codec, opt BuildOptions) (*Index, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return build(ctx, f, st.Size(), name, c, opt, localReads)
}

// BuildAt is Build of the .wmz file that r holds, size bytes long: an
// object in a store, for one. It reads r in order, except for the few
// small reads that fingerprint the file, which it joins into ranges and
// sends several at once (as Check does). Errors do not name the file.
func BuildAt(ctx context.Context, r io.ReaderAt, size int64, c *wmzip.Codec, opt BuildOptions) (*Index, error) {
	return build(ctx, r, size, "", c, opt, remoteReads)
}

// named prefixes err with the file's name, when there is one.
func named(name string, err error) error {
	if name == "" {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}

func build(ctx context.Context, r io.ReaderAt, size int64, name string, c *wmzip.Codec, opt BuildOptions, how tailReads) (*Index, error) {
	threads := opt.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	wf, err := wmzip.NewFile(r, size, c)
	if err != nil {
		return nil, named(name, err)
	}
	c = wf.Codec()
	ix := &Index{geom: c.Geometry(), epLens: wf.Episodes()}
	if err := checkCodec(c); err != nil {
		return nil, err
	}
	if ix.id, err = fileIdentity(r, size, c, how); err != nil {
		return nil, named(name, err)
	}
	var total int64
	for _, n := range ix.epLens {
		total += int64(n)
	}
	n := ix.geom.N()
	rd, err := wmzip.NewReader(bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 1<<20), c, wmzip.WithDecoderThreads(threads))
	if err != nil {
		return nil, named(name, err)
	}
	var buf []uint16
	var done int64
	for e := range ix.epLens {
		if _, err := rd.NextEpisode(); err != nil {
			return nil, named(name, fmt.Errorf("episode %d: %w", e, err))
		}
		for t := range ix.epLens[e] {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if _, buf, err = rd.ReadState(buf); err != nil {
				return nil, named(name, fmt.Errorf("episode %d step %d: %w", e, t, err))
			}
			// Grown as states arrive: the file's declared counts never
			// size this alone.
			for _, v := range buf[:n] {
				ix.codes = append(ix.codes, byte(v))
			}
			done++
			if opt.Progress != nil && done&1023 == 0 {
				opt.Progress("decoding", done, total)
			}
		}
	}
	if opt.Progress != nil {
		opt.Progress("decoding", done, total)
	}
	cells := opt.Cells
	if cells == 0 {
		cells = DefaultCells(total)
	}
	if cells > 0 && total > 0 {
		if err := ix.partition(ctx, c.Quantizer(), cells, threads, opt.Progress); err != nil {
			return nil, err
		}
	}
	ix.bytes = ix.encodedSize()
	return ix, nil
}

// checkCodec checks that c has what search needs: a quantizer whose codes
// fit a byte.
func checkCodec(c *wmzip.Codec) error {
	q := c.Quantizer()
	if q == nil {
		return fmt.Errorf("%w: the model has no quantizer, so its codes have no distances (train it on float obs)", ErrInput)
	}
	if q.K() > MaxK {
		return fmt.Errorf("%w: K=%d centroids per subspace; search supports at most %d", ErrInput, q.K(), MaxK)
	}
	return nil
}

// States returns the number of states indexed.
func (ix *Index) States() int64 { return int64(len(ix.codes) / max(ix.geom.N(), 1)) }

// Episodes returns the number of states of each episode, as the file's
// Episodes does.
func (ix *Index) Episodes() []int { return append([]int(nil), ix.epLens...) }

// Cells returns the number of cells of the partition, 0 without one.
func (ix *Index) Cells() int {
	if ix.part == nil {
		return 0
	}
	return ix.part.cells
}

// Bytes returns the size of the index's file, apart from the .wmz file's:
// what the index costs on disk (regenerable, not storage).
func (ix *Index) Bytes() int64 { return ix.bytes }

// ModelID returns the ID of the model the index was built with.
func (ix *Index) ModelID() wm.ModelID { return ix.id.model }

// Open returns the index of the .wmz file name for codec c (nil: the
// model the file embeds): the one saved beside it (IndexPath) when it
// belongs to the file as it is now and to c, otherwise one built now with
// opt, which Open does not save. rebuilt is nil when the saved index
// served, else why it did not: an error wrapping fs.ErrNotExist, ErrStale
// or ErrIndex.
func Open(ctx context.Context, name string, c *wmzip.Codec, opt BuildOptions) (ix *Index, rebuilt, err error) {
	ix, rebuilt = Load(IndexPath(name), name, c)
	if rebuilt == nil {
		return ix, nil, nil
	}
	var pe *fs.PathError
	if !errors.Is(rebuilt, fs.ErrNotExist) && !errors.Is(rebuilt, ErrStale) && !errors.Is(rebuilt, ErrIndex) && !errors.As(rebuilt, &pe) {
		return nil, nil, rebuilt // the .wmz file or the codec is at fault
	}
	ix, err = Build(ctx, name, c, opt)
	return ix, rebuilt, err
}

// FromCodes returns the index of states held in memory rather than in a
// file: episodes of the given lengths whose codes (S·M per state, below
// K) follow one another, with a partition of the given number of cells as
// BuildOptions.Cells has it. It belongs to no file: saved, it would be
// refused as stale beside any.
func FromCodes(c *wmzip.Codec, lens []int, codes []uint16, cells int) (*Index, error) {
	if err := checkCodec(c); err != nil {
		return nil, err
	}
	ix := &Index{geom: c.Geometry(), epLens: append([]int(nil), lens...)}
	ix.id.model = c.Model().ID()
	n := ix.geom.N()
	var total int64
	for _, l := range lens {
		if l < 0 {
			return nil, fmt.Errorf("%w: episode of %d states", ErrInput, l)
		}
		total += int64(l)
	}
	if int64(len(codes)) != total*int64(n) {
		return nil, fmt.Errorf("%w: %d codes for %d states of %d", ErrInput, len(codes), total, n)
	}
	ix.codes = make([]byte, len(codes))
	for i, v := range codes {
		if int(v) >= ix.geom.K {
			return nil, fmt.Errorf("%w: code %d at %d is not below K=%d", ErrInput, v, i, ix.geom.K)
		}
		ix.codes[i] = byte(v)
	}
	if cells == 0 {
		cells = DefaultCells(total)
	}
	if cells > 0 && total > 0 {
		if err := ix.partition(context.Background(), c.Quantizer(), cells, 0, nil); err != nil {
			return nil, err
		}
	}
	ix.bytes = ix.encodedSize()
	return ix, nil
}
