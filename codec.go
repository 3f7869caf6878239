package wmzip

import (
	"fmt"
	"os"
	"slices"

	"github.com/wmzip/wmzip/gate"
	"github.com/wmzip/wmzip/internal/check"
	"github.com/wmzip/wmzip/opq"
	"github.com/wmzip/wmzip/wm"
)

// quantizerSection is the model-file section that holds the quantizer.
const quantizerSection = gate.QuantizerTag

// Codec is what a writer and its readers share: the world model, its
// retention gate (if calibrated) and the quantizer of float observations
// (if trained on them), all in one model file (.wmm). Package train builds
// one from trajectories. A Codec is immutable and safe for concurrent use.
type Codec struct {
	m *wm.Model
	q *opq.Quantizer // nil: codes only
}

// newCodec wraps a world model, reading its quantizer section if it has
// one.
func newCodec(m *wm.Model) (*Codec, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: nil model", ErrInput)
	}
	c := &Codec{m: m}
	if b := m.Section(quantizerSection); b != nil {
		q, err := opq.UnmarshalQuantizer(b)
		if err != nil {
			return nil, fmt.Errorf("model %s: quantizer: %w", m.ID(), err)
		}
		c.q = q
	}
	return c, nil
}

// UnmarshalCodec reads a codec from the bytes of a model file (.wmm).
func UnmarshalCodec(b []byte) (*Codec, error) {
	m, err := wm.UnmarshalModel(b)
	if err != nil {
		return nil, err
	}
	return newCodec(m)
}

// LoadCodec reads a codec from a model file (.wmm).
func LoadCodec(path string) (*Codec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := UnmarshalCodec(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// MarshalBinary returns the bytes of the codec's model file (.wmm), which
// UnmarshalCodec reads.
func (c *Codec) MarshalBinary() ([]byte, error) { return c.m.MarshalBinary() }

// Model returns the world model, with its sections (quantizer, gate): its
// Geom is the shape of a state, S slots of M codes below K.
func (c *Codec) Model() *wm.Model { return c.m }

// Quantizer returns the quantizer of float observations, or nil for a
// codec of codes only.
func (c *Codec) Quantizer() *opq.Quantizer { return c.q }

// hasGate reports whether the codec has a calibrated retention gate,
// which the lossy modes need.
func (c *Codec) hasGate() bool {
	_, err := gate.FromModel(c.m)
	return err == nil
}

// Quantize returns the codes of observations obs, whole states of S slot
// vectors of the quantizer's dimension, time-major: S·M codes a state. It
// writes them to dst when it is large enough (dst may be nil).
func (c *Codec) Quantize(dst []uint16, obs []float32) ([]uint16, error) {
	if c.q == nil {
		return dst, errNoQuantizer
	}
	dst = dst[:0]
	g := c.m.Geom
	per := g.S * c.q.Dim()
	if len(obs)%per != 0 {
		return dst, fmt.Errorf("%w: %d observation values are not whole states of %d slots × %d", ErrInput, len(obs), g.S, c.q.Dim())
	}
	if err := check.Finite(obs, g.S, c.q.Dim(), 0, "", nil); err != nil {
		return dst, err
	}
	n := len(obs) / per * g.N()
	dst = grow(dst, n)
	if err := c.q.Encode(obs, dst[len(dst)-n:]); err != nil {
		return dst[:len(dst)-n], fmt.Errorf("%w: %v", ErrInput, err)
	}
	return dst, nil
}

// quantizeRotated is Quantize that also appends to rot the observations
// rotated as the quantizer sees them (source.go).
func (c *Codec) quantizeRotated(dst []uint16, rot, obs []float32) ([]uint16, []float32, error) {
	g := c.m.Geom
	per := g.S * c.q.Dim()
	if len(obs)%per != 0 {
		return dst, rot, fmt.Errorf("%w: %d observation values are not whole states of %d slots × %d", ErrInput, len(obs), g.S, c.q.Dim())
	}
	if err := check.Finite(obs, g.S, c.q.Dim(), 0, "", nil); err != nil {
		return dst, rot, err
	}
	n := len(obs) / per * g.N()
	dst, rot = grow(dst, n), grow(rot, len(obs))
	if err := c.q.EncodeRotated(obs, dst[len(dst)-n:], rot[len(rot)-len(obs):]); err != nil {
		return dst[:len(dst)-n], rot[:len(rot)-len(obs)], fmt.Errorf("%w: %v", ErrInput, err)
	}
	return dst, rot, nil
}

// Reconstruct returns the slot vectors of codes (whole states): the
// quantizer's reconstruction, S vectors a state. It writes them to dst
// when it is large enough (dst may be nil).
func (c *Codec) Reconstruct(dst []float32, codes []uint16) ([]float32, error) {
	if c.q == nil {
		return dst, errNoQuantizer
	}
	dst = dst[:0]
	g := c.m.Geom
	if len(codes)%g.N() != 0 {
		return dst, fmt.Errorf("%w: %d codes are not whole states of %d", ErrInput, len(codes), g.N())
	}
	n := len(codes) / g.N() * g.S * c.q.Dim()
	dst = grow(dst, n)
	if err := c.q.Decode(codes, dst[len(dst)-n:]); err != nil {
		return dst[:len(dst)-n], fmt.Errorf("%w: %v", ErrInput, err)
	}
	return dst, nil
}

// grow extends s by n elements.
func grow[T any](s []T, n int) []T { return slices.Grow(s, n)[:len(s)+n] }
