package baseline

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// MaxK is the largest alphabet size the packed byte layout can hold.
const MaxK = 1 << 16

// ErrInput is wrapped by every error Run and Measure return for malformed input.
var ErrInput = errors.New("baseline: invalid input")

// Input is a trajectory of quantized states to measure.
type Input struct {
	// Codes holds T states of N codes each, time-major: code n of state t is
	// Codes[t*N+n]. Every value is < K.
	Codes []uint16
	// N is the number of codes per state, K the alphabet size (1..MaxK).
	N, K int
	// Train optionally holds training codes [Ttrain][N] with the same N and K.
	// When set, the conditional baselines are measured; otherwise they are
	// reported with Available false.
	Train []uint16
	// EpisodeStart optionally lists the ascending offsets of each episode's
	// first state in Codes, the first being 0. Nil means one episode. Only
	// the previous-state baselines and Measure use it.
	EpisodeStart []int
}

// Result is one baseline's size on Input.Codes.
type Result struct {
	// Name identifies the baseline; the names are listed on Run.
	Name string
	// Bytes is the compressed size attributed to the test codes. For a
	// conditional baseline it is size(train+test) − size(train), for an
	// ideal code length it is the length in bits rounded up to bytes, and it
	// is 0 for copy-prev, which is a reconstruction rather than a code.
	Bytes int64
	// BitsPerState is Bytes × 8 ÷ T.
	BitsPerState float64
	// Note carries detail: why a baseline is unavailable, exact ideal
	// bits/state, the copy-prev agreement, or the parts of a difference.
	Note string
	// Available is false when the baseline could not be measured (a tool
	// missing from PATH, no training codes); Bytes is then 0.
	Available bool
}

// Options tunes Run. The zero value runs everything that is available.
type Options struct {
	// SkipExternal leaves out the xz, brotli and zstd command-line tools
	// (they are reported with Available false).
	SkipExternal bool

	// keep, when set, receives each Go-compressed payload counted in a
	// Result, so tests can prove it decodes.
	keep func(name string, payload []byte)
}

// validate checks the layout and returns the number of test and training
// states.
func (in *Input) validate() (t, ttrain int, err error) {
	if in.N <= 0 {
		return 0, 0, fmt.Errorf("%w: N = %d, want > 0", ErrInput, in.N)
	}
	if in.K < 1 || in.K > MaxK {
		return 0, 0, fmt.Errorf("%w: K = %d, want 1..%d", ErrInput, in.K, MaxK)
	}
	if len(in.Codes) == 0 || len(in.Codes)%in.N != 0 {
		return 0, 0, fmt.Errorf("%w: %d codes is not a positive multiple of N = %d", ErrInput, len(in.Codes), in.N)
	}
	if len(in.Train)%in.N != 0 {
		return 0, 0, fmt.Errorf("%w: %d training codes is not a multiple of N = %d", ErrInput, len(in.Train), in.N)
	}
	if err := checkRange(in.Codes, in.K, "code"); err != nil {
		return 0, 0, err
	}
	if err := checkRange(in.Train, in.K, "training code"); err != nil {
		return 0, 0, err
	}
	t = len(in.Codes) / in.N
	if es := in.EpisodeStart; len(es) > 0 {
		if es[0] != 0 {
			return 0, 0, fmt.Errorf("%w: first episode starts at %d, want 0", ErrInput, es[0])
		}
		for i := 1; i < len(es); i++ {
			if es[i] <= es[i-1] || es[i] >= t {
				return 0, 0, fmt.Errorf("%w: episode start %d = %d out of order or past %d states", ErrInput, i, es[i], t)
			}
		}
	}
	return t, len(in.Train) / in.N, nil
}

func checkRange(codes []uint16, k int, what string) error {
	for i, v := range codes {
		if int(v) >= k {
			return fmt.Errorf("%w: %s %d = %d, want < K = %d", ErrInput, what, i, v, k)
		}
	}
	return nil
}

// episodeFirst reports, for each state, whether it opens an episode.
func (in *Input) episodeFirst(t int) []bool {
	first := make([]bool, t)
	first[0] = true
	for _, s := range in.EpisodeStart {
		first[s] = true
	}
	return first
}

