/*
 * Combining call trees by call path: the threads of one profile
 * (--merge-threads), several profiles (report --merge, hookit merge), or two
 * builds of a program (hookit diff).  Functions are matched by name and
 * module, never by address, so profiles of different builds, processes and
 * machines combine.
 *
 * Inputs are folded one at a time (agg_add), so a caller can read, fold and
 * free them one by one: memory is the size of the combined tree, not of the
 * inputs.  Per node the result keeps the sum over inputs and, with
 * AGG_STATS, the min, mean and max over inputs (an input without the node
 * counts as 0) and which input had the min and the max (so per-rank
 * imbalance is a mapping from input to rank away), as metric columns:
 *
 *   inputs                  inputs the node appears in
 *   min_calls mean_calls max_calls
 *   min_incl_ns mean_incl_ns max_incl_ns  min_incl_input max_incl_input
 *   min_excl_ns mean_excl_ns max_excl_ns
 *
 * (mean rounded down; input numbers count from 0 in the order of agg_add,
 * listed in the metadata as input.N).  With AGG_STATS, the inputs' own
 * metric columns (mpi_bytes, io_bytes_read, ...; up to AGG_MAX_SUMS of
 * them, those not derived by a merge) are summed per node, under their
 * names.  Time waiting and on the CPU (wait_ns, cpu_ns, wait_calls;
 * tools/waittime.h) are summed so with or without AGG_STATS.  With
 * AGG_PER_INPUT the per-input
 * values stay available through agg_value() instead (hookit diff).
 */
#ifndef HOOKIT_PROFILE_AGGREGATE_H
#define HOOKIT_PROFILE_AGGREGATE_H

#include <stdint.h>

#include "profile/profile.h"

#define AGG_MERGE_THREADS 0x1 /* all threads into one tree (else matched by thread index) */
#define AGG_STATS 0x2         /* min/mean/max metric columns */
#define AGG_PER_INPUT 0x4     /* keep each input's numbers (few inputs) */
#define AGG_MAX_SUMS 16       /* metric columns summed with AGG_STATS */

struct agg;

struct agg *agg_new(int flags, uint32_t ninputs_hint);
/* Fold every thread of p in as input number `input` (0, 1, ... in order;
 * the same input may be folded over several calls).  0 or -1 (no memory). */
int agg_add(struct agg *a, const struct profile *p, const char *label);
/* The combined profile (owned by the caller; the agg stays valid for
 * agg_value until agg_free).  NULL on no memory. */
struct profile *agg_finish(struct agg *a);
void agg_free(struct agg *a);

/* With AGG_PER_INPUT: input's numbers for node of thread k of the finished
 * profile (zeros when the input does not have it); wait_ns and cpu_ns as
 * waittime_wait and waittime_cpu of the input's nodes. */
struct agg_values {
    uint64_t calls, incl_ns, excl_ns, wait_ns, cpu_ns;
};
struct agg_values agg_value(const struct agg *a, uint32_t thread, uint32_t node, uint32_t input);

/*
 * Partial merges (the reduction over MPI and `hookit merge -j`): the state
 * of an agg as a profile of its own (a partial, written and read like any
 * profile), and an agg taking in a partial as the inputs that follow its
 * own.  Folding the partials of consecutive ranges of inputs in order gives
 * exactly what folding the inputs one by one gives.  Not with
 * AGG_PER_INPUT.  A partial is not a merged profile: agg_finish makes that.
 */
struct profile *agg_partial(struct agg *a);                        /* NULL: no memory */
int agg_add_partial(struct agg *a, const struct profile *partial); /* 0 or -1 */
int agg_is_partial(const struct profile *p);
uint32_t agg_partial_inputs(const struct profile *partial); /* 0: not a partial */
uint32_t agg_inputs(const struct agg *a);

/* Convenience: p's threads merged into one (a new profile), or NULL. */
struct profile *agg_merge_threads(const struct profile *p);

#endif
