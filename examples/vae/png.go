package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
)

// gridScale is the side, in image pixels, of one digit's pixel.
const gridScale = 4

// writeGrid writes 64 digits of 8×8 pixel intensities in [0, 1] (white
// strokes on black, as the digits are drawn) to path as an 8×8 grid of
// images, a pixel of gap between them, in PNG.
func writeGrid(path string, pixels []float64) (err error) {
	const side, per = 8, 8 // digits per row of the grid, pixels per digit's row
	if len(pixels) != side*side*per*per {
		return fmt.Errorf("vae: %d pixels for a grid of %d digits", len(pixels), side*side)
	}
	cell := per*gridScale + 1
	img := image.NewGray(image.Rect(0, 0, side*cell+1, side*cell+1))
	for i := range img.Pix {
		img.Pix[i] = 0x80 // the gaps
	}
	for k := range side * side {
		x0, y0 := 1+(k%side)*cell, 1+(k/side)*cell
		for p := range per * per {
			v := uint8(math.Round(255 * min(max(pixels[k*per*per+p], 0), 1)))
			for dy := range gridScale {
				for dx := range gridScale {
					img.SetGray(x0+(p%per)*gridScale+dx, y0+(p/per)*gridScale+dy, color.Gray{Y: v})
				}
			}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("vae: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("vae: %w", cerr)
		}
	}()
	if err := png.Encode(f, img); err != nil {
		return fmt.Errorf("vae: %s: %w", path, err)
	}
	return nil
}
