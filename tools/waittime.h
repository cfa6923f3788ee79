/*
 * Time waiting and time on the CPU, per node (docs/io.md "Wait time"): one
 * home for what the report's columns and the exports derive from a
 * thread's metric columns.
 *
 *   wait_ns  time in blocking calls made from the node: I/O wrappers,
 *            condition variables, contended locks, semaphores, sleeps,
 *            poll/select/epoll, wait/waitpid, pthread_join (recorded by
 *            jprof unless JPROFOPTS=nowait)
 *   cpu_ns   on-CPU self time: sampled (JPROFOPTS=cpu's per-thread
 *            CPU-time timer) when the profile has that column, else the
 *            exclusive time less the wait (which still holds pre-emption)
 */
#ifndef HOOKIT_TOOLS_WAITTIME_H
#define HOOKIT_TOOLS_WAITTIME_H

#include <stdint.h>

#include "profile/profile.h"

struct waittime {
    const uint64_t *wait;       /* wait_ns column, NULL when the profile has none */
    const uint64_t *cpu;        /* cpu_ns column (sampled), or NULL */
};

/* The columns of th; returns 1 when it has wait time, else 0. */
int waittime_of(const struct prof_thread *th, struct waittime *w);
/* Node i's wait, and its on-CPU self time (see above). */
uint64_t waittime_wait(const struct waittime *w, uint32_t i);
uint64_t waittime_cpu(const struct waittime *w, const struct prof_thread *th, uint32_t i);

#endif
