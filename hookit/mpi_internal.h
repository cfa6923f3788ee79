/* The PMPI wrappers (mpi_core.c, mpi_c.c, mpi_fortran.c): what they share.
 *
 * No MPI header is used anywhere: handles (MPI_Comm, MPI_Datatype, ...) are
 * passed through as register-sized values (an int for MPICH, a pointer for
 * Open MPI: both travel the same way in the calling convention), and the
 * real functions are found by name at their first call (docs/mpi.md). */
#ifndef HOOKIT_MPI_INTERNAL_H
#define HOOKIT_MPI_INTERNAL_H

#include <hookit/profiler.h>
#include <stdint.h>

#include "hookit/internal.h"

typedef void *hk_mpi_h;         /* any MPI handle, by value */

/* Every wrapped function: its name without the MPI_ prefix and its kind
 * (Init, Init_thread, Finalize: wrapped by the lifecycle layer, reported
 * through hk_mpi_lifecycle).
 * The order gives the ids (hookit_mpi.id): C binding = index, Fortran
 * binding = HK_MPI_NFUNCS + index. */
#define HK_MPI_LIST(X)                                                      \
    X(Send, P2P) X(Bsend, P2P) X(Ssend, P2P) X(Rsend, P2P)                  \
    X(Isend, P2P) X(Ibsend, P2P) X(Issend, P2P) X(Irsend, P2P)              \
    X(Recv, P2P) X(Irecv, P2P) X(Sendrecv, P2P) X(Sendrecv_replace, P2P)    \
    X(Probe, P2P) X(Iprobe, P2P)                                            \
    X(Wait, WAIT) X(Waitall, WAIT) X(Waitany, WAIT) X(Waitsome, WAIT)       \
    X(Test, WAIT) X(Testall, WAIT) X(Testany, WAIT) X(Testsome, WAIT)       \
    X(Barrier, COLL) X(Bcast, COLL) X(Reduce, COLL) X(Allreduce, COLL)      \
    X(Scan, COLL) X(Exscan, COLL) X(Reduce_scatter_block, COLL)             \
    X(Gather, COLL) X(Gatherv, COLL) X(Allgather, COLL) X(Allgatherv, COLL) \
    X(Scatter, COLL) X(Scatterv, COLL) X(Alltoall, COLL) X(Alltoallv, COLL) \
    X(Ibarrier, COLL) X(Ibcast, COLL) X(Ireduce, COLL) X(Iallreduce, COLL)  \
    X(Igather, COLL) X(Iallgather, COLL) X(Iscatter, COLL) X(Ialltoall, COLL) \
    X(File_open, IO) X(File_close, IO) X(File_sync, IO) X(File_seek, IO)    \
    X(File_set_view, IO)                                                    \
    X(File_read, IO) X(File_read_all, IO) X(File_read_at, IO)               \
    X(File_read_at_all, IO) X(File_write, IO) X(File_write_all, IO)         \
    X(File_write_at, IO) X(File_write_at_all, IO)                           \
    X(File_iread, IO) X(File_iwrite, IO) X(File_iread_at, IO) X(File_iwrite_at, IO) \
    X(Put, RMA) X(Get, RMA) X(Accumulate, RMA) X(Win_fence, RMA)            \
    X(Init, ENV) X(Init_thread, ENV) X(Finalize, ENV)

#define HK_MPI_ENUM(name, kind) HK_MPI_ID_##name,
enum { HK_MPI_LIST(HK_MPI_ENUM) HK_MPI_NFUNCS };
#undef HK_MPI_ENUM

/* One call in progress (a wrapper's local). */
struct hk_mpi_call {
    struct hookit_mpi ev;
    int reported;               /* ENTER was delivered: EXIT follows */
};

/* Inside an MPI call in this thread: nested calls pass straight through. */
extern __thread int hk_mpi_depth __attribute__((tls_model("initial-exec")));

/* The next definition of name after libhookit (another PMPI tool, or the
 * MPI library), else PMPI_name (pname) anywhere; the id's module is noted.
 * NULL when no MPI library is loaded. */
void *hk_mpi_resolve(const char *name, const char *pname, uint32_t id);
/* A wrapped function was called but nothing provides it: one line, and the
 * value to return (MPI_ERR_OTHER's usual value). */
int hk_mpi_missing(const char *name);

/* Around the real call: begin always enters the depth guard and reports
 * ENTER when wanted; end reports EXIT (bytes and result set by the
 * caller) and leaves the guard.  errno is kept. */
void hk_mpi_begin(struct hk_mpi_call *c, uint32_t id);
void hk_mpi_end(struct hk_mpi_call *c, int result);

/* Sizes, from the MPI library itself (PMPI_Type_size, PMPI_Comm_size). */
uint64_t hk_mpi_type_bytes(int64_t count, hk_mpi_h type);
int hk_mpi_comm_size(hk_mpi_h comm);
/* MPI_IN_PLACE of MPICH-derived libraries ((void *)-1) or Open MPI ((void *)1). */
int hk_mpi_in_place(const void *buf);

/* Fortran: the same from INTEGER handles, mangling 0..3 = name, name_,
 * name__, NAME (the type size is asked in the same mangling). */
uint64_t hk_mpi_ftype_bytes(const int *count, const int *type, int mangling);
int hk_mpi_fcomm_size(const int *comm, int mangling);
int hk_mpi_fin_place(const void *buf, int mangling);
void *hk_mpi_fresolve(const char *name, uint32_t id);

#endif
