/*
 * hookit merge: combine profiles (a fork family, repeated runs, MPI ranks)
 * into one profile that every command reads.  Nodes are matched by call
 * path and functions by name and module (profile/aggregate.h); each node
 * keeps the sum over the inputs and, as metric columns, the min, mean and
 * max over inputs and which input had the min and the max.  Inputs are read
 * one at a time and freed once folded in.
 *
 * With -j N, N threads each fold a consecutive share of the inputs and the
 * shares are reduced along the binomial tree of profile/merge.h, the
 * schedule and code of the reduction of an MPI job: the result is the same,
 * bit for bit, as with one thread.
 */
#include "tools/cli.h"
#include "profile/merge.h"
#include "profile/trace.h"
#include "profile/read_file.h"

#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const merge_usage =
    "usage: hookit merge -o OUT [-j N] [--merge-threads] PROFILE...\n"
    "\n"
    "Combine profiles (or traces) into the profile OUT (replaced atomically).\n"
    "Call paths are matched by function name and module, threads by their\n"
    "index (0 = main thread).  Every node keeps the sum over the inputs, and\n"
    "the metric columns inputs, min_/mean_/max_calls, min_/mean_/max_incl_ns,\n"
    "min_/max_incl_input, min_/mean_/max_excl_ns over the inputs (an input\n"
    "without the node counts as 0; inputs are numbered from 0 in the order\n"
    "given and listed in the metadata as input.N).  The profiler's own metric\n"
    "columns (mpi_bytes, io_bytes_read, ...) are summed.  Across the ranks of\n"
    "a job (docs/mpi.md): min_incl_rank, max_incl_rank and imbalance_pct\n"
    "(100 x max / mean) per call path, and the metadata tables \"ranks\" (time\n"
    "and MPI time per rank) and \"functions\" (per function over ranks).\n"
    "\n"
    "Options:\n"
    "  -o, --output OUT      the merged profile (required; - for standard output)\n"
    "  -m, --merge-threads   merge all threads into one tree\n"
    "  -j, --jobs N          read and merge with N threads (default 1); the result\n"
    "                        is the same whatever N\n"
    "  -h, --help            this help\n";

static int write_profile(FILE *out, void *ctx)
{
    if (fflush(out) != 0)
        return -1;
    if (profile_write_fd(ctx, fileno(out)) != 0)
        return cli_fail("cannot write the merged profile: %s", strerror(errno)), -1;
    return 0;
}

/* One member of the tree: a share of the inputs, then its children's partials. */
struct share {
    pthread_t thread;
    uint32_t member, nmembers;
    char **files;
    uint32_t nfiles;
    int flags;
    struct share *all;
    int started;            /* its thread runs (else its parent runs it when needed) */
    struct profile *result; /* a partial (member > 0), the merged profile (member 0) */
    char err[1100];
};

static void *merge_share(void *arg);

/* Member s->member + step's partial, taken in once its thread is done
 * (joined also after a failure: no thread is left running). */
static int take_child(struct share *s, struct merge *m, uint32_t step, int rc)
{
    struct share *c = &s->all[s->member + step];
    if (c->started)
        pthread_join(c->thread, NULL);
    else
        merge_share(c); /* no thread could be made for it */
    if (rc == 0 && !c->result) {
        snprintf(s->err, sizeof s->err, "%s", c->err);
        rc = -1;
    } else if (rc == 0 && merge_add_partial(m, c->result) != 0) {
        snprintf(s->err, sizeof s->err, "out of memory merging");
        rc = -1;
    }
    profile_free(c->result);
    c->result = NULL;
    return rc;
}

static void *merge_share(void *arg)
{
    struct share *s = arg;
    /* The children first, each started by its parent alone, which alone
     * joins it. */
    for (uint32_t step = 0; (step = merge_tree_next_child(s->member, s->nmembers, step));) {
        struct share *c = &s->all[s->member + step];
        c->started = pthread_create(&c->thread, NULL, merge_share, c) == 0;
    }
    struct merge *m = merge_new(s->flags);
    int rc = m ? 0 : -1;
    if (!m)
        snprintf(s->err, sizeof s->err, "out of memory");
    for (uint32_t i = 0; rc == 0 && i < s->nfiles; i++) {
        struct profile *p = profile_or_trace_read_file(s->files[i], s->err, sizeof s->err);
        if (!p) {
            rc = -1;
            break;
        }
        rc = merge_add(m, p, s->files[i]);
        profile_free(p);
        if (rc != 0)
            snprintf(s->err, sizeof s->err, "out of memory merging %s", s->files[i]);
    }
    for (uint32_t step = 0; (step = merge_tree_next_child(s->member, s->nmembers, step));)
        rc = take_child(s, m, step, rc);
    if (rc == 0) {
        s->result = s->member ? merge_partial(m) : merge_finish(m);
        if (!s->result)
            snprintf(s->err, sizeof s->err, "out of memory");
    }
    merge_free(m);
    return NULL;
}

/* The inputs merged by n threads along the tree (member 0 is this thread). */
static struct profile *merge_files(char **files, uint32_t nfiles, int flags, uint32_t n, char *err,
                                   size_t errlen)
{
    if (n > nfiles)
        n = nfiles;
    /* Every input is read into blocks of about the same sizes, freed once
     * folded: keep them for the next instead of giving them back to the
     * kernel and faulting them in again (a fifth of the time otherwise). */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    struct share *all = calloc(n, sizeof *all);
    if (!all) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    uint32_t next = 0;
    for (uint32_t r = 0; r < n; r++) {
        uint32_t count = nfiles / n + (r < nfiles % n);
        all[r] = (struct share){
            .member = r, .nmembers = n, .files = files + next, .nfiles = count, .flags = flags, .all = all
        };
        next += count;
    }
    merge_share(&all[0]);
    struct profile *p = all[0].result;
    if (!p)
        snprintf(err, errlen, "%s", all[0].err);
    free(all);
    return p;
}

int cmd_merge(int argc, char **argv)
{
    static const struct option opts[] = {
        { "output", required_argument, NULL, 'o' },
        { "merge-threads", no_argument, NULL, 'm' },
        { "jobs", required_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { 0, 0, 0, 0 },
    };
    const char *output = NULL;
    int flags = 0, c;
    unsigned long jobs = 1;
    cli_reset_getopt();
    while ((c = getopt_long(argc, argv, ":o:mj:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            output = optarg;
            break;
        case 'm':
            flags |= AGG_MERGE_THREADS;
            break;
        case 'j': {
            char *end;
            errno = 0;
            jobs = strtoul(optarg, &end, 10);
            if (*end || errno || jobs < 1 || jobs > 1024)
                return cli_usage_error("merge", "-j takes a number of threads from 1 to 1024");
            break;
        }
        case 'h':
            fputs(merge_usage, stdout);
            return EXIT_OK;
        default:
            return cli_option_error("merge", c, argv);
        }
    }
    if (!output)
        return cli_usage_error("merge", "-o OUT is required");
    if (optind >= argc)
        return cli_usage_error("merge", "no profile given");
    if (strcmp(output, "-") == 0 && isatty(STDOUT_FILENO))
        return cli_usage_error("merge", "not writing a binary profile to a terminal");
    char err[1100];
    struct profile *merged =
        merge_files(argv + optind, (uint32_t)(argc - optind), flags, (uint32_t)jobs, err, sizeof err);
    if (!merged)
        return cli_fail("%s", err);
    int rc = cli_write_output(output, write_profile, merged);
    profile_free(merged);
    return rc;
}
