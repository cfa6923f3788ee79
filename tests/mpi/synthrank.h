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

#endif
