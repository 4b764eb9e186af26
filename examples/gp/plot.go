package main

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// plotPoints is how many inputs the posterior is drawn at.
const plotPoints = 300

// plotPosterior draws the data, the posterior mean of f and the band
// mean ± 2σ at θ to path (its extension picks the format: .png, .svg, .pdf).
func plotPosterior(path string, d Data, theta Hyperparameters) error {
	lo, hi := d.X[0], d.X[0]
	for _, x := range d.X {
		lo, hi = min(lo, x), max(hi, x)
	}
	pad := 0.05 * (hi - lo)
	xs := make([]float64, plotPoints)
	for i := range xs {
		xs[i] = lo - pad + (hi-lo+2*pad)*float64(i)/float64(plotPoints-1)
	}
	mean, sd, err := Predict(d, theta, xs)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	band := make(plotter.XYs, 0, 2*plotPoints)
	meanLine := make(plotter.XYs, plotPoints)
	for i, x := range xs {
		band = append(band, plotter.XY{X: x, Y: mean[i] + 2*sd[i]})
		meanLine[i] = plotter.XY{X: x, Y: mean[i]}
	}
	for i := plotPoints - 1; i >= 0; i-- {
		band = append(band, plotter.XY{X: xs[i], Y: mean[i] - 2*sd[i]})
	}
	points := make(plotter.XYs, len(d.X))
	for i := range d.X {
		points[i] = plotter.XY{X: d.X[i], Y: d.Y[i]}
	}

	p := plot.New()
	p.Title.Text = "GP regression: posterior mean ± 2σ"
	p.X.Label.Text = "x"
	p.Y.Label.Text = "y"
	p.Legend.Top = true
	blue := color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	area, err := plotter.NewPolygon(band)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	area.Color = color.NRGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0x40}
	area.LineStyle.Width = 0
	line, err := plotter.NewLine(meanLine)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	line.Color, line.Width = blue, vg.Points(1.5)
	scatter, err := plotter.NewScatter(points)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	scatter.Color = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	p.Add(area, line, scatter, plotter.NewGrid())
	p.Legend.Add("mean ± 2σ", area)
	p.Legend.Add("posterior mean", line)
	p.Legend.Add("data", scatter)
	if err := p.Save(6*vg.Inch, 4*vg.Inch, path); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}
