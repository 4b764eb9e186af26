/*
 * A stand-in for NCCL (libnccl.so.2) for the tests of package dist on
 * machines without a GPU: the same symbols with the same ABI, the
 * collectives done with MPI on host memory (the cuda package's host
 * stand-in for a GPU keeps its buffers there, and passes stream 0).
 * Built by the tests with the MPI's own compiler wrapper:
 *
 *   mpicc -shared -fPIC -o libfakenccl.so nccl.c
 *
 * It checks what the real library would get: the unique id that rank 0
 * made reaches every rank intact, the ranks and their number match MPI's,
 * the stream is 0. A collective of 13 elements fails (ncclInvalidArgument,
 * with a last error of its own), so that the tests see NCCL's error texts
 * reach the user.
 *
 * ncclCommGetAsyncError reports what the tests inject through the
 * environment: with FAKE_NCCL_ASYNC_ERROR=r, rank r's communicator reports
 * ncclRemoteError once it has made a collective (as NCCL does when a peer
 * dies); with FAKE_NCCL_PENDING=1, the collectives do nothing and stay in
 * progress for ever (as a GPU's kernels waiting for a peer that skipped
 * the call): ncclCommGetAsyncError reports ncclInProgress, the stand-in's
 * way to hold its waits. ncclCommAbort ends that; a communicator used
 * after it, or destroyed, is an error (ncclInvalidUsage).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct { char internal[128]; } ncclUniqueId;
typedef enum {
	ncclSuccess = 0, ncclUnhandledCudaError = 1, ncclSystemError = 2, ncclInternalError = 3,
	ncclInvalidArgument = 4, ncclInvalidUsage = 5, ncclRemoteError = 6, ncclInProgress = 7
} ncclResult_t;
typedef enum { ncclFloat32 = 7, ncclFloat64 = 8 } ncclDataType_t;
typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 } ncclRedOp_t;
struct fakeComm { int nranks, rank; MPI_Comm mpi; int pending, asyncError, aborted; };
typedef struct fakeComm *ncclComm_t;
typedef void *cudaStream_t;
typedef struct ncclConfig ncclConfig_t;

static char lastError[256];

static ncclResult_t fail(ncclResult_t r, const char *msg) {
	snprintf(lastError, sizeof lastError, "fake NCCL: %s", msg);
	return r;
}

int ncclGetVersion(int *version) { *version = 22803; return ncclSuccess; }

const char *ncclGetErrorString(ncclResult_t r) {
	switch (r) {
	case ncclSuccess: return "no error";
	case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
	case ncclRemoteError: return "remote process exited or there was a network error";
	case ncclInProgress: return "NCCL operation in progress";
	default: return "internal error - please report this issue to the NCCL developers";
	}
}

const char *ncclGetLastError(ncclComm_t comm) { (void)comm; return lastError; }

/* The id holds a marker and this process's id, then a pattern over all
 * 128 bytes: a rank given a truncated or shifted id sees it. */
ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
	for (int i = 0; i < 128; i++) id->internal[i] = (char)(i * 7 + 3);
	memcpy(id->internal, "fakenccl", 8);
	int pid = getpid();
	memcpy(id->internal + 8, &pid, sizeof pid);
	return ncclSuccess;
}

static ncclResult_t initRank(ncclComm_t *comm, int nranks, const ncclUniqueId *id, int rank) {
	if (memcmp(id->internal, "fakenccl", 8) != 0) return fail(ncclInvalidArgument, "the unique id is not one ncclGetUniqueId made");
	for (int i = 12; i < 128; i++)
		if (id->internal[i] != (char)(i * 7 + 3)) return fail(ncclInvalidArgument, "the unique id was altered");
	struct fakeComm *c = calloc(1, sizeof *c);
	c->nranks = nranks, c->rank = rank, c->mpi = MPI_COMM_NULL;
	if (nranks > 1) {
		int size, me, flag;
		MPI_Initialized(&flag);
		if (!flag) { free(c); return fail(ncclInvalidUsage, "MPI is not initialised"); }
		MPI_Comm_size(MPI_COMM_WORLD, &size);
		MPI_Comm_rank(MPI_COMM_WORLD, &me);
		if (size != nranks || me != rank) { free(c); return fail(ncclInvalidArgument, "rank or nranks differ from MPI's"); }
		char root[128];
		memcpy(root, id->internal, 128);
		MPI_Bcast(root, 128, MPI_CHAR, 0, MPI_COMM_WORLD);
		if (memcmp(root, id->internal, 128) != 0) { free(c); return fail(ncclInvalidArgument, "the ranks' unique ids differ"); }
		MPI_Comm_dup(MPI_COMM_WORLD, &c->mpi);
	}
	*comm = c;
	return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
	return initRank(comm, nranks, &id, rank);
}

ncclResult_t ncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank, int nId, ncclUniqueId *ids, ncclConfig_t *config) {
	(void)config;
	if (nId != 1) return fail(ncclInvalidArgument, "nId is not 1");
	return initRank(comm, nranks, ids, rank);
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
	if (comm->aborted) return fail(ncclInvalidUsage, "ncclCommDestroy after ncclCommAbort");
	if (comm->mpi != MPI_COMM_NULL) MPI_Comm_free(&comm->mpi);
	free(comm);
	return ncclSuccess;
}

/* The communicator is kept, marked, so that a use after the abort is an
 * error rather than a use of freed memory; its MPI communicator too (a
 * rank that failed may not join MPI_Comm_free). */
