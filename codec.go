package wmzip

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/wmzip/wmzip/internal/check"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/ratecurve"
	"github.com/wmzip/wmzip/internal/wm"
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

	// members are a bundle's codecs, coarsest first; the last is the
	// finest, whose model and quantizer m and q are. nil: one model.
	members []*Codec
	curve   ratecurve.Curve // a member's calibration (section RDCV), or nil
}

// NewCodec wraps a world model as a codec, reading its quantizer section
// if it has one: how a model built or loaded apart (package train, a
// model file's bytes) becomes something to write and read with.
func NewCodec(m *Model) (*Codec, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: nil model", ErrInput)
	}
	c := &Codec{m: m}
	if b := m.Section(quantizerSection); b != nil {
		q, err := opq.UnmarshalQuantizer(b)
		if err != nil {
			return nil, fmt.Errorf("model %s: quantizer: %w", m.ID(), err)
		}
		if g := m.Geom; g.M%q.M() != 0 || (q.Slots() != 0 && q.Slots() != g.N()/q.M()) {
			return nil, fmt.Errorf("model %s: quantizer of %d codes a slot vector (%d slot sets) does not fit the model's %d x %d", m.ID(), q.M(), q.Slots(), g.S, g.M)
		}
		c.q = q
	}
	if b := m.Section(ratecurve.Section); b != nil {
		cv, err := ratecurve.Unmarshal(b)
		if err != nil {
			return nil, fmt.Errorf("model %s: %w", m.ID(), err)
		}
		c.curve = cv
	}
	return c, nil
}

// NewBundle returns the codec of several members, each a codec of one
// model (no bundle), ordered from the coarsest to the finest: the finest
// (the last) writes lossless files and takes codes as input; lossy files
// are written by whichever member of a quantizer codes them in the fewest
// bits. Any members of distinct models decode the files they wrote; those
// that write lossy files for the bundle have a quantizer of the last
// member's dimension and as many slot vectors a state.
func NewBundle(members ...*Codec) (*Codec, error) {
	if len(members) == 0 || len(members) > wm.MaxMembers {
		return nil, fmt.Errorf("%w: a bundle of %d members, want 1 to %d", ErrInput, len(members), wm.MaxMembers)
	}
	last := members[len(members)-1]
	for i, m := range members {
		if m == nil || m.members != nil {
			return nil, fmt.Errorf("%w: bundle member %d is not a codec of one model", ErrInput, i)
		}
		for _, o := range members[:i] {
			if o.m.ID() == m.m.ID() {
				return nil, fmt.Errorf("%w: bundle member %d repeats model %s", ErrInput, i, m.m.ID())
			}
		}
	}
	if len(members) == 1 {
		return last, nil
	}
	c := *last
	c.members = slices.Clone(members)
	return &c, nil
}

// writes reports whether member m can write lossy files for bundle c: it
// has a quantizer of the same dimension as c's and as many slot vectors a
// state.
func (c *Codec) writes(m *Codec) bool {
	return m.q != nil && c.q != nil && m.q.Dim() == c.q.Dim() && m.Slots() == c.Slots()
}

// Members returns the codecs a bundle is made of, coarsest first (the
// codec itself, alone, when it is of one model). The slice is the caller's.
func (c *Codec) Members() []*Codec {
	if c.members == nil {
		return []*Codec{c}
	}
	return slices.Clone(c.members)
}

// member returns the member of c whose model has the given ID, or nil.
func (c *Codec) member(id wm.ModelID) *Codec {
	for _, m := range c.Members() {
		if m.m.ID() == id {
			return m
		}
	}
	return nil
}

