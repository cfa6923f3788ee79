/* The C bindings of the PMPI wrappers: MPI_Send and the others define the
 * MPI function, report it (an "MPI:MPI_Send" frame under the caller's
 * context, with the bytes of its data) and call the next definition (the
 * next PMPI tool's wrapper or the library's own), else PMPI_Send.
 *
 * Bytes (docs/mpi.md): count x type size of the data this rank passes,
 * asked of the library with PMPI_Type_size after a successful call (the
 * arguments were then valid), never for arguments the standard calls
 * insignificant on this rank, and never with MPI_IN_PLACE as a type source.
 *   sends, Bcast, Reduce, Allreduce, Scan, RMA: the buffer
 *   Recv, Irecv, MPI-IO reads: the buffer posted (not what arrived)
 *   Sendrecv: what is sent; Gather(v)/Allgather(v): the block contributed;
 *   Scatter(v): the block received; Alltoall(v), Reduce_scatter_block:
 *   everything sent; waits, tests, probes, Barrier, file management: 0. */
#ifndef HOOKIT_STATIC
#include "hookit/mpi_internal.h"

#include <errno.h>

typedef void *ptr;              /* buffers, statuses, requests, out-parameters */
typedef const int *ints;        /* count and displacement arrays */
typedef long long offset;       /* MPI_Offset */
typedef long aint;              /* MPI_Aint */

#define B(count, type) hk_mpi_type_bytes((count), (type))

