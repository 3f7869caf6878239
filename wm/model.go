package wm

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// ModelIDSize is the size in bytes of a model's content ID.
const ModelIDSize = 16

// ModelID identifies a model by content: the first 16 bytes of the SHA-256
// of its canonical serialization.
type ModelID [ModelIDSize]byte

func (id ModelID) String() string { return fmt.Sprintf("%x", id[:]) }

// ErrModelFormat reports a model file that is not valid.
var ErrModelFormat = errors.New("wm: invalid model file")

// Model holds the shared, integer parameters of the world model.
// A Model is immutable once built and safe for concurrent use; each stream
// gets its own Predictor.
type Model struct {
	Geom      Geometry
	Precision uint // rANS probability precision in bits (10..16)

	// PLACEHOLDER parameters (to be replaced by the real model): order-0
	// counts per coordinate, flattened [N][K].
	counts []uint32
	raw    []byte // canonical serialization
	id     ModelID
}

// ID returns the model's content ID.
func (m *Model) ID() ModelID { return m.id }

// MarshalBinary returns the model's canonical serialization (.wmm bytes).
func (m *Model) MarshalBinary() ([]byte, error) { return append([]byte(nil), m.raw...), nil }

// UnmarshalModel parses and validates a .wmm file.
func UnmarshalModel(b []byte) (*Model, error) {
	if len(b) < 16 || string(b[:4]) != "WMM\x00" {
		return nil, ErrModelFormat
	}
	g := Geometry{int(binary.LittleEndian.Uint16(b[4:])) + 1, int(binary.LittleEndian.Uint16(b[6:])) + 1, int(binary.LittleEndian.Uint32(b[8:]))}
	p := uint(b[12])
	if g.K < 2 || g.K > MaxAlphabet || g.N() > MaxCoords || p < 10 || p > 16 || g.K > 1<<p {
		return nil, ErrModelFormat
	}
	n := int64(g.N()) * int64(g.K)
	if int64(len(b)-16) != 4*n {
		return nil, ErrModelFormat
	}
	m := &Model{Geom: g, Precision: p, counts: make([]uint32, n)}
	for i := range m.counts {
		m.counts[i] = binary.LittleEndian.Uint32(b[16+4*i:])
	}
	m.raw = append([]byte(nil), b...)
	h := sha256.Sum256(m.raw)
	copy(m.id[:], h[:])
	return m, nil
}

// TrainPlaceholder builds the placeholder order-0 model from code states
// (each of length g.N()).
func TrainPlaceholder(g Geometry, precision uint, states [][]uint16) *Model {
	n := g.N() * g.K
	b := make([]byte, 16+4*n)
	copy(b, "WMM\x00")
	binary.LittleEndian.PutUint16(b[4:], uint16(g.S-1))
	binary.LittleEndian.PutUint16(b[6:], uint16(g.M-1))
	binary.LittleEndian.PutUint32(b[8:], uint32(g.K))
	b[12] = byte(precision)
	c := make([]uint32, n)
	for i := range c {
		c[i] = 1
	}
	for _, st := range states {
		for j, v := range st {
			c[j*g.K+int(v)]++
		}
	}
	for i, v := range c {
		binary.LittleEndian.PutUint32(b[16+4*i:], v)
	}
	m, err := UnmarshalModel(b)
	if err != nil {
		panic(err)
	}
	return m
}
