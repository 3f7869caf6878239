package bench

import (
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// WritePNG plots total storage per state against horizon, one line per
// coder, on log-log axes (the MemoWM Fig. A.4 analogue).
func (r *CapacityReport) WritePNG(w io.Writer) error {
	p := plot.New()
	p.Title.Text = "total storage per state by horizon"
	p.X.Label.Text = "horizon (states stored with one model)"
	p.Y.Label.Text = "bits per state (model amortized + episodes)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	lo, hi := float64(r.Horizons[0]), float64(r.Horizons[len(r.Horizons)-1])
	const steps = 60
	for i, c := range r.Coders {
		var xy plotter.XYs
		for k := range steps + 1 {
			h := lo * math.Pow(hi/lo, float64(k)/steps)
			xy = append(xy, plotter.XY{X: h, Y: float64(8*c.ModelBytes)/h + c.BitsPerState})
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		l.Width = vg.Points(1.5)
		if c.Capacity > 0 {
			// Capacities from light to dark blue, small to large.
			f := c.Capacity
			l.Color = color.RGBA{R: uint8(180 * (1 - f)), G: uint8(200 * (1 - f)), B: 230, A: 255}
		} else {
			general := []color.RGBA{{R: 220, G: 120, A: 255}, {R: 200, A: 255}, {R: 120, B: 140, A: 255}}
			l.Color = general[i%len(general)]
			l.Dashes = []vg.Length{vg.Points(float64(2 + 2*(i%3))), vg.Points(3)}
		}
		p.Add(l)
		p.Legend.Add(c.Name, l)
	}
	wt, err := p.WriterTo(7*vg.Inch, 5*vg.Inch, "png")
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}
