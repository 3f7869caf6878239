package format

import (
	"fmt"
	"runtime"
	"slices"

	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/rans"
	"github.com/wmzip/wmzip/internal/wm"
)

// An Option configures a Writer, Reader or File. Options that do not apply
// to the value being built are ignored (the keyframe interval, lanes,
// precision and model embedding are chosen by the writer and read from the
// header by decoders). An Option with an invalid argument makes the
// constructor fail.
type Option func(*config) error

// config holds every setting with its default; defaults live only here.
type config struct {
	keyframe   int
	lanes      int
	precision  uint // 0: the model's
	embed      bool
	maxMemory  int64
	lambda     lambda.Lambda
	lambdaSet  bool
	levels     []lambda.Lambda
	decide     decideFunc
	custom     bool // decide set by WithRetainRule/withGate, not by the model's gate
	recover    bool // scan records instead of trusting the index (recover.go)
	access     func(episode, step int64)
	cacheBytes int64
	threads    int // chunks coded at once; 1 codes on the caller's goroutine
	measure    Measure
	source     func(recon []uint16) Report
	sig        sigConfig // signature.go

	// Tests: the container version written (0: Version), and a mode
	// forced on each chunk (by its index in the file).
	version int
	modes   func(chunk int) chunkMode
	// Tests: slots copied only where a candidate equals them.
	exactCopies bool
}

