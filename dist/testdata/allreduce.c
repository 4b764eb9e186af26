/* The baseline of TestAllReduceOverhead: all-reduces of float32 sums
 * timed from C. Usage: allreduce bytes iterations [spin|yield|blocking];
 * prints, on rank 0, "bytes seconds-per-call voluntary involuntary
 * faults": the mean time of a call and the process's context switches
 * and minor page faults per call (getrusage), as dist's side of the test
 * prints them. "spin" (the default) calls MPI_Iallreduce, then MPI_Test
 * until done (as dist polls where the machine has no more runnable
 * threads than cpus); "yield" polls as dist does on a crowded machine
 * (without pause for 50 us, then yielding the processor between polls,
 * napping 100 us between them after 1 s); "blocking" calls
 * MPI_Allreduce, the call dist makes below 32 MB on a machine that is
 * not crowded. The buffers are as dist's side has them: page-aligned,
 * written before the first call; MPI is initialised at the thread level
 * dist asks for (MPI_THREAD_SERIALIZED), and two calls warm up. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <sys/resource.h>

int main(int argc, char **argv) {
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
	long bytes = atol(argv[1]);
	int iters = atoi(argv[2]);
	const char *mode = argc > 3 ? argv[3] : "spin";
	int blocking = strcmp(mode, "blocking") == 0, yield = strcmp(mode, "yield") == 0;
	int n = (int)(bytes / 4), rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	float *in, *out;
	if (posix_memalign((void **)&in, 4096, n * sizeof(float)) || posix_memalign((void **)&out, 4096, n * sizeof(float))) {
		return 1;
	}
	for (int i = 0; i < n; i++) in[i] = (float)(i % 13);
	memset(out, 0, n * sizeof(float));
	double start = 0;
	struct rusage r0, r1;
	for (int it = -2; it < iters; it++) { /* two warm-up calls */
		if (it == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			getrusage(RUSAGE_SELF, &r0);
			start = MPI_Wtime();
		}
		if (blocking) {
			MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		} else {
			MPI_Request req;
			int done = 0;
			MPI_Iallreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
			double t0 = MPI_Wtime();
			for (int i = 0; !done; i++) {
				MPI_Test(&req, &done, MPI_STATUS_IGNORE);
				if (done || !yield || i < 16) continue;
				double waited = MPI_Wtime() - t0;
				if (waited > 1.0) {
					struct timespec nap = {0, 100000};
					nanosleep(&nap, NULL);
				} else if (waited > 50e-6) {
					sched_yield();
				}
			}
		}
	}
	double t = (MPI_Wtime() - start) / iters;
	getrusage(RUSAGE_SELF, &r1);
	if (rank == 0) {
		printf("%ld %.9f %.3f %.3f %.3f\n", bytes, t, (double)(r1.ru_nvcsw - r0.ru_nvcsw) / iters,
			(double)(r1.ru_nivcsw - r0.ru_nivcsw) / iters, (double)(r1.ru_minflt - r0.ru_minflt) / iters);
	}
	free(in);
	free(out);
	MPI_Finalize();
	return 0;
}
