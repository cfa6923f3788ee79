/* The transport of profile/mpi_comm.h (docs/mpi.md "One profile per job",
 * docs/live.md "Several hosts"): hookit's own communicator, and byte
 * messages sent and received with every wait bounded.
 *
 * No MPI header and no link to libmpi: the PMPI_ entry points are found by
 * name in the process (the program's MPI library), so the one plugin works
 * with any MPI the program was built with.  The few constants a header
 * would give (MPI_COMM_WORLD, MPI_BYTE, MPI_ERRORS_RETURN) come from the
 * library's family, told by MPI_Get_library_version:
 *
 *   Open MPI      handles are pointers to the library's objects
 *                 (ompi_mpi_comm_world, ompi_mpi_byte, ompi_mpi_errors_return)
 *   MPICH and the libraries of its ABI (Intel MPI, MVAPICH, Cray MPICH):
 *                 handles are ints: 0x44000000, 0x4c00010d, 0x54000001
 *
 * tests/mpi/test_mpi_job.py checks the numbers against each library's own
 * mpi.h.  Handles travel as register-sized values (an int and a pointer
 * are passed the same way); handles the library returns (a communicator,
 * a request) are read from a zeroed 8-byte slot, which holds either.
 * Statuses are opaque buffers larger than any library's MPI_Status.
 *
 * Only PMPI_ names are called: no PMPI wrapper (hookit's or another
 * tool's) sees this traffic, and it is on a communicator no message of
 * the program's can match. */
#include "profile/mpi_comm.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINSTR __attribute__((no_instrument_function))

typedef void *mh; /* any handle, by value */
typedef struct {
    unsigned char bytes[64];
} mstatus;

static struct {
    int (*comm_dup)(mh, void *);
    int (*comm_rank)(mh, int *);
    int (*comm_size)(mh, int *);
    int (*set_errhandler)(mh, mh);
    int (*issend)(const void *, int, mh, int, int, mh, void *);
    int (*irecv)(void *, int, mh, int, int, mh, void *);
    int (*iprobe)(int, int, mh, int *, mstatus *);
    int (*get_count)(const mstatus *, mh, int *);
    int (*test)(void *, int *, mstatus *);
    int (*cancel)(void *);
    int (*ibarrier)(mh, void *);
    int (*library_version)(char *, int *);
} pmpi;

static mh world, byte_type, errors_return;
static uint64_t own_comm; /* the dup, as the library wrote it */
static int ready;

#define TAG 0x4b1    /* any tag: the communicator is ours alone */
#define TAG_GO 0x4b2 /* the job profile is made: go on to the real MPI_Finalize */

NOINSTR static void *find(const char *name)
{
    return dlsym(RTLD_DEFAULT, name);
}

/* The library's family and its constants.  0, or -1 with why in err. */
NOINSTR static int constants(char *err, size_t errlen)
{
    char version[8192] = "";
    int len = 0;
    if (pmpi.library_version && pmpi.library_version(version, &len) != 0)
        version[0] = 0;
    version[sizeof version - 1] = 0;
    if (strstr(version, "Open MPI")) {
        world = find("ompi_mpi_comm_world");
        byte_type = find("ompi_mpi_byte");
        errors_return = find("ompi_mpi_errors_return");
        if (world && byte_type && errors_return)
            return 0;
        snprintf(err, errlen, "Open MPI without its predefined objects");
        return -1;
    }
    if (strstr(version, "MPICH") || strstr(version, "Intel(R) MPI") || strstr(version, "MVAPICH")) {
        world = (mh)(uintptr_t)0x44000000;
        byte_type = (mh)(uintptr_t)0x4c00010d;
        errors_return = (mh)(uintptr_t)0x54000001;
        return 0;
    }
    char *nl = strchr(version, '\n');
    if (nl)
        *nl = 0;
    snprintf(err, errlen, "an MPI library hookit does not know (%.80s)",
             version[0] ? version : "no MPI_Get_library_version");
    return -1;
}

