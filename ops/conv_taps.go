package ops

import "github.com/nabla-go/nabla/internal/kernel/conv"

// The forward convolution by taps (internal/kernel/conv), for few
// channels: with stride 1, output position s = i·ow + j reads input
// (i + p·dh, j + q·dw) for tap (c, p, q). The kernel copies each image,
// padded, kw times, column shift q·dw - left of it rows ow wide:
// copy (q, c) row r holds the padded input's row r from column q·dw on.
// Tap (c, p, q) then reads that copy at s + p·dh·ow, one offset for all
// the output positions, and the product sums the taps for six output
// channels and 64 positions (32 float64) at a time, the filter's values
// broadcast from memory. It copies kw times the image where the
// unfolding copies kh·kw times it, in runs of a row (LeNet's: 24 and 8
// elements) that the copy kernel moves with one masked vector each, and
// the product computes only the output's positions.

// tapsMaxIn and tapsMaxOut are the most input and output channels per
// group the forward convolution runs by taps for: beyond them the
// unfolding's product, blocked for the caches, is the surer choice.
const tapsMaxIn, tapsMaxOut = 16, 32

// tapsChunk is the output positions a unit computes for every block of
// output channels before it moves on: the copies' rows they read stay in
// the core's caches from block to block however large the image.
const tapsChunk = 256

// convTaps switches the forward convolution by taps on where the
// assembly kernels run; tests switch it off to check the other paths.
var convTaps = conv.Available()

// forwardPath is how the forward convolution of g runs.
type forwardPath int

const (
	pathUnfold forwardPath = iota // im2col (none for 1×1) and a product per image
	pathWide                      // the wide unfolding of chunks of images (conv_wide.go)
	pathTaps                      // by taps, image by image (this file)
)

// forwardPath chooses the forward kernel: by taps for stride 1 and few
// channels (where its copies are no larger than the unfolding, whose size
// checkColumns bounds), else wide for short rows without padding, else
// the unfolding.
func (g geom) forwardPath() forwardPath {
	switch {
	case g.direct():
		return pathUnfold
	case convTaps && g.stride == [2]int{1, 1} && 0 < g.cg && g.cg <= tapsMaxIn && g.og <= tapsMaxOut && g.tapsRows() <= g.kh*g.oh:
		return pathTaps
	case g.wide():
		return pathWide
	}
	return pathUnfold
}

// tapsRows is the padded image's rows: those the output reads.
func (g geom) tapsRows() int { return g.h + g.pad[0] + g.pad[1] }

// tapsBlocks is the blocks of output channels, of conv.MaxRows, per group.
func (g geom) tapsBlocks() int { return (g.og + conv.MaxRows - 1) / conv.MaxRows }

// tapsUnits is the forward kernel's units: images, or where there are
// fewer images than threads, each image's blocks of output channels of
// each group.
func (g geom) tapsUnits(threads int) (units, perImage int) {
	if g.n >= threads {
		return g.n, 1
	}
	return g.n * g.groups * g.tapsBlocks(), g.groups * g.tapsBlocks()
}

// tapsPrepare sizes the parts' copies and lays out the taps' offsets and
// the weight, per group and block of output channels, tap by tap: block
// b of group grp (rows output channels) at (grp·og + b·MaxRows)·k holds
// w[o, t] at t·rows + o - its first.
func (r *convRun[T]) tapsPrepare() {
	g := r.g
	k, plane := g.k(), g.tapsRows()*g.ow
	for p := range r.parts {
		r.cols[p] = grow(r.cols[p], g.kw*g.cg*plane)
	}
	r.offs = r.offs[:0]
	for c := range g.cg {
		for p := range g.kh {
			for q := range g.kw {
				r.offs = append(r.offs, (q*g.cg+c)*plane+p*g.dilation[0]*g.ow)
			}
		}
	}
	r.off = conv.NewOffsets(r.offs)
	r.packed = grow(r.packed, len(r.w))
	for grp := range g.groups {
		for o0 := 0; o0 < g.og; o0 += conv.MaxRows {
			rows := min(conv.MaxRows, g.og-o0)
			base := (grp*g.og + o0) * k
			for t := range k {
				for o := range rows {
					r.packed[base+t*rows+o] = r.w[base+o*k+t]
				}
			}
		}
	}
}

// tapsUnit computes unit u of the forward convolution by taps: image
// u/perImage, all of it or (perImage > 1) one block of output channels
// of one group.
func (r *convRun[T]) tapsUnit(part, u int) {
	g := r.g
	blocks, ohw, k := g.tapsBlocks(), g.oh*g.ow, g.k()
	n := u / r.perImage
	grp0, grp1, b0, b1 := 0, g.groups, 0, blocks
	if r.perImage > 1 {
		piece := u % r.perImage
		grp0, b0 = piece/blocks, piece%blocks
		grp1, b1 = grp0+1, b0+1
	}
	buf := r.cols[part]
	for grp := grp0; grp < grp1; grp++ {
		r.tapsCopy(buf, n, grp)
		for s := 0; s < ohw; s += tapsChunk {
			for b := b0; b < b1; b++ {
				o0 := grp*g.og + b*conv.MaxRows
				rows := min(conv.MaxRows, (grp+1)*g.og-o0)
				conv.Taps(r.y[(n*g.o+o0)*ohw+s:], ohw, buf[s:], r.off, r.packed[o0*k:(o0+rows)*k], rows, min(tapsChunk, ohw-s))
			}
		}
	}
}

// tapsCopy copies group grp of image n into buf: for each column shift
// q and channel c, the padded image's rows, ow wide, from column
// q·dw - left on, zero in the padding.
func (r *convRun[T]) tapsCopy(buf []T, n, grp int) {
	g := r.g
	hw, rows := g.h*g.w, g.tapsRows()
	plane := rows * g.ow
	x := r.x[(n*g.c+grp*g.cg)*hw : (n*g.c+grp*g.cg+g.cg)*hw]
	padded := g.pad != [4]int{}
	if padded {
		clear(buf)
	}
	for q := range g.kw {
		shift := q*g.dilation[1] - g.pad[2]
		j0, j1 := max(0, -shift), min(g.ow, g.w-shift) // columns that read the input
		if j0 >= j1 {
			continue
		}
		dst := buf[q*g.cg*plane+g.pad[0]*g.ow+j0:]
		src := x[j0+shift:]
		if g.pad[0] == 0 && g.pad[1] == 0 { // the channels' rows follow one another in both
			conv.CopyRows(dst, g.ow, src, g.w, g.cg*g.h, j1-j0)
			continue
		}
		for c := range g.cg {
			conv.CopyRows(dst[c*plane:], g.ow, src[c*hw:], g.w, g.h, j1-j0)
		}
	}
}
