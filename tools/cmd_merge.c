/*
 * hookit merge: combine profiles (a fork family, repeated runs, MPI ranks)
 * into one profile that every command reads.  Nodes are matched by call
 * path and functions by name and module (profile/aggregate.h); each node
 * keeps the sum over the inputs and, as metric columns, the min, mean and
 * max over inputs and which input had the min and the max.  Inputs are read
 * one at a time and freed once folded in.
 */
#include "tools/cli.h"
#include "profile/aggregate.h"
#include "profile/merge_ranks.h"
#include "profile/trace.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const merge_usage =
    "usage: hookit merge -o OUT [--merge-threads] PROFILE...\n"
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
    "  -h, --help            this help\n";

static int write_profile(FILE *out, void *ctx)
{
    if (fflush(out) != 0)
        return -1;
    if (profile_write_fd(ctx, fileno(out)) != 0)
        return cli_fail("cannot write the merged profile: %s", strerror(errno)), -1;
    return 0;
}

int cmd_merge(int argc, char **argv)
{
    static const struct option opts[] = {
        { "output", required_argument, NULL, 'o' },
        { "merge-threads", no_argument, NULL, 'm' },
        { "help", no_argument, NULL, 'h' },
        { 0, 0, 0, 0 },
    };
    const char *output = NULL;
    int flags = AGG_STATS, c;
    cli_reset_getopt();
    while ((c = getopt_long(argc, argv, ":o:mh", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            output = optarg;
            break;
        case 'm':
            flags |= AGG_MERGE_THREADS;
            break;
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
    struct agg *a = agg_new(flags, (uint32_t)(argc - optind));
    struct rank_merge *rm = rank_merge_new();
    if (!a || !rm) {
        agg_free(a);
        rank_merge_free(rm);
        return cli_fail("out of memory");
    }
    for (int i = optind; i < argc; i++) {
        char err[1024];
        struct profile *p = profile_or_trace_read_file(argv[i], err, sizeof err);
        if (!p) {
            agg_free(a);
            rank_merge_free(rm);
            return cli_fail("%s", err);
        }
        int rc = agg_add(a, p, argv[i]);
        if (rc == 0)
            rc = rank_merge_add(rm, p, argv[i]);
        profile_free(p);
        if (rc != 0) {
            agg_free(a);
            rank_merge_free(rm);
            return cli_fail("out of memory merging %s", argv[i]);
        }
    }
    struct profile *merged = agg_finish(a);
    if (merged && rank_merge_finish(rm, merged) != 0) {
        profile_free(merged);
        merged = NULL;
    }
    rank_merge_free(rm);
    int rc = merged ? cli_write_output(output, write_profile, merged) : cli_fail("out of memory");
    profile_free(merged);
    agg_free(a);
    return rc;
}
