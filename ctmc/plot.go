package ctmc

import (
	"image/color"
	"io"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PlotCCDF writes a PNG of the empirical CCDF P(X ≥ x) of the positive
// counts on log-log axes, with the fitted tails of r drawn above x_min,
// each scaled by the tail share n_tail/n.
func PlotCCDF(w io.Writer, counts []int64, r *Report, title string) error {
	x := make([]int64, 0, len(counts))
	for _, c := range counts {
		if c > 0 {
			x = append(x, c)
		}
	}
	if len(x) == 0 {
		return ErrNoCounts
	}
	s := newSample(x)
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "accesses x"
	p.Y.Label.Text = "P(X ≥ x)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}

	pts := make(plotter.XYs, len(s.v))
	for j, v := range s.v {
		pts[j] = plotter.XY{X: float64(v), Y: float64(s.nGE[j]) / float64(s.n)}
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	sc.GlyphStyle.Radius = vg.Points(2)
	sc.GlyphStyle.Color = color.Gray{Y: 60}
	p.Add(sc)
	p.Legend.Add("data", sc)
	p.Legend.Top = false
	p.Legend.Left = true

	if pl := r.PowerLaw; pl != nil {
		grid := logGrid(pl.XMin, s.v[len(s.v)-1], 80)
		scale := pl.TailShare
		zmin := hurwitz(pl.Alpha, pl.XMin)
		lines := []tailCurve{
			{"power law", color.RGBA{R: 200, A: 255}, func(x int64) float64 { return hurwitz(pl.Alpha, x) / zmin }},
		}
		if t := r.Truncated; t != nil {
			z0 := tplNorm(t.Alpha, t.Lambda, pl.XMin)
			lines = append(lines, tailCurve{"truncated power law", color.RGBA{B: 200, A: 255}, func(x int64) float64 { return tplNorm(t.Alpha, t.Lambda, x) / z0 }})
		}
		if l := r.LogNormal; l != nil && l.Degenerate {
			lines = append(lines, tailCurve{"log-normal (degenerate: power law)", color.RGBA{G: 150, A: 255}, func(x int64) float64 {
				return math.Pow((float64(x)-0.5)/(float64(pl.XMin)-0.5), 1-l.Alpha)
			}})
		} else if l != nil {
			l0 := logSurvStd((math.Log(float64(pl.XMin)-0.5) - l.Mu) / l.Sigma)
			lines = append(lines, tailCurve{"log-normal", color.RGBA{G: 150, A: 255}, func(x int64) float64 {
				return math.Exp(logSurvStd((math.Log(float64(x)-0.5)-l.Mu)/l.Sigma) - l0)
			}})
		}
		if e := r.Exponential; e != nil {
			lines = append(lines, tailCurve{"exponential", color.RGBA{R: 200, G: 140, A: 255}, func(x int64) float64 {
				return math.Exp(-e.Lambda * float64(x-pl.XMin))
			}})
		}
		floorY := 0.5 / float64(s.n)
		for k, ln := range lines {
			var xy plotter.XYs
			for _, g := range grid {
				y := scale * ln.sf(g)
				if !(y >= floorY) || math.IsInf(y, 0) {
					break
				}
				xy = append(xy, plotter.XY{X: float64(g), Y: y})
			}
			if len(xy) < 2 {
				continue
			}
			l, err := plotter.NewLine(xy)
			if err != nil {
				return err
			}
			l.Color = ln.col
			l.Width = vg.Points(1.5)
			l.Dashes = []vg.Length{vg.Points(float64(2 + 2*k)), vg.Points(2)}
			if k == 0 {
				l.Dashes = nil
			}
			p.Add(l)
			p.Legend.Add(ln.name, l)
		}
	}
	wt, err := p.WriterTo(6*vg.Inch, 4.5*vg.Inch, "png")
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// logGrid returns up to n distinct integers from lo to hi, log-spaced.
func logGrid(lo, hi int64, n int) []int64 {
	if hi < lo {
		return nil
	}
	var g []int64
	a, b := math.Log(float64(lo)), math.Log(float64(hi))
	for i := 0; i <= n; i++ {
		v := int64(math.Round(math.Exp(a + (b-a)*float64(i)/float64(n))))
		if len(g) == 0 || v > g[len(g)-1] {
			g = append(g, v)
		}
	}
	return slices.Compact(g)
}

// tailCurve is a fitted tail's survival function P(X ≥ x | X ≥ x_min).
type tailCurve struct {
	name string
	col  color.Color
	sf   func(x int64) float64
}
