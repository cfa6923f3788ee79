/*
 * Time waiting and time on the CPU, per node (docs/io.md "Wait time"): one
 * home for what the report's columns, its sort keys and the exports'
 * weights derive from a thread's metric columns.
 *
 *   wait_ns  time in blocking calls made from the node: I/O wrappers,
 *            condition variables, contended locks, semaphores, sleeps,
 *            poll/select/epoll, wait/waitpid, pthread_join (recorded by
 *            jprof unless JPROFOPTS=nowait)
 *   cpu_ns   on-CPU self time: sampled (JPROFOPTS=cpu's per-thread
 *            CPU-time timer) when the profile has that column, else the
 *            exclusive time less the wait (which still holds pre-emption)
 *
 * A profile without wait time (JPROFOPTS=nowait, an old profile) has a
 * wait of 0 everywhere, and its CPU time is its exclusive time.
 */
#ifndef HOOKIT_TOOLS_WAITTIME_H
#define HOOKIT_TOOLS_WAITTIME_H

#include <stdint.h>

#include "profile/profile.h"

struct waittime {
    const uint64_t *wait; /* wait_ns column, NULL when the profile has none */
    const uint64_t *cpu;  /* cpu_ns column (sampled), or NULL */
};

/* The columns of th; returns 1 when it has wait time, else 0. */
int waittime_of(const struct prof_thread *th, struct waittime *w);
/* Whether some thread of p has wait time. */
int waittime_in(const struct profile *p);
/* Node i's wait, and its on-CPU self time (see above). */
uint64_t waittime_wait(const struct waittime *w, uint32_t i);
uint64_t waittime_cpu(const struct waittime *w, const struct prof_thread *th, uint32_t i);

/* What a view weighs or sorts by (`--weight`, `--sort`): wall-clock time,
 * calls, on-CPU time or time waiting. */
enum weight { WEIGHT_TIME, WEIGHT_CALLS, WEIGHT_CPU, WEIGHT_WAIT };
/* "time" (or "ns"), "calls", "cpu", "wait": 0, else -1. */
int weight_parse(const char *s, enum weight *out);
const char *weight_name(enum weight k);
/* Node i's own share of the weight: exclusive time, calls, CPU or wait. */
uint64_t waittime_self(const struct waittime *w, const struct prof_thread *th, uint32_t i, enum weight k);
/* Per node of th, its subtree's weight (the node's own and its
 * descendants'; for WEIGHT_TIME the inclusive time).  A new array of
 * th->nnodes values (free it), or NULL (no memory). */
uint64_t *waittime_subtree(const struct prof_thread *th, enum weight k);

#endif
