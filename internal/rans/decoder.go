package rans

import "fmt"

// Decoder reads one stream at a time. Errors are sticky: after the first,
// Decode returns 0 and Err and Close report it. A Decoder is not safe for
// concurrent use.
type Decoder struct {
	x     [MaxLanes]uint32
	lanes int
	prec  uint
	src   []byte // the renormalization bytes
	pos   int    // next byte in src
	err   error
}

// NewDecoder returns a decoder with the given number of lanes and precision;
// both must match the encoder's.
func NewDecoder(lanes int, precision uint) (*Decoder, error) {
	if lanes < 1 || lanes > MaxLanes {
		return nil, fmt.Errorf("%w: %d lanes outside [1, %d]", ErrParam, lanes, MaxLanes)
	}
	if err := checkPrecision(precision); err != nil {
		return nil, err
	}
	return &Decoder{lanes: lanes, prec: precision, err: fmt.Errorf("%w: no stream", ErrParam)}, nil
}

// Lanes returns the number of lanes.
func (d *Decoder) Lanes() int { return d.lanes }

// Precision returns P.
func (d *Decoder) Precision() uint { return d.prec }

// Reset starts decoding stream, which must be exactly the bytes Finish
// appended. It checks the framing: room for the lane states, each in
// [2^24, 2^32). The decoder keeps stream and
// does not modify it.
func (d *Decoder) Reset(stream []byte) error {
	d.err = nil
	d.pos = 0
	head := 4 * d.lanes
	switch {
	case len(stream) < head:
		d.err = fmt.Errorf("%w: %d bytes, need %d for %d lane states", ErrCorrupt, len(stream), head, d.lanes)
	}
	if d.err != nil {
		d.src = nil
		return d.err
	}
	for l := 0; l < d.lanes; l++ {
		b := stream[4*l : 4*l+4]
		v := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		if v < stateLow {
			d.err = fmt.Errorf("%w: lane %d state %#x below 2^24", ErrCorrupt, l, v)
			d.src = nil
			return d.err
		}
		d.x[l] = v
	}
	d.src = stream[head:]
	return nil
}

// Err returns the first error met since Reset, or nil.
func (d *Decoder) Err() error { return d.err }

// Close performs the end-of-stream checks: no earlier error, every word
// consumed and every lane back at its initial state 2^24. It does not
// release anything; the decoder stays usable after Reset.
func (d *Decoder) Close() error {
	if d.err != nil {
		return d.err
	}
	if left := len(d.src) - d.pos; left != 0 {
		d.err = fmt.Errorf("%w: %d bytes left at end of stream", ErrCorrupt, left)
		return d.err
	}
	for l := 0; l < d.lanes; l++ {
		if d.x[l] != stateLow {
			d.err = fmt.Errorf("%w: lane %d ends in state %#x, not 0x1000000", ErrCorrupt, l, d.x[l])
			return d.err
		}
	}
	return nil
}

// Decode returns the next symbol of a lane, decoded with table cum, which is
// trusted (see the package documentation). On error it returns 0 and the
// error is kept for Err and Close.
func (d *Decoder) Decode(lane int, cum []uint16) int {
	if d.err != nil {
		return 0
	}
	if uint(lane) >= uint(d.lanes) || len(cum) == 0 {
		d.fail(lane, len(cum))
		return 0
	}
	if useAsm && len(cum) == 64 {
		if s, pos := step64(&d.x[lane&(MaxLanes-1)], cum, d.src, d.pos, d.prec); pos >= 0 {
			d.pos = pos
			return s
		}
	}
	x := d.x[lane]
	slot := x & (1<<d.prec - 1)
	s := search(cum, slot)
	start := uint32(cum[s])
	end := uint32(1) << d.prec
	if s+1 < len(cum) {
		end = uint32(cum[s+1])
	}
	d.advance(lane, (end-start)*(x>>d.prec)+slot-start)
	if d.err != nil {
		return 0
	}
	return s
}

// advance renormalizes a lane's new state x and stores it.
func (d *Decoder) advance(lane int, x uint32) {
	for x < stateLow { // at most twice: x >= 2^(24-P) >= 2^8 here
		if d.pos >= len(d.src) {
			d.err = fmt.Errorf("%w: lane %d needs a byte past the end of the stream", ErrCorrupt, lane)
			return
		}
		x = x<<8 | uint32(d.src[d.pos])
		d.pos++
	}
	d.x[lane] = x
}

// DecodeBinary returns the next symbol of a lane from the two-symbol table
// whose symbol 0 has frequency f0 (1 <= f0 < 2^P, trusted): it is Decode
// with the table {0, f0}, without the search.
func (d *Decoder) DecodeBinary(lane int, f0 uint32) int {
	if d.err != nil {
		return 0
	}
	if uint(lane) >= uint(d.lanes) {
		d.fail(lane, 2)
		return 0
	}
	x := d.x[lane]
	slot := x & (1<<d.prec - 1)
	s, start, freq := 0, uint32(0), f0
	if slot >= f0 {
		s, start, freq = 1, f0, 1<<d.prec-f0
	}
	d.advance(lane, freq*(x>>d.prec)+slot-start)
	if d.err != nil {
		return 0
	}
	return s
}

func (d *Decoder) fail(lane, k int) {
	if k == 0 {
		d.err = fmt.Errorf("%w: empty table", ErrTable)
	} else {
		d.err = fmt.Errorf("%w: lane %d outside [0, %d)", ErrParam, lane, d.lanes)
	}
}

// searchGo returns the largest s with cum[s] <= slot, or 0 if there is
// none; it is a branch-free binary search and never leaves [0, len(cum)).
func searchGo(cum []uint16, slot uint32) int {
	lo, n := 0, len(cum)
	for n > 1 {
		half := n >> 1
		if uint32(cum[lo+half]) <= slot {
			lo += half
		}
		n -= half
	}
	return lo
}
