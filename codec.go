package wmzip

import (
	"fmt"
	"os"
	"slices"

	"github.com/wmzip/wmzip/gate"
	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/opq"
	"github.com/wmzip/wmzip/wm"
)

// quantizerSection is the model-file section that holds the quantizer.
const quantizerSection = gate.QuantizerTag

// Codec is what a writer and its readers share: the world model, its
// retention gate (if calibrated) and the quantizer of float observations
// (if trained on them), all in one model file (.wmm). A Codec is immutable
// and safe for concurrent use.
type Codec struct {
	m *wm.Model
	q *opq.Quantizer // nil: codes only
}

// NewCodec wraps a model, reading its quantizer section if it has one.
func NewCodec(m *wm.Model) (*Codec, error) {
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

// UnmarshalCodec reads a codec from the bytes of a model file.
func UnmarshalCodec(b []byte) (*Codec, error) {
	m, err := wm.UnmarshalModel(b)
	if err != nil {
		return nil, err
	}
	return NewCodec(m)
}

// LoadCodec reads a codec from a model file.
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

// MarshalBinary returns the model file's bytes.
func (c *Codec) MarshalBinary() ([]byte, error) { return c.m.MarshalBinary() }

// Save writes the model file to path atomically: a reader of path sees the
// old file or the whole new one.
func (c *Codec) Save(path string) error {
	b, err := c.MarshalBinary()
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b)
}

// Model returns the world model (with its sections).
func (c *Codec) Model() *wm.Model { return c.m }

// Quantizer returns the quantizer, or nil for a codec of codes only.
func (c *Codec) Quantizer() *opq.Quantizer { return c.q }

// Geometry returns the shape of a state: S slots of M codes below K.
func (c *Codec) Geometry() wm.Geometry { return c.m.Geom }

// Dim returns the dimension of a slot vector, or 0 without a quantizer.
func (c *Codec) Dim() int {
	if c.q == nil {
		return 0
	}
	return c.q.Dim()
}

// HasGate reports whether the codec has a calibrated retention gate, which
// the lossy modes need.
func (c *Codec) HasGate() bool {
	_, err := gate.FromModel(c.m)
	return err == nil
}

// ID returns the model's identity, which every file written with it names.
func (c *Codec) ID() wm.ModelID { return c.m.ID() }

// Quantize appends to dst the codes of observations obs (whole states of
// S slot vectors) and returns it.
func (c *Codec) Quantize(dst []uint16, obs []float32) ([]uint16, error) {
	if c.q == nil {
		return dst, ErrNoQuantizer
	}
	g := c.m.Geom
	per := g.S * c.q.Dim()
	if len(obs)%per != 0 {
		return dst, fmt.Errorf("%w: %d observation values are not whole states of %d slots × %d", ErrInput, len(obs), g.S, c.q.Dim())
	}
	if err := checkFinite(obs, g.S, c.q.Dim(), 0, "", nil); err != nil {
		return dst, err
	}
	n := len(obs) / per * g.N()
	dst = grow(dst, n)
	if err := c.q.Encode(obs, dst[len(dst)-n:]); err != nil {
		return dst[:len(dst)-n], fmt.Errorf("%w: %v", ErrInput, err)
	}
	return dst, nil
}

// Reconstruct appends to dst the slot vectors of codes (whole states) and
// returns it.
func (c *Codec) Reconstruct(dst []float32, codes []uint16) ([]float32, error) {
	if c.q == nil {
		return dst, ErrNoQuantizer
	}
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

// RawBits returns the bits of one state packed raw, the reference rates
// are reported against: N codes of ⌈log2 K⌉ bits each.
func RawBits(g wm.Geometry) float64 {
	b := 0
	for 1<<b < g.K {
		b++
	}
	return float64(g.N() * b)
}

// Distortion returns the relative distortion of decoded codes against the
// source's, in the gate's integer distances (the fraction of wrong codes
// without a gate), and the number of wrong codes. Only the states both
// hold are compared.
func (c *Codec) Distortion(got, want []uint16) (rel float64, wrong int64) {
	n := c.m.Geom.N()
	got = got[:min(len(got), len(want))]
	p, err := gate.FromModel(c.m)
	var sum uint64
	for i, v := range got {
		if v != want[i] {
			wrong++
			if err == nil {
				sum += uint64(p.Distance(i%n, v, want[i]))
			}
		}
	}
	if err != nil {
		return float64(wrong) / float64(max(len(got), 1)), wrong
	}
	return p.RelDistortion(sum, int64(len(got)/n)), wrong
}