func newConfig(opts []Option) (*config, error) {
	c := &config{
		keyframe:   DefaultKeyframeInterval,
		lanes:      DefaultLanes,
		maxMemory:  DefaultMaxMemory,
		lambda:     LambdaLossless,
		cacheBytes: DefaultCacheBytes,
		threads:    runtime.GOMAXPROCS(0),
	}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// WithKeyframeInterval sets G, the maximum number of states per chunk
// (1..MaxKeyframeInterval; G×N must not exceed MaxChunkCoords). Smaller G
// gives faster random access and costs more bits, since the world model's
// history restarts at every chunk (docs/results-random-access.md measures
// both). Default DefaultKeyframeInterval.
func WithKeyframeInterval(g int) Option {
	return func(c *config) error {
		if g < 1 || g > MaxKeyframeInterval {
			return fmt.Errorf("wmz: keyframe interval %d out of range [1, %d]", g, MaxKeyframeInterval)
		}
		c.keyframe = g
		return nil
	}
}

// WithLanes sets the number of interleaved rANS lanes (1..rans.MaxLanes).
// Default DefaultLanes.
func WithLanes(n int) Option {
	return func(c *config) error {
		if n < 1 || n > rans.MaxLanes {
			return fmt.Errorf("wmz: lanes %d out of range [1, %d]", n, rans.MaxLanes)
		}
		c.lanes = n
		return nil
	}
}

// WithPrecision sets the rANS precision in bits. It must equal the model's
// precision, which is the default; the option exists to assert it.
func WithPrecision(p uint) Option {
	return func(c *config) error {
		if p < rans.MinPrecision || p > rans.MaxPrecision {
			return fmt.Errorf("wmz: precision %d out of range [%d, %d]", p, rans.MinPrecision, rans.MaxPrecision)
		}
		c.precision = p
		return nil
	}
}

// WithEmbeddedModel makes the writer store the model in the file, so that
// decoders need no model of their own. Default false.
func WithEmbeddedModel(embed bool) Option {
	return func(c *config) error {
		c.embed = embed
		return nil
	}
}

// WithMaxMemory caps the memory a decoder commits to on the strength of
// sizes declared in the file (embedded model, one decoded chunk, the index).
// A file needing more fails with ErrTooLarge. Default DefaultMaxMemory.
func WithMaxMemory(bytes int64) Option {
	return func(c *config) error {
		if bytes <= 0 {
			return fmt.Errorf("wmz: memory limit %d must be positive", bytes)
		}
		c.maxMemory = bytes
		return nil
	}
}

// WithLambda sets the writer's retention trade-off λ:
// coordinate j is stored iff λ·ê·V_j·w_j ≥ H_j under the model's GATE
// section (package gate). LambdaLossless (the default) stores every
// coordinate; any other value needs a model with a GATE section. Readers
// take λ from the header.
func WithLambda(l lambda.Lambda) Option {
	return func(c *config) error {
		c.lambda, c.lambdaSet = l, true
		return nil
	}
}

// WithLevels gives the writer several retention levels: 2..MaxLevels
// strictly increasing lambdas (the last may be LambdaLossless). They are stored in the file; Writer.SetLevel chooses
// the level of the states that follow, and each state's level is coded in
// the stream (a fraction of a bit per state when levels come in runs).
// This is how storage follows access: states read often keep more
// coordinates than states read rarely. Exclusive with WithLambda; the
// header's lambda is the last level's.
func WithLevels(lambdas ...lambda.Lambda) Option {
	return func(c *config) error {
		if len(lambdas) < 2 {
			return fmt.Errorf("%w: %d levels, want 2..%d", ErrInput, len(lambdas), MaxLevels)
		}
		if err := checkLevels(lambdas, lambdas[len(lambdas)-1]); err != nil {
			return fmt.Errorf("%w: levels: %v", ErrInput, err)
		}
		c.levels = slices.Clone(lambdas)
		return nil
	}
}

// WithRetainRule replaces the model's retention gate by fn, for experiments
// (the baseline policies of `wmzip bench rd`) and tests. The header records
// lambda, but a file written this way decodes only with the same option:
// the rule is not in the file or the model. fn reports whether coordinate
// j is coded and, if not, the value it takes (pr.Modal() is the fill of
// container version 3). It reads the prediction of coordinate j from pr
// (Prediction, Table, ModalFreq, RowKey) and must not call Predict or
// Commit. With several threads (WithThreads) chunks are coded
// concurrently, and a File decodes them so when used concurrently: fn
// must then be safe for concurrent use (a gate.Decider is not).
func WithRetainRule(l lambda.Lambda, fn func(j int, pr *wm.Predictor) (keep bool, fill uint16)) Option {
	return func(c *config) error {
		if fn == nil {
			return fmt.Errorf("wmz: nil retention rule")
		}
		c.lambda, c.decide, c.custom = l, fn, true
		return nil
	}
}

// withGate installs a retention rule for a finite lambda in place of the
// model's gate; omitted coordinates take the modal value.
func withGate(l lambda.Lambda, retain retainFunc) Option {
	if retain == nil {
		return WithRetainRule(l, nil)
	}
	return WithRetainRule(l, func(j int, pr *wm.Predictor) (bool, uint16) {
		if retain(j, pr) {
			return true, 0
		}
		return false, pr.Modal()
	})
}

// WithAccessLog makes a File report every state it returns to fn, as
// (episode, step), once the state has decoded and passed its checks:
// State and StateAction report one access, DecodeEpisode one per state of
// the episode. This records the memory-access trace that package ctmc
// audits and that `wmzip encode --access` allocates storage by
// (ctmc.TraceWriter writes it in the trace format). fn is called from the
// goroutine that made the call; it must be safe for concurrent use if the
// File is used concurrently.
func WithAccessLog(fn func(episode, step int64)) Option {
	return func(c *config) error {
		c.access = fn
		return nil
	}
}

// WithCacheBytes caps the memory of a File's chunk cache: the chunks read
// last, decoded from their keyframe as far as reads went, with the live
// coder that continues each one until its last state. Reading a state of a
// cached chunk then costs a copy, or the decode from the last state read
// to it. A live coder is charged a conservative estimate of its world
// model's memory (a few MB at 1,024 coordinates per state, K=64), a decoded
// state 2·N+8 bytes. 0 disables the cache. Default DefaultCacheBytes.
func WithCacheBytes(bytes int64) Option {
	return func(c *config) error {
		if bytes < 0 {
			return fmt.Errorf("%w: cache of %d bytes", ErrInput, bytes)
		}
		c.cacheBytes = bytes
		return nil
	}
}

// WithThreads sets how many chunks a Writer encodes, and a Reader or File
// decodes, at the same time on goroutines of their own: n <= 0 means
// runtime.GOMAXPROCS(0) (the default), 1 codes every chunk on the calling
// goroutine. Chunks restart the predictor, so the bytes written and the
// states read are the same for every n; only speed and memory change, by
// about one chunk's states and one world-model predictor per thread
// (coderBytes). A Reader reads ahead only bytes its input has already
// delivered, so a live stream never waits on data it was not asked for.
func WithThreads(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			n = runtime.GOMAXPROCS(0)
		}
		c.threads = n
		return nil
	}
}

// withVersion makes a Writer write container version v (3 or 4), for the
// conformance vectors of older versions.
func withVersion(v int) Option {
	return func(c *config) error {
		if v < MinVersion || v > Version {
			return fmt.Errorf("%w: version %d", ErrInput, v)
		}
		c.version = v
		return nil
	}
}

// withChunkModes makes a Writer code chunk k (counted over the file) in
// mode modes(k) instead of choosing between the file's mode and lossless
// coding (version 4).
// withExactCopies makes the writer copy a slot only where a candidate
// equals its codes, so that the reconstruction follows from the input and
// the rule alone (tests).
func withExactCopies() Option {
	return func(c *config) error { c.exactCopies = true; return nil }
}

func withChunkModes(modes func(chunk int) chunkMode) Option {
	return func(c *config) error { c.modes, c.threads = modes, 1; return nil }
}
