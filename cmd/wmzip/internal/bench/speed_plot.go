package bench

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wmzip/wmzip/internal/atomicfile"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// SpeedPoint is one coder of a speed report placed on the rate–speed plane.
type SpeedPoint struct {
	Coder        string
	BitsPerState float64
	DecodeRate   float64 // states/s, on the axis the plot uses
	Lossless     bool
	Pareto       bool // lossless and no other lossless coder is both smaller and faster
}

// SpeedFront places the rows of rep on the rate–speed plane: bits/state
// against decode states/s, on CPU time when every row has it (other work
// on the machine inflates it less than wall time), else on wall time, which
// the second result reports. A lossless row is on the Pareto front when no
// other lossless row is at most as large and at least as fast, and better
// on one of the two. Lossy rows are placed but never on the front: they
// store less than was given.
func SpeedFront(rep *SpeedReport) ([]SpeedPoint, bool) {
	cpu := len(rep.Rows) > 0
	for _, r := range rep.Rows {
		if r.DecodeCPURate <= 0 {
			cpu = false
		}
	}
	pts := make([]SpeedPoint, 0, len(rep.Rows))
	for _, r := range rep.Rows {
		x := r.DecodeRate
		if cpu {
			x = r.DecodeCPURate
		}
		if !(x > 0) || !(r.BitsPerState > 0) {
			continue
		}
		pts = append(pts, SpeedPoint{Coder: r.Coder, BitsPerState: r.BitsPerState, DecodeRate: x, Lossless: r.Lossless})
	}
	for i := range pts {
		p := &pts[i]
		if !p.Lossless {
			continue
		}
		p.Pareto = true
		for _, q := range pts {
			if q.Lossless && q.BitsPerState <= p.BitsPerState && q.DecodeRate >= p.DecodeRate &&
				(q.BitsPerState < p.BitsPerState || q.DecodeRate > p.DecodeRate) {
				p.Pareto = false
				break
			}
		}
	}
	return pts, cpu
}

// PlotSpeed writes a PNG of rep's coders on the rate–speed plane (SpeedFront):
// bits/state against decode states/s on a log axis, every coder labelled,
// the lossless Pareto front joined by a line.
func PlotSpeed(path string, rep *SpeedReport) error {
	pts, cpu := SpeedFront(rep)
	if len(pts) == 0 {
		return errors.New("plot: no coder with a decode rate and a size")
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("rate and decode speed: %s (%d states, one goroutine)", filepath.Base(rep.Input), rep.TestStates)
	p.X.Label.Text = "decode states/s (wall time, log scale)"
	if cpu {
		p.X.Label.Text = "decode states/s (CPU time, log scale)"
	}
	p.Y.Label.Text = "bits/state (smaller is better)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}

	wmzip := color.RGBA{R: 200, G: 30, B: 30, A: 255}
	other := color.RGBA{R: 40, G: 80, B: 200, A: 255}
	lossy := color.RGBA{R: 120, G: 120, B: 120, A: 255}
	var front plotter.XYs
	for _, pt := range pts {
		xy := plotter.XYs{{X: pt.DecodeRate, Y: pt.BitsPerState}}
		sc, err := plotter.NewScatter(xy)
		if err != nil {
			return err
		}
		sc.Radius = vg.Points(4)
		switch {
		case !pt.Lossless:
			sc.Color, sc.Shape = lossy, draw.RingGlyph{}
		case strings.HasPrefix(pt.Coder, "wmzip"):
			sc.Color, sc.Shape = wmzip, draw.CircleGlyph{}
		default:
			sc.Color, sc.Shape = other, draw.BoxGlyph{}
		}
		p.Add(sc)
		if pt.Pareto {
			front = append(front, xy[0])
		}
	}
	if len(front) > 1 {
		slices.SortFunc(front, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		l, err := plotter.NewLine(front)
		if err != nil {
			return err
		}
		l.Color = color.RGBA{R: 230, G: 140, B: 140, A: 255}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
		p.Legend.Add("lossless Pareto front", l)
	}
	for i, pt := range pts {
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: pt.DecodeRate, Y: pt.BitsPerState}}, Labels: []string{pt.Coder}})
		if err != nil {
			return err
		}
		lb.TextStyle[0].XAlign, lb.TextStyle[0].YAlign = draw.XLeft, draw.YCenter
		lb.TextStyle[0].Font.Size = vg.Points(8)
		lb.Offset = vg.Point{X: vg.Points(6), Y: vg.Points(labelShift(pts, i))}
		p.Add(lb)
	}
	// Room for the labels right of the fastest coder and above the largest.
	p.X.Max *= 3
	p.Y.Min, p.Y.Max = 0, p.Y.Max*1.08
	p.Legend.Top = false

	wt, err := p.WriterTo(9*vg.Inch, 5.5*vg.Inch, "png")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, buf.Bytes())
}

// labelShift returns the vertical offset, in points, of point i's label:
// 0 unless an earlier point is close on the plane (within a factor 3 of
// its decode rate and 4% of its size), then one line below or above per
// such neighbour, so that labels of coders measured alike do not overlap.
func labelShift(pts []SpeedPoint, i int) float64 {
	n := 0
	for _, q := range pts[:i] {
		r := pts[i].DecodeRate / q.DecodeRate
		if r < 3 && r > 1.0/3 && math.Abs(pts[i].BitsPerState-q.BitsPerState) < 0.04*q.BitsPerState {
			n++
		}
	}
	if n == 0 {
		return 0
	}
	shift := float64((n+1)/2) * 10
	if n%2 == 1 {
		return -shift
	}
	return shift
}
