// Package plot draws the command line's figures: the access audit's
// distribution and the benchmarks' curves. Only the CLI and the bench
// tooling import it, so the codec does not carry a plotting stack.
package plot

import (
	"image/color"
	"io"
	"strings"

	"github.com/wmzip/wmzip/internal/ctmc"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// tailColor is the line colour of a fitted tail, by its family.
func tailColor(name string) color.Color {
	switch {
	case strings.HasPrefix(name, "truncated"):
		return color.RGBA{B: 200, A: 255}
	case strings.HasPrefix(name, "log-normal"):
		return color.RGBA{G: 150, A: 255}
	case strings.HasPrefix(name, "exponential"):
		return color.RGBA{R: 200, G: 140, A: 255}
	}
	return color.RGBA{R: 200, A: 255}
}

// CCDF writes a PNG of the empirical CCDF P(X ≥ x) of the positive counts
// on log-log axes, with the tails r fitted drawn above x_min, each scaled
// by its share of the counts.
func CCDF(w io.Writer, counts []int64, r *ctmc.Report, title string) error {
	x, p, err := ctmc.CCDF(counts)
	if err != nil {
		return err
	}
	n := int64(0)
	for _, c := range counts {
		if c > 0 {
			n++
		}
	}
	pl := plot.New()
	pl.Title.Text = title
	pl.X.Label.Text = "accesses x"
	pl.Y.Label.Text = "P(X ≥ x)"
	pl.X.Scale, pl.Y.Scale = plot.LogScale{}, plot.LogScale{}
	pl.X.Tick.Marker, pl.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}

	pts := make(plotter.XYs, len(x))
	for j := range x {
		pts[j] = plotter.XY{X: float64(x[j]), Y: p[j]}
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	sc.GlyphStyle.Radius = vg.Points(2)
	sc.GlyphStyle.Color = color.Gray{Y: 60}
	pl.Add(sc)
	pl.Legend.Add("data", sc)
	pl.Legend.Top = false
	pl.Legend.Left = true

	for k, c := range r.Curves(n, x[len(x)-1]) {
		if len(c.X) < 2 {
			continue
		}
		xy := make(plotter.XYs, len(c.X))
		for i := range c.X {
			xy[i] = plotter.XY{X: c.X[i], Y: c.P[i]}
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		l.Color = tailColor(c.Name)
		l.Width = vg.Points(1.5)
		if k > 0 {
			l.Dashes = []vg.Length{vg.Points(float64(2 + 2*k)), vg.Points(2)}
		}
		pl.Add(l)
		pl.Legend.Add(c.Name, l)
	}
	wt, err := pl.WriterTo(6*vg.Inch, 4.5*vg.Inch, "png")
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}
