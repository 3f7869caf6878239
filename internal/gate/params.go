package gate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/wmzip/wmzip/internal/wm"
)

// Tag is the model-file section that holds a gate's Params.
const Tag = "GATE"

// Version is the newest version of the GATE section layout. Version 2 adds
// the bin axis (byte 18, reserved in version 1); a section whose axis is
// AxisEntropy is written as version 1, so its bytes are those of a version-1
// writer.
const Version = 2

// Axis selects the quantity the error-rate bins of a GATE section are taken
// on (SPEC.md, "Retention gate", step 4).
type Axis uint8

const (
	// AxisEntropy bins ê on the table's entropy H (version 1; MemoWM's
	// binning).
	AxisEntropy Axis = 0
	// AxisModal bins ê on lg(2^P − F): the logarithm of the probability the
	// table itself gives to its modal value being wrong (version 2).
	AxisModal Axis = 1
)

// NoEstimate marks a bin with too few calibration samples: the
// coordinate's own marginal rate is used instead.
const NoEstimate = 0xFFFFFFFF

// MaxErr is the largest calibrated ê (Q16): 2^24, that is 256.
const MaxErr = 1 << 24

// UnitDistance is the distance-table value of a wrong code under uniform
// distances (a model without codebooks): every error costs the same.
const UnitDistance = 0xFFFF

// WeightOne is the fixed-point weight 1.0 (weights are Q8).
const WeightOne = 256

// Limits of a GATE section.
const (
	MaxBins       = 4096
	maxTableCells = 1 << 26
)

// ErrSection is wrapped by every error about a malformed GATE section.
var ErrSection = errors.New("gate: malformed GATE section")

// Params are the gate's integer parameters, stored in the model file.
type Params struct {
	Geom      wm.Geometry
	Precision uint // rANS precision of the model's tables

	// Axis, BinShift and BinErr give ê: a table's key (its entropy H under
	// AxisEntropy, lg(2^P − F) under AxisModal, both in 1/256 bit) falls in
	// bin min(key >> BinShift, len(BinErr)−1); BinErr holds the pooled,
	// damage-weighted error rate of the bin (see Calibrate), Q16, at most
	// MaxErr, or NoEstimate.
	Axis     Axis
	BinShift uint
	BinErr   []uint32
	// CoordErr is each coordinate's marginal rate, Q16, at most MaxErr:
	// the fallback of bins marked NoEstimate.
	CoordErr []uint32
	// Weights are optional per-coordinate impact weights, Q8 (nil: all
	// WeightOne).
	Weights []uint16
	// Dist are optional codebook distance tables: Dist[t][a·K+b] is the
	// squared distance between centroids a and b of table t, scaled so the
	// largest of all is at most UnitDistance. There is one table per
	// subspace (len M, coordinate j uses j mod M) or per coordinate (len N).
	// Nil: uniform distances.
	Dist [][]uint16
	// SearchFill (flag bit 2) is the fill for memories that are searched by
	// nearest neighbours (SPEC.md 5.2): step 3 does not apply, every
	// prediction is gated by ê·V, and an omitted coordinate of a one-step
	// prediction takes its spread fill (SpreadFill), a likely value as far
	// from the other codes as the prediction's values are on average. The
	// default fills (the row fill of a weak prediction, the modal value of
	// a confident one) lean toward the codebook's centre; states whose new
	// content was omitted then crowd around it, near every query, and a
	// search returns them before the states it should
	// (docs/results-retrieval.md). Container version 3 ignores the flag.
	SearchFill bool

	// Informative fields, not used by the rule: the mean squared norm of a
	// slot vector in distance units (to turn summed distances into relative
	// distortion), the mean V_j over the calibration episodes (Q16, for the
	// Uniform-V baseline), and the calibration's sample count.
	SlotNorm uint64
	MeanV    uint32
	Samples  uint64

	// mean[t][a] is the mean distance of code a from the K−1 others in
	// table t, and tab[j] the table of coordinate j, found without
	// dividing (Prepare).
	mean [][]uint32
	tab  []uint16
	memo *memo // what the rule's deciders share (Prepare)
}

