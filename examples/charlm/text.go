package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"unicode/utf8"

	"gorgonia.org/tensor"
)

// corpus is a text as indices into its vocabulary (its distinct
// characters, sorted), split into a training part and a validation part
// that follows it.
type corpus struct {
	vocab      []rune
	index      map[rune]int64
	train, val []int64
}

// readCorpus reads a UTF-8 text file and holds out its last valFraction
// for validation.
func readCorpus(path string, valFraction float64) (*corpus, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("charlm: %w", err)
	}
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("charlm: %s is not UTF-8 text", path)
	}
	return newCorpus(string(raw), valFraction)
}

// newCorpus encodes text and splits it: the first 1-valFraction of its
// characters for training, the rest for validation.
func newCorpus(text string, valFraction float64) (*corpus, error) {
	if !(valFraction > 0 && valFraction < 1) {
		return nil, fmt.Errorf("charlm: the validation fraction %v is not in (0, 1)", valFraction)
	}
	c := &corpus{index: map[rune]int64{}}
	for _, r := range text {
		if _, ok := c.index[r]; !ok {
			c.index[r] = 0
			c.vocab = append(c.vocab, r)
		}
	}
	slices.Sort(c.vocab)
	for i, r := range c.vocab {
		c.index[r] = int64(i)
	}
	ids, err := c.encode(text)
	if err != nil {
		return nil, err
	}
	cut := int(float64(len(ids)) * (1 - valFraction))
	c.train, c.val = ids[:cut], ids[cut:]
	return c, nil
}

// encode maps text to indices; a character outside the vocabulary is an
// error.
func (c *corpus) encode(text string) ([]int64, error) {
	ids := make([]int64, 0, len(text))
	for _, r := range text {
		i, ok := c.index[r]
		if !ok {
			return nil, fmt.Errorf("charlm: %q is not in the vocabulary", r)
		}
		ids = append(ids, i)
	}
	return ids, nil
}

// decode maps indices back to text.
func (c *corpus) decode(ids []int64) string {
	var b strings.Builder
	for _, i := range ids {
		b.WriteRune(c.vocab[i])
	}
	return b.String()
}

// windows cuts text into batches of rows of context+1 characters: inputs
// x (rows, context) and, shifted by one, targets y (rows, context).
type windows struct {
	text    []int64
	context int
	x, y    *tensor.Dense
}

// newWindows holds batches of rows windows of text.
func newWindows(text []int64, rows, context int) (*windows, error) {
	if len(text) < context+1 {
		return nil, fmt.Errorf("charlm: %d characters are too few for windows of %d", len(text), context+1)
	}
	return &windows{
		text:    text,
		context: context,
		x:       tensor.New(tensor.WithShape(rows, context), tensor.Of(tensor.Int64)),
		y:       tensor.New(tensor.WithShape(rows, context), tensor.Of(tensor.Int64)),
	}, nil
}

// fill writes window r of the batch, starting at character start.
func (w *windows) fill(r, start int) {
	x, y, l := w.x.Int64s(), w.y.Int64s(), w.context
	copy(x[r*l:(r+1)*l], w.text[start:start+l])
	copy(y[r*l:(r+1)*l], w.text[start+1:start+l+1])
}

// random fills the batch with windows starting at random characters.
func (w *windows) random(rng *rand.Rand) {
	for r := range w.x.Shape()[0] {
		w.fill(r, rng.IntN(len(w.text)-w.context))
	}
}

// count is how many windows of context characters, without overlap, the
// text has (the last target of each is the next window's first input).
func (w *windows) count() int { return (len(w.text) - 1) / w.context }

// sequential fills the batch with windows first, first+1, ... of the
// text's non-overlapping windows, and returns how many it filled (fewer
// than the batch's rows at the end of the text: the rest keep old data).
func (w *windows) sequential(first int) int {
	n := min(w.x.Shape()[0], w.count()-first)
	for r := range n {
		w.fill(r, (first+r)*w.context)
	}
	return n
}

// findText looks for the text shipped in testdata, from the repository
// (go run) or from this folder (go test).
func findText() string {
	candidates := []string{
		filepath.Join("examples", "charlm", "testdata", "shakespeare.txt"),
		filepath.Join("testdata", "shakespeare.txt"),
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		candidates = append(candidates, filepath.Join(filepath.Dir(file), "testdata", "shakespeare.txt"))
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	return candidates[0]
}
