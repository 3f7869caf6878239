package wmzip

import (
	"context"
	"fmt"

	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/gate"
	"github.com/wmzip/wmzip/opq"
	"github.com/wmzip/wmzip/wm"
)

// Progress is told how far a long call has come: stage names the step
// ("quantizer pca", "quantizer opq", "quantizer kmeans", "calibrating the
// gate", "calibrating", "encoding", "ladder", "allocating"), done and
// total count its work. Calls are serialized.
type Progress func(stage string, done, total int)

// A TrainOption configures Train.
type TrainOption interface{ applyTrain(*trainConfig) error }

// A WriterOption configures NewWriter, Encode and Append.
type WriterOption interface{ applyWriter(*writerConfig) error }

// An AccessOption configures StoreByAccess.
type AccessOption interface{ applyAccess(*accessConfig) error }

type trainConfig struct {
	quant     opq.Config
	codesOnly bool
	alphabet  int
	wm        wm.TrainOptions
	hold      int
	gate      gate.CalibOptions
	progress  Progress
	maxStates int
}

func defaultTrain() trainConfig {
	return trainConfig{quant: opq.Config{M: 32, K: 64, Seed: 1}, wm: wm.TrainOptions{MaxRefStates: 65536}, hold: -1, maxStates: DefaultMaxTrainStates}
}

type writerConfig struct {
	format     []format.Option
	lambda     uint32
	lossy      bool
	distortion float64 // < 0: none
	// sourceDistortion is a target against the source floats, < 0: none.
	sourceDistortion float64
	levels           []uint32
	ctx              context.Context
	progress         Progress
	probe            func(format.Probe)
}

type trainOpt func(*trainConfig) error

func (f trainOpt) applyTrain(c *trainConfig) error { return f(c) }

type writerOpt func(*writerConfig) error

func (f writerOpt) applyWriter(c *writerConfig) error { return f(c) }

type accessOpt func(*accessConfig) error

func (f accessOpt) applyAccess(c *accessConfig) error { return f(c) }

// WithProgress reports the progress of Train, the Writer's distortion
// search and StoreByAccess.
func WithProgress(p Progress) interface {
	TrainOption
	WriterOption
	AccessOption
} {
	return progressOpt(p)
}

type progressOpt Progress

func (p progressOpt) applyTrain(c *trainConfig) error   { c.progress = Progress(p); return nil }
func (p progressOpt) applyWriter(c *writerConfig) error { c.progress = Progress(p); return nil }
func (p progressOpt) applyAccess(c *accessConfig) error { c.progress = Progress(p); return nil }

// WithKeyframeInterval sets the most states per independently decodable
// chunk (default format.DefaultKeyframeInterval): smaller is faster random
// access, larger compresses better.
func WithKeyframeInterval(g int) interface {
	WriterOption
	AccessOption
} {
	return keyframeOpt(g)
}

type keyframeOpt int

func (g keyframeOpt) applyWriter(c *writerConfig) error {
	c.format = append(c.format, format.WithKeyframeInterval(int(g)))
	return nil
}
func (g keyframeOpt) applyAccess(c *accessConfig) error {
	if g < 1 || g > format.MaxKeyframeInterval {
		return fmt.Errorf("%w: keyframe interval %d outside 1..%d", ErrInput, g, format.MaxKeyframeInterval)
	}
	c.keyframe = int(g)
	return nil
}

// WithThreads sets how many chunks a Writer encodes, and a File or Reader
// decodes ahead, at once (format.WithThreads): n <= 0 is every core, 1 the
// serial path. Bytes and results do not depend on it.
func WithThreads(n int) interface {
	WriterOption
	ReaderOption
} {
	return threadsOpt(n)
}

type threadsOpt int

func (n threadsOpt) applyWriter(c *writerConfig) error {
	c.format = append(c.format, format.WithThreads(int(n)))
	return nil
}
func (n threadsOpt) applyReader(c *readerConfig) {
	c.format = append(c.format, format.WithThreads(int(n)))
}

// WithEmbeddedModel stores the codec's model in the file, so that it
// decodes without the .wmm.
func WithEmbeddedModel(embed bool) interface {
	WriterOption
	AccessOption
} {
	return embedOpt(embed)
}

type embedOpt bool

func (e embedOpt) applyWriter(c *writerConfig) error {
	c.format = append(c.format, format.WithEmbeddedModel(bool(e)))
	return nil
}
func (e embedOpt) applyAccess(c *accessConfig) error { c.embed = bool(e); return nil }

// WithQuantizer sets how float observations are quantized (opq.Config:
// subspaces M per slot vector, centroids K, seed, iterations, sample);
// zero fields take opq's defaults. Dim is taken from the observations.
func WithQuantizer(cfg opq.Config) TrainOption {
	return trainOpt(func(c *trainConfig) error {
		if cfg.M < 0 || cfg.K < 0 {
			return fmt.Errorf("%w: quantizer M=%d K=%d", ErrInput, cfg.M, cfg.K)
		}
		c.quant = cfg
		return nil
	})
}

// WithCodesOnly trains on the episodes' codes and ignores their float
// observations: the codec gets no quantizer.
func WithCodesOnly() TrainOption {
	return trainOpt(func(c *trainConfig) error { c.codesOnly = true; return nil })
}