// Prepare derives what the rule precomputes from the distance tables. Parse
// and Calibrate call it; a Params built by hand must call it once before
// its rule is used (the rule then stays safe for concurrent use).
func (p *Params) Prepare() {
	p.mean, p.tab, p.memo = nil, nil, &memo{}
	if p.Dist == nil {
		return
	}
	K := p.Geom.K
	p.mean = make([][]uint32, len(p.Dist))
	for t, d := range p.Dist {
		p.mean[t] = make([]uint32, K)
		for a := range K {
			p.mean[t][a] = meanRow(d[a*K : (a+1)*K])
		}
	}
	// Tables number fewer than 2^16 (one per coordinate at most).
	p.tab = make([]uint16, p.Geom.N())
	for j := range p.tab {
		p.tab[j] = uint16(p.tableOf(j))
	}
}

// tableOf returns the distance table of coordinate j: its own, or its
// subspace's.
func (p *Params) tableOf(j int) int {
	if len(p.Dist) == p.Geom.N() {
		return j
	}
	return j % p.Geom.M
}

// meanRow is ⌊Σ_b row[b] / (K−1)⌋ (row[a] = 0 for the row of code a).
func meanRow(row []uint16) uint32 {
	var s uint64
	for _, x := range row {
		s += uint64(x)
	}
	return uint32(s / uint64(max(len(row)-1, 1)))
}

// meanDist returns the mean distance of code a from the others at
// coordinate j.
func (p *Params) meanDist(j int, a uint16) uint32 {
	if p.mean != nil {
		return p.mean[p.tab[j]][a]
	}
	K := p.Geom.K
	return meanRow(p.Dist[p.tableOf(j)][int(a)*K : (int(a)+1)*K])
}

// Distance returns the distance between codes a and b at coordinate j.
func (p *Params) Distance(j int, a, b uint16) uint32 {
	if a == b {
		return 0
	}
	if p.Dist == nil {
		return UnitDistance
	}
	return uint32(p.table(j)[int(a)*p.Geom.K+int(b)])
}

func (p *Params) table(j int) []uint16 { return p.Dist[p.tableOf(j)] }

// RelDistortion turns a sum of distances over the coordinates of the given
// number of states into distortion relative to the mean squared norm of a
// slot vector (SPEC.md 6.7); with uniform distances it is the fraction of
// wrong codes.
func (p *Params) RelDistortion(distSum uint64, states int64) float64 {
	den := float64(states) * float64(p.Geom.S) * float64(p.SlotNorm)
	if den == 0 {
		return 0
	}
	return float64(distSum) / den
}

const (
	flagDist       = 1 << 0
	flagWeights    = 1 << 1
	flagSearchFill = 1 << 2
	flagsKnown     = flagDist | flagWeights | flagSearchFill
	headerLen      = 4 + 4*3 + 4 + 4 + 8 + 4 + 8
)

// MarshalBinary returns the GATE section bytes (SPEC.md, "Retention gate").
func (p *Params) MarshalBinary() ([]byte, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	var flags uint16
	if p.Dist != nil {
		flags |= flagDist
	}
	if p.Weights != nil {
		flags |= flagWeights
	}
	if p.SearchFill {
		flags |= flagSearchFill
	}
	version := uint16(1)
	if p.Axis != AxisEntropy {
		version = 2
	}
	b := make([]byte, 0, headerLen)
	b = le.AppendUint16(b, version)
	b = le.AppendUint16(b, flags)
	b = le.AppendUint32(b, uint32(p.Geom.N()))
	b = le.AppendUint32(b, uint32(p.Geom.M))
	b = le.AppendUint32(b, uint32(p.Geom.K))
	b = append(b, byte(p.BinShift), byte(p.Precision), byte(p.Axis), 0)
	b = le.AppendUint32(b, uint32(len(p.BinErr)))
	b = le.AppendUint64(b, p.SlotNorm)
	b = le.AppendUint32(b, p.MeanV)
	b = le.AppendUint64(b, p.Samples)
	for _, v := range p.BinErr {
		b = le.AppendUint32(b, v)
	}
	for _, v := range p.CoordErr {
		b = le.AppendUint32(b, v)
	}
	for _, v := range p.Weights {
		b = le.AppendUint16(b, v)
	}
	if p.Dist != nil {
		b = le.AppendUint32(b, uint32(len(p.Dist)))
		for _, t := range p.Dist {
			for _, v := range t {
				b = le.AppendUint16(b, v)
			}
		}
	}
	return b, nil
}

