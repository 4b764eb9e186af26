package dist

import (
	"fmt"
	"os"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// libraryEnv names a shared library of MPI to load instead of searching
// (a full path: /opt/openmpi/lib/libmpi.so.40, say).
const libraryEnv = "NABLA_MPI_LIB"

// openMPILibraries and mpichLibraries are the names the dynamic linker
// is asked for, in order: Open MPI's libmpi.so.40 (4.x and 5.x), and
// MPICH's libmpich.so.12 or libmpi.so.12 (MPICH 3 and 4, Intel MPI,
// MVAPICH).
var (
	openMPILibraries = []string{"libmpi.so.40", "libmpi.so"}
	mpichLibraries   = []string{"libmpich.so.12", "libmpi.so.12", "libmpich.so"}
)

// abi holds what differs between MPI implementations at the binary level:
// handles. Open MPI's MPI_Comm, MPI_Datatype, MPI_Op and MPI_Errhandler
// are addresses of global objects of the library (MPI_COMM_WORLD is
// &ompi_mpi_comm_world), found with Dlsym; MPICH's are int constants of
// mpi.h. Either fits a register, so every handle is passed as a uintptr.
type abi struct {
	name             string // openMPIABIName or "MPICH"
	world            uintptr
	float32, float64 uintptr
	sum, max         uintptr
	errorsReturn     uintptr
	statusIgnore     uintptr // MPI_STATUS_IGNORE: 0 in Open MPI, 1 in MPICH
	inPlace          uintptr // MPI_IN_PLACE: 1 in Open MPI, -1 in MPICH
	commTypeShared   uintptr // MPI_COMM_TYPE_SHARED: 0 in Open MPI, 1 in MPICH
	infoNull         uintptr // MPI_INFO_NULL: &ompi_mpi_info_null in Open MPI
}

// mpichABI is MPICH's, from its mpi.h (the MPICH ABI initiative's values,
// shared by Intel MPI and MVAPICH).
var mpichABI = abi{
	name:  "MPICH",
	world: 0x44000000, float32: 0x4c00040a, float64: 0x4c00080b,
	sum: 0x58000003, max: 0x58000001, errorsReturn: 0x54000001,
	statusIgnore: 1, inPlace: ^uintptr(0),
	commTypeShared: 1, infoNull: 0x1c000000,
}

// openMPIABIName is Open MPI's abi name.
const openMPIABIName = "Open MPI"

// openMPISymbols are the global objects whose addresses are Open MPI's
// handles, in the order of the abi fields they fill.
var openMPISymbols = []string{
	"ompi_mpi_comm_world", "ompi_mpi_float", "ompi_mpi_double",
	"ompi_mpi_op_sum", "ompi_mpi_op_max", "ompi_mpi_errors_return",
	"ompi_mpi_info_null",
}

// mpiThreadSerialized is MPI_THREAD_SERIALIZED, the same in both mpi.h:
// calls come from any OS thread (a goroutine moves between them), one at
// a time (Comm's lock).
const mpiThreadSerialized = 2

// library is MPI as loaded at run time: the C functions nabla calls, by
// address, called through purego.SyscallN (every argument is a handle, a
// number or a pointer to memory that stays put during the call).
type library struct {
	abi
	path string

	initThread, finalize, finalized       uintptr
	commRank, commSize, commSetErrhandler uintptr
	errorString, getLibraryVersion        uintptr
	barrier, ibarrier                     uintptr
	allreduce, bcast, allgather           uintptr
	reduceScatterBlock, reduce            uintptr
	iallreduce, ibcast, iallgather        uintptr
	ireduceScatterBlock, ireduce          uintptr
	test, abort                           uintptr
	commSplitType, commFree               uintptr
}

// functions are the C functions library needs, each with its field.
func (l *library) functions() map[string]*uintptr {
	return map[string]*uintptr{
		"MPI_Init_thread": &l.initThread, "MPI_Finalize": &l.finalize, "MPI_Finalized": &l.finalized,
		"MPI_Comm_rank": &l.commRank, "MPI_Comm_size": &l.commSize,
		"MPI_Comm_set_errhandler": &l.commSetErrhandler,
		"MPI_Error_string":        &l.errorString, "MPI_Get_library_version": &l.getLibraryVersion,
		"MPI_Barrier": &l.barrier, "MPI_Ibarrier": &l.ibarrier,
		"MPI_Allreduce": &l.allreduce, "MPI_Bcast": &l.bcast, "MPI_Allgather": &l.allgather,
		"MPI_Reduce_scatter_block": &l.reduceScatterBlock, "MPI_Reduce": &l.reduce,
		"MPI_Iallreduce": &l.iallreduce, "MPI_Ibcast": &l.ibcast, "MPI_Iallgather": &l.iallgather,
		"MPI_Ireduce_scatter_block": &l.ireduceScatterBlock, "MPI_Ireduce": &l.ireduce,
		"MPI_Test": &l.test, "MPI_Abort": &l.abort,
		"MPI_Comm_split_type": &l.commSplitType, "MPI_Comm_free": &l.commFree,
	}
}

// loadLibrary finds and loads MPI for the launcher l: Open MPI's library
// first under Open MPI's mpirun, MPICH's first otherwise;
// $NABLA_MPI_LIB alone where it is set. Its error lists what was tried.
func loadLibrary(l launcher) (*library, error) {
	names := append(append([]string{}, mpichLibraries...), openMPILibraries...)
	if l.openMPI {
		names = append(append([]string{}, openMPILibraries...), mpichLibraries...)
	}
	if p := os.Getenv(libraryEnv); p != "" {
		names = []string{p}
	}
	var tried []string
	for _, name := range names {
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s (%v)", name, err))
			continue
		}
		lib, err := bindLibrary(h, name)
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s (%v)", name, err))
			continue
		}
		return lib, nil
	}
	return nil, fmt.Errorf("dist: no MPI library loads: tried %s; install Open MPI (Debian: apt-get install openmpi-bin) or set %s to the library's path",
		strings.Join(tried, "; "), libraryEnv)
}

