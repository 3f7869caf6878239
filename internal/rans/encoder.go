package rans

import "fmt"

// Encoder buffers symbols for one stream and codes them in Finish. Reset
// starts the next stream and keeps the buffers, so a steady state of streams
// of similar length allocates nothing. An Encoder is not safe for concurrent
// use.
type Encoder struct {
	lanes int
	prec  uint
	err   error
	syms  []uint32 // start | (freq-1)<<16, in Put order
	lane  []uint8  // lane of each symbol
	words []byte   // scratch for Finish, bytes in emission (reverse) order
}

// NewEncoder returns an encoder with the given number of lanes
// (1..MaxLanes) and precision (MinPrecision..MaxPrecision).
func NewEncoder(lanes int, precision uint) (*Encoder, error) {
	if lanes < 1 || lanes > MaxLanes {
		return nil, fmt.Errorf("%w: %d lanes outside [1, %d]", ErrParam, lanes, MaxLanes)
	}
	if err := checkPrecision(precision); err != nil {
		return nil, err
	}
	return &Encoder{lanes: lanes, prec: precision}, nil
}

// Lanes returns the number of lanes.
func (e *Encoder) Lanes() int { return e.lanes }

// Precision returns P.
func (e *Encoder) Precision() uint { return e.prec }

// Reset discards the buffered symbols and any error and starts a new stream.
func (e *Encoder) Reset() {
	e.err = nil
	e.syms = e.syms[:0]
	e.lane = e.lane[:0]
}

// Len returns the number of symbols buffered since the last Reset.
func (e *Encoder) Len() int { return len(e.syms) }

// Put buffers one symbol with the given start and frequency on a lane. It
// requires 0 <= lane < Lanes(), freq >= 1 and start+freq <= 2^P; otherwise
// the encoder records an error that Finish returns.
func (e *Encoder) Put(lane int, start, freq uint32) {
	m := uint32(1) << e.prec
	if uint(lane) >= uint(e.lanes) || start >= m || freq-1 >= m-start {
		e.fail(lane, start, freq)
		return
	}
	e.syms = append(e.syms, start|(freq-1)<<16)
	e.lane = append(e.lane, uint8(lane))
}

func (e *Encoder) fail(lane int, start, freq uint32) {
	if e.err == nil {
		e.err = fmt.Errorf("%w: symbol %d: lane %d, start %d, freq %d at precision %d", ErrParam, len(e.syms), lane, start, freq, e.prec)
	}
}

// Finish codes the buffered symbols and appends the complete stream to dst:
// Lanes() final states of 4 bytes, then the renormalization bytes in the
// order the decoder reads them. The buffered symbols stay until Reset.
func (e *Encoder) Finish(dst []byte) ([]byte, error) {
	if e.err != nil {
		return dst, e.err
	}
	n := len(e.syms)
	if cap(e.words) < 2*n {
		e.words = make([]byte, 2*n)
	}
	var x [MaxLanes]uint32
	for l := range x {
		x[l] = stateLow
	}
	nw := encode(&x, e.syms, e.lane, e.words[:2*n], e.prec)

	off := len(dst)
	size := 4*e.lanes + nw
	if cap(dst)-off < size {
		grown := make([]byte, off, off+size)
		copy(grown, dst)
		dst = grown
	}
	dst = dst[:off+size]
	out := dst[off:]
	for l := 0; l < e.lanes; l++ {
		v := x[l]
		out[4*l], out[4*l+1], out[4*l+2], out[4*l+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	out = out[4*e.lanes:]
	for i, b := range e.words[:nw] {
		out[nw-1-i] = b
	}
	return dst, nil
}

// encodeGo codes syms back to front into the lane states x, writing the
// renormalization bytes to out in emission order; it returns their count.
// Each symbol emits at most two bytes, so len(out) >= 2*len(syms) suffices.
func encodeGo(x *[MaxLanes]uint32, syms []uint32, lanes []uint8, out []byte, prec uint) int {
	nw := 0
	out = out[:2*len(syms)]
	lanes = lanes[:len(syms)]
	for i := len(syms) - 1; i >= 0; i-- {
		sf := syms[i]
		l := lanes[i] & (MaxLanes - 1)
		start, freq := sf&0xffff, sf>>16+1
		s := x[l]
		for s>>(32-prec) >= freq { // at most twice
			out[nw] = byte(s)
			nw++
			s >>= 8
		}
		x[l] = (s/freq)<<prec + s%freq + start
	}
	return nw
}
