// Package rdcode codes states by rate and distortion with one quantizer
// and world model: the reference vectors of each state against the
// quantizer's centroids give every value's distortion (format.SlotCosts),
// and the container's writer codes the values of least distortion + λ·bits.
// It serves the codec's writer and the calibration of a trained codec.
package rdcode

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/ratecurve"
	"github.com/wmzip/wmzip/internal/wm"
)

// Costs is format.SlotCosts of one state: its reference slot vectors
// (rotated as the member's quantizer sees them) against the member's
// centroids.
type Costs struct {
	Q   *opq.Quantizer
	Ref []float32 // S slot vectors of Q.Dim(), rotated
}

// Slot fills dst with the distortions of slot s (format.SlotCosts).
// A slot of the world model may hold several slot vectors (their codes
// side by side): each one's distortions are relative to its own norm.
func (c Costs) Slot(s int, dst []uint32) {
	d, mk := c.Q.Dim(), c.Q.M()*c.Q.K()
	per := len(dst) / mk // slot vectors in the model's slot
	buf := make([]float32, mk)
	for i := range per {
		v := s*per + i
		y := c.Ref[v*d : (v+1)*d]
		var yy float64
		for _, x := range y {
			yy += float64(float64(x) * float64(x)) // rounded: no fused multiply-add on any machine
		}
		c.Q.SlotDistances(y, v, buf)
		scale := float64(format.DistUnit) / math.Max(yy, 1e-30)
		out := dst[i*mk : (i+1)*mk]
		for j, e := range buf {
			out[j] = uint32(math.Min(float64(e)*scale, math.MaxUint32))
		}
	}
}

// State is one state held for coding by rate and distortion: its
// action and reference slot vectors (the source floats, or the
// reconstruction of the lossless codes), not rotated, and its source
// floats when it was written as such (nil otherwise; the reference itself
// when the target is against them).
type State struct {
	Action int64
	Ref    []float32
	Obs    []float32
}

// Pass is one file coded by rate and distortion at one member and λ.
type Pass struct {
	Lam     uint64
	File    []byte
	Account format.Account
	Dist    float64 // mean distortion against the references
	States  int
	Floor   float64     // the quantizer alone, against the references
	FloorQ  opq.Quality // the same, whole
	Vectors int64
}

// rdEncode codes the held episodes eps with member mem at λ lam into a
// file, measuring its distortion against the states' references (and,
// for the report, against their source floats); opts are the caller's
// format options.
func Encode(q *opq.Quantizer, m *wm.Model, eps [][]State, lam uint64, opts []format.Option) (*Pass, error) {
	n := m.Geom.N()
	var buf bytes.Buffer
	var all, floor opq.Quality
	type placed struct {
		ref, obs []float32 // rotated
		codes    []uint16
	}
	var pending []placed
	head := 0
	place := func(recon []uint16) format.Report {
		var add opq.Quality
		for i := 0; i+n <= len(recon); i += n {
			p := &pending[head]
			a, _ := q.CompareRotated(p.ref, recon[i:i+n])
			b, _ := q.CompareRotated(p.ref, p.codes)
			all, floor = all.Add(a), floor.Add(b)
			switch {
			case p.obs == nil:
			case &p.obs[0] == &p.ref[0]:
				add = add.Add(a)
			default:
				o, _ := q.CompareRotated(p.obs, recon[i:i+n])
				add = add.Add(o)
			}
			*p = placed{}
			head++
		}
		return format.Report{SourceSlots: uint64(add.Vectors), Source: add.SumErr, Cosine: add.SumCos}
	}
	o := append(slices.Clip(opts), format.WithMeasure(Measure(q, m)), format.WithSource(place))
	fw, err := format.NewWriter(&buf, m, o...)
	if err != nil {
		return nil, err
	}
	states := 0
	for _, e := range eps {
		if err := fw.WriteEpisode(nil); err != nil {
			return nil, err
		}
		for _, st := range e {
			p := placed{codes: make([]uint16, n), ref: make([]float32, len(st.Ref))}
			if err := q.EncodeRotated(st.Ref, p.codes, p.ref); err != nil {
				return nil, fmt.Errorf("%w: %v", format.ErrInput, err)
			}
			switch {
			case st.Obs == nil:
			case &st.Obs[0] == &st.Ref[0]:
				p.obs = p.ref
			default:
				if p.obs, err = q.Rotate(st.Obs); err != nil {
					return nil, fmt.Errorf("%w: %v", format.ErrInput, err)
				}
			}
			pending = append(pending, p)
			if lam == 0 {
				err = fw.WriteState(st.Action, p.codes) // the quantizer's own codes: the lossless file
			} else {
				err = fw.WriteStateRD(st.Action, p.codes, Costs{q, p.ref}, lam)
			}
			if err != nil {
				return nil, err
			}
			states++
		}
	}
	if err := fw.Close(); err != nil {
		return nil, err
	}
	return &Pass{Lam: lam, File: buf.Bytes(), Account: fw.Account(), Dist: all.Distortion(),
		States: states, Floor: floor.Distortion(), FloorQ: floor, Vectors: all.Vectors}, nil
}