ncclResult_t ncclCommAbort(ncclComm_t comm) {
	if (comm->aborted) return fail(ncclInvalidUsage, "ncclCommAbort twice");
	comm->aborted = 1, comm->pending = 0;
	return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError) {
	if (comm->aborted) return fail(ncclInvalidUsage, "ncclCommGetAsyncError after ncclCommAbort");
	*asyncError = comm->asyncError ? comm->asyncError : comm->pending ? ncclInProgress : ncclSuccess;
	return ncclSuccess;
}

/* injected says whether the collective is left pending, and marks the
 * asynchronous error to report, as the environment asks (see above). */
static int injected(ncclComm_t comm) {
	const char *e = getenv("FAKE_NCCL_ASYNC_ERROR");
	if (e && *e && atoi(e) == comm->rank) {
		comm->asyncError = ncclRemoteError;
		fail(ncclRemoteError, "rank lost its peer (the tests' injected asynchronous error)");
	}
	e = getenv("FAKE_NCCL_PENDING");
	if (e && strcmp(e, "1") == 0) comm->pending = 1;
	return comm->pending;
}

static size_t sizeOf(ncclDataType_t t) { return t == ncclFloat32 ? 4 : 8; }

/* check refuses what the real library would (or what the tests inject). */
static ncclResult_t check(ncclComm_t comm, size_t count, ncclDataType_t t, cudaStream_t stream) {
	if (comm->aborted) return fail(ncclInvalidUsage, "a collective after ncclCommAbort");
	if (t != ncclFloat32 && t != ncclFloat64) return fail(ncclInvalidArgument, "a datatype other than float32 and float64");
	if (stream != 0) return fail(ncclInvalidArgument, "a stream other than 0 on host memory");
	if (count == 13) return fail(ncclInvalidArgument, "13 elements refused (the tests' injected error)");
	return ncclSuccess;
}

static MPI_Datatype mpiType(ncclDataType_t t) { return t == ncclFloat32 ? MPI_FLOAT : MPI_DOUBLE; }

static MPI_Op mpiOp(ncclRedOp_t op) { return op == ncclMax ? MPI_MAX : MPI_SUM; }

static void scale(void *x, size_t count, ncclDataType_t t, double s) {
	for (size_t i = 0; i < count; i++) {
		if (t == ncclFloat32) ((float *)x)[i] *= (float)s;
		else ((double *)x)[i] *= s;
	}
}

static void copyIn(const void *send, void *recv, size_t bytes) {
	if (send != recv) memmove(recv, send, bytes);
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t t, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
	ncclResult_t r = check(comm, count, t, stream);
	if (r != ncclSuccess) return r;
	if (injected(comm)) return ncclSuccess;
	if (op != ncclSum && op != ncclMax && op != ncclAvg) return fail(ncclInvalidArgument, "a reduction other than sum, max and avg");
	if (comm->nranks == 1) copyIn(send, recv, count * sizeOf(t));
	else MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, (int)count, mpiType(t), mpiOp(op), comm->mpi);
	if (op == ncclAvg) scale(recv, count, t, 1.0 / comm->nranks);
	return ncclSuccess;
}

ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t t, int root, ncclComm_t comm, cudaStream_t stream) {
	ncclResult_t r = check(comm, count, t, stream);
	if (r != ncclSuccess) return r;
	if (injected(comm)) return ncclSuccess;
	if (comm->rank == root) copyIn(send, recv, count * sizeOf(t));
	if (comm->nranks > 1) MPI_Bcast(recv, (int)count, mpiType(t), root, comm->mpi);
	return ncclSuccess;
}

ncclResult_t ncclReduce(const void *send, void *recv, size_t count, ncclDataType_t t, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
	ncclResult_t r = check(comm, count, t, stream);
	if (r != ncclSuccess) return r;
	if (injected(comm)) return ncclSuccess;
	if (comm->nranks == 1) copyIn(send, recv, count * sizeOf(t));
	else {
		/* NCCL leaves recv unwritten on the ranks but root: so does MPI. */
		const void *s = (send == recv && comm->rank == root) ? MPI_IN_PLACE : send;
		MPI_Reduce(s, recv, (int)count, mpiType(t), mpiOp(op), root, comm->mpi);
	}
	if (op == ncclAvg && comm->rank == root) scale(recv, count, t, 1.0 / comm->nranks);
	return ncclSuccess;
}

ncclResult_t ncclAllGather(const void *send, void *recv, size_t sendcount, ncclDataType_t t, ncclComm_t comm, cudaStream_t stream) {
	ncclResult_t r = check(comm, sendcount, t, stream);
	if (r != ncclSuccess) return r;
	if (injected(comm)) return ncclSuccess;
	if (comm->nranks == 1) copyIn(send, recv, sendcount * sizeOf(t));
	else MPI_Allgather(send, (int)sendcount, mpiType(t), recv, (int)sendcount, mpiType(t), comm->mpi);
	return ncclSuccess;
}

ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t recvcount, ncclDataType_t t, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
	ncclResult_t r = check(comm, recvcount, t, stream);
	if (r != ncclSuccess) return r;
	if (injected(comm)) return ncclSuccess;
	if (comm->nranks == 1) copyIn(send, recv, recvcount * sizeOf(t));
	else MPI_Reduce_scatter_block(send, recv, (int)recvcount, mpiType(t), mpiOp(op), comm->mpi);
	if (op == ncclAvg) scale(recv, recvcount, t, 1.0 / comm->nranks);
	return ncclSuccess;
}
