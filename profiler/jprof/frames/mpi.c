/* MPI calls as frames of the calling context (the mpiP idea, with the full
 * path): libhookit's PMPI wrappers report each call (HOOKIT_EV_MPI_ENTER,
 * _EXIT, docs/mpi.md); it becomes a frame "MPI:MPI_Send" (module: the MPI
 * library) under the thread's current node, timed like any frame, and the
 * bytes of its data go into the metric column mpi_bytes.
 *
 * The bytes of a frame's node are kept in the node's spare word
 * (arena_node.reserved), written by the owning thread only, like the rest
 * of the node.
 *
 * MPI has three doors, one per layer, kept apart because a layer only
 * calls the one below it (docs/design.md, docs/mpi.md):
 *   lifecycle/mpi.c    MPI_Init, MPI_Init_thread, MPI_Finalize and
 *                      MPI_Comm_rank: when the process becomes a rank and
 *                      stops being one, and which rank it is (libmonitor's
 *                      callbacks, for any client).  The lifecycle layer
 *                      depends on libc only: it knows no plugin, no event.
 *   hookit/mpi_*.c     the PMPI wrappers of the other MPI calls (mpi_c.c,
 *                      mpi_fortran.c; what they share in mpi_core.c), each
 *                      reported to the plugin as HOOKIT_EV_MPI_ENTER and
 *                      _EXIT.  In libhookit so that they interpose with
 *                      nothing more to link; they decide nothing about
 *                      the profile.
 *   profiler/jprof/frames/mpi.c
 *                      libjprof's use of those events: a frame
 *                      "MPI:MPI_Send" and the mpi_bytes column.  Another
 *                      plugin may use them otherwise, or not at all.
 *   profiler/jprof/output/mpi_job.c, profile/mpi_comm.c
 *                      the job's one profile: at HOOKIT_EV_MPI_FINALIZING
 *                      the ranks' profiles reduced over hookit's own
 *                      communicator (writing the profile, not a frame). */
#include "profiler/jprof/jprof.h"
#include "frames.h"
#include "profiler/jprof/metrics/metrics.h"
#include "profiler/jprof/tree/tree.h"
#include "profile/profile.h"

#include <stdio.h>
#include <string.h>

#define MAX_IDS 1024

static uint64_t keys[MAX_IDS];          /* synthetic key per hookit_mpi.id */
static volatile int seen;               /* an MPI call was seen: add the column */

JP_NOINSTR static uint64_t key_of(const struct hookit_mpi *m)
{
    if (m->id >= MAX_IDS || !m->func)
        return 0;
    uint64_t key = __atomic_load_n(&keys[m->id], __ATOMIC_RELAXED);
    if (JP_UNLIKELY(!key)) {
        char name[128];
        snprintf(name, sizeof name, "MPI:%s", m->func);
        key = jp_synthetic_key(name, m->module ? m->module : "");
        __atomic_store_n(&keys[m->id], key, __ATOMIC_RELAXED);   /* same name, same key */
    }
    return key;
}

JP_NOINSTR void jp_mpi_event(const struct hookit_event *ev)
{
    const struct hookit_mpi *m = ev->mpi;
    uint64_t key = m ? key_of(m) : 0;
    if (!key)
        return;
    if (ev->type == HOOKIT_EV_MPI_ENTER) {
        if (!seen)
            seen = 1;
        jp_enter_synthetic(key);
        return;
    }
    struct jp_thread *t = jp_self_live();
    if (t && !jp_busy(t) && jp_depth(t) > 0 && jp_node(jp_cur(t))->fn == key)
        jp_node(jp_cur(t))->reserved += m->bytes;
    jp_exit_synthetic(key);
}

/* build.c: the mpi_bytes column of th, whose node i came from nodes[i].ref. */
JP_NOINSTR int jp_mpi_thread(struct profile *p, struct prof_thread *th,
                             const struct arena_copy_node *nodes, uint32_t n)
{
    if (!seen)
        return 0;
    uint64_t *bytes = jp_new_column(p, th, "mpi_bytes", n);
    if (!bytes)
        return -1;
    for (uint32_t i = 0; i < n; i++)
        bytes[i] = jp_is_synthetic(nodes[i].fn) ? jp_node(nodes[i].ref)->reserved : 0;
    return 0;
}
