/*
 * One merge of profiles across processes or ranks (`hookit merge`, the
 * reduction of an MPI job at MPI_Finalize): the call-path merge
 * (profile/aggregate.h) and the per-rank tables (profile/merge_ranks.h),
 * fed the same inputs in the same order.
 *
 * Partial merges make it a reduction: merge_partial gives the state so far
 * as a profile (sent over MPI, or handed from one thread to another),
 * merge_add_partial takes one in as the inputs that follow its own.  Along
 * the binomial tree below, every rank folds its own input, then its
 * children's partials in order, so each partial covers consecutive inputs
 * and the result is bit for bit what folding every input in turn gives.
 */
#ifndef HOOKIT_PROFILE_MERGE_H
#define HOOKIT_PROFILE_MERGE_H

#include <stdint.h>

#include "profile/aggregate.h"

struct merge;

/* flags: AGG_MERGE_THREADS or 0 (the statistics are always on). */
struct merge *merge_new(int flags);
void merge_free(struct merge *m);
/* Fold input p (label: its file, or NULL).  0 or -1 (no memory). */
int merge_add(struct merge *m, const struct profile *p, const char *label);
/* Fold a partial (merge_partial of another merge) as the inputs that
 * follow.  0, or -1 (no memory, or not a partial). */
int merge_add_partial(struct merge *m, const struct profile *partial);
/* The state so far as a partial (a new profile), or NULL. */
struct profile *merge_partial(struct merge *m);
/* The merged profile (the caller owns it), or NULL.  Once. */
struct profile *merge_finish(struct merge *m);
/* Inputs folded so far (a partial counts as its inputs). */
uint32_t merge_inputs(const struct merge *m);

/*
 * The binomial tree over P members (ranks, threads): member r's parent is r
 * with its lowest set bit cleared; its children are r + 1, r + 2, r + 4 ...
 * below r's lowest set bit (any power for member 0) and below P, taken in
 * that order; child r + s covers the members [r + s, min(r + 2s, P)).
 * The depth is ceil(log2 P).
 */
static inline uint32_t merge_tree_parent(uint32_t r)
{
    return r & (r - 1);
}
/* The first step after s (start with s = 0) for member r of P, or 0 when
 * r has no more children. */
static inline uint32_t merge_tree_next_child(uint32_t r, uint32_t nmembers, uint32_t s)
{
    s = s ? s * 2 : 1;
    uint32_t lowbit = r ? (r & -r) : 0;
    if ((lowbit && s >= lowbit) || s >= nmembers - r || s == 0)
        return 0;
    return s;
}
/* The members child r + s covers. */
static inline uint32_t merge_tree_span(uint32_t r, uint32_t nmembers, uint32_t s)
{
    uint32_t left = nmembers - (r + s);
    return s < left ? s : left;
}

#endif
