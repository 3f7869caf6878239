package main

import (
	"fmt"
)

// isModelFile reports whether the file at path starts as a model file
// (.wmm) does.
func isModelFile(path string) bool { return string(peek(path, 0, 4)) == "WMZM" } // SPEC.md 3.1

// infoModel is `wmzip info model.wmm`: the model's version, ID, geometry,
// reference store, quantizer, gate and sizes.
func infoModel(path string, asJSON bool) error {
	c, err := loadCodec(path)
	if err != nil {
		return err
	}
	size, err := inputSize(path)
	if err != nil {
		return err
	}
	d := DescribeModel(path, c, size)
	if asJSON {
		return printJSON(d)
	}
	fmt.Printf("%s: model file v%d, %d bytes\n", d.File, d.ModelVersion, d.ModelBytes)
	fmt.Printf("model        %s, level %s\n", d.ModelID, d.Level)
	fmt.Printf("geometry     %d slots x %d subspaces, K=%d; precision %d; raw %.0f bits/state\n", d.Slots, d.Subspaces, d.Alphabet, d.Precision, d.RawBitsPerState)
	fmt.Printf("store        %d reference states\n", d.ReferenceStates)
	if q := d.Quantizer; q != nil {
		fmt.Printf("quantizer    %d values per slot vector -> %d codes of %d centroids (%d bytes)\n", q.Dim, q.Subspaces, q.Centroids, q.Bytes)
		if h := q.HeldOut; h != nil {
			fmt.Printf("             on %d held-out slot vectors: distortion %.4g, mean cosine %.4f\n", h.Vectors, h.Distortion, h.Cosine)
		}
	} else {
		fmt.Println("quantizer    none: trained on codes, it encodes codes only")
	}
	if g := d.Gate; g != nil {
		dist := "uniform distances"
		if g.Dist {
			dist = "the quantizer's distances"
		}
		fmt.Printf("gate         version %d, %d bins on the %s axis, %s, calibrated on %d coordinates (%d bytes)\n", g.Version, g.Bins, g.Axis, dist, g.Samples, g.Bytes)
		if g.SearchFill {
			fmt.Println("             for search: omitted values keep states apart (wmzip train --gate-for search)")
		}
	} else {
		fmt.Println("gate         none: lossless coding only (--lambda and --distortion need a gate)")
	}
	return nil
}
