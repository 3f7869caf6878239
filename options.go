package wmzip

import (
	"fmt"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/lambda"
)

// A WriterOption configures NewWriter, Create and Append.
type WriterOption interface{ applyWriter(*writerConfig) error }

// A ReaderOption configures Open, NewFile, NewReader, DecodeAll and
// Recover.
type ReaderOption interface{ applyReader(*readerConfig) error }

type writerConfig struct {
	format []format.Option
	lambda lambda.Lambda
	lossy  bool
	// distortion is a target against the lossless reconstruction, < 0:
	// none; sourceDistortion one against the source floats.
	distortion       float64
	sourceDistortion float64
	levels           []lambda.Lambda
	probe            func(format.Probe)
}

type readerConfig struct {
	format []format.Option
	access func(episode, step int64) // for the Reader; a File's is in format
}

type writerOpt func(*writerConfig) error

func (f writerOpt) applyWriter(c *writerConfig) error { return f(c) }

type readerOpt func(*readerConfig) error

func (f readerOpt) applyReader(c *readerConfig) error { return f(c) }

// WithEmbeddedModel stores the codec's model in the file, so that it
// decodes without the .wmm file (default false).
func WithEmbeddedModel(embed bool) WriterOption {
	return writerOpt(func(c *writerConfig) error {
		c.format = append(c.format, format.WithEmbeddedModel(embed))
		return nil
	})
}

// WithKeyframeInterval sets the most states per independently decodable
// chunk, 1 to 65,536 (default 128): smaller is faster random access,
// larger compresses better.
func WithKeyframeInterval(g int) WriterOption {
	return writerOpt(func(c *writerConfig) error {
		if g < 1 || g > format.MaxKeyframeInterval {
			return fmt.Errorf("%w: keyframe interval %d outside 1..%d", ErrInput, g, format.MaxKeyframeInterval)
		}
		c.format = append(c.format, format.WithKeyframeInterval(g))
		return nil
	})
}

// WithEncoderThreads sets how many chunks a Writer encodes at once: n <= 0
// is every core (the default), 1 the serial path. The bytes do not depend
// on it.
func WithEncoderThreads(n int) WriterOption {
	return writerOpt(func(c *writerConfig) error {
		c.format = append(c.format, format.WithThreads(n))
		return nil
	})
}

// WithDecoderThreads sets how many chunks a File or Reader decodes ahead
// at once: n <= 0 is every core (the default), 1 the serial path. The
// results do not depend on it.
func WithDecoderThreads(n int) ReaderOption {
	return readerOpt(func(c *readerConfig) error {
		c.format = append(c.format, format.WithThreads(n))
		return nil
	})
}

// WithLambda codes lossily at one trade-off λ for every state, at least 0
// and below 65,536 (larger keeps more); +Inf is lossless. With a gate a
// coordinate is kept when λ times the distance its prediction would miss
// by outweighs its coding cost. Without one (a codec of product
// quantizers, package train's default) every coordinate is coded, each
// slot as the values of least bits + λ·distortion (relative to the slot
// vector's squared norm) found under the world model, by the member of a
// bundle whose calibration is cheapest at λ; such a file may be larger
// than the lossless one. The codec needs a gate or a quantizer.
func WithLambda(l float64) WriterOption {
	return writerOpt(func(c *writerConfig) error {
		l, err := lambdaFixed(l)
		if err != nil {
			return err
		}
		c.lambda, c.lossy = l, l != format.LambdaLossless
		return nil
	})
}

// WithLevels declares per-state retention levels, each a λ as WithLambda
// takes it (+Inf for lossless), 2 to 16 of them; Writer.SetLevel picks one for
// the states written next (level 0 until then). Without a gate every
// level is coded by rate and distortion (WithLambda) by one member of a
// bundle, chosen for the largest finite λ; a level of +Inf then codes
// that member's own codes, lossless for it but not for the bundle. The
// codec needs a gate or a quantizer.
func WithLevels(lambdas ...float64) WriterOption {
	return writerOpt(func(c *writerConfig) error {
		if len(lambdas) < 2 || len(lambdas) > format.MaxLevels {
			return fmt.Errorf("%w: %d levels, want 2..%d", ErrInput, len(lambdas), format.MaxLevels)
		}
		c.levels = make([]lambda.Lambda, len(lambdas))
		for i, l := range lambdas {
			var err error
			if c.levels[i], err = lambdaFixed(l); err != nil {
				return err
			}
		}
		return nil
	})
}

// lambdaFixed returns λ in the file's unit, or ErrInput.
func lambdaFixed(l float64) (lambda.Lambda, error) {
	f, err := lambda.FromFloat(l)
	if err != nil {
		return 0, fmt.Errorf("%w: λ %v: want at least 0 and below 65536, or +Inf for lossless", ErrInput, l)
	}
	return f, nil
}

// WithDistortion writes the least storage whose distortion against the
// lossless reconstruction (the codes the observations quantize to, or the
// codes given) is at most d: the mean over slot vectors of the squared
// distance, in the quantizer's space, between a slot vector's two
// reconstructions over the squared norm of the lossless one (the fraction
// of wrong codes without a quantizer). It is what retention costs; the
// quantizer's own error comes on top (WithSourceDistortion). No file it
// writes is larger than the lossless one. The Writer keeps every state
// until Close, which searches and writes the file. Without a gate the
// file is coded by rate and distortion (WithLambda) by the member of a
// bundle, and at the λ, that write the fewest bits within d, against the
// finest member's reconstruction. The codec needs a gate or a quantizer.
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
// the float observations written is at most d: the mean over slot vectors
// of the squared error over the squared norm of the observation,
// quantizer and retention together. Close refuses a d below what the
// quantizer alone loses on the observations (a bundle's finest quantizer).
// No file it writes is larger than the lossless one. The Writer keeps
// every state, and the observations, until Close. Without a gate the file
// is coded by rate and distortion (WithLambda) by the member of a bundle,
// and at the λ, that write the fewest bits within d, aiming at [0.9·d, d].
// The codec needs a quantizer.
func WithSourceDistortion(d float64) WriterOption {
	return writerOpt(func(c *writerConfig) error {
		if !(d >= 0) || !(d < 1) {
			return fmt.Errorf("%w: distortion %v: want a fraction, at least 0 and below 1", ErrInput, d)
		}
		c.sourceDistortion = d
		return nil
	})
}

// WithAccessLog tells fn of every state a File or Reader returns, in the
// order returned: the access trace that storage by access (package alloc)
// reads.
func WithAccessLog(fn func(episode, step int64)) ReaderOption {
	return readerOpt(func(c *readerConfig) error {
		c.format = append(c.format, format.WithAccessLog(fn))
		c.access = fn
		return nil
	})
}

// WithProbe tells fn of every trial encoding a distortion target's search
// makes (WithDistortion, WithSourceDistortion): its λ, bits and
// distortion, in the order tried.
func WithProbe(fn func(Probe)) WriterOption {
	return writerOpt(func(c *writerConfig) error { c.probe = fn; return nil })
}

func readerOptions(opts []ReaderOption) (readerConfig, error) {
	var c readerConfig
	for _, o := range opts {
		if err := o.applyReader(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}