NOINSTR int mpi_comm_init(int *rank, int *size, char *err, size_t errlen)
{
    ready = 0;
    pmpi.comm_dup = find("PMPI_Comm_dup");
    pmpi.comm_rank = find("PMPI_Comm_rank");
    pmpi.comm_size = find("PMPI_Comm_size");
    pmpi.set_errhandler = find("PMPI_Comm_set_errhandler");
    pmpi.issend = find("PMPI_Issend");
    pmpi.irecv = find("PMPI_Irecv");
    pmpi.iprobe = find("PMPI_Iprobe");
    pmpi.get_count = find("PMPI_Get_count");
    pmpi.test = find("PMPI_Test");
    pmpi.cancel = find("PMPI_Cancel");
    pmpi.ibarrier = find("PMPI_Ibarrier");
    pmpi.library_version = find("PMPI_Get_library_version");
    if (!pmpi.comm_dup || !pmpi.comm_rank || !pmpi.comm_size || !pmpi.set_errhandler || !pmpi.issend
        || !pmpi.irecv || !pmpi.iprobe || !pmpi.get_count || !pmpi.test || !pmpi.cancel) {
        snprintf(err, errlen, "the MPI library lacks a PMPI function hookit needs");
        return -1;
    }
    if (constants(err, errlen) != 0)
        return -1;
    own_comm = 0;
    /* Collective, like MPI_Init around it: every rank is there. */
    if (pmpi.comm_dup(world, &own_comm) != 0) {
        snprintf(err, errlen, "MPI_Comm_dup of MPI_COMM_WORLD failed");
        return -1;
    }
    mh comm = (mh)(uintptr_t)own_comm;
    /* An error on our communicator is returned to us, never fatal to the job. */
    if (pmpi.set_errhandler(comm, errors_return) != 0 || pmpi.comm_rank(comm, rank) != 0
        || pmpi.comm_size(comm, size) != 0) {
        snprintf(err, errlen, "hookit's communicator cannot be set up");
        return -1;
    }
    ready = 1;
    return 0;
}

