package train

import (
	"fmt"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/wm"
)

// An Option configures Codec.
type Option func(*config) error

type config struct {
	quant     opq.Config
	single    bool // one quantizer of quant, with a gate, rather than a family
	codesOnly bool
	alphabet  int
	wm        wm.TrainOptions
	hold      int
	gate      gate.CalibOptions
	progress  func(stage string, done, total int)
	maxStates int
}

func defaultConfig() config {
	return config{quant: opq.Config{M: 32, K: 64, Seed: 1}, wm: wm.TrainOptions{MaxRefStates: 65536, Level: wm.LevelCopy}, hold: -1, maxStates: DefaultMaxStates}
}

// DefaultMaxStates is how many states Codec learns from at most by
// default: the reference store keeps 65,536 and the statistics settle long
// before this, while time and memory grow with every state read.
const DefaultMaxStates = 1 << 18

// WithQuantizer makes the codec of float observations one quantizer of
// cfg (opq.Config: subspaces M per slot vector, default 32; centroids K,
// default 64; rotation updates, negative for none; seed, iterations,
// sample; zero fields take opq's defaults; Dim is taken from the
// observations) with a retention gate for its lossy files: the
// configuration of the seeds (OPQ, 32 × 64). Without it Codec trains a
// family of product quantizers and codes lossy files by rate and
// distortion (WithFamily).
func WithQuantizer(cfg opq.Config) Option {
	return func(c *config) error {
		if cfg.M < 0 || cfg.K < 0 {
			return fmt.Errorf("%w: quantizer M=%d K=%d", wmzip.ErrInput, cfg.M, cfg.K)
		}
		c.quant, c.single = cfg, true
		return nil
	}
}

// WithFamily makes the codec of float observations a bundle of product
// quantizers and world models, chosen among candidate geometries by the
// bits each writes at each distortion on episodes held out of training;
// its lossy files are coded by rate and distortion (the default). seed
// seeds the quantizers' k-means.
func WithFamily(seed uint64) Option {
	return func(c *config) error {
		c.quant, c.single = opq.Config{Seed: seed}, false
		return nil
	}
}

// WithCodesOnly trains on the episodes' codes and ignores their float
// observations: the codec gets no quantizer.
func WithCodesOnly() Option {
	return func(c *config) error { c.codesOnly = true; return nil }
}

// WithAlphabet sets K, the bound on codes (default: the smallest power of
// two above the largest code; a quantizer's K with observations).
func WithAlphabet(k int) Option {
	return func(c *config) error {
		if k < 0 || k > 1<<16 {
			return fmt.Errorf("%w: alphabet %d outside 0..65536", wmzip.ErrInput, k)
		}
		c.alphabet = k
		return nil
	}
}

// WithMaxStates bounds the states Codec learns from to the n most recent
// of the episodes, in their order (0: DefaultMaxStates): whole episodes,
// and the end of the one before them that fills the bound. When it binds,
// Codec copies what it keeps, so that the caller's arrays may be freed
// while it runs.
func WithMaxStates(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("%w: max states %d is negative", wmzip.ErrInput, n)
		}
		if c.maxStates = n; n == 0 {
			c.maxStates = DefaultMaxStates
		}
		return nil
	}
}

// WithModel sets the world model's training options (precision, reference
// store, level); its Progress is WithProgress's. Without it the model is
// of the copy level (wm.LevelCopy) with a store of 65,536 states; the
// zero Level of o is the full level.
func WithModel(o wm.TrainOptions) Option {
	return func(c *config) error { c.wm = o; return nil }
}

// WithGate sets the retention gate's calibration: holdout episodes held
// out of training to calibrate it (< 0, the default: one in eight; 0: no
// gate, which leaves only lossless coding) and its options (weights,
// binning).
func WithGate(holdout int, o gate.CalibOptions) Option {
	return func(c *config) error { c.hold, c.gate = holdout, o; return nil }
}

// WithProgress tells fn how far Codec has come: stage names the step
// ("quantizer pca", "quantizer opq", "quantizer kmeans", "calibrating the
// gate", "calibrating"), done and total count its work. Calls are
// serialized.
func WithProgress(fn func(stage string, done, total int)) Option {
	return func(c *config) error { c.progress = fn; return nil }
}
