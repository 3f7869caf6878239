package main

import (
	"fmt"

	"github.com/wmzip/wmzip/internal/wm"
)

// isModelFile reports whether the file at path starts as a model file
// (.wmm) does.
func isModelFile(path string) bool { m := string(peek(path, 0, 4)); return m == "WMZM" || m == "WMZB" } // SPEC.md 3.1, 3.6

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
	if ms := c.Members(); len(ms) > 1 && !asJSON {
		fmt.Printf("%s: bundle of %d members, %d bytes (coarsest first; the last writes lossless files)\n", path, len(ms), size)
		for i, m := range ms {
			g := m.Model().Geom
			b, _ := m.MarshalBinary()
			fmt.Printf("member %d     %s: %d x %d codes of K=%d, %d bytes, level %s\n", i, m.Model().ID(), g.S, g.M, g.K, len(b), wm.LevelName(m.Model().Level()))
			for _, p := range m.Calibration() {
				fmt.Printf("             held out: λ %-9.4g distortion %.5f  %7.1f bits/state\n", p.Lambda, p.Distortion, p.BitsPerState)
			}
		}
		return nil
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
	} else if d.Quantizer != nil {
		fmt.Println("gate         none: lossy files are coded by rate and distortion (every coordinate coded, values chosen by their bits and distortion)")
	} else {
		fmt.Println("gate         none: lossless coding only (--lambda and --distortion need a gate)")
	}
	return nil
}
