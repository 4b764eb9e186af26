//go:build plot

package main

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// canPlot says that this build draws -plot's figure: gonum.org/v1/plot,
// its fonts and its LaTeX renderer are in it.
const canPlot = true

// plotLosses draws the training and test loss of each epoch to path (its
// extension picks the format: .png, .svg, .pdf).
func plotLosses(path string, res Result) error {
	p := plot.New()
	p.Title.Text = "MLP training"
	p.X.Label.Text = "epoch"
	p.Y.Label.Text = "cross-entropy loss"
	p.Legend.Top = true
	for _, series := range []struct {
		name   string
		losses []float64
		color  color.Color
	}{
		{"training loss", res.TrainLoss, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}},
		{"test loss", res.TestLoss, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}},
	} {
		xys := make(plotter.XYs, len(series.losses))
		for i, l := range series.losses {
			xys[i] = plotter.XY{X: float64(i + 1), Y: l}
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("mlp: plot: %w", err)
		}
		line.Color, points.Color = series.color, series.color
		p.Add(line, points)
		p.Legend.Add(series.name, line, points)
	}
	p.Add(plotter.NewGrid())
	if err := p.Save(6*vg.Inch, 4*vg.Inch, path); err != nil {
		return fmt.Errorf("mlp: plot: %w", err)
	}
	return nil
}
