// Command cgoallreduce is the middle term of TestAllReduceOverhead: the
// all-reduces of testdata/allreduce.c made from a Go program through cgo,
// so that what a Go process costs around MPI's call (its runtime's threads
// on the rank's core, cgo's entry and exit) is seen apart from what dist
// adds to it (purego's call, the handoff, the buffers' handling). Its
// arguments and output are allreduce.c's: bytes iterations
// [spin|blocking], and on rank 0 "bytes seconds-per-call voluntary
// involuntary faults". The buffers are Go's, written before the first
// call, as dist's are; GOMAXPROCS is what dist.Init makes it (2 where Go
// chose 1 and the environment sets none).
//
// Build with CGO_ENABLED=1 CC=mpicc.
package main

/*
#include <mpi.h>

static int init(void) {
	int provided;
	return MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
}
static int rank(void) {
	int r;
	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	return r;
}
static int size(void) {
	int s;
	MPI_Comm_size(MPI_COMM_WORLD, &s);
	return s;
}
static int barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }
static int allreduce(float *in, float *out, int n) {
	return MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}
static int spin(float *in, float *out, int n) {
	MPI_Request req;
	int done = 0, r = MPI_Iallreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
	while (r == 0 && !done) r = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
	return r;
}
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: cgoallreduce bytes iterations [spin|blocking]")
		os.Exit(2)
	}
	bytes, _ := strconv.Atoi(os.Args[1])
	iters, _ := strconv.Atoi(os.Args[2])
	blocking := len(os.Args) > 3 && os.Args[3] == "blocking"
	if os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2)
	}
	if C.init() != 0 {
		fmt.Fprintln(os.Stderr, "MPI_Init_thread failed")
		os.Exit(1)
	}
	n := bytes / 4
	in, out := make([]float32, n), make([]float32, n)
	for i := range in {
		in[i] = float32(i % 13)
	}
	clear(out)
	call := func() {
		var r C.int
		if blocking {
			r = C.allreduce((*C.float)(&in[0]), (*C.float)(&out[0]), C.int(n))
		} else {
			r = C.spin((*C.float)(&in[0]), (*C.float)(&out[0]), C.int(n))
		}
		if r != 0 {
			fmt.Fprintln(os.Stderr, "MPI_Allreduce failed:", r)
			os.Exit(1)
		}
	}
	call() // two to warm up
	call()
	C.barrier()
	var u0, u1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u0)
	start := time.Now()
	for range iters {
		call()
	}
	took := time.Since(start).Seconds() / float64(iters)
	syscall.Getrusage(syscall.RUSAGE_SELF, &u1)
	if C.rank() == 0 {
		k := float64(iters)
		fmt.Printf("%d %.9f %.3f %.3f %.3f\n", bytes, took, float64(u1.Nvcsw-u0.Nvcsw)/k, float64(u1.Nivcsw-u0.Nivcsw)/k, float64(u1.Minflt-u0.Minflt)/k)
	}
	for i, v := range out {
		if want := float32(int(C.size()) * (i % 13)); v != want {
			fmt.Fprintf(os.Stderr, "element %d of the sum is %v, want %v\n", i, v, want)
			os.Exit(1)
		}
	}
	C.MPI_Finalize()
}
