//go:build plot

package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The build with -tags plot draws -plot's figure: a PNG of 6×4 inches at
// gonum/plot's 96 dots per inch.
func TestPlotWritesPNG(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Epochs, cfg.Hidden = 2, []int{16}
	cfg.Plot = filepath.Join(t.TempDir(), "loss.png")
	var out bytes.Buffer
	_, err := Train(cfg, &out)
	require.NoError(t, err)
	require.Contains(t, out.String(), "plotted the losses to "+cfg.Plot)
	f, err := os.Open(cfg.Plot)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	require.Equal(t, 576, img.Bounds().Dx())
	require.Equal(t, 384, img.Bounds().Dy())
}
