package main

import (
	"bufio"
	"errors"
	"fmt"

	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/internal/atomicfile"
)

func init() {
	register("encode", "compress a trajectory (.npz) into a .wmz file", runEncode)
}

func runEncode(args []string) error {
	fs := newFlags("encode", "-m model.wmm [flags] -o out.wmz in.npz")
	modelPath := fs.String("m", "", "model file (required)")
	out := fs.String("o", "", "output .wmz (required)")
	lossless := fs.Bool("lossless", true, "code every coordinate (the only mode until the retention gate lands)")
	keyframe := fs.Int("keyframe", format.DefaultKeyframeInterval, "keyframe interval G: most states per independently decodable chunk")
	embed := fs.Bool("embed-model", false, "store the model in the file so that it decodes without -m")
	quiet := fs.Bool("q", false, "no progress or summary output")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *modelPath == "" {
		return errors.New("missing -m model.wmm")
	}
	if *out == "" {
		return errors.New("missing -o out.wmz")
	}
	if len(pos) != 1 {
		return errors.New("want exactly one input trajectory")
	}
	if !*lossless {
		return errors.New("lossy coding is not available yet: use --lossless")
	}
	m, err := loadModel(*modelPath)
	if err != nil {
		return err
	}
	tr, err := loadCodes(pos[0], &m.Geom)
	if err != nil {
		return err
	}
	f, err := atomicfile.Create(*out)
	if err != nil {
		return err
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 1<<16)
	w, err := format.NewWriter(bw, m, format.WithKeyframeInterval(*keyframe), format.WithEmbeddedModel(*embed))
	if err != nil {
		return err
	}
	n := m.Geom.N()
	eps := tr.Episodes()
	prog := progress(*quiet, "encoding")
	for i, e := range eps {
		if err := w.WriteEpisode(nil); err != nil {
			return err
		}
		for t := e[0]; t < e[1]; t++ {
			if err := w.WriteState(tr.Actions[t], tr.Codes[t*n:(t+1)*n]); err != nil {
				return err
			}
		}
		prog(i+1, len(eps))
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	size, _ := f.Seek(0, 1)
	if err := f.Commit(); err != nil {
		return err
	}
	if !*quiet {
		fmt.Printf("wrote %s: %d states, %d bytes, %.1f bits/state\n", *out, tr.T, size, float64(size)*8/float64(max(tr.T, 1)))
	}
	return nil
}