#define HK_MPI_C(NAME, PARAMS, ARGS, BYTES)                                           \
    typedef int hk_c_##NAME##_fn PARAMS;                                              \
    HK_EXPORT hk_c_##NAME##_fn MPI_##NAME;                                            \
    HK_EXPORT HK_NOINSTR int MPI_##NAME PARAMS                                        \
    {                                                                                 \
        static hk_c_##NAME##_fn *resolved;                                            \
        hk_c_##NAME##_fn *real = __atomic_load_n(&resolved, __ATOMIC_RELAXED);        \
        if (HK_UNLIKELY(!real)) {                                                     \
            real = (hk_c_##NAME##_fn *)hk_mpi_resolve("MPI_" #NAME, "PMPI_" #NAME,    \
                                                      HK_MPI_ID_##NAME);              \
            __atomic_store_n(&resolved, real, __ATOMIC_RELAXED); /* same value in any thread */ \
        }                                                                             \
        if (HK_UNLIKELY(!real))                                                       \
            return hk_mpi_missing("MPI_" #NAME);                                      \
        struct hk_mpi_call c;                                                         \
        hk_mpi_begin(&c, HK_MPI_ID_##NAME);                                           \
        int r = real ARGS;                                                            \
        if (c.reported) {                                                             \
            int saved = errno;                                                        \
            c.ev.bytes = r == 0 ? (uint64_t)(BYTES) : 0;                              \
            errno = saved;                                                            \
        }                                                                             \
        hk_mpi_end(&c, r);                                                            \
        return r;                                                                     \
    }

/* Everything sent in an all-to-all: the sum of the counts over the group. */
HK_NOINSTR static uint64_t counts_bytes(ints counts, hk_mpi_h type, hk_mpi_h comm)
{
    int n = hk_mpi_comm_size(comm);
    int64_t sum = 0;
    for (int i = 0; counts && i < n; i++)
        sum += counts[i] > 0 ? counts[i] : 0;
    return B(sum, type);
}

/* ---- point to point ------------------------------------------------------------------ */
#define SEND(NAME)                                                                    \
    HK_MPI_C(NAME, (const void *buf, int count, hk_mpi_h type, int dest, int tag, hk_mpi_h comm), \
             (buf, count, type, dest, tag, comm), B(count, type))
SEND(Send) SEND(Bsend) SEND(Ssend) SEND(Rsend)
#define ISEND(NAME)                                                                   \
    HK_MPI_C(NAME, (const void *buf, int count, hk_mpi_h type, int dest, int tag, hk_mpi_h comm, \
                    ptr req), (buf, count, type, dest, tag, comm, req), B(count, type))
ISEND(Isend) ISEND(Ibsend) ISEND(Issend) ISEND(Irsend)
HK_MPI_C(Recv, (void *buf, int count, hk_mpi_h type, int src, int tag, hk_mpi_h comm, ptr status),
         (buf, count, type, src, tag, comm, status), B(count, type))
HK_MPI_C(Irecv, (void *buf, int count, hk_mpi_h type, int src, int tag, hk_mpi_h comm, ptr req),
         (buf, count, type, src, tag, comm, req), B(count, type))
HK_MPI_C(Sendrecv, (const void *sbuf, int scount, hk_mpi_h stype, int dest, int stag, void *rbuf,
                    int rcount, hk_mpi_h rtype, int src, int rtag, hk_mpi_h comm, ptr status),
         (sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, status),
         B(scount, stype))
HK_MPI_C(Sendrecv_replace, (void *buf, int count, hk_mpi_h type, int dest, int stag, int src,
                            int rtag, hk_mpi_h comm, ptr status),
         (buf, count, type, dest, stag, src, rtag, comm, status), B(count, type))
HK_MPI_C(Probe, (int src, int tag, hk_mpi_h comm, ptr status), (src, tag, comm, status), 0)
HK_MPI_C(Iprobe, (int src, int tag, hk_mpi_h comm, ptr flag, ptr status),
         (src, tag, comm, flag, status), 0)

/* ---- waits and tests ------------------------------------------------------------------- */
HK_MPI_C(Wait, (ptr req, ptr status), (req, status), 0)
HK_MPI_C(Waitall, (int n, ptr reqs, ptr statuses), (n, reqs, statuses), 0)
HK_MPI_C(Waitany, (int n, ptr reqs, ptr index, ptr status), (n, reqs, index, status), 0)
HK_MPI_C(Waitsome, (int n, ptr reqs, ptr outcount, ptr indices, ptr statuses),
         (n, reqs, outcount, indices, statuses), 0)
HK_MPI_C(Test, (ptr req, ptr flag, ptr status), (req, flag, status), 0)
HK_MPI_C(Testall, (int n, ptr reqs, ptr flag, ptr statuses), (n, reqs, flag, statuses), 0)
HK_MPI_C(Testany, (int n, ptr reqs, ptr index, ptr flag, ptr status), (n, reqs, index, flag, status), 0)
HK_MPI_C(Testsome, (int n, ptr reqs, ptr outcount, ptr indices, ptr statuses),
         (n, reqs, outcount, indices, statuses), 0)

/* ---- collectives --------------------------------------------------------------------- */
HK_MPI_C(Barrier, (hk_mpi_h comm), (comm), 0)
HK_MPI_C(Bcast, (void *buf, int count, hk_mpi_h type, int root, hk_mpi_h comm),
         (buf, count, type, root, comm), B(count, type))
HK_MPI_C(Reduce, (const void *sbuf, void *rbuf, int count, hk_mpi_h type, hk_mpi_h op, int root,
                  hk_mpi_h comm), (sbuf, rbuf, count, type, op, root, comm), B(count, type))
#define ALLREDUCE(NAME)                                                               \
    HK_MPI_C(NAME, (const void *sbuf, void *rbuf, int count, hk_mpi_h type, hk_mpi_h op,      \
                    hk_mpi_h comm), (sbuf, rbuf, count, type, op, comm), B(count, type))
ALLREDUCE(Allreduce) ALLREDUCE(Scan) ALLREDUCE(Exscan)
HK_MPI_C(Reduce_scatter_block, (const void *sbuf, void *rbuf, int rcount, hk_mpi_h type,
                                hk_mpi_h op, hk_mpi_h comm),
         (sbuf, rbuf, rcount, type, op, comm), B(rcount, type) * (uint64_t)hk_mpi_comm_size(comm))
/* The block a rank contributes: the receive side's with MPI_IN_PLACE. */
#define CONTRIB(sbuf, scount, stype, rcount, rtype) \
    (hk_mpi_in_place(sbuf) ? B(rcount, rtype) : B(scount, stype))
HK_MPI_C(Gather, (const void *sbuf, int scount, hk_mpi_h stype, void *rbuf, int rcount,
                  hk_mpi_h rtype, int root, hk_mpi_h comm),
         (sbuf, scount, stype, rbuf, rcount, rtype, root, comm),
         hk_mpi_in_place(sbuf) ? 0 : B(scount, stype))
HK_MPI_C(Gatherv, (const void *sbuf, int scount, hk_mpi_h stype, void *rbuf, ints rcounts,
                   ints displs, hk_mpi_h rtype, int root, hk_mpi_h comm),
         (sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm),
         hk_mpi_in_place(sbuf) ? 0 : B(scount, stype))
HK_MPI_C(Allgather, (const void *sbuf, int scount, hk_mpi_h stype, void *rbuf, int rcount,
                     hk_mpi_h rtype, hk_mpi_h comm),
         (sbuf, scount, stype, rbuf, rcount, rtype, comm), CONTRIB(sbuf, scount, stype, rcount, rtype))
HK_MPI_C(Allgatherv, (const void *sbuf, int scount, hk_mpi_h stype, void *rbuf, ints rcounts,
                      ints displs, hk_mpi_h rtype, hk_mpi_h comm),
         (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm),
         hk_mpi_in_place(sbuf) ? 0 : B(scount, stype))
HK_MPI_C(Scatter, (const void *sbuf, int scount, hk_mpi_h stype, void *rbuf, int rcount,
                   hk_mpi_h rtype, int root, hk_mpi_h comm),
         (sbuf, scount, stype, rbuf, rcount, rtype, root, comm),
         hk_mpi_in_place(rbuf) ? 0 : B(rcount, rtype))
HK_MPI_C(Scatterv, (const void *sbuf, ints scounts, ints displs, hk_mpi_h stype, void *rbuf,
                    int rcount, hk_mpi_h rtype, int root, hk_mpi_h comm),
         (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm),
         hk_mpi_in_place(rbuf) ? 0 : B(rcount, rtype))
HK_MPI_C(Alltoall, (const void *sbuf, int scount, hk_mpi_h stype, void *rbuf, int rcount,
                    hk_mpi_h rtype, hk_mpi_h comm),
         (sbuf, scount, stype, rbuf, rcount, rtype, comm),
         CONTRIB(sbuf, scount, stype, rcount, rtype) * (uint64_t)hk_mpi_comm_size(comm))
HK_MPI_C(Alltoallv, (const void *sbuf, ints scounts, ints sdispls, hk_mpi_h stype, void *rbuf,
                     ints rcounts, ints rdispls, hk_mpi_h rtype, hk_mpi_h comm),
         (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm),
         hk_mpi_in_place(sbuf) ? counts_bytes(rcounts, rtype, comm) : counts_bytes(scounts, stype, comm))

HK_MPI_C(Ibarrier, (hk_mpi_h comm, ptr req), (comm, req), 0)
HK_MPI_C(Ibcast, (void *buf, int count, hk_mpi_h type, int root, hk_mpi_h comm, ptr req),
         (buf, count, type, root, comm, req), B(count, type))
HK_MPI_C(Ireduce, (const void *sbuf, void *rbuf, int count, hk_mpi_h type, hk_mpi_h op, int root,
                   hk_mpi_h comm, ptr req), (sbuf, rbuf, count, type, op, root, comm, req),
         B(count, type))
HK_MPI_C(Iallreduce, (const void *sbuf, void *rbuf, int count, hk_mpi_h type, hk_mpi_h op,
                      hk_mpi_h comm, ptr req), (sbuf, rbuf, count, type, op, comm, req),
         B(count, type))
HK_MPI_C(Igather, (const void *sbuf, int scount, hk_mpi_h stype, void *rbuf, int rcount,
                   hk_mpi_h rtype, int root, hk_mpi_h comm, ptr req),
         (sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req),
         hk_mpi_in_place(sbuf) ? 0 : B(scount, stype))
HK_MPI_C(Iallgather, (const void *sbuf, int scount, hk_mpi_h stype, void *rbuf, int rcount,
                      hk_mpi_h rtype, hk_mpi_h comm, ptr req),
         (sbuf, scount, stype, rbuf, rcount, rtype, comm, req),
         CONTRIB(sbuf, scount, stype, rcount, rtype))
HK_MPI_C(Iscatter, (const void *sbuf, int scount, hk_mpi_h stype, void *rbuf, int rcount,
                    hk_mpi_h rtype, int root, hk_mpi_h comm, ptr req),
         (sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req),
         hk_mpi_in_place(rbuf) ? 0 : B(rcount, rtype))
HK_MPI_C(Ialltoall, (const void *sbuf, int scount, hk_mpi_h stype, void *rbuf, int rcount,
                     hk_mpi_h rtype, hk_mpi_h comm, ptr req),
         (sbuf, scount, stype, rbuf, rcount, rtype, comm, req),
         CONTRIB(sbuf, scount, stype, rcount, rtype) * (uint64_t)hk_mpi_comm_size(comm))

/* ---- MPI-IO ---------------------------------------------------------------------------- */
HK_MPI_C(File_open, (hk_mpi_h comm, const char *name, int amode, hk_mpi_h info, ptr fh),
         (comm, name, amode, info, fh), 0)
HK_MPI_C(File_close, (ptr fh), (fh), 0)
HK_MPI_C(File_sync, (hk_mpi_h fh), (fh), 0)
HK_MPI_C(File_seek, (hk_mpi_h fh, offset off, int whence), (fh, off, whence), 0)
HK_MPI_C(File_set_view, (hk_mpi_h fh, offset disp, hk_mpi_h etype, hk_mpi_h filetype,
                         const char *datarep, hk_mpi_h info),
         (fh, disp, etype, filetype, datarep, info), 0)
#define FILE_RW(NAME)                                                                 \
    HK_MPI_C(NAME, (hk_mpi_h fh, void *buf, int count, hk_mpi_h type, ptr status),     \
             (fh, buf, count, type, status), B(count, type))
FILE_RW(File_read) FILE_RW(File_read_all) FILE_RW(File_write) FILE_RW(File_write_all)
FILE_RW(File_iread) FILE_RW(File_iwrite)
#define FILE_RW_AT(NAME)                                                              \
    HK_MPI_C(NAME, (hk_mpi_h fh, offset off, void *buf, int count, hk_mpi_h type, ptr status), \
             (fh, off, buf, count, type, status), B(count, type))
FILE_RW_AT(File_read_at) FILE_RW_AT(File_read_at_all) FILE_RW_AT(File_write_at)
FILE_RW_AT(File_write_at_all) FILE_RW_AT(File_iread_at) FILE_RW_AT(File_iwrite_at)

/* ---- one-sided --------------------------------------------------------------------------- */
#define RMA(NAME)                                                                     \
    HK_MPI_C(NAME, (const void *obuf, int ocount, hk_mpi_h otype, int trank, aint tdisp,      \
                    int tcount, hk_mpi_h ttype, hk_mpi_h win),                        \
             (obuf, ocount, otype, trank, tdisp, tcount, ttype, win), B(ocount, otype))
RMA(Put) RMA(Get)
HK_MPI_C(Accumulate, (const void *obuf, int ocount, hk_mpi_h otype, int trank, aint tdisp,
                      int tcount, hk_mpi_h ttype, hk_mpi_h op, hk_mpi_h win),
         (obuf, ocount, otype, trank, tdisp, tcount, ttype, op, win), B(ocount, otype))
HK_MPI_C(Win_fence, (int assert_, hk_mpi_h win), (assert_, win), 0)
#endif
