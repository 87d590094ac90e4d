package paper

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"okstream/eval"
)

// driftPlot draws the windowed error of every model of a stream against
// the events (one point per window, at its end), with a dotted vertical
// line at each change point; River's curves dashed, River's prior and
// running mean left out (eval's constant predictor is the same). The y
// axis stops at 1.5 × the worst window of the models that learn a
// function of the features (not of the trivial predictors, whose lines
// are then clipped), so that the learners' curves stay readable.
func driftPlot(sr *driftStreamResult, models []driftModel, path string) error {
	p := plot.New()
	p.Title.Text = sr.Title
	p.X.Label.Text = "events"
	if sr.Task == "regression" {
		p.Y.Label.Text = "MSE over windows of 1000 events"
	} else {
		p.Y.Label.Text = "mistake % over windows of 1000 events"
	}
	p.Legend.Top = true
	top := 0.0
	for _, m := range models {
		if m.Trivial {
			continue
		}
		for _, v := range m.Window {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				top = math.Max(top, v)
			}
		}
	}
	for i, m := range models {
		if m.River && (m.Label == "River Prior" || m.Label == "River Mean") {
			continue // the same predictor as eval's constant one
		}
		xy := make(plotter.XYs, 0, len(m.Window))
		for k, v := range m.Window {
			if k < len(sr.Ts) && !math.IsNaN(v) && !math.IsInf(v, 0) {
				xy = append(xy, plotter.XY{X: float64(sr.Ts[k]), Y: v})
			}
		}
		if len(xy) == 0 {
			continue
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		l.Color = eval.Palette[i%len(eval.Palette)]
		l.Width = vg.Points(1.2)
		if m.River {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(2)}
		}
		if m.Trivial && !m.River {
			l.Color = color.Gray{Y: 120}
			l.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
		}
		p.Add(l)
		p.Legend.Add(m.Label, l)
	}
	if top > 0 {
		p.Y.Min, p.Y.Max = 0, 1.5*top // room for the legend above the curves
	}
	for _, c := range sr.Changes {
		l, err := plotter.NewLine(plotter.XYs{{X: float64(c), Y: p.Y.Min}, {X: float64(c), Y: p.Y.Max}})
		if err != nil {
			return err
		}
		l.Color = color.Gray{Y: 60}
		l.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
		p.Add(l)
	}
	p.Add(plotter.NewGrid())
	return eval.SavePlot(p, path, 8, 5)
}
