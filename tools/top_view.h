/*
 * The tables of `hookit top` over several processes (top_view.c): per
 * process its time in and outside MPI and its calls; per function the sum
 * over the processes and the min and max of its inclusive time with the
 * process that has each.  Built from each process's profile in the order
 * of the merge's inputs, and reduced as the merge is (profile/merge.h): a
 * view as text, folded in as the processes that follow its own, so that
 * the readers of a job on several hosts (live_readers.c) give rank 0 the
 * very tables one reader of every process would.
 */
#ifndef HOOKIT_TOOLS_TOP_VIEW_H
#define HOOKIT_TOOLS_TOP_VIEW_H

#include <stdint.h>
#include <sys/types.h>

#include "profile/profile.h"

/* One process: its time (its threads' roots), the time in its outermost
 * MPI frames, its calls. */
struct top_member {
    pid_t pid;
    int32_t rank; /* -1: no MPI rank */
    uint64_t time_ns, mpi_ns, calls;
};

/* One function (by name and module) over the processes; members are
 * indexes of top_view.mv. */
#define TOP_NO_MEMBER UINT32_MAX
struct top_fn {
    char *name, *module;
    uint64_t self_ns, incl_ns, calls, min_ns, max_ns;
    uint32_t min_member, max_member, members;
};

struct top_view {
    struct top_member *mv;
    uint32_t n, cap;
    struct top_fn *fn;
    uint32_t nfn, capfn;
    uint32_t *slots, nslots; /* (name, module) -> fn index + 1, open addressing */
};

/* Process p, as the next member.  0 or -1 (no memory). */
int top_view_add(struct top_view *v, const struct profile *p);
/* The view as text (malloc'ed), for a partial; NULL: no memory. */
char *top_view_text(const struct top_view *v);
/* A view's text as the members that follow.  0, or -1 (no memory, or not
 * a view's text). */
int top_view_add_text(struct top_view *v, const char *text);
/* Once every member is in: a function some process lacks has its min 0
 * (min_member TOP_NO_MEMBER); the functions by exclusive time, largest
 * first. */
void top_view_finish(struct top_view *v);
void top_view_free(struct top_view *v);

#endif
