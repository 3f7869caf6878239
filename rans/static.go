package rans

import "fmt"

// MaxStaticSymbols is the largest alphabet a StaticTable holds.
const MaxStaticSymbols = 256

// StaticTable is a decoding table for one distribution that many symbols
// share: besides the cumulative table it maps every slot in [0, 2^P) to its
// symbol, so DecodeStatic needs no search. Building it fills 2^P bytes
// (64 KiB at P = 16; docs/results-rans.md has the cost and the break-even).
// A StaticTable is immutable and safe for concurrent use.
type StaticTable struct {
	prec  uint
	cum   []uint16
	freq  [MaxStaticSymbols]uint32 // freq[s], then start[s]: the assembly
	start [MaxStaticSymbols]uint32 // reads start at freq + 4*256 bytes
	sym   [1 << MaxPrecision]uint8 // symbol of each slot; entries >= 2^P unused
}

// NewStaticTable checks cum with CheckTable and builds its decoding table.
// The alphabet must have at most MaxStaticSymbols symbols.
func NewStaticTable(cum []uint16, precision uint) (*StaticTable, error) {
	if err := CheckTable(cum, precision); err != nil {
		return nil, err
	}
	if len(cum) > MaxStaticSymbols {
		return nil, fmt.Errorf("%w: %d symbols, a static table holds at most %d", ErrTable, len(cum), MaxStaticSymbols)
	}
	t := &StaticTable{prec: precision, cum: append([]uint16(nil), cum...)}
	for s := range cum {
		start, freq := Symbol(cum, s, precision)
		t.freq[s], t.start[s] = freq, start
		run := t.sym[start : start+freq]
		run[0] = uint8(s)
		for n := 1; n < len(run); n *= 2 { // fill by doubling copies
			copy(run[n:], run[:n])
		}
	}
	return t, nil
}

// Precision returns P.
func (t *StaticTable) Precision() uint { return t.prec }

// Cum returns the cumulative table; the caller must not modify it.
func (t *StaticTable) Cum() []uint16 { return t.cum }

// DecodeStatic decodes len(dst) symbols, all with table t; symbol i is on
// lane (lane+i) mod Lanes(). It decodes exactly what DecodeN(lane, dst,
// t.Cum(), len(t.Cum())) does, faster. The table's precision must be the
// decoder's. It returns Err().
func (d *Decoder) DecodeStatic(lane int, dst []uint16, t *StaticTable) error {
	if d.err != nil {
		return d.err
	}
	if uint(lane) >= uint(d.lanes) || t == nil || t.prec != d.prec {
		d.err = fmt.Errorf("%w: DecodeStatic from lane %d of %d with a table of another precision or none", ErrParam, lane, d.lanes)
		return d.err
	}
	decodeStatic(d, lane, dst, t)
	return d.err
}

// decodeStaticGo is the reference for decodeStatic.
func decodeStaticGo(d *Decoder, lane int, dst []uint16, t *StaticTable) {
	prec := d.prec & 31
	mask := uint32(1)<<prec - 1
	src, pos := d.src, d.pos
	x := &d.x
	for i := range dst {
		v := x[lane&(MaxLanes-1)]
		slot := v & mask
		s := t.sym[uint16(slot)]
		v = t.freq[s]*(v>>prec) + slot - t.start[s]
		// Renormalize: nb = (v < 2^24) + (v < 2^16) bytes, at most two
		// since v >= 2^8 here; branch-free away from the end of src.
		nb := 0
		if v < stateLow {
			nb = 1
		}
		if v < 1<<16 {
			nb = 2
		}
		if pos+2 <= len(src) {
			w := uint32(src[pos])<<8 | uint32(src[pos+1])
			v = v<<(8*nb) | w>>(16-8*nb)
			pos += nb
		} else {
			if len(src)-pos < nb {
				// Repeat the step in Decode, which records the error.
				d.pos = pos
				d.Decode(lane, t.cum)
				return
			}
			for ; nb > 0; nb-- {
				v = v<<8 | uint32(src[pos])
				pos++
			}
		}
		x[lane&(MaxLanes-1)] = v
		dst[i] = uint16(s)
		if lane++; lane == d.lanes {
			lane = 0
		}
	}
	d.pos = pos
}
