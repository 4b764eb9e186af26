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
	ptr   uintptr
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
		b.ptr, b.dtype = uintptr(unsafe.Pointer(unsafe.SliceData(t.Float32s()))), c.lib.float32
	} else {
		b.ptr, b.dtype = uintptr(unsafe.Pointer(unsafe.SliceData(t.Float64s()))), c.lib.float64
	}
	return b, nil
}

// opOf is r's MPI_Op: Mean is a sum, divided afterwards.
func (l *library) opOf(r Reduction) uintptr {
	if r == Max {
		return l.max
	}
	return l.sum
}

// allReduce sets out to the reduction r of every rank's in.
func (c *Comm) allReduce(out, in *tensor.Dense, r Reduction) error {
	const what = "AllReduce"
	if done, err := c.single(what, out, in); done {
		return err
	}
	src, err := c.bufferOf(what, in)
	if err != nil {
		return err
	}
	dst, _ := c.bufferOf(what, out)
	err = c.collective(what, func(l *library, req *uintptr) int32 {
		return call(l.iallreduce, src.ptr, dst.ptr, src.count, src.dtype, l.opOf(r), l.world, uintptr(unsafe.Pointer(req)))
	})
	if err == nil && r == Mean {
		scaleTensor(out, 1/float64(c.size))
	}
	return err
}

// broadcast sets out to root's in on every rank.
func (c *Comm) broadcast(out, in *tensor.Dense, root int) error {
	const what = "Broadcast"
	if done, err := c.single(what, out, in); done {
		return err
	}
	if c.rank == root {
		copyTensor(out, in)
	}
	b, err := c.bufferOf(what, out)
	if err != nil {
		return err
	}
	return c.collective(what, func(l *library, req *uintptr) int32 {
		return call(l.ibcast, b.ptr, b.count, b.dtype, uintptr(root), l.world, uintptr(unsafe.Pointer(req)))
	})
}

// reduceTo sets out to the sum of every rank's in on root, and to zeros
// on the other ranks.
func (c *Comm) reduceTo(out, in *tensor.Dense, root int) error {
	const what = "ReduceTo"
	if done, err := c.single(what, out, in); done {
		return err
	}
	src, err := c.bufferOf(what, in)
	if err != nil {
		return err
	}
	dst, _ := c.bufferOf(what, out)
	err = c.collective(what, func(l *library, req *uintptr) int32 {
		return call(l.ireduce, src.ptr, dst.ptr, src.count, src.dtype, l.sum, uintptr(root), l.world, uintptr(unsafe.Pointer(req)))
	})
	if err == nil && c.rank != root {
		scaleTensor(out, 0)
	}
	return err
}

// allGather sets out, Size() times in's elements, to every rank's in in
// rank order.
func (c *Comm) allGather(out, in *tensor.Dense) error {
	const what = "AllGather"
	if done, err := c.single(what, out, in); done {
		return err
	}
	src, err := c.bufferOf(what, in)
	if err != nil {
		return err
	}
	dst, _ := c.bufferOf(what, out)
	return c.collective(what, func(l *library, req *uintptr) int32 {
		return call(l.iallgather, src.ptr, src.count, src.dtype, dst.ptr, src.count, dst.dtype, l.world, uintptr(unsafe.Pointer(req)))
	})
}

// reduceScatter sets out to this rank's block (of Size() equal blocks) of
// the reduction r of every rank's in.
func (c *Comm) reduceScatter(out, in *tensor.Dense, r Reduction) error {
	const what = "ReduceScatter"
	if done, err := c.single(what, out, in); done {
		return err
	}
	src, err := c.bufferOf(what, in)
	if err != nil {
		return err
	}
	dst, _ := c.bufferOf(what, out)
	err = c.collective(what, func(l *library, req *uintptr) int32 {
		return call(l.ireduceScatterBlock, src.ptr, dst.ptr, dst.count, src.dtype, l.opOf(r), l.world, uintptr(unsafe.Pointer(req)))
	})
	if err == nil && r == Mean {
		scaleTensor(out, 1/float64(c.size))
	}
	return err
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

// copyTensor copies in's elements into out, of the same dtype and size.
func copyTensor(out, in *tensor.Dense) {
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
