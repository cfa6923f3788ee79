/* Several processes for `hookit snapshot` and `hookit top` (docs/live.md,
 * "Several processes"): which ones (--pids, --family, --job, --all), and
 * their snapshot at one consistency, as one merged profile. */
#ifndef HOOKIT_TOOLS_LIVE_SET_H
#define HOOKIT_TOOLS_LIVE_SET_H

#include <stdio.h>
#include <sys/types.h>

#include "profile/live.h"

enum live_set_kind { SET_NONE = 0, SET_PIDS, SET_FAMILY, SET_JOB, SET_ALL };

struct live_set_sel {
    enum live_set_kind kind;
    const char *arg; /* the option's argument (pids, family pid, job id) */
};

/* getopt_long entries for the options, and their usage lines. */
#define LIVE_SET_OPTIONS                                                                                     \
    { "pids", required_argument, NULL, 'P' }, { "family", required_argument, NULL, 'F' },                    \
        { "job", required_argument, NULL, 'J' },                                                             \
    {                                                                                                        \
        "all", no_argument, NULL, 'A'                                                                        \
    }
#define LIVE_SET_USAGE                                                                                       \
    "      --pids P1,P2...  these processes\n"                                                               \
    "      --family PID     PID and every descendant of it that is profiled\n"                               \
    "      --job ID         every rank of MPI job ID on this host (ID as the\n"                              \
    "                       launcher gives it; a wrong one lists the jobs seen)\n"                           \
    "      --all            every process of yours that is profiled\n"

/* Take option opt ('P', 'F', 'J', 'A'); 1 taken, 0 not one of them, -1 a
 * usage error (printed). */
int live_set_option(struct live_set_sel *sel, int opt, const char *arg, const char *cmd);

/* The processes selected, attached, a job's in rank order (a malloc'ed
 * array, *n of them): EXIT_OK, or EXIT_FAIL / EXIT_USAGE with the message
 * printed.  flags: LIVE_SET_MAY_BE_EMPTY, none of a job or of --all here
 * is no failure (a reader on a host without any). */
#define LIVE_SET_MAY_BE_EMPTY 0x1
int live_set_open(const struct live_set_sel *sel, const char *cmd, int flags, struct live ***ls, uint32_t *n);
void live_set_close(struct live **ls, uint32_t n);

/* One snapshot of them all at consistency c, merged into one profile (what
 * `hookit merge` gives of their snapshots: with MPI ranks, the job
 * profile's rank and function tables), with the pauses in its metadata
 * (live_set_*).  keep, when not NULL, gets each process's own profile
 * (n of them, names resolved).  NULL with the message printed. */
struct profile *live_set_profile(struct live **ls, uint32_t n, enum live_consistency c,
                                 struct live_set_pause *sp, struct profile ***keep);

/* The pieces of live_set_profile, for the readers of a job on several
 * hosts (live_readers.c): each process's pause as rows of live_pauses
 * ("\npid\trank\tpause_ns\tgather_ns\tcopy_ns\tthreads" each); their
 * named profiles folded into m in order (each, when not NULL, keeps them);
 * the set's metadata on a merged profile (rows: every process's, n
 * processes).  0 or -1 (printed). */
struct merge;
void live_set_rows(FILE *f, struct live **ls, const struct live_snapshot *snaps, uint32_t n);
int live_set_fold(struct merge *m, struct live **ls, const struct live_snapshot *snaps, uint32_t n,
                  struct profile **each);
int live_set_meta(struct profile *p, enum live_consistency c, const struct live_set_pause *sp, uint32_t n,
                  const char *rows, uint64_t runnable_ns);

/* A name for the set's files ("job.ID", "family.PID", "pids.PID", "all"). */
void live_set_name(const struct live_set_sel *sel, char *out, size_t size);

#endif
