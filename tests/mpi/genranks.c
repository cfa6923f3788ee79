/*
 * genranks: the profiles of a made-up N-rank job with exactly known numbers,
 * for the merge tests (tests/mpi) and the merge measurement (docs/mpi.md).
 *
 *   genranks DIR N [EXTRA]   writes DIR/hookit.app.r<R>.<1000+R>.prof, R = 0..N-1
 *
 * Rank R, size N, pid 1000 + R, duration 1 s; thread 0 (times in ns):
 *   main                       incl = 1000 + solve + leaves
 *     solve                    1 call, incl (R + 1) * 1000000
 *       MPI:MPI_Allreduce      10 calls, incl (N - R) * 100000, mpi_bytes 80 * (R + 1)
 *     leaf_K (K < EXTRA)       1 call, incl 1000 each (a bigger tree per rank)
 * Ranks with R % 4 == 3 also call skipped() under main (1 call, 5000 ns),
 * so some contexts are missing from some ranks.
 */
#include "profile/profile.h"
#include "synthrank.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what)
{
    fprintf(stderr, "genranks: %s\n", what);
    exit(1);
}

static struct profile *rank_profile(int rank, int size, int extra)
{
    struct profile *p = synth_rank(rank, size, 1000 + rank, 1000000000ull, "exit");

    uint32_t nfuncs = 4 + (uint32_t)extra;
    p->funcs = profile_alloc(p, nfuncs * sizeof *p->funcs);
    p->nfuncs = nfuncs;
    p->funcs[0] = (struct prof_func){ 0x401000, profile_intern(p, "main"), profile_intern(p, "app"), NULL, 0 };
    p->funcs[1] = (struct prof_func){ 0x401100, profile_intern(p, "solve"), profile_intern(p, "app"), NULL, 0 };
    p->funcs[2] = (struct prof_func){ 0, profile_intern(p, "MPI:MPI_Allreduce"), profile_intern(p, "libmpi.so.40"), NULL, 0 };
    p->funcs[3] = (struct prof_func){ 0x401200, profile_intern(p, "skipped"), profile_intern(p, "app"), NULL, 0 };
    for (int k = 0; k < extra; k++) {
        char name[32];
        snprintf(name, sizeof name, "leaf_%d", k);
        p->funcs[4 + k] = (struct prof_func){ 0x402000 + (uint64_t)k * 16, profile_intern(p, name),
                                              profile_intern(p, "app"), NULL, 0 };
    }

    int skipped = rank % 4 == 3;
    uint32_t n = 3 + (uint32_t)extra + (uint32_t)skipped;
    struct prof_thread *th = synth_thread(p, 1000 + rank, n);

    uint64_t solve = (uint64_t)(rank + 1) * 1000000, mpi = (uint64_t)(size - rank) * 100000;
    uint64_t leaves = (uint64_t)extra * 1000 + (skipped ? 5000 : 0);
    th->nodes[0] = (struct prof_node){ 0, PROF_NONE, 1, 1000 + solve + leaves, 1000 };
    th->nodes[1] = (struct prof_node){ 1, 0, 1, solve, solve - mpi };
    th->nodes[2] = (struct prof_node){ 2, 1, 10, mpi, mpi };
    th->metrics[0].values[2] = 80 * (uint64_t)(rank + 1);
    uint32_t i = 3;
    for (int k = 0; k < extra; k++)
        th->nodes[i++] = (struct prof_node){ 4 + (uint32_t)k, 0, 1, 1000, 1000 };
    if (skipped)
        th->nodes[i++] = (struct prof_node){ 3, 0, 1, 5000, 5000 };
    return p;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        die("usage: genranks DIR N [EXTRA]");
    int size = atoi(argv[2]), extra = argc > 3 ? atoi(argv[3]) : 0;
    for (int r = 0; r < size; r++) {
        struct profile *p = rank_profile(r, size, extra);
        char name[64], err[512];
        snprintf(name, sizeof name, "hookit.app.r%d.%d.prof", r, 1000 + r);
        if (profile_write_file(p, argv[1], name, err, sizeof err) != 0)
            die(err);
        profile_free(p);
    }
    return 0;
}