func (p *Params) validate() error {
	g, n := p.Geom, p.Geom.N()
	switch {
	case g.Validate() != nil:
		return fmt.Errorf("%w: geometry: %v", ErrSection, g.Validate())
	case p.Precision < 10 || p.Precision > 16:
		return fmt.Errorf("%w: precision %d", ErrSection, p.Precision)
	case p.BinShift > 16:
		return fmt.Errorf("%w: bin shift %d", ErrSection, p.BinShift)
	case p.Axis != AxisEntropy && p.Axis != AxisModal:
		return fmt.Errorf("%w: bin axis %d", ErrSection, p.Axis)
	case len(p.BinErr) < 1 || len(p.BinErr) > MaxBins:
		return fmt.Errorf("%w: %d error-rate bins", ErrSection, len(p.BinErr))
	case len(p.CoordErr) != n:
		return fmt.Errorf("%w: %d coordinate error rates for %d coordinates", ErrSection, len(p.CoordErr), n)
	case p.Weights != nil && len(p.Weights) != n:
		return fmt.Errorf("%w: %d weights for %d coordinates", ErrSection, len(p.Weights), n)
	case p.Dist != nil && len(p.Dist) != g.M && len(p.Dist) != n:
		return fmt.Errorf("%w: %d distance tables (want %d or %d)", ErrSection, len(p.Dist), g.M, n)
	}
	for _, v := range p.CoordErr {
		if v > MaxErr {
			return fmt.Errorf("%w: coordinate error rate %#x", ErrSection, v)
		}
	}
	for _, v := range p.BinErr {
		if v > MaxErr && v != NoEstimate {
			return fmt.Errorf("%w: bin error rate %#x", ErrSection, v)
		}
	}
	if p.Dist != nil {
		if hi, lo := bits.Mul64(uint64(len(p.Dist)), uint64(g.K)*uint64(g.K)); hi != 0 || lo > maxTableCells {
			return fmt.Errorf("%w: distance tables too large", ErrSection)
		}
		for _, t := range p.Dist {
			if len(t) != g.K*g.K {
				return fmt.Errorf("%w: distance table of %d entries (want %d)", ErrSection, len(t), g.K*g.K)
			}
			for a := 0; a < g.K; a++ {
				if t[a*g.K+a] != 0 {
					return fmt.Errorf("%w: non-zero distance of a code to itself", ErrSection)
				}
			}
		}
	}
	return nil
}

