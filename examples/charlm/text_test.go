package main

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCorpus(t *testing.T) {
	c, err := newCorpus("to be, or not to be\nthat is", 0.25)
	require.NoError(t, err)
	require.Equal(t, []rune("\n ,abehinorst"), c.vocab)
	require.Equal(t, 20, len(c.train)) // the first 75% of 27 characters, rounded down
	require.Equal(t, "to be, or not to be\nthat is", c.decode(append(slices.Clone(c.train), c.val...)))
	require.Equal(t, []int64{12, 9}, c.train[:2]) // "t" and "o" by their places in the sorted vocabulary

	_, err = c.encode("toby")
	require.ErrorContains(t, err, `'y' is not in the vocabulary`)
	_, err = newCorpus("abc", 0)
	require.ErrorContains(t, err, "validation fraction 0")

	shipped, err := readCorpus(findText(), 0.1)
	require.NoError(t, err)
	require.Len(t, shipped.vocab, 62)
	require.Equal(t, 299868, len(shipped.train)+len(shipped.val))
}

// Windows hold text[s:s+l] as inputs and text[s+1:s+l+1] as targets.
func TestWindows(t *testing.T) {
	text := make([]int64, 50)
	for i := range text {
		text[i] = int64(i)
	}
	w, err := newWindows(text, 3, 7)
	require.NoError(t, err)
	require.Equal(t, 7, w.count()) // 49 targets follow an input
	require.Equal(t, 3, w.sequential(0))
	require.Equal(t, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, w.x.Int64s())
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}, w.y.Int64s())
	require.Equal(t, 1, w.sequential(6))
	require.Equal(t, []int64{42, 43, 44, 45, 46, 47, 48}, w.x.Int64s()[:7])
	require.Equal(t, []int64{43, 44, 45, 46, 47, 48, 49}, w.y.Int64s()[:7])

	w.random(rand.New(rand.NewPCG(1, 2)))
	x, y := w.x.Int64s(), w.y.Int64s()
	for r := range 3 {
		start := x[r*7]
		for i := range 7 {
			require.Equal(t, start+int64(i), x[r*7+i])
			require.Equal(t, start+int64(i)+1, y[r*7+i])
		}
		require.LessOrEqual(t, start+7, int64(49))
	}

	_, err = newWindows(text, 1, 50)
	require.ErrorContains(t, err, "too few")
}

func TestFirstLine(t *testing.T) {
	require.Equal(t, "GLOUCESTER:\n", firstLine("the end of a speech.\n\nGLOUCESTER:\nNow is the winter"))
	require.Equal(t, "one line\n", firstLine("one line\ntwo"))
	require.Equal(t, "no newline", firstLine("no newline"))
}
