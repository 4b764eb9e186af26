// Package dist trains one model on several processes, on one machine or
// many, over MPI: each process (rank) runs the same program on its own
// share of the data, and collectives (AllReduce, Broadcast, AllGather,
// ReduceScatter, ReduceTo) combine their tensors. The collectives are
// graph ops with gradients, so a model can use them in its forward pass;
// DataParallel averages the gradients of a training step across ranks
// before the optimiser's update, as PyTorch's DistributedDataParallel
// does.
//
// MPI (Open MPI's libmpi.so.40, or MPICH's libmpich.so.12) is loaded when
// Init is called under a launcher, at run time and without cgo; of
// nabla's packages only this one and cuda load C libraries, so a program
// that does not import dist needs no MPI and stays a static binary. The
// program is started by the launcher, once per rank:
//
//	go build -o train .
//	mpirun -np 2 ./train
//
// A program started without a launcher is rank 0 of 1 and loads nothing.
//
// Failures: a collective waits for the other ranks at most the Comm's
// timeout (DefaultTimeout, or WithTimeout), then returns an error; MPI's
// own errors (a mismatch between ranks' calls, say) carry MPI's text for
// them. When a rank exits with an error, Open MPI's and MPICH's launchers
// end the others within seconds.
package dist
