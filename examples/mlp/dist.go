//go:build mpi

package main

import (
	"github.com/nabla-go/nabla/dist"
	"github.com/nabla-go/nabla/nn"
)

// comm is a dist.Comm as the Cluster Train uses.
type comm struct{ *dist.Comm }

// DataParallel averages the gradients over the processes.
func (c comm) DataParallel() nn.TrainingOption { return dist.DataParallel(c.Comm) }

// openCluster joins the processes of the MPI launch (rank 0 of 1 without
// one).
func openCluster() (cluster, error) {
	c, err := dist.Init()
	if err != nil {
		return nil, err
	}
	return comm{c}, nil
}
