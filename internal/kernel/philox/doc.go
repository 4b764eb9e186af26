// Package philox fills slices with Philox-4x32-10 random bits turned into
// float32 standard normal values, the hot loop of nabla's random ops.
//
// Block b of a stream is Philox-4x32-10 (Salmon, Moraes, Dror and Shaw,
// "Parallel random numbers: as easy as 1, 2, 3", SC 2011) of the counter
// (b, c₁, c₂, c₃) under a 64-bit key; its four words give two Box–Muller
// pairs, each computed by a fixed sequence of correctly rounded float32
// operations (never fused) so that another implementation doing the same
// operations gets the same bits. The loops here give the values of the
// one-pair-at-a-time reference in package ops bit for bit; they gain their
// speed from layout alone: two blocks' rounds interleaved, the log's
// mantissa reduction and the sine and cosine's quarter-turn selection done
// with integer masks instead of unpredictable branches, and the Horner
// steps written out.
package philox
