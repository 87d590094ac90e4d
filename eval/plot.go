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
	p.Add(plotter.NewGrid())
	return SavePlot(p, path, 7, 4.5)
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
