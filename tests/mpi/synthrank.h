/* A made-up MPI rank's profile header, for the programs that generate rank
 * profiles (genranks.c, simreduce.c): process /opt/app/app, rank of size,
 * the given pid, duration and end, on host node0.  Exits on no memory. */
#ifndef HOOKIT_TESTS_SYNTHRANK_H
#define HOOKIT_TESTS_SYNTHRANK_H

#include "profile/profile.h"

#include <stdio.h>
#include <stdlib.h>

static struct profile *synth_rank(int rank, int size, int pid, uint64_t duration_ns, const char *end)
{
    struct profile *p = profile_new();
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    p->process.pid = pid;
    p->process.ppid = 1;
    p->process.rank = rank;
    p->process.size = size;
    p->process.exe = profile_intern(p, "/opt/app/app");
    p->process.argc = 1;
    p->process.argv = profile_alloc(p, sizeof(char *));
    p->process.argv[0] = profile_intern(p, "app");
    p->process.start_ns = 1700000000000000000ull;
    p->process.duration_ns = duration_ns;
    profile_set_meta(p, "hostname", "node0");
    profile_set_meta(p, "end", end);
    return p;
}

/* p's one thread ("main", tid) of n nodes with an mpi_bytes column, both
 * left for the caller to fill.  Exits on no memory. */
static struct prof_thread *synth_thread(struct profile *p, int tid, uint32_t n)
{
    p->threads = profile_alloc(p, sizeof *p->threads);
    struct prof_thread *th = p->threads;
    if (th) {
        p->nthreads = 1;
        th->tid = tid;
        th->name = profile_intern(p, "main");
        th->nodes = profile_alloc(p, n * sizeof *th->nodes);
        th->nnodes = n;
        th->metrics = profile_alloc(p, sizeof *th->metrics);
    }
    if (th && th->metrics) {
        th->nmetrics = 1;
        th->metrics[0].name = profile_intern(p, "mpi_bytes");
        th->metrics[0].values = profile_alloc(p, n * sizeof(uint64_t));
    }
    if (!th || !th->nodes || !th->metrics || !th->metrics[0].values) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return th;
}

#endif
