package eval

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Palette is the line colours used by the plots (colour-blind safe).
var Palette = []color.Color{
	color.RGBA{0, 114, 178, 255},
	color.RGBA{213, 94, 0, 255},
	color.RGBA{0, 158, 115, 255},
	color.RGBA{204, 121, 167, 255},
	color.RGBA{230, 159, 0, 255},
	color.RGBA{86, 180, 233, 255},
	color.RGBA{0, 0, 0, 255},
	color.RGBA{240, 228, 66, 255},
	color.RGBA{120, 120, 120, 255},
}

// Dashes are line styles cycled together with Palette.
var Dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}}

// PlotCurves writes the learning curves (cumulative mistake rate or MSE
// against the number of events, mean over runs) of every model to path; the
// format follows the extension (.png, .svg, .pdf).
func (r *Result) PlotCurves(path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s — progressive validation, mean of %d permutations", r.Dataset, r.Runs)
	p.X.Label.Text = "events t"
	if r.Metric == MSE {
		p.Y.Label.Text = "cumulative MSE"
	} else {
		p.Y.Label.Text = "cumulative mistake rate (%)"
	}
	p.Legend.Top = true
	for i, m := range r.Models {
		pts := make(plotter.XYs, len(m.Curve))
		for j, c := range m.Curve {
			pts[j].X = float64(c.T)
			pts[j].Y = c.Mean
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.Color = Palette[i%len(Palette)]
		line.Dashes = Dashes[(i/len(Palette))%len(Dashes)]
		line.Width = vg.Points(1.5)
		p.Add(line)
		label := m.Label
		if len(m.Won) > 0 {
			label += " (" + (Candidate{Values: m.Won}).Label() + ")"
		}
		p.Legend.Add(label, line)
	}
	if r.Baseline != nil && len(r.Baseline.Curve) > 0 {
		if err := addCurve(p, r.Baseline.Label+" (baseline)", r.Baseline.Curve, color.Gray{Y: 120}, []vg.Length{vg.Points(1), vg.Points(3)}); err != nil {
			return err
		}
	}
	if b := r.LinearBaseline; b != nil && len(b.Curve) > 0 { // multi-class
		if err := addCurve(p, b.Label+" (baseline)", b.Curve, color.Gray{Y: 60}, []vg.Length{vg.Points(4), vg.Points(2)}); err != nil {
			return err
		}
	}
	p.Add(plotter.NewGrid())
	return SavePlot(p, path, 7, 4.5)
}

// PlotTestCurves writes the test curves (the frozen model's mistake rate
// or MSE on the test set against the number of training events, mean over
// runs) of every model, and the training stream's baseline on the test set
// as a horizontal line, to path. It needs a result with a test set.
func (r *Result) PlotTestCurves(path string) error {
	if r.Test == nil {
		return fmt.Errorf("plot %s: the result has no test set", path)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s → %s — frozen model on the test set, mean of %d permutations", r.Dataset, r.Test.Dataset, r.Runs)
	p.X.Label.Text = "training events"
	if r.Metric == MSE {
		p.Y.Label.Text = "test MSE"
	} else {
		p.Y.Label.Text = "test mistake rate (%)"
	}
	p.Legend.Top = true
	for i, m := range r.Test.Models {
		if err := addCurve(p, m.Label, m.Curve, Palette[i%len(Palette)], Dashes[(i/len(Palette))%len(Dashes)]); err != nil {
			return err
		}
	}
	if b, ok := r.Test.Baseline.Measures[r.Metric]; ok && len(r.Test.Models) > 0 && len(r.Test.Models[0].Curve) > 0 {
		c := r.Test.Models[0].Curve
		flat := []Point{{T: c[0].T, Mean: b.Mean}, {T: c[len(c)-1].T, Mean: b.Mean}}
		if err := addCurve(p, r.Test.Baseline.Label+" (baseline)", flat, color.Gray{Y: 120}, []vg.Length{vg.Points(1), vg.Points(3)}); err != nil {
			return err
		}
	}
	if b := r.Test.LinearBaseline; b != nil && len(b.Curve) > 0 { // multi-class
		if err := addCurve(p, b.Label+" (baseline)", b.Curve, color.Gray{Y: 60}, []vg.Length{vg.Points(4), vg.Points(2)}); err != nil {
			return err
		}
	}
	p.Add(plotter.NewGrid())
	return SavePlot(p, path, 7, 4.5)
}

func addCurve(p *plot.Plot, label string, curve []Point, c color.Color, dashes []vg.Length) error {
	pts := make(plotter.XYs, len(curve))
	for j, pt := range curve {
		pts[j].X, pts[j].Y = float64(pt.T), pt.Mean
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	line.Color, line.Dashes, line.Width = c, dashes, vg.Points(1.5)
	p.Add(line)
	p.Legend.Add(label, line)
	return nil
}

// SavePlot saves p at the given size in inches, in the format given by the
// path's extension.
func SavePlot(p *plot.Plot, path string, w, h float64) error {
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".png", ".svg", ".pdf":
	default:
		return fmt.Errorf("plot %s: unsupported format %q (use .png, .svg or .pdf)", path, ext)
	}
	return p.Save(vg.Length(w)*vg.Inch, vg.Length(h)*vg.Inch, path)
}
