package wmzip

import (
	"encoding/binary"
	"fmt"
	"math"
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

// quantizeRotated is Quantize that also appends to rot the observations
// rotated as the quantizer sees them (source.go).
func (c *Codec) quantizeRotated(dst []uint16, rot, obs []float32) ([]uint16, []float32, error) {
	g := c.m.Geom
	per := g.S * c.q.Dim()
	if len(obs)%per != 0 {
		return dst, rot, fmt.Errorf("%w: %d observation values are not whole states of %d slots × %d", ErrInput, len(obs), g.S, c.q.Dim())
	}
	if err := checkFinite(obs, g.S, c.q.Dim(), 0, "", nil); err != nil {
		return dst, rot, err
	}
	n := len(obs) / per * g.N()
	dst, rot = grow(dst, n), grow(rot, len(obs))
	if err := c.q.EncodeRotated(obs, dst[len(dst)-n:], rot[len(rot)-len(obs):]); err != nil {
		return dst[:len(dst)-n], rot[:len(rot)-len(obs)], fmt.Errorf("%w: %v", ErrInput, err)
	}
	return dst, rot, nil
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

// Distortion returns the distortion of decoded codes got against the
// lossless reconstruction want (the source's codes), as the Writer
// measures it (WithDistortion): the mean over slot vectors of the squared
// distance between the two reconstructions over the squared norm of the
// lossless one, in the quantizer's space (without a quantizer, in the
// gate's distances over its mean slot norm, or the fraction of wrong
// codes); and the number of wrong codes. Only the states both hold are
// compared.
func (c *Codec) Distortion(got, want []uint16) (rel float64, wrong int64) {
	g := c.m.Geom
	M := g.M
	got = got[:min(len(got), len(want))]
	p, perr := gate.FromModel(c.m)
	var sum float64
	slots := len(got) / M
	for k := range slots {
		a, b := got[k*M:(k+1)*M], want[k*M:(k+1)*M]
		if slices.Equal(a, b) {
			continue
		}
		var d uint64
		for m := range a {
			if a[m] != b[m] {
				wrong++
				if perr == nil {
					d += uint64(p.Distance((k%g.S)*M+m, a[m], b[m]))
				} else {
					d += gate.UnitDistance
				}
			}
		}
		switch {
		case c.q != nil:
			sum += c.q.SlotDistortion(k%g.S, b, a)
		case perr == nil && p.Dist != nil && p.SlotNorm > 0:
			sum += float64(d) / float64(p.SlotNorm)
		default:
			sum += float64(d) / float64(uint64(M)*gate.UnitDistance)
		}
	}
	return sum / float64(max(slots, 1)), wrong
}

// qualitySection is the model-file section that records how the quantizer
// did on observations held out of its training (SPEC.md 3.1, informative):
// u16 version (1), six reserved zero bytes, u64 slot vectors, f64 mean
// relative squared error, f64 mean cosine, little-endian.
const qualitySection = "QDST"

func marshalQuality(q opq.Quality) []byte {
	b := make([]byte, 0, 32)
	b = binary.LittleEndian.AppendUint16(b, 1)
	b = append(b, 0, 0, 0, 0, 0, 0)
	b = binary.LittleEndian.AppendUint64(b, uint64(q.Vectors))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(q.Distortion()))
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(q.Cosine()))
}

// QuantizerQuality returns how the codec's quantizer did on observations
// held out of its training, as Train measured and the model records: the
// slot vectors measured, and their mean relative squared error and mean
// cosine against their reconstruction. ok is false when the model records
// none (a model without a quantizer, or of too few states).
func (c *Codec) QuantizerQuality() (q opq.Quality, ok bool) {
	b := c.m.Section(qualitySection)
	if len(b) != 32 || binary.LittleEndian.Uint16(b) != 1 {
		return q, false
	}
	n := int64(binary.LittleEndian.Uint64(b[8:]))
	d := math.Float64frombits(binary.LittleEndian.Uint64(b[16:]))
	cos := math.Float64frombits(binary.LittleEndian.Uint64(b[24:]))
	if n <= 0 || !(d >= 0) || math.IsInf(d, 0) || !(math.Abs(cos) <= 1) {
		return q, false
	}
	return opq.Quality{Vectors: n, SumErr: d * float64(n), SumCos: cos * float64(n)}, true
}