// WithAlphabet sets K, the bound on codes (default: the smallest power of
// two above the largest code).
func WithAlphabet(k int) TrainOption {
	return trainOpt(func(c *trainConfig) error {
		if k < 0 || k > 1<<16 {
			return fmt.Errorf("%w: alphabet %d outside 0..65536", ErrInput, k)
		}
		c.alphabet = k
		return nil
	})
}

// DefaultMaxTrainStates is how many states Train learns from at most by
// default: the reference store keeps 65,536 and the statistics settle long
// before this, while time and memory grow with every state read.
const DefaultMaxTrainStates = 1 << 18

// WithMaxStates bounds the states Train learns from to the n most recent
// of the episodes, in their order (0: DefaultMaxTrainStates): whole
// episodes, and the end of the one before them that fills the bound. When
// it binds, Train copies what it keeps, so that the caller's arrays may be
// freed while it runs.
func WithMaxStates(n int) TrainOption {
	return trainOpt(func(c *trainConfig) error {
		if n < 0 {
			return fmt.Errorf("%w: max states %d is negative", ErrInput, n)
		}
		if c.maxStates = n; n == 0 {
			c.maxStates = DefaultMaxTrainStates
		}
		return nil
	})
}

// WithModel sets the world model's training options (precision, reference
// store); its Progress is WithProgress's.
func WithModel(o wm.TrainOptions) TrainOption {
	return trainOpt(func(c *trainConfig) error { c.wm = o; return nil })
}

// WithGate sets the retention gate's calibration: holdout episodes held
// out of training to calibrate it (< 0: one in eight; 0: no gate, which
// leaves only lossless coding) and its options (weights, binning).
func WithGate(holdout int, o gate.CalibOptions) TrainOption {
	return trainOpt(func(c *trainConfig) error { c.hold, c.gate = holdout, o; return nil })
}

// WithLambda codes lossily with one retention trade-off λ ≥ 0 for every
// state (a coordinate is kept iff λ·ê·V ≥ H); +Inf is lossless. The codec
// needs a gate.
func WithLambda(lambda float64) WriterOption {
	return writerOpt(func(c *writerConfig) error {
		l, err := gate.LambdaFixed(lambda)
		if err != nil {
			return fmt.Errorf("%w: λ %v: want ≥ 0 and below 65536, or +Inf", ErrInput, lambda)
		}
		c.lambda, c.lossy = l, l != format.LambdaLossless
		return nil
	})
}

// WithDistortion writes the least storage whose distortion against the
// lossless reconstruction (the codes the observations quantize to, or the
// codes given) is at most d: the mean over slot vectors of the squared
// distance, in the quantizer's space, between a slot vector's two
// reconstructions over the squared norm of the lossless one (the fraction
// of wrong codes without a quantizer). It is what retention costs; the
// quantizer's own error comes on top (WithSourceDistortion). The Writer
// keeps every state until Close, which searches and writes the file. The
// codec needs a gate.
func WithDistortion(d float64) WriterOption {
	return writerOpt(func(c *writerConfig) error {
		if !(d >= 0) || !(d < 1) {
			return fmt.Errorf("%w: distortion %v: want a fraction, at least 0 and below 1", ErrInput, d)
		}
		c.distortion = d
		return nil
	})
}

// WithSourceDistortion writes the least storage whose distortion against
// the float observations written (WriteObs, WriteEpisodeOf,
// WriteTrajectory) is at most d: the mean over slot vectors of the squared
// error over the squared norm of the observation, quantizer and retention
// together. It is refused at Close when d is below what the quantizer
// alone loses on the observations. The Writer keeps every state, and the
// observations, until Close. The codec needs a gate and a quantizer.
func WithSourceDistortion(d float64) WriterOption {
	return writerOpt(func(c *writerConfig) error {
		if !(d >= 0) || !(d < 1) {
			return fmt.Errorf("%w: distortion %v: want a fraction, at least 0 and below 1", ErrInput, d)
		}
		c.sourceDistortion = d
		return nil
	})
}

// WithLevels declares per-state retention levels, as 16.16 fixed-point
// λ (format.LambdaLossless for lossless); Writer.SetLevel picks one for the
// next states. The codec needs a gate.
func WithLevels(lambdas ...uint32) WriterOption {
	return writerOpt(func(c *writerConfig) error { c.levels = lambdas; return nil })
}

// WithContext lets a Writer's distortion search stop early when ctx is
// done.
func WithContext(ctx context.Context) WriterOption {
	return writerOpt(func(c *writerConfig) error { c.ctx = ctx; return nil })
}

// WithFormatOptions passes options through to the container's writer
// (lanes, precision, recovery, memory limits; see package format).
func WithFormatOptions(opts ...format.Option) WriterOption {
	return writerOpt(func(c *writerConfig) error { c.format = append(c.format, opts...); return nil })
}

// WithProbe reports every trial encoding of the distortion search.
func WithProbe(fn func(format.Probe)) WriterOption {
	return writerOpt(func(c *writerConfig) error { c.probe = fn; return nil })
}