// UnmarshalCodec reads a codec from the bytes of a model file (.wmm) or
// of a bundle of them.
func UnmarshalCodec(b []byte) (*Codec, error) {
	if wm.IsBundle(b) {
		bms, err := wm.BundleMembers(b)
		if err != nil {
			return nil, err
		}
		// The members parse on every core: deriving a model's tables is
		// the cost of loading it.
		cs := make([]*Codec, len(bms))
		errs := make([]error, len(bms))
		var wg sync.WaitGroup
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		for i, bm := range bms {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				m, err := wm.ParseBundleMember(bm, i, 0)
				if err == nil {
					cs[i], err = NewCodec(m)
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
		return NewBundle(cs...)
	}
	m, err := wm.UnmarshalModel(b)
	if err != nil {
		return nil, err
	}
	return NewCodec(m)
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
func (c *Codec) MarshalBinary() ([]byte, error) {
	if c.members == nil {
		return c.m.MarshalBinary()
	}
	ms := make([]*wm.Model, len(c.members))
	for i, m := range c.members {
		ms[i] = m.m
	}
	return wm.MarshalBundle(ms)
}

// Model returns the world model, with its sections (quantizer, gate): its
// Geom is the shape of a state, S slots of M codes below K.
func (c *Codec) Model() *Model { return c.m }

// Quantizer returns the quantizer of float observations, or nil for a
// codec of codes only.
func (c *Codec) Quantizer() *Quantizer { return c.q }

// hasGate reports whether the codec has a calibrated retention gate,
// which the lossy modes need.
func (c *Codec) hasGate() bool {
	_, err := gate.FromModel(c.m)
	return err == nil
}

// Slots returns the number of slot vectors a state holds. With a
// quantizer of M' codes a slot vector it is N/M' (N = S·M, the model's
// coordinates): the world model may see several slot vectors as one of
// its slots, their codes side by side (SPEC.md 3.2).
func (c *Codec) Slots() int {
	if c.q != nil {
		return c.m.Geom.N() / c.q.M()
	}
	return c.m.Geom.S
}

// Geometry returns the shape of a state as the codec's users see it:
// Slots slot vectors of M codes each, below K. It is the model's Geom
// unless the world model sees several slot vectors as one of its slots.
func (c *Codec) Geometry() Geometry {
	g := c.m.Geom
	s := c.Slots()
	return wm.Geometry{S: s, M: g.N() / s, K: g.K}
}

// Quantize returns the codes of observations obs, whole states of S slot
// vectors of the quantizer's dimension, time-major: S·M codes a state. It
// writes them to dst when it is large enough (dst may be nil).
func (c *Codec) Quantize(dst []uint16, obs []float32) ([]uint16, error) {
	if c.q == nil {
		return dst, errNoQuantizer
	}
	dst = dst[:0]
	g, S := c.m.Geom, c.Slots()
	per := S * c.q.Dim()
	if len(obs)%per != 0 {
		return dst, fmt.Errorf("%w: %d observation values are not whole states of %d slots × %d", ErrInput, len(obs), S, c.q.Dim())
	}
	if err := check.Finite(obs, S, c.q.Dim(), 0, "", nil); err != nil {
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
	g, S := c.m.Geom, c.Slots()
	per := S * c.q.Dim()
	if len(obs)%per != 0 {
		return dst, rot, fmt.Errorf("%w: %d observation values are not whole states of %d slots × %d", ErrInput, len(obs), S, c.q.Dim())
	}
	if err := check.Finite(obs, S, c.q.Dim(), 0, "", nil); err != nil {
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
	n := len(codes) / g.N() * c.Slots() * c.q.Dim()
	dst = grow(dst, n)
	if err := c.q.Decode(codes, dst[len(dst)-n:]); err != nil {
		return dst[:len(dst)-n], fmt.Errorf("%w: %v", ErrInput, err)
	}
	return dst, nil
}

// grow extends s by n elements.
func grow[T any](s []T, n int) []T { return slices.Grow(s, n)[:len(s)+n] }

// RatePoint is one point of a codec's calibration: coded by rate and
// distortion at Lambda (bits a unit of a slot vector's relative
// distortion is worth; +Inf for the quantizer's own codes), episodes held
// out of its training reached mean distortion Distortion against their
// source floats at BitsPerState.
type RatePoint struct {
	Lambda       float64
	Distortion   float64
	BitsPerState float64
}

// Calibration returns the calibration of a codec of one model trained for
// coding by rate and distortion, by decreasing λ; nil for other codecs
// (bundles: ask each of their Members).
func (c *Codec) Calibration() []RatePoint {
	if c.members != nil {
		return nil
	}
	out := make([]RatePoint, len(c.curve))
	for i, p := range c.curve {
		l := math.Inf(1)
		if p.Lam > 0 {
			l = format.DistUnit / float64(p.Lam)
		}
		out[i] = RatePoint{l, p.Dist, p.Bits}
	}
	return out
}