// pack lays codes out one byte per code, or two little-endian bytes when
// K > 256: the byte stream every compressor here sees.
func pack(codes []uint16, k int) []byte {
	if k <= 256 {
		b := make([]byte, len(codes))
		for i, v := range codes {
			b[i] = byte(v)
		}
		return b
	}
	b := make([]byte, 2*len(codes))
	for i, v := range codes {
		b[2*i] = byte(v)
		b[2*i+1] = byte(v >> 8)
	}
	return b
}

// codeBits is ceil(log2 k): the width of one code in the raw packing.
func codeBits(k int) int {
	return bits.Len(uint(k - 1))
}

func sized(name string, bytes int64, t int, note string) Result {
	return Result{Name: name, Bytes: bytes, BitsPerState: float64(bytes) * 8 / float64(t), Note: note, Available: true}
}

// ideal turns an ideal code length in bits into a Result, rounding up to
// whole bytes and keeping the exact rate in the note.
func ideal(name string, totalBits float64, t int) Result {
	r := sized(name, int64(math.Ceil(totalBits/8)), t, "")
	r.Note = fmt.Sprintf("ideal %.2f bits/state", totalBits/float64(t))
	return r
}

func unavailable(name, why string) Result {
	return Result{Name: name, Note: why}
}

const noTrain = "no training codes"

// Run measures every baseline on in.Codes and returns one Result per
// baseline, always in this order and with these names:
//
//	raw                                      ceil(log2 K) bits per code
//	order0                                   adaptive per-coordinate counts (from 1), ideal length
//	order0 given train                       the same, counts first fed the training codes
//	order0-static-train                      fixed per-coordinate frequencies of train, +1 smoothing
//	zstd                                     klauspost zstd, best level, window ≥ input
//	s2                                       klauspost s2, best
//	delta-zstd                               difference mod K to the previous state of the episode, then zstd
//	zstd given train                         zstd(train+test) − zstd(train)
//	zstd dict(train)                         zstd with a dictionary built by klauspost's BuildDict from train
//	zstd rawdict(train)                      zstd with train's last ≤ 8 MiB as raw-content dictionary
//	xz -9e                                   xz CLI
//	xz -9e given train                       xz(train+test) − xz(train)
//	brotli -q 11 --large_window=30           brotli CLI
//	brotli -q 11 --large_window=30 given train
//	zstd --ultra -22 --long=31               zstd CLI
//	zstd --ultra -22 --long=31 given train
//	copy-prev                                reconstruction by copying the previous state (Bytes 0)
//
// Conditional baselines are unavailable without in.Train; the CLI baselines
// are unavailable when the tool is not on PATH or opts.SkipExternal is set.
func Run(in Input, opts Options) ([]Result, error) {
	t, _, err := in.validate()
	if err != nil {
		return nil, err
	}
	keep := opts.keep
	if keep == nil {
		keep = func(string, []byte) {}
	}
	test := pack(in.Codes, in.K)
	var train []byte
	if len(in.Train) > 0 {
		train = pack(in.Train, in.K)
	}

	var out []Result
	rawBits := int64(codeBits(in.K)) * int64(len(in.Codes))
	out = append(out, sized("raw", (rawBits+7)/8, t, fmt.Sprintf("%d bits/code", codeBits(in.K))))

	out = append(out, ideal("order0", order0Adaptive(in.Codes, nil, in.N, in.K), t))
	if train != nil {
		out = append(out,
			ideal("order0 given train", order0Adaptive(in.Codes, in.Train, in.N, in.K), t),
			ideal("order0-static-train", order0Static(in.Codes, in.Train, in.N, in.K), t))
	} else {
		out = append(out, unavailable("order0 given train", noTrain), unavailable("order0-static-train", noTrain))
	}

	goResults, err := runGo(&in, t, test, train, keep)
	if err != nil {
		return nil, err
	}
	out = append(out, goResults...)

	out = append(out, runExternal(t, test, train, opts.SkipExternal, keep)...)

	out = append(out, copyPrev(&in, t))
	return out, nil
}