NOINSTR static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* How long a rank may sleep between two polls.  On a node with more
 * ranks than cores each poll wakes a process and runs the library's
 * progress engine, taking the cores from the few ranks still reducing
 * (128 ranks polling every 20 us: MPICH, 2 cores, 350-540 ms from the last
 * rank's profile to the job's, docs/mpi.md), so each wait sleeps as long
 * as its place in the reduction allows:
 *  - a parent waiting for its child's message is where the critical path
 *    waits (the child is late): 250 us;
 *  - a message on its way, once found (a large one moves only while both
 *    sides call into the library), and a word a peer waits for: 1 ms;
 *  - a child whose partial waits for its parent to get to it (after the
 *    parent's own profile and earlier children): 3 ms.  When the parent
 *    takes it, the child is the side that must wake; at 1 ms, 64 such
 *    children polled at 128 ranks;
 *  - a rank waiting for the word to go on, or for its child to take it,
 *    delays nobody's work: 10 ms.
 * 128 ranks, 2 cores, MPICH: 26.5 ms median with the parents at 1 ms and
 * the children at 1 ms, 19.6 ms with these (docs/mpi.md). */
#define POLL_PROBE_NS 250000l
#define POLL_CRITICAL_NS 1000000l
#define POLL_PATIENT_NS 3000000l
#define POLL_IDLE_NS 10000000l

/* Between two polls: nothing at first (a message on its way arrives in
 * microseconds), then a sleep that doubles from 10 us up to cap_ns. */
NOINSTR static void pause_poll(unsigned *polls, long cap_ns)
{
    unsigned n = (*polls)++;
    if (n < 16)
        return;
    unsigned doublings = n - 16 < 20 ? n - 16 : 20;
    long ns = 10000l << doublings;
    struct timespec ts = { 0, ns < cap_ns ? ns : cap_ns };
    nanosleep(&ts, NULL);
}

/* Poll request req until it completes or the deadline passes: 0, 1 at the
 * deadline (the request is left cancelled when cancel: a point-to-point
 * one; a collective's may not be cancelled, Open MPI makes that an error
 * of MPI_COMM_WORLD, fatal by default), -1 on an MPI error. */
NOINSTR static int wait_request_then(uint64_t *req, uint64_t deadline_ns, long cap_ns, int cancel)
{
    mstatus st;
    unsigned polls = 0;
    for (;;) {
        int done = 0;
        if (pmpi.test(req, &done, &st) != 0)
            return -1;
        if (done)
            return 0;
        if (now_ns() >= deadline_ns) {
            /* Whether or not the library can cancel it, the request is left
             * behind: a peer that is gone never completes it. */
            if (cancel)
                pmpi.cancel(req);
            return 1;
        }
        pause_poll(&polls, cap_ns);
    }
}

NOINSTR static int wait_request(uint64_t *req, uint64_t deadline_ns, long cap_ns)
{
    return wait_request_then(req, deadline_ns, cap_ns, 1);
}

NOINSTR static int send_polling(int dest, const void *buf, size_t len, uint64_t deadline_ns, long cap_ns)
{
    if (!ready || len > 0x7fffffff)
        return -1;
    uint64_t req = 0;
    /* Synchronous: done only once the parent has taken the message, so a
     * parent that gave up on us is never mistaken for one that has it. */
    if (pmpi.issend(buf, (int)len, byte_type, dest, TAG, (mh)(uintptr_t)own_comm, &req) != 0)
        return -1;
    return wait_request(&req, deadline_ns, cap_ns);
}

NOINSTR int mpi_comm_send(int dest, const void *buf, size_t len, uint64_t deadline_ns)
{
    return send_polling(dest, buf, len, deadline_ns, POLL_CRITICAL_NS);
}

NOINSTR int mpi_comm_send_patient(int dest, const void *buf, size_t len, uint64_t deadline_ns)
{
    return send_polling(dest, buf, len, deadline_ns, POLL_PATIENT_NS);
}

NOINSTR int mpi_comm_recv(int source, unsigned char **buf, size_t *len, uint64_t deadline_ns,
                          uint64_t transfer_ns)
{
    if (!ready)
        return -1;
    mh comm = (mh)(uintptr_t)own_comm;
    mstatus st;
    unsigned polls = 0;
    for (;;) {
        int found = 0;
        if (pmpi.iprobe(source, TAG, comm, &found, &st) != 0)
            return -1;
        if (found)
            break;
        if (now_ns() >= deadline_ns)
            return 1;
        pause_poll(&polls, POLL_PROBE_NS);
    }
    int count = 0;
    if (pmpi.get_count(&st, byte_type, &count) != 0 || count < 0)
        return -1;
    *buf = malloc((size_t)count + 1);
    if (!*buf)
        return -1;
    uint64_t req = 0;
    /* The message is there: its bytes get a bound of their own. */
    int rc = pmpi.irecv(*buf, count, byte_type, source, TAG, comm, &req) != 0
        ? -1
        : wait_request(&req, now_ns() + transfer_ns, POLL_CRITICAL_NS);
    if (rc != 0) {
        if (rc < 0) /* cancelled at the bound: the library may yet write it */
            free(*buf);
        *buf = NULL;
        return rc;
    }
    *len = (size_t)count;
    return 0;
}

NOINSTR int mpi_comm_wait_go(int parent, uint64_t deadline_ns)
{
    if (!ready)
        return -1;
    unsigned char byte;
    uint64_t req = 0;
    if (pmpi.irecv(&byte, 1, byte_type, parent, TAG_GO, (mh)(uintptr_t)own_comm, &req) != 0)
        return -1;
    return wait_request(&req, deadline_ns, POLL_IDLE_NS);
}

NOINSTR int mpi_comm_go(int child, uint64_t deadline_ns)
{
    static const unsigned char byte = 1;
    uint64_t req = 0;
    if (!ready || pmpi.issend(&byte, 1, byte_type, child, TAG_GO, (mh)(uintptr_t)own_comm, &req) != 0)
        return -1;
    return wait_request(&req, deadline_ns, POLL_IDLE_NS);
}

NOINSTR uint64_t mpi_comm_now(void)
{
    return now_ns();
}

NOINSTR int mpi_comm_barrier(uint64_t deadline_ns)
{
    uint64_t req = 0;
    if (!ready || !pmpi.ibarrier || pmpi.ibarrier((mh)(uintptr_t)own_comm, &req) != 0)
        return -1;
    return wait_request_then(&req, deadline_ns, POLL_CRITICAL_NS, 0);
}