// bindLibrary resolves MPI's functions and handles in the loaded library h.
func bindLibrary(h uintptr, path string) (*library, error) {
	l := &library{path: path, abi: mpichABI}
	var missing []string
	for name, p := range l.functions() {
		addr, err := purego.Dlsym(h, name)
		if err != nil || addr == 0 {
			missing = append(missing, name)
			continue
		}
		*p = addr
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("lacks %s (an MPI older than 3.0?)", strings.Join(missing, ", "))
	}
	if addr, err := purego.Dlsym(h, openMPISymbols[0]); err == nil && addr != 0 {
		l.abi = abi{name: openMPIABIName, inPlace: 1}
		fields := []*uintptr{&l.world, &l.float32, &l.float64, &l.sum, &l.max, &l.errorsReturn, &l.infoNull}
		for i, s := range openMPISymbols {
			a, err := purego.Dlsym(h, s)
			if err != nil || a == 0 {
				return nil, fmt.Errorf("is Open MPI but lacks %s", s)
			}
			*fields[i] = a
		}
	}
	return l, nil
}

// call calls the C function fn with args and returns its int result.
// The memory that args point to must stay put until the C function is
// done with it: Go's heap does not move, and the directive below moves to
// the heap the variables whose addresses call's caller converts in the
// call's arguments (as purego.SyscallN's does for its callers), which a
// goroutine's stack would move when it grows or shrinks.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) int32 {
	r, _, _ := purego.SyscallN(fn, args...)
	return int32(r)
}

// errorText is MPI_Error_string's text for the error code code.
func (l *library) errorText(code int32) string {
	buf := make([]byte, 1024)
	var n int32
	if call(l.errorString, uintptr(code), uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n))) != 0 || n <= 0 || int(n) > len(buf) {
		return fmt.Sprintf("MPI error %d", code)
	}
	return string(buf[:n])
}

// version is MPI_Get_library_version's first line ("Open MPI v4.1.4, ...").
func (l *library) version() string {
	buf := make([]byte, 8192) // MPI_MAX_LIBRARY_VERSION_STRING is 256 (Open MPI) or 8192 (MPICH)
	var n int32
	if call(l.getLibraryVersion, uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n))) != 0 || n <= 0 || int(n) > len(buf) {
		return l.name
	}
	s, _, _ := strings.Cut(strings.TrimRight(string(buf[:n]), "\x00"), "\n")
	s, _, _ = strings.Cut(s, ", package:") // Open MPI's build details
	return strings.Join(strings.Fields(s), " ")
}
