/*
 * Options that `hookit export` passes to the formats (tools/fmt_NAME.c),
 * and the one profile most formats work on.
 */
#ifndef HOOKIT_TOOLS_EXPORT_OPTS_H
#define HOOKIT_TOOLS_EXPORT_OPTS_H

#include "tools/cli.h"
#include "profile/waittime.h"

struct export_options {
    enum weight weight;         /* --weight: what folded/svg widths and pprof's default
                                 * sample type are: time (the default), calls, cpu, wait */
    int merge_threads;          /* --merge-threads: one tree for all threads */
    int has_tid;                /* --thread T: only that thread (a tid), or those named T */
    long tid;
    const char *thread_name;    /* a name or glob (tools/find_fn.h), NULL: by tid */
    int json_nested;            /* --nested: json nodes inside their parent */
    /* chrome (timeline) filters */
    uint64_t min_time_ns;       /* --min-time T: calls shorter than T left out */
    uint32_t max_depth;         /* --depth N: calls deeper than N levels left out (0: all) */
    uint64_t from_ns, to_ns;    /* --from/--to: only calls overlapping [from, to] since the
                                 * process start (to_ns 0: to the end) */
};
extern struct export_options export_options;

/* --merge-threads and --thread applied to every loaded profile (by
 * `hookit export` before any format runs).  0, or -1 with a message. */
int export_apply_options(struct loaded_profile *profiles, size_t n);

/* The one profile most formats write: the one given, or several merged by
 * call path (threads matched by index).  *owned says whether the caller
 * must profile_free it.  NULL with a message printed. */
struct profile *export_select(struct loaded_profile *profiles, size_t n, int *owned);

/* A duration: a number with a unit ns, us, ms or s (ns when none).  0, or
 * -1 when s is not one. */
int export_parse_ns(const char *s, uint64_t *ns);

/* A thread's total time: the sum of its roots' inclusive times. */
uint64_t thread_total_ns(const struct prof_thread *th);

#endif
