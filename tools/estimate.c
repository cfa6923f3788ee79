/* Sampled times in reports: see estimate.h. */
#include "tools/estimate.h"

#include <stdlib.h>
#include <string.h>

int estimate_of(const struct profile *p, const struct prof_thread *th, struct estimate *e)
{
    const struct prof_metric *m = profile_find_metric(th, "samples");
    e->samples = m ? m->values : NULL;
    e->subtree = NULL;
    e->period_ns = profile_meta_u64_or(p, "sample_period_ns", 0);
    if (!e->samples)
        return 0;
    e->subtree = calloc((size_t)th->nnodes + 1, sizeof *e->subtree);
    if (!e->subtree)
        return -1;
    for (uint32_t i = th->nnodes; i-- > 0;) { /* parents precede children */
        e->subtree[i] += e->samples[i];
        uint32_t parent = th->nodes[i].parent;
        if (parent != PROF_NONE && parent < i)
            e->subtree[parent] += e->subtree[i];
    }
    return 0;
}

void estimate_free(struct estimate *e)
{
    free(e->subtree);
    e->subtree = NULL;
}

const char *estimate_ns(const struct estimate *e, uint32_t node, int inclusive, uint64_t ns,
                        char buf[UNITS_BUF])
{
    char plain[UNITS_BUF];
    units_ns(ns, plain);
    uint64_t n = e && e->samples ? (inclusive ? e->subtree[node] : e->samples[node]) : ESTIMATE_FEW;
    int thin = n < ESTIMATE_FEW && ns > 0 && 2 * n * e->period_ns >= ns;
    snprintf(buf, UNITS_BUF, "%s%.30s", thin ? "~" : "", plain);
    return buf;
}

void estimate_line(FILE *out, const struct profile *p)
{
    const char *timer = profile_get_meta(p, "timer");
    if (!timer || strcmp(timer, "sample"))
        return;
    uint64_t samples = 0;
    for (uint32_t t = 0; t < p->nthreads; t++) {
        const struct prof_metric *m = profile_find_metric(&p->threads[t], "samples");
        for (uint32_t i = 0; m && i < p->threads[t].nnodes; i++)
            samples += m->values[i];
    }
    uint64_t period = profile_meta_u64_or(p, "sample_period_ns", 0);
    uint64_t own = profile_meta_u64_or(p, "hookit_sampled_ns", 0);
    uint64_t own_samples = profile_meta_u64_or(p, "hookit_samples", 0);
    char per[UNITS_BUF], ours[UNITS_BUF];
    double share = samples + own_samples ? 100.0 * (double)own_samples / (double)(samples + own_samples) : 0;
    fprintf(out,
            "# times: on-CPU from %llu samples (one per %s of CPU) plus measured blocking calls; "
            "'~' marks a time resting on fewer than %d samples; hookit's own code took %s (%.0f%% of "
            "the CPU sampled), in no node\n",
            (unsigned long long)samples, units_ns(period, per), ESTIMATE_FEW, units_ns(own, ours), share);
}
