/* The baseline of BenchmarkAllReduce: MPI_Allreduce of float32 sums, the
 * call dist makes, timed from C. Usage: allreduce bytes iterations
 * [blocking]; prints the mean seconds per call on rank 0. Without
 * "blocking" it makes dist's calls exactly (MPI_Iallreduce, then
 * MPI_Test until done); with it, MPI_Allreduce. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	long bytes = atol(argv[1]);
	int iters = atoi(argv[2]);
	int blocking = argc > 3 && strcmp(argv[3], "blocking") == 0;
	int n = (int)(bytes / 4), rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	float *in = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
	for (int i = 0; i < n; i++) in[i] = (float)(i % 13);
	double start = 0;
	for (int it = -2; it < iters; it++) { /* two warm-up calls */
		if (it == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			start = MPI_Wtime();
		}
		if (blocking) {
			MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		} else {
			MPI_Request req;
			int done = 0;
			MPI_Iallreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
			while (!done) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
		}
	}
	double t = (MPI_Wtime() - start) / iters;
	if (rank == 0) printf("%ld %.9f\n", bytes, t);
	free(in);
	free(out);
	MPI_Finalize();
	return 0;
}
