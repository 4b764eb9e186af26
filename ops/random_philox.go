package ops

import "github.com/nabla-go/nabla/internal/kernel/philox"

// Philox-4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers:
// as easy as 1, 2, 3", SC 2011; the generator behind cuRAND's Philox and
// PyTorch's CUDA generator) is a keyed bijection of a 128-bit counter: ten
// rounds of two 32×32→64-bit multiplications, with a Weyl sequence bumping
// the 64-bit key between rounds. Every block of four 32-bit words is a pure
// function of its counter and key, so any element of a random tensor can
// be computed alone, by any thread, on any device.
const (
	philoxM0 = philox.M0 // round multipliers
	philoxM1 = philox.M1
	philoxW0 = philox.W0 // key increments (golden ratio, √3 − 1)
	philoxW1 = philox.W1
)

// philox4x32 returns the Philox-4x32-10 block for counter ctr and key key.
func philox4x32(ctr [4]uint32, key [2]uint32) [4]uint32 {
	c0, c1, c2, c3 := ctr[0], ctr[1], ctr[2], ctr[3]
	k0, k1 := key[0], key[1]
	for r := 0; ; r++ {
		p0 := uint64(philoxM0) * uint64(c0)
		p1 := uint64(philoxM1) * uint64(c2)
		c0, c1, c2, c3 = uint32(p1>>32)^c1^k0, uint32(p1), uint32(p0>>32)^c3^k1, uint32(p0)
		if r == 9 {
			return [4]uint32{c0, c1, c2, c3}
		}
		k0 += philoxW0
		k1 += philoxW1
	}
}

// Stream names one stream of random bits: a 64-bit seed, the Philox key,
// and a 32-bit stream id. Block b of the stream at step s is Philox-4x32-10
// of the counter (b, low 32 bits of s, high 32 bits of s, id) under the key
// (low 32 bits of seed, high 32 bits of seed). Two nodes with different
// streams, or one node at two different steps, read disjoint counters.
type Stream struct {
	Seed uint64 // the generator's seed
	ID   uint32 // the stream's number within the generator
}

// block returns block b of the stream at step.
func (s Stream) block(step uint64, b uint32) [4]uint32 {
	return philox4x32([4]uint32{b, uint32(step), uint32(step >> 32), s.ID},
		[2]uint32{uint32(s.Seed), uint32(s.Seed >> 32)})
}

// blocks2 returns blocks b and b+1 of the stream at step, interleaving
// their rounds so that the processor overlaps the two chains of
// multiplications; each block is what block returns.
func (s Stream) blocks2(step uint64, b uint32) (x, y [4]uint32) {
	return philox.Blocks2(b, uint32(step), uint32(step>>32), s.ID, uint32(s.Seed), uint32(s.Seed>>32))
}
