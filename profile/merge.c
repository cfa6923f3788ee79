/* One merge: the call-path merge and the per-rank tables side by side
 * (profile/merge.h). */
#include "profile/merge.h"
#include "profile/merge_ranks.h"

#include <stdlib.h>

struct merge {
    struct agg *agg;
    struct rank_merge *ranks;
};

struct merge *merge_new(int flags)
{
    struct merge *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->agg = agg_new((flags & AGG_MERGE_THREADS) | AGG_STATS, 0);
    m->ranks = rank_merge_new();
    if (!m->agg || !m->ranks) {
        merge_free(m);
        return NULL;
    }
    return m;
}

void merge_free(struct merge *m)
{
    if (!m)
        return;
    agg_free(m->agg);
    rank_merge_free(m->ranks);
    free(m);
}

int merge_add(struct merge *m, const struct profile *p, const char *label)
{
    if (agg_add(m->agg, p, label) != 0)
        return -1;
    return rank_merge_add(m->ranks, p, label);
}

int merge_add_partial(struct merge *m, const struct profile *partial)
{
    if (!agg_is_partial(partial))
        return -1;
    if (agg_add_partial(m->agg, partial) != 0)
        return -1;
    return rank_merge_add_partial(m->ranks, partial);
}

struct profile *merge_partial(struct merge *m)
{
    struct profile *p = agg_partial(m->agg);
    if (p && rank_merge_partial(m->ranks, p) != 0) {
        profile_free(p);
        return NULL;
    }
    return p;
}

struct profile *merge_finish(struct merge *m)
{
    struct profile *p = agg_finish(m->agg);
    if (p && rank_merge_finish(m->ranks, p) != 0) {
        profile_free(p);
        return NULL;
    }
    return p;
}

uint32_t merge_inputs(const struct merge *m)
{
    return agg_inputs(m->agg);
}
