package dist

import "unsafe"

// LocalRank is this process's number among the group's processes on its
// own machine, from 0 to LocalSize()-1, in the order of their ranks: the
// GPU a rank uses where a machine has one GPU per rank (PyTorch's
// LOCAL_RANK), as in
//
//	dev, err := cuda.Open(comm.LocalRank())
//
// (NCCL refuses two ranks on one GPU). MPI says which processes share a
// machine (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED), whatever the
// launcher. 0 for a process no launcher started, and for a nil or zero
// Comm.
func (c *Comm) LocalRank() int {
	if c == nil {
		return 0
	}
	return c.localRank
}

// LocalSize is the number of the group's processes on this process's
// machine (1 for a process no launcher started; 0 for a nil or zero Comm).
func (c *Comm) LocalSize() int {
	if c == nil {
		return 0
	}
	return c.localSize
}

// findLocal sets c's local rank and size from MPI's split of the group
// by shared memory, made and freed at once (a collective: every rank
// calls it from Init).
func (c *Comm) findLocal() error {
	if c.size == 1 {
		c.localRank, c.localSize = 0, 1
		return nil
	}
	l := c.lib
	var node uint64 // an MPI_Comm: a pointer in Open MPI, an int in MPICH (its low half)
	if r := call(l.commSplitType, l.world, l.commTypeShared, uintptr(c.rank), l.infoNull, uintptr(unsafe.Pointer(&node))); r != 0 {
		return c.mpiError("Init (finding the ranks on this machine)", r)
	}
	handle := uintptr(node)
	if l.name != openMPIABIName {
		handle = uintptr(uint32(node))
	}
	var rank, size int32
	r := call(l.commRank, handle, uintptr(unsafe.Pointer(&rank)))
	if r == 0 {
		r = call(l.commSize, handle, uintptr(unsafe.Pointer(&size)))
	}
	if r2 := call(l.commFree, uintptr(unsafe.Pointer(&node))); r == 0 {
		r = r2
	}
	if r != 0 {
		return c.mpiError("Init (finding the ranks on this machine)", r)
	}
	c.localRank, c.localSize = int(rank), int(size)
	return nil
}
