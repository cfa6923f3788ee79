/* The Fortran bindings of the PMPI wrappers (mpif.h and `use mpi`): every
 * argument by reference, ierr among them, CHARACTER lengths appended by
 * value.  Each function in the four manglings compilers use: mpi_send,
 * mpi_send_, mpi_send__ and MPI_SEND.  The frame is named after the C
 * function ("MPI:MPI_Send"); the module is the library with the Fortran
 * binding.  Bytes as for C (mpi_c.c), with the type size asked of the
 * library's Fortran binding in the same mangling.  A Fortran binding that
 * calls the C function (MPICH) is one call: the C wrapper sees it nested
 * and passes it through.  (`use mpi_f08` names, MPI_Send_f08, are not
 * wrapped: docs/mpi.md.) */
#ifndef HOOKIT_STATIC
#include "hookit/mpi_internal.h"

#include <errno.h>

#define FP2 void *a1, void *a2
#define FP3 FP2, void *a3
#define FP4 FP3, void *a4
#define FP5 FP4, void *a5
#define FP6 FP5, void *a6
#define FP7 FP6, void *a7
#define FP8 FP7, void *a8
#define FP9 FP8, void *a9
#define FP10 FP9, void *a10
#define FP13 FP10, void *a11, void *a12, void *a13
#define FA2 a1, a2
#define FA3 FA2, a3
#define FA4 FA3, a4
#define FA5 FA4, a5
#define FA6 FA5, a6
#define FA7 FA6, a7
#define FA8 FA7, a8
#define FA9 FA8, a9
#define FA10 FA9, a10
#define FA13 FA10, a11, a12, a13

#define FB(count, type) hk_mpi_ftype_bytes((const int *)(count), (const int *)(type), mangling)
#define FIN(buf) hk_mpi_fin_place((buf), mangling)
#define FCOMM(comm) (uint64_t)hk_mpi_fcomm_size((const int *)(comm), mangling)

