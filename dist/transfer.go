package dist

import (
	"fmt"
	"unsafe"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/vek"
)

// Reduction is how a collective combines the ranks' values, element by
// element.
type Reduction int

const (
	// Sum adds the ranks' values (MPI_SUM).
	Sum Reduction = iota
	// Mean adds them and divides by the number of ranks.
	Mean
	// Max keeps the largest (MPI_MAX).
	Max
)

// String is "sum", "mean" or "max".
func (r Reduction) String() string {
	switch r {
	case Sum:
		return "sum"
	case Mean:
		return "mean"
	case Max:
		return "max"
	}
	return fmt.Sprintf("Reduction(%d)", int(r))
}

// buffer is a tensor's memory as MPI sees it: its first element, its
// number of elements and its MPI datatype.
type buffer struct {
	ptr   unsafe.Pointer
	count uintptr
	dtype uintptr
}

// bufferOf describes t for MPI. The op's Type has already checked that t
// is float32 or float64; an empty tensor gives a nil pointer and count 0.
func (c *Comm) bufferOf(what string, t *tensor.Dense) (buffer, error) {
	n, err := c.count(what, t.Size())
	if err != nil {
		return buffer{}, err
	}
	b := buffer{count: n}
	if t.Dtype() == graph.Float32 {
		b.ptr, b.dtype = unsafe.Pointer(unsafe.SliceData(t.Float32s())), c.lib.float32
	} else {
		b.ptr, b.dtype = unsafe.Pointer(unsafe.SliceData(t.Float64s())), c.lib.float64
	}
	return b, nil
}

// newCall is the call of the blocking MPI function fn, whose
// nonblocking twin is nb, with args, reading src and writing dst (the
// same buffer, or nil, where it is src).
func newCall(fn, nb uintptr, src, dst buffer, args ...uintptr) mpiCall {
	m := mpiCall{fn: fn, nonblocking: nb, n: len(args), keep: [2]unsafe.Pointer{src.ptr, dst.ptr}}
	copy(m.args[:], args)
	return m
}

// opOf is r's MPI_Op: Mean is a sum, divided afterwards.
func (l *library) opOf(r Reduction) uintptr {
	if r == Max {
		return l.max
	}
	return l.sum
}

// allReduce sets out to the reduction r of every rank's in.
func (c *Comm) allReduce(out, in *tensor.Dense, r Reduction, a *agreement) error {
	const what = "AllReduce"
	src, dst, done, err := c.buffers(what, out, in, a)
	if done {
		return err
	}
	l := c.lib
	send := uintptr(src.ptr)
	if src.ptr == dst.ptr {
		send = l.inPlace // the compiler gave out in's buffer (AllReduceOp.InPlace)
	}
	m := newCall(l.allreduce, l.iallreduce, src, dst, send, uintptr(dst.ptr), src.count, src.dtype, l.opOf(r), l.world)
	err = c.collective(what, &m)
	if err == nil && r == Mean {
		scaleTensor(out, 1/float64(c.size))
	}
	return err
}

// broadcast sets out to root's in on every rank.
func (c *Comm) broadcast(out, in *tensor.Dense, root int, a *agreement) error {
	const what = "Broadcast"
	if done, err := c.single(what, out, in); done {
		return err
	}
	if err := c.agree(what, a, in); err != nil {
		return err
	}
	if c.rank == root {
		copyTensor(out, in)
	}
	b, err := c.bufferOf(what, out)
	if err != nil {
		return err
	}
	l := c.lib
	m := newCall(l.bcast, l.ibcast, b, b, uintptr(b.ptr), b.count, b.dtype, uintptr(root), l.world)
	return c.collective(what, &m)
}

// reduceTo sets out to the sum of every rank's in on root, and to zeros
// on the other ranks.
func (c *Comm) reduceTo(out, in *tensor.Dense, root int, a *agreement) error {
	const what = "ReduceTo"
	src, dst, done, err := c.buffers(what, out, in, a)
	if done {
		return err
	}
	l := c.lib
	m := newCall(l.reduce, l.ireduce, src, dst, uintptr(src.ptr), uintptr(dst.ptr), src.count, src.dtype, l.sum, uintptr(root), l.world)
	err = c.collective(what, &m)
	if err == nil && c.rank != root {
		scaleTensor(out, 0)
	}
	return err
}

// allGather sets out, Size() times in's elements, to every rank's in in
// rank order.
func (c *Comm) allGather(out, in *tensor.Dense, a *agreement) error {
	const what = "AllGather"
	src, dst, done, err := c.buffers(what, out, in, a)
	if done {
		return err
	}
	l := c.lib
	m := newCall(l.allgather, l.iallgather, src, dst, uintptr(src.ptr), src.count, src.dtype, uintptr(dst.ptr), src.count, dst.dtype, l.world)
	return c.collective(what, &m)
}

// reduceScatter sets out to this rank's block (of Size() equal blocks) of
// the reduction r of every rank's in.
func (c *Comm) reduceScatter(out, in *tensor.Dense, r Reduction, a *agreement) error {
	const what = "ReduceScatter"
	src, dst, done, err := c.buffers(what, out, in, a)
	if done {
		return err
	}
	l := c.lib
	m := newCall(l.reduceScatterBlock, l.ireduceScatterBlock, src, dst, uintptr(src.ptr), uintptr(dst.ptr), dst.count, src.dtype, l.opOf(r), l.world)
	err = c.collective(what, &m)
	if err == nil && r == Mean {
		scaleTensor(out, 1/float64(c.size))
	}
	return err
}

// buffers begins collective what from in to out: it reports done (with
// single's error) where a single rank has copied in to out or in's
// buffer is an error, or the ranks' ins differ (see agree), and otherwise
// gives in's and out's buffers.
func (c *Comm) buffers(what string, out, in *tensor.Dense, a *agreement) (src, dst buffer, done bool, err error) {
	if done, err := c.single(what, out, in); done {
		return buffer{}, buffer{}, true, err
	}
	if err := c.agree(what, a, in); err != nil {
		return buffer{}, buffer{}, true, err
	}
	if src, err = c.bufferOf(what, in); err != nil {
		return buffer{}, buffer{}, true, err
	}
	dst, _ = c.bufferOf(what, out)
	return src, dst, false, nil
}

// single does collective what of a single rank, which copies in to out,
// and reports whether it did so or failed: a closed Comm's collectives
// are errors alone as under MPI, so that a program that calls one after
// Close fails as one process too.
func (c *Comm) single(what string, out, in *tensor.Dense) (done bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return true, fmt.Errorf("dist: %s on %v after Close", what, c)
	case c.failed != nil:
		return true, c.failed
	case c.alone():
		copyTensor(out, in)
		return true, nil
	}
	return false, nil
}

// copyTensor copies in's elements into out, of the same dtype and size;
// nothing where they share their buffer.
func copyTensor(out, in *tensor.Dense) {
	if out.Uintptr() == in.Uintptr() {
		return
	}
	if out.Dtype() == graph.Float32 {
		copy(out.Float32s(), in.Float32s())
	} else {
		copy(out.Float64s(), in.Float64s())
	}
}

// scaleTensor multiplies t's elements by s.
func scaleTensor(t *tensor.Dense, s float64) {
	if t.Dtype() == graph.Float32 {
		x := t.Float32s()
		vek.Scale(x, x, float32(s))
	} else {
		x := t.Float64s()
		vek.Scale(x, x, s)
	}
}
