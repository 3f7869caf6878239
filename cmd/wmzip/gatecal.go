package main

import (
	"fmt"

	"github.com/wmzip/wmzip/gate"
	"github.com/wmzip/wmzip/opq"
	"github.com/wmzip/wmzip/wm"
)

// calibrateModel calibrates the gate of model final on held-out episodes.
// Predictions come from calib, a model of the same geometry trained without
// those episodes (it may be final itself if final never saw them); the
// distances come from the quantizer in final's section gate.QuantizerTag, if
// any, else they are uniform. opt may set the weights and the binning; its
// distances are set here. It returns final with the GATE section set.
func calibrateModel(calib, final *wm.Model, held []wm.Episode, opt gate.CalibOptions) (*wm.Model, *gate.Params, error) {
	if calib.Geom != final.Geom || calib.Precision != final.Precision {
		return nil, nil, fmt.Errorf("gate calibration: calibration model geometry or precision differs")
	}
	opt.Dist, opt.SlotNorm = nil, 0
	if raw := final.Section(gate.QuantizerTag); raw != nil {
		q, err := opq.UnmarshalQuantizer(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("gate calibration: model quantizer: %w", err)
		}
		if opt.Dist, opt.SlotNorm, err = quantizerDistances(q, final.Geom, held); err != nil {
			return nil, nil, err
		}
	}
	p, err := gate.Calibrate(calib, held, opt)
	if err != nil {
		return nil, nil, err
	}
	m, err := gate.Apply(final, p)
	return m, p, err
}

// quantizerDistances returns the quantizer's 16-bit distance tables and the
// mean squared slot norm in their units, measured on the given episodes.
func quantizerDistances(q *opq.Quantizer, g wm.Geometry, eps []wm.Episode) ([][]uint32, float64, error) {
	if q.M() != g.M || q.K() != g.K {
		return nil, 0, fmt.Errorf("gate calibration: quantizer M=%d K=%d differs from the model's M=%d K=%d", q.M(), q.K(), g.M, g.K)
	}
	dist := q.DistanceTables(16)
	if dist == nil {
		return nil, 0, fmt.Errorf("gate calibration: quantizer distance tables too large")
	}
	var states []uint16
	for _, e := range eps {
		states = append(states, e.Codes...)
	}
	dim := q.Dim()
	_, norm, err := gate.EmbeddingScale(dist, g, states, dim, func(s []uint16, out []float32) error {
		return q.Decode(s, out)
	})
	return dist, norm, err
}

// gateBinsFlag parses --gate-bins: what the gate's error-rate bins are taken
// on.
func gateBinsFlag(v string) (gate.CalibOptions, error) {
	switch v {
	case "modal":
		return gate.CalibOptions{}, nil
	case "entropy":
		return gate.CalibOptions{EntropyBins: true}, nil
	}
	return gate.CalibOptions{}, fmt.Errorf("--gate-bins %q: want modal or entropy", v)
}

const gateBinsUsage = "what the gate's error-rate bins are taken on: modal (the table's own modal error probability) or entropy (GATE version 1, MemoWM's binning)"
