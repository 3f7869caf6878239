package main

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"strings"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/internal/format"
	lam "github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/traj"
	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/npz"
)

// printWrote prints the summary of a written file: its rate, and what
// its report records of its distortion against the lossless reconstruction
// and, for float observations, against them.
func printWrote(m *wm.Model, out string, states int, size int64, lambda lam.Lambda, acct format.Account, rep format.Report, quant float64) {
	fmt.Printf("wrote %s: %d states, %d bytes, %.1f bits/state", out, states, size, float64(size)*8/float64(max(states, 1)))
	if lambda != format.LambdaLossless {
		fmt.Printf(", retained %.4f", float64(acct.Retained)/float64(max(acct.States, 1)*int64(m.Geom.N())))
		if acct.LosslessChunks > 0 {
			fmt.Printf(" (%d chunks coded losslessly, as no larger)", acct.LosslessChunks)
		}
	}
	fmt.Println()
	printReport(rep, quant, lambda == format.LambdaLossless)
}

// printReport prints a file's report of its distortion; quant is the
// quantizer's share of the source distortion, < 0 if not known.
func printReport(rep format.Report, quant float64, lossless bool) {
	if rep.SourceSlots > 0 {
		fmt.Printf("  distortion against the source observations (quantizer and coding together): %.6g, mean cosine %.6f\n", rep.SourceDistortion(), rep.SourceCosine())
		if quant >= 0 {
			fmt.Printf("  of which the quantizer's own codes alone: %.6g\n", quant)
		}
	}
	if rep.Slots > 0 && (!lossless || rep.Retention > 0) {
		what := "retention"
		if lossless {
			what = "coding by rate and distortion"
		}
		fmt.Printf("  what %s changed, against the quantizer's reconstruction (a part of the above, not added to it): %.6g\n", what, rep.RetentionDistortion())
	}
}

// memberModel returns the model of the member of c that wrote file.
func memberModel(c *wmzlib.Codec, file []byte) *wm.Model {
	if len(file) >= 48 {
		var id wm.ModelID
		copy(id[:], file[32:48])
		for _, m := range c.Members() {
			if m.Model().ID() == id {
				return m.Model()
			}
		}
	}
	return c.Model()
}

// memberOf names the member of c that wrote file (from its header's model
// ID), for messages: its geometry, or "" for a codec of one model.
func memberOf(c *wmzlib.Codec, file []byte) string {
	ms := c.Members()
	if len(ms) < 2 || len(file) < 48 {
		return ""
	}
	var id wm.ModelID
	copy(id[:], file[32:48])
	for i, m := range ms {
		if m.Model().ID() == id {
			g := m.Geometry()
			return fmt.Sprintf("member %d (%d slot vectors x %d codes of K=%d)", i, g.S, g.M, g.K)
		}
	}
	return ""
}

// encodeDistortion writes tr at the least-storage λ whose encoding meets
// the distortion target.
func encodeDistortion(c *wmzlib.Codec, src *npz.TrajectoryReader, out string, mode wmzlib.WriterOption, target float64, keyframe int, embed, quiet bool) error {
	T := src.Header().T
	report := func(p format.Probe) {
		if quiet {
			return
		}
		if p.Lambda == format.LambdaLossless {
			fmt.Fprintf(os.Stderr, "  lossless       %d states\n", p.States)
			return
		}
		note := ""
		if p.Sample {
			note = fmt.Sprintf("  (sample of %d states)", p.States)
		}
		fmt.Fprintf(os.Stderr, "  lambda %-10.4g distortion %.6g%s\n", float64(p.Lambda)/65536, p.Distortion, note)
	}
	var buf bytes.Buffer
	w, err := wmzlib.NewWriter(&buf, c, mode, wmzlib.WithProbe(report),
		wmzlib.WithKeyframeInterval(keyframe), wmzlib.WithEmbeddedModel(embed))
	if err != nil {
		return err
	}
	if err := traj.Write(w, c, src, nil); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	r := w.Search()
	if !quiet {
		fmt.Fprintf(os.Stderr, "  search: %.2f encodes of the file\n", r.Encodes)
		switch {
		case !hasGate(c):
			if r.Lambda == format.LambdaLossless {
				fmt.Printf("lossless, %s: distortion %.6g (target %g): no coding by rate and distortion is smaller\n", cmp.Or(memberOf(c, r.File), "the model"), r.Distortion, target)
			} else {
				fmt.Printf("coded by rate and distortion with %s at λ %.4g: distortion %.6g (target %g)\n", cmp.Or(memberOf(c, r.File), "the model"), float64(r.Lambda)/65536, r.Distortion, target)
			}
		case r.Lambda == format.LambdaLossless:
			fmt.Printf("lossless: no λ meets the target %g with fewer bytes\n", target)
		case len(r.Lambdas) > 1:
			fmt.Printf("chunks at λ %s: distortion %.6g (target %g)\n", lambdaList(r.Lambdas), r.Distortion, target)
		default:
			fmt.Printf("λ %.6g: distortion %.6g (target %g)\n", float64(r.Lambda)/65536, r.Distortion, target)
		}
	}
	if err := atomicfile.WriteFile(out, r.File); err != nil {
		return err
	}
	warnAboveRaw(c, out, T, int64(len(r.File)), embed)
	if !quiet {
		quant, n := w.QuantizerDistortion()
		if n == 0 {
			quant = -1
		}
		m, l := c.Model(), r.Lambda
		if !hasGate(c) {
			// Coded by rate and distortion: every coordinate of the
			// member's states coded, no retention to report.
			m, l = memberModel(c, r.File), format.LambdaLossless
		}
		printWrote(m, out, T, int64(len(r.File)), l, r.Account, r.Report, quant)
	}
	return nil
}

// lambdaList formats 16.16 λs.
func lambdaList(ls []lam.Lambda) string {
	var b strings.Builder
	for i, l := range ls {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%.4g", float64(l)/65536)
	}
	return b.String()
}
