package wmzip

import (
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/wm"
)

// Distortion against the source. A Writer given float observations keeps
// each state's rotated slot vectors (as its quantizer sees them) until the
// container places the state's reconstruction, and measures one against
// the other: that is the end-to-end distortion (quantizer and retention)
// the file's report records. Rotation is orthogonal, so the comparison in
// the rotated space is the comparison of the vectors themselves.

// source is a Writer's states awaiting their reconstruction, in file order.
type source struct {
	q     *opq.Quantizer
	n     int         // codes per state
	rot   [][]float32 // per state: its rotated slot vectors, nil for codes written as such
	codes [][]uint16  // per state: its codes (the lossless reconstruction)
	head  int         // the next state to place
	all   opq.Quality // the states placed against their reconstruction
	quant opq.Quality // the same states against their lossless reconstruction
}

func newSource(q *opq.Quantizer, g wm.Geometry) *source {
	return &source{q: q, n: g.N()}
}

// reset forgets every state, for a new file.
func (s *source) reset() {
	*s = source{q: s.q, n: s.n}
}

// push records the next state written: its codes and, if it was written
// as float observations, their rotation (both kept as given).
func (s *source) push(rot []float32, codes []uint16) {
	s.rot = append(s.rot, rot)
	s.codes = append(s.codes, codes)
}

// unpush forgets the state pushed last.
func (s *source) unpush() {
	if k := len(s.rot) - 1; k >= s.head {
		s.rot, s.codes = s.rot[:k], s.codes[:k]
	}
}

// place measures the states whose reconstruction recon (whole states) the
// container placed, and returns what they add to the file's report.
func (s *source) place(recon []uint16) format.Report {
	var add opq.Quality
	for i := 0; i+s.n <= len(recon) && s.head < len(s.rot); i += s.n {
		// (States written through Format() bypass the list: it may end
		// before the states placed.)
		k := s.head
		s.head++
		if rot := s.rot[k]; rot != nil {
			a, _ := s.q.CompareRotated(rot, recon[i:i+s.n])
			b, _ := s.q.CompareRotated(rot, s.codes[k])
			add = add.Add(a)
			s.quant = s.quant.Add(b)
		}
		s.rot[k], s.codes[k] = nil, nil
	}
	s.all = s.all.Add(add)
	if s.head == len(s.rot) { // every state placed: start the lists anew
		s.rot, s.codes, s.head = s.rot[:0], s.codes[:0], 0
	}
	return format.Report{SourceSlots: uint64(add.Vectors), Source: add.SumErr, Cosine: add.SumCos}
}

// state returns the rotation of the state k written (0 the first), nil
// when it was written as codes.
func (s *source) state(k int) []float32 { return s.rot[k] }

// retention measures the distortion retention adds to a slot vector, in
// the quantizer's space: the squared distance between the two
// reconstructions over the squared norm of the lossless one.
type retention struct{ q *opq.Quantizer }

func (m retention) Slot(_, _, s int, truth, recon []uint16) float64 {
	return m.q.SlotDistortion(s, truth, recon)
}

// sourceMeasure measures what retention adds to the relative squared
// error of a slot vector against the observation it was quantized from:
// the measure of a distortion target against the source. first[e] is the
// number of states written before episode e.
type sourceMeasure struct {
	src   *source
	first []int
	dim   int
}

func (m sourceMeasure) Slot(e, t, s int, truth, recon []uint16) float64 {
	rot := m.src.state(m.first[e] + t)
	if rot == nil {
		return 0
	}
	y := rot[s*m.dim : (s+1)*m.dim]
	return m.src.q.SlotError(s, y, recon) - m.src.q.SlotError(s, y, truth)
}

// quantizerFloor returns the mean relative squared error of the states
// written as observations against their lossless reconstruction: the
// least distortion against the source any file of them can have.
func (s *source) quantizerFloor() (float64, int64) {
	var q opq.Quality
	for k := s.head; k < len(s.rot); k++ {
		if rot := s.rot[k]; rot != nil {
			a, _ := s.q.CompareRotated(rot, s.codes[k])
			q = q.Add(a)
		}
	}
	return q.Distortion(), q.Vectors
}
