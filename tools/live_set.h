/* Several processes for `hookit snapshot` and `hookit top` (docs/live.md,
 * "Several processes"): which ones (--pids, --family, --job, --all), and
 * their snapshot at one consistency, as one merged profile. */
#ifndef HOOKIT_TOOLS_LIVE_SET_H
#define HOOKIT_TOOLS_LIVE_SET_H

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

/* The processes selected, attached (a malloc'ed array, *n of them): EXIT_OK,
 * or EXIT_FAIL / EXIT_USAGE with the message printed. */
int live_set_open(const struct live_set_sel *sel, const char *cmd, struct live ***ls, uint32_t *n);
void live_set_close(struct live **ls, uint32_t n);

/* One snapshot of them all at consistency c, merged into one profile (what
 * `hookit merge` gives of their snapshots: with MPI ranks, the job
 * profile's rank and function tables), with the pauses in its metadata
 * (live_set_*).  keep, when not NULL, gets each process's own profile
 * (n of them, names resolved).  NULL with the message printed. */
struct profile *live_set_profile(struct live **ls, uint32_t n, enum live_consistency c,
                                 struct live_set_pause *sp, struct profile ***keep);

/* A name for the set's files ("job.ID", "family.PID", "pids.PID", "all"). */
void live_set_name(const struct live_set_sel *sel, char *out, size_t size);

#endif
