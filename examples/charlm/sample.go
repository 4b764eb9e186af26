package main

import (
	"math"
	"math/rand/v2"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/data"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// pick draws an index with probability softmax(logits/temperature),
// computed with the largest logit subtracted so it cannot overflow; a
// temperature ≤ 0 picks the largest logit.
func pick(logits []float64, temperature float64, rng *rand.Rand) int {
	best := data.Argmax(logits)
	if temperature <= 0 {
		return best
	}
	var total float64
	weights := make([]float64, len(logits))
	for i, l := range logits {
		weights[i] = math.Exp((l - logits[best]) / temperature)
		total += weights[i]
	}
	u := rng.Float64() * total
	for i, w := range weights {
		if u < w {
			return i
		}
		u -= w
	}
	return best // u rounded past the last weight
}

// sampler continues a text one character at a time: each step runs the
// model on the last context characters and draws the next from the
// logits of the last position.
type sampler struct {
	r       *vm.Runner
	x, last *graph.Node // the input (1, context) and the logits (1, vocab) it gives
	c       *corpus
}

// continuation draws n characters after prompt, with the given
// temperature and seed. A prompt shorter than the context is padded on
// the left with newlines (or the vocabulary's first character, when the
// text has no newline); a longer one is cut to its last context characters.
func (s *sampler) continuation(prompt string, n int, temperature float64, seed uint64) (string, error) {
	ids, err := s.c.encode(prompt)
	if err != nil {
		return "", err
	}
	l := s.x.Shape()[1]
	pad, ok := s.c.index['\n']
	if !ok {
		pad = 0
	}
	window := make([]int64, l, l+n)
	for i := range window {
		window[i] = pad
	}
	window = append(window, ids...)
	window = window[len(window)-l:]
	in := tensor.New(tensor.WithShape(1, l), tensor.Of(tensor.Int64))
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	out := make([]int64, 0, n)
	for range n {
		copy(in.Int64s(), window[len(window)-l:])
		if err := s.r.Run(vm.Feeds{s.x: in}); err != nil {
			return "", err
		}
		logits, err := s.r.Value(s.last)
		if err != nil {
			return "", err
		}
		next := int64(pick(graph.Float64s(logits), temperature, rng))
		out = append(out, next)
		window = append(window, next)
	}
	return s.c.decode(out), nil
}
