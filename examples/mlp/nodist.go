//go:build !mpi

package main

import "errors"

// openCluster says how to build the command with MPI: without -tags mpi
// it is a static binary that loads no C library.
func openCluster() (cluster, error) {
	return nil, errors.New("this build has no MPI: build it with go build -tags mpi ./examples/mlp, then launch it with mpirun -np 2 ./mlp -dist")
}
