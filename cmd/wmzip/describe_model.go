package main

import (
	"encoding/binary"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/train"
)

// ModelDescription summarizes a model file (.wmm): what `wmzip info
// model.wmm` prints, and its JSON form.
type ModelDescription struct {
	File         string `json:"file"`
	ModelVersion int    `json:"model_version"`
	ModelID      string `json:"model_id"`
	ModelBytes   int64  `json:"model_bytes"`
	// Level is the world model's level: "copy", "full" or "fast"
	// (`wmzip train --level`).
	Level           string  `json:"level"`
	Slots           int     `json:"slots"`
	Subspaces       int     `json:"subspaces"`
	Alphabet        int     `json:"alphabet"`
	Precision       uint    `json:"precision"`
	RawBitsPerState float64 `json:"raw_bits_per_state"`
	// ReferenceStates is the size of the store of training states that
	// predictions draw on.
	ReferenceStates int `json:"reference_states"`
	// Quantizer is nil for a model of codes only.
	Quantizer *QuantizerDescription `json:"quantizer"`
	// Gate is nil for a model without a retention gate (lossless only).
	Gate *GateDescription `json:"gate"`
}

// QuantizerDescription is the quantizer of float observations a model
// holds.
type QuantizerDescription struct {
	Dim       int   `json:"dim"`       // values per slot vector
	Subspaces int   `json:"subspaces"` // codes per slot vector
	Centroids int   `json:"centroids"` // per subspace
	Bytes     int64 `json:"bytes"`     // of its section
	// HeldOut is its quality on observations held out of training, as
	// Train measured it (nil if the model records none).
	HeldOut *HeldOutQuality `json:"held_out,omitempty"`
}

// HeldOutQuality is a quantizer's distortion on held-out observations.
type HeldOutQuality struct {
	Vectors    int64   `json:"slot_vectors"`
	Distortion float64 `json:"distortion"` // mean relative squared error
	Cosine     float64 `json:"cosine"`     // mean cosine
}

// GateDescription is the retention gate a model holds.
type GateDescription struct {
	Version int    `json:"version"`
	Bins    int    `json:"bins"`
	Axis    string `json:"axis"`      // what the bins are taken on: "modal" or "entropy"
	Samples uint64 `json:"samples"`   // coordinates it was calibrated on
	Weights bool   `json:"weights"`   // per-coordinate impact weights
	Dist    bool   `json:"distances"` // codebook distances (else uniform)
	// SearchFill: the gate fills omitted coordinates for search (GATE
	// flag bit 2, the gate of `wmzip train --gate-for search`).
	SearchFill bool  `json:"search_fill,omitempty"`
	Bytes      int64 `json:"bytes"` // of its section
}

// DescribeModel summarizes the codec read from the model file called
// name, of fileBytes bytes.
func DescribeModel(name string, c *wmzlib.Codec, fileBytes int64) ModelDescription {
	m := c.Model()
	d := ModelDescription{
		File: name, ModelVersion: m.FileVersion(), ModelID: m.ID().String(), ModelBytes: fileBytes, Level: wm.LevelName(m.Level()),
		Slots: m.Geom.S, Subspaces: m.Geom.M, Alphabet: m.Geom.K, Precision: m.Precision,
		RawBitsPerState: m.Geom.RawBits(), ReferenceStates: m.RefStates(),
	}
	if q := c.Quantizer(); q != nil {
		d.Quantizer = &QuantizerDescription{Dim: q.Dim(), Subspaces: q.M(), Centroids: q.K(), Bytes: int64(len(m.Section(gate.QuantizerTag)))}
		if qu, ok := train.QuantizerQuality(c); ok {
			d.Quantizer.HeldOut = &HeldOutQuality{Vectors: qu.Vectors, Distortion: qu.Distortion(), Cosine: qu.Cosine()}
		}
	}
	if p, err := gate.FromModel(m); err == nil {
		axis := "modal"
		if p.Axis == gate.AxisEntropy {
			axis = "entropy"
		}
		sec := m.Section(gate.Tag)
		d.Gate = &GateDescription{Version: int(binary.LittleEndian.Uint16(sec)), Bins: len(p.BinErr), Axis: axis, Samples: p.Samples,
			Weights: p.Weights != nil, Dist: p.Dist != nil, SearchFill: p.SearchFill, Bytes: int64(len(sec))}
	}
	return d
}