// searchLambda finds, for member mem, the λ whose file lands in
// [0.9·target, target], starting from the pass p0 at λ = ∞ (the member's
// own codes); it returns the smallest file within target it coded.
func Search(q *opq.Quantizer, m *wm.Model, cv ratecurve.Curve, eps [][]State, target float64, p0 *Pass, opts []format.Option, pass func()) (*Pass, int, error) {
	best := p0
	if debug {
		fmt.Fprintf(os.Stderr, "rd: %dx%d lam 0: D %.5f, %.1f bits/state\n", m.Geom.S, m.Geom.M, p0.Dist, float64(len(p0.File))*8/float64(p0.States))
	}
	if p0.Dist >= stopAt*target {
		return best, 0, nil
	}
	// x is log2 of the coder's λ (distortion units a bit): larger loses more.
	var lo, hi, loD, hiD float64
	haveLo, haveHi := false, false
	x := math.Log2(float64(cv.LamAt(target)))
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 1 {
		x = 13
	}
	n := 0
	for n < 12 {
		p, err := Encode(q, m, eps, uint64(math.Round(math.Exp2(x))), opts)
		if err != nil {
			return nil, n, err
		}
		n++
		pass()
		if debug {
			fmt.Fprintf(os.Stderr, "rd: %dx%d lam %d: D %.5f, %.1f bits/state\n", m.Geom.S, m.Geom.M, p.Lam, p.Dist, float64(len(p.File))*8/float64(p.States))
		}
		if p.Dist <= target {
			if len(p.File) < len(best.File) {
				best = p
			}
			if p.Dist >= stopAt*target {
				return best, n, nil
			}
			lo, loD, haveLo = x, p.Dist, true
		} else {
			hi, hiD, haveHi = x, p.Dist, true
		}
		switch {
		case haveLo && haveHi:
			if hi-lo < 1.0/256 {
				return best, n, nil
			}
			// Interpolate log D in x toward 0.95·target, kept inside.
			f := 0.5
			if loD > 0 && hiD > loD {
				f = (math.Log(aim*target) - math.Log(loD)) / (math.Log(hiD) - math.Log(loD))
			}
			x = lo + (hi-lo)*math.Min(math.Max(f, 0.1), 0.9)
		case haveLo:
			x++
		default:
			x--
			if x < 0 {
				return best, n, nil
			}
		}
	}
	return best, n, nil
}

var debug = os.Getenv("WMZIP_RD_DEBUG") != ""

// The search stops at a file within [stopAt·target, target], aiming at
// aim·target: the closer to the target, the fewer bits.
const (
	stopAt = 0.98
	aim    = 0.99
)

// Measure returns the container's measure of what coding by rate and
// distortion adds to a slot of model m over quantizer q's own codes: the
// sum over the slot's slot vectors of their distortion (SPEC.md 3.6).
func Measure(q *opq.Quantizer, m *wm.Model) format.Measure {
	return measure{q, max(m.Geom.M/q.M(), 1)}
}

type measure struct {
	q   *opq.Quantizer
	per int // slot vectors a slot
}

func (m measure) Slot(_, _, s int, truth, recon []uint16) float64 {
	k := m.q.M()
	var d float64
	for i := range m.per {
		d += m.q.SlotDistortion(s*m.per+i, truth[i*k:(i+1)*k], recon[i*k:(i+1)*k])
	}
	return d
}

func (m measure) SlotVectors() int { return m.per }

// Lambda returns the coder's λ, distortion units (format.DistUnit, a slot
// vector's squared norm) per bit, of λ in bits per unit of a slot
// vector's relative distortion (+Inf: 0, every value its quantized one).
func Lambda(lambda float64) uint64 {
	switch {
	case math.IsInf(lambda, 1):
		return 0
	case lambda <= 0:
		return math.MaxUint64 >> 16
	}
	return uint64(math.Min(math.Round(format.DistUnit/lambda), math.MaxUint64>>16))
}