#define HK_MPI_F1(NAME, SYM, M, N, IERR, BYTES)                                       \
    typedef void hk_f_##SYM##_fn(FP##N);                                              \
    HK_EXPORT hk_f_##SYM##_fn SYM;                                                    \
    HK_EXPORT HK_NOINSTR void SYM(FP##N)                                              \
    {                                                                                 \
        static hk_f_##SYM##_fn *resolved;                                             \
        hk_f_##SYM##_fn *real = __atomic_load_n(&resolved, __ATOMIC_RELAXED);          \
        const int mangling = M;                                                       \
        (void)mangling;                                                               \
        if (HK_UNLIKELY(!real)) {                                                     \
            real = (hk_f_##SYM##_fn *)hk_mpi_fresolve(#SYM, HK_MPI_NFUNCS + HK_MPI_ID_##NAME); \
            __atomic_store_n(&resolved, real, __ATOMIC_RELAXED);                      \
        }                                                                             \
        if (HK_UNLIKELY(!real)) {                                                     \
            *(int *)(IERR) = hk_mpi_missing(#SYM);                                    \
            return;                                                                   \
        }                                                                             \
        struct hk_mpi_call c;                                                         \
        hk_mpi_begin(&c, HK_MPI_NFUNCS + HK_MPI_ID_##NAME);                           \
        real(FA##N);                                                                  \
        int ierr = *(int *)(IERR);                                                    \
        if (c.reported) {                                                             \
            int saved = errno;                                                        \
            c.ev.bytes = ierr == 0 ? (uint64_t)(BYTES) : 0;                           \
            errno = saved;                                                            \
        }                                                                             \
        hk_mpi_end(&c, ierr);                                                         \
    }

#define HK_MPI_F(NAME, lower, UPPER, N, IERR, BYTES)                                  \
    HK_MPI_F1(NAME, lower, 0, N, IERR, BYTES)                                         \
    HK_MPI_F1(NAME, lower##_, 1, N, IERR, BYTES)                                      \
    HK_MPI_F1(NAME, lower##__, 2, N, IERR, BYTES)                                     \
    HK_MPI_F1(NAME, UPPER, 3, N, IERR, BYTES)

/* Everything sent in an all-to-all, from a Fortran counts array. */
HK_NOINSTR static uint64_t fcounts_bytes(const void *counts, const void *type, const void *comm,
                                         int mangling)
{
    int n = (int)FCOMM(comm);
    int sum = 0;
    for (int i = 0; counts && i < n; i++)
        sum += ((const int *)counts)[i] > 0 ? ((const int *)counts)[i] : 0;
    return hk_mpi_ftype_bytes(&sum, (const int *)type, mangling);
}

/* ---- point to point ------------------------------------------------------------------ */
HK_MPI_F(Send, mpi_send, MPI_SEND, 7, a7, FB(a2, a3))
HK_MPI_F(Bsend, mpi_bsend, MPI_BSEND, 7, a7, FB(a2, a3))
HK_MPI_F(Ssend, mpi_ssend, MPI_SSEND, 7, a7, FB(a2, a3))
HK_MPI_F(Rsend, mpi_rsend, MPI_RSEND, 7, a7, FB(a2, a3))
HK_MPI_F(Isend, mpi_isend, MPI_ISEND, 8, a8, FB(a2, a3))
HK_MPI_F(Ibsend, mpi_ibsend, MPI_IBSEND, 8, a8, FB(a2, a3))
HK_MPI_F(Issend, mpi_issend, MPI_ISSEND, 8, a8, FB(a2, a3))
HK_MPI_F(Irsend, mpi_irsend, MPI_IRSEND, 8, a8, FB(a2, a3))
HK_MPI_F(Recv, mpi_recv, MPI_RECV, 8, a8, FB(a2, a3))
HK_MPI_F(Irecv, mpi_irecv, MPI_IRECV, 8, a8, FB(a2, a3))
HK_MPI_F(Sendrecv, mpi_sendrecv, MPI_SENDRECV, 13, a13, FB(a2, a3))
HK_MPI_F(Sendrecv_replace, mpi_sendrecv_replace, MPI_SENDRECV_REPLACE, 10, a10, FB(a2, a3))
HK_MPI_F(Probe, mpi_probe, MPI_PROBE, 5, a5, 0)
HK_MPI_F(Iprobe, mpi_iprobe, MPI_IPROBE, 6, a6, 0)

/* ---- waits and tests ------------------------------------------------------------------- */
HK_MPI_F(Wait, mpi_wait, MPI_WAIT, 3, a3, 0)
HK_MPI_F(Waitall, mpi_waitall, MPI_WAITALL, 4, a4, 0)
HK_MPI_F(Waitany, mpi_waitany, MPI_WAITANY, 5, a5, 0)
HK_MPI_F(Waitsome, mpi_waitsome, MPI_WAITSOME, 6, a6, 0)
HK_MPI_F(Test, mpi_test, MPI_TEST, 4, a4, 0)
HK_MPI_F(Testall, mpi_testall, MPI_TESTALL, 5, a5, 0)
HK_MPI_F(Testany, mpi_testany, MPI_TESTANY, 6, a6, 0)
HK_MPI_F(Testsome, mpi_testsome, MPI_TESTSOME, 6, a6, 0)

/* ---- collectives --------------------------------------------------------------------- */
HK_MPI_F(Barrier, mpi_barrier, MPI_BARRIER, 2, a2, 0)
HK_MPI_F(Bcast, mpi_bcast, MPI_BCAST, 6, a6, FB(a2, a3))
HK_MPI_F(Reduce, mpi_reduce, MPI_REDUCE, 8, a8, FB(a3, a4))
HK_MPI_F(Allreduce, mpi_allreduce, MPI_ALLREDUCE, 7, a7, FB(a3, a4))
HK_MPI_F(Scan, mpi_scan, MPI_SCAN, 7, a7, FB(a3, a4))
HK_MPI_F(Exscan, mpi_exscan, MPI_EXSCAN, 7, a7, FB(a3, a4))
HK_MPI_F(Reduce_scatter_block, mpi_reduce_scatter_block, MPI_REDUCE_SCATTER_BLOCK, 7, a7,
         FB(a3, a4) * FCOMM(a6))
HK_MPI_F(Gather, mpi_gather, MPI_GATHER, 9, a9, FIN(a1) ? 0 : FB(a2, a3))
HK_MPI_F(Gatherv, mpi_gatherv, MPI_GATHERV, 10, a10, FIN(a1) ? 0 : FB(a2, a3))
HK_MPI_F(Allgather, mpi_allgather, MPI_ALLGATHER, 8, a8, FIN(a1) ? FB(a5, a6) : FB(a2, a3))
HK_MPI_F(Allgatherv, mpi_allgatherv, MPI_ALLGATHERV, 9, a9, FIN(a1) ? 0 : FB(a2, a3))
HK_MPI_F(Scatter, mpi_scatter, MPI_SCATTER, 9, a9, FIN(a4) ? 0 : FB(a5, a6))
HK_MPI_F(Scatterv, mpi_scatterv, MPI_SCATTERV, 10, a10, FIN(a5) ? 0 : FB(a6, a7))
HK_MPI_F(Alltoall, mpi_alltoall, MPI_ALLTOALL, 8, a8,
         (FIN(a1) ? FB(a5, a6) : FB(a2, a3)) * FCOMM(a7))
HK_MPI_F(Alltoallv, mpi_alltoallv, MPI_ALLTOALLV, 10, a10,
         FIN(a1) ? fcounts_bytes(a6, a8, a9, mangling) : fcounts_bytes(a2, a4, a9, mangling))
HK_MPI_F(Ibarrier, mpi_ibarrier, MPI_IBARRIER, 3, a3, 0)
HK_MPI_F(Ibcast, mpi_ibcast, MPI_IBCAST, 7, a7, FB(a2, a3))
HK_MPI_F(Ireduce, mpi_ireduce, MPI_IREDUCE, 9, a9, FB(a3, a4))
HK_MPI_F(Iallreduce, mpi_iallreduce, MPI_IALLREDUCE, 8, a8, FB(a3, a4))
HK_MPI_F(Igather, mpi_igather, MPI_IGATHER, 10, a10, FIN(a1) ? 0 : FB(a2, a3))
HK_MPI_F(Iallgather, mpi_iallgather, MPI_IALLGATHER, 9, a9, FIN(a1) ? FB(a5, a6) : FB(a2, a3))
HK_MPI_F(Iscatter, mpi_iscatter, MPI_ISCATTER, 10, a10, FIN(a4) ? 0 : FB(a5, a6))
HK_MPI_F(Ialltoall, mpi_ialltoall, MPI_IALLTOALL, 9, a9,
         (FIN(a1) ? FB(a5, a6) : FB(a2, a3)) * FCOMM(a7))

/* ---- MPI-IO (file names and data representations: a length follows ierr) ---------------- */
HK_MPI_F(File_open, mpi_file_open, MPI_FILE_OPEN, 7, a6, 0)
HK_MPI_F(File_close, mpi_file_close, MPI_FILE_CLOSE, 2, a2, 0)
HK_MPI_F(File_sync, mpi_file_sync, MPI_FILE_SYNC, 2, a2, 0)
HK_MPI_F(File_seek, mpi_file_seek, MPI_FILE_SEEK, 4, a4, 0)
HK_MPI_F(File_set_view, mpi_file_set_view, MPI_FILE_SET_VIEW, 8, a7, 0)
HK_MPI_F(File_read, mpi_file_read, MPI_FILE_READ, 6, a6, FB(a3, a4))
HK_MPI_F(File_read_all, mpi_file_read_all, MPI_FILE_READ_ALL, 6, a6, FB(a3, a4))
HK_MPI_F(File_write, mpi_file_write, MPI_FILE_WRITE, 6, a6, FB(a3, a4))
HK_MPI_F(File_write_all, mpi_file_write_all, MPI_FILE_WRITE_ALL, 6, a6, FB(a3, a4))
HK_MPI_F(File_iread, mpi_file_iread, MPI_FILE_IREAD, 6, a6, FB(a3, a4))
HK_MPI_F(File_iwrite, mpi_file_iwrite, MPI_FILE_IWRITE, 6, a6, FB(a3, a4))
HK_MPI_F(File_read_at, mpi_file_read_at, MPI_FILE_READ_AT, 7, a7, FB(a4, a5))
HK_MPI_F(File_read_at_all, mpi_file_read_at_all, MPI_FILE_READ_AT_ALL, 7, a7, FB(a4, a5))
HK_MPI_F(File_write_at, mpi_file_write_at, MPI_FILE_WRITE_AT, 7, a7, FB(a4, a5))
HK_MPI_F(File_write_at_all, mpi_file_write_at_all, MPI_FILE_WRITE_AT_ALL, 7, a7, FB(a4, a5))
HK_MPI_F(File_iread_at, mpi_file_iread_at, MPI_FILE_IREAD_AT, 7, a7, FB(a4, a5))
HK_MPI_F(File_iwrite_at, mpi_file_iwrite_at, MPI_FILE_IWRITE_AT, 7, a7, FB(a4, a5))

/* ---- one-sided --------------------------------------------------------------------------- */
HK_MPI_F(Put, mpi_put, MPI_PUT, 9, a9, FB(a2, a3))
HK_MPI_F(Get, mpi_get, MPI_GET, 9, a9, FB(a2, a3))
HK_MPI_F(Accumulate, mpi_accumulate, MPI_ACCUMULATE, 10, a10, FB(a2, a3))
HK_MPI_F(Win_fence, mpi_win_fence, MPI_WIN_FENCE, 3, a3, 0)
#endif