// Parse decodes a GATE section for a model of geometry g and precision
// prec, checking every count against the bytes present before allocating.
func Parse(b []byte, g wm.Geometry, prec uint) (*Params, error) {
	le := binary.LittleEndian
	if len(b) < headerLen {
		return nil, fmt.Errorf("%w: %d bytes", ErrSection, len(b))
	}
	version := le.Uint16(b)
	if version != 1 && version != 2 {
		return nil, fmt.Errorf("%w: version %d", ErrSection, version)
	}
	flags := le.Uint16(b[2:])
	if flags&^flagsKnown != 0 {
		return nil, fmt.Errorf("%w: reserved flag bits %#x set", ErrSection, flags&^flagsKnown)
	}
	if b[19] != 0 {
		return nil, fmt.Errorf("%w: reserved byte 19 not zero", ErrSection)
	}
	// Version 2 exists for the axis: an entropy axis is written as version 1.
	if version == 1 && b[18] != 0 || version == 2 && Axis(b[18]) != AxisModal {
		return nil, fmt.Errorf("%w: version %d with bin axis %d", ErrSection, version, b[18])
	}
	n, m, k := le.Uint32(b[4:]), le.Uint32(b[8:]), le.Uint32(b[12:])
	if uint64(n) != uint64(g.N()) || uint64(m) != uint64(g.M) || uint64(k) != uint64(g.K) {
		return nil, fmt.Errorf("%w: geometry N=%d M=%d K=%d differs from the model's", ErrSection, n, m, k)
	}
	if uint(b[17]) != prec {
		return nil, fmt.Errorf("%w: precision %d differs from the model's %d", ErrSection, b[17], prec)
	}
	p := &Params{Geom: g, Precision: prec, BinShift: uint(b[16]), Axis: Axis(b[18]), SearchFill: flags&flagSearchFill != 0}
	nb := uint64(le.Uint32(b[20:]))
	p.SlotNorm = le.Uint64(b[24:])
	p.MeanV = le.Uint32(b[32:])
	p.Samples = le.Uint64(b[36:])
	rest := b[headerLen:]
	need := 4*nb + 4*uint64(n)
	if flags&flagWeights != 0 {
		need += 2 * uint64(n)
	}
	if nb < 1 || nb > MaxBins {
		return nil, fmt.Errorf("%w: %d error-rate bins, not 1..%d", ErrSection, nb, MaxBins)
	}
	if uint64(len(rest)) < need {
		return nil, fmt.Errorf("%w: truncated: the section ends inside %s", ErrSection, cutField(uint64(len(rest)), nb, uint64(n)))
	}
	u16s := func(c uint64) []uint16 {
		out := make([]uint16, c)
		for i := range out {
			out[i] = le.Uint16(rest[2*i:])
		}
		rest = rest[2*c:]
		return out
	}
	u32s := func(c uint64) []uint32 {
		out := make([]uint32, c)
		for i := range out {
			out[i] = le.Uint32(rest[4*i:])
		}
		rest = rest[4*c:]
		return out
	}
	p.BinErr = u32s(nb)
	p.CoordErr = u32s(uint64(n))
	if flags&flagWeights != 0 {
		p.Weights = u16s(uint64(n))
	}
	if flags&flagDist != 0 {
		if len(rest) < 4 {
			return nil, fmt.Errorf("%w: truncated: the section ends before Tables", ErrSection)
		}
		nt := uint64(le.Uint32(rest))
		rest = rest[4:]
		cells := uint64(k) * uint64(k)
		if (nt != uint64(m) && nt != uint64(n)) || nt*cells > maxTableCells {
			return nil, fmt.Errorf("%w: Tables %d, not M or N, or Tables·K² above 2^26", ErrSection, nt)
		}
		if uint64(len(rest)) < 2*nt*cells {
			return nil, fmt.Errorf("%w: truncated: the section ends inside Dist", ErrSection)
		}
		if uint64(len(rest)) > 2*nt*cells {
			return nil, fmt.Errorf("%w: %d bytes after Dist", ErrSection, uint64(len(rest))-2*nt*cells)
		}
		p.Dist = make([][]uint16, nt)
		for i := range p.Dist {
			p.Dist[i] = u16s(cells)
		}
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last field", ErrSection, len(rest))
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	p.Prepare()
	return p, nil
}

// cutField names the field of a section that ends after rest bytes of
// its arrays (nb bins, n coordinates): BinErr, CoordErr or Weights.
func cutField(rest, nb, n uint64) string {
	switch {
	case rest < 4*nb:
		return "BinErr"
	case rest < 4*nb+4*n:
		return "CoordErr"
	}
	return "Weights"
}

// FromModel returns the Params stored in model m's GATE section, or an error
// wrapping ErrSection if it has none or it is malformed.
func FromModel(m *wm.Model) (*Params, error) {
	b := m.Section(Tag)
	if b == nil {
		return nil, fmt.Errorf("%w: the model has no GATE section (train it with held-out calibration)", ErrSection)
	}
	return Parse(b, m.Geom, m.Precision)
}
