package main

import (
	"math"

	"github.com/wmzip/wmzip/internal/format"
)

// Description summarizes a .wmz file from its header and index alone (no
// model needed): sizes, rates, mode and model. It is what `wmzip info`
// prints, and its JSON form is `wmzip info --json`'s.
type Description struct {
	File                string  `json:"file"`
	Version             int     `json:"version"`
	States              int64   `json:"states"`
	Episodes            int     `json:"episodes"`
	Chunks              int64   `json:"chunks"`
	Slots               int     `json:"slots"`
	Subspaces           int     `json:"subspaces"`
	Alphabet            int     `json:"alphabet"`
	Precision           uint    `json:"precision"`
	Lanes               int     `json:"lanes"`
	Keyframe            int     `json:"keyframe_interval"`
	FileBytes           int64   `json:"file_bytes"`
	BitsPerState        float64 `json:"bits_per_state"`
	PayloadBitsPerState float64 `json:"payload_bits_per_state"`
	IdealBitsPerState   float64 `json:"ideal_bits_per_state"`
	RawBitsPerState     float64 `json:"raw_bits_per_state"`
	RetainedFraction    float64 `json:"retained_fraction"`
	Lossless            bool    `json:"lossless"`
	// Mode is how the file is lossy: "lossless", "retention" (the gate at
	// Lambda or per level) or "rate-distortion" (every coordinate coded,
	// values chosen by their rate and distortion: Lossless is false).
	Mode   string `json:"mode"`
	Lambda any    `json:"lambda"`
	Levels []any  `json:"levels,omitempty"`
	// Distortion is the distortion retention gave the file against its
	// lossless reconstruction (0 when lossless), as the writer recorded
	// it or as measured against a source (info --ref); nil if unknown.
	Distortion any `json:"distortion"`
	// DistortionVsSource and CosineVsSource are what the writer recorded
	// of the decoded observations against the float observations it was
	// given (quantizer and retention together); nil when it was given
	// codes.
	DistortionVsSource  *float64 `json:"distortion_vs_source,omitempty"`
	CosineVsSource      *float64 `json:"cosine_vs_source,omitempty"`
	ModelID             string   `json:"model_id"`
	ModelEmbedded       bool     `json:"model_embedded"`
	ModelBytes          int64    `json:"model_bytes"`
	HeaderBytes         int64    `json:"header_bytes"`
	IndexBytes          int64    `json:"index_bytes"`
	FramingBitsPerState float64  `json:"framing_bits_per_state"`
	// AboveRaw reports a rate above RawBitsPerState: the model predicts
	// these states worse than no model, typically one trained on other
	// data.
	AboveRaw bool `json:"above_raw,omitempty"`
}

// Describe summarizes the file called name whose header and index are h
// and in (format.ReadInfo, or a File's container header and Info).
func Describe(name string, h format.Header, in format.Info) Description {
	st := float64(max(in.States, 1))
	noModel := in.FileBytes - in.ModelBytes
	j := Description{
		File: name, Version: h.Version, States: in.States, Episodes: in.Episodes, Chunks: in.Chunks,
		Slots: h.Geom.S, Subspaces: h.Geom.M, Alphabet: h.Geom.K, Precision: h.Precision, Lanes: h.Lanes,
		Keyframe: h.KeyframeInterval, FileBytes: in.FileBytes,
		BitsPerState:        float64(noModel) * 8 / st,
		PayloadBitsPerState: float64(in.PayloadBytes) * 8 / st,
		IdealBitsPerState:   in.IdealBits() / st,
		RawBitsPerState:     h.Geom.RawBits(),
		RetainedFraction:    float64(in.Retained) / float64(max(in.States, 1)*int64(h.Geom.N())),
		Lossless:            h.Lossless(),
		ModelID:             in.ModelID.String(), ModelEmbedded: in.Embedded, ModelBytes: in.ModelBytes,
		HeaderBytes: in.HeaderBytes, IndexBytes: in.IndexBytes,
	}
	j.FramingBitsPerState = j.BitsPerState - j.IdealBitsPerState
	j.AboveRaw = j.BitsPerState > j.RawBitsPerState
	if r := in.Report; r.Slots > 0 {
		j.Distortion = r.RetentionDistortion()
	}
	if r := in.Report; r.SourceSlots > 0 {
		d, c := r.SourceDistortion(), r.SourceCosine()
		j.DistortionVsSource, j.CosineVsSource = &d, &c
	}
	switch {
	case h.Lossless() && in.Report.Retention > 0:
		j.Lambda, j.Mode, j.Lossless = "inf", "rate-distortion", false
	case h.Lossless():
		j.Lambda, j.Mode = "inf", "lossless"
		j.Distortion = 0.0
	default:
		j.Mode = "retention"
	}
	switch {
	case h.Lossless():
	case h.Lambda == format.LambdaLossless:
		j.Lambda = "inf" // the last level of a level table
	default:
		j.Lambda = float64(h.Lambda) / 65536
	}
	for _, l := range in.Levels {
		if math.IsInf(l, 1) {
			j.Levels = append(j.Levels, "inf")
		} else {
			j.Levels = append(j.Levels, l)
		}
	}
	if in.States == 0 {
		j.BitsPerState, j.PayloadBitsPerState, j.IdealBitsPerState, j.FramingBitsPerState = 0, 0, 0, 0
	}
	return j
}
