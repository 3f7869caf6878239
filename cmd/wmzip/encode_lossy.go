package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/gate"
	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/wm"
)

// printWrote prints the summary of a written file.
func printWrote(m *wm.Model, out string, states int, size int64, lambda uint32, acct format.Account) {
	fmt.Printf("wrote %s: %d states, %d bytes, %.1f bits/state", out, states, size, float64(size)*8/float64(max(states, 1)))
	if lambda != format.LambdaLossless {
		fmt.Printf(", retained %.4f", float64(acct.Retained)/float64(max(acct.States, 1)*int64(m.Geom.N())))
		if p, err := gate.FromModel(m); err == nil {
			fmt.Printf(", distortion %.6g", p.RelDistortion(acct.DistSum, acct.States))
		}
	}
	fmt.Println()
}

// encodeDistortion writes tr at the least-storage λ whose encoding meets
// the distortion target.
func encodeDistortion(c *wmzlib.Codec, src *npz.TrajectoryReader, out string, target float64, keyframe int, embed, quiet bool) error {
	T := src.Header().T
	report := func(p format.Probe) {
		if quiet {
			return
		}
		note := ""
		switch {
		case p.Sample:
			note = fmt.Sprintf("  (sample of %d states)", p.States)
		case p.Stopped:
			note = fmt.Sprintf("  (stopped after %d states)", p.States)
		case p.States < int64(T):
			note = fmt.Sprintf("  (continued for %d states)", p.States)
		}
		fmt.Fprintf(os.Stderr, "  lambda %-10.4g distortion %.6g%s\n", float64(p.Lambda)/65536, p.Distortion, note)
	}
	var buf bytes.Buffer
	w, err := wmzlib.NewWriter(&buf, c, wmzlib.WithDistortion(target), wmzlib.WithProbe(report),
		wmzlib.WithKeyframeInterval(keyframe), wmzlib.WithEmbeddedModel(embed))
	if err != nil {
		return err
	}
	if err := w.WriteTrajectory(src); err != nil {
		return err
	}
	err = w.Close()
	if errors.Is(err, format.ErrNoLambda) {
		return fmt.Errorf("%v: use --lossless", err)
	}
	if err != nil {
		return err
	}
	r := w.Search()
	if !quiet {
		fmt.Fprintf(os.Stderr, "  search: %.2f encodes of the file\n", r.Encodes)
		fmt.Printf("lambda %.6g: distortion %.6g (target %g)\n", float64(r.Lambda)/65536, r.Distortion, target)
	}
	if err := atomicfile.WriteFile(out, r.File); err != nil {
		return err
	}
	warnAboveRaw(c, out, T, int64(len(r.File)), embed)
	if !quiet {
		printWrote(c.Model(), out, T, int64(len(r.File)), r.Lambda, r.Account)
	}
	return nil
}
