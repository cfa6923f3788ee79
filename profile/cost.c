/* The hooks' cost to a run, from its profile: see cost.h. */
#include "profile/cost.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

#define NOINSTR __attribute__((no_instrument_function))

NOINSTR static uint64_t all_calls(const struct profile *p)
{
    uint64_t calls = 0;
    for (uint32_t t = 0; t < p->nthreads; t++)
        for (uint32_t i = 0; i < p->threads[t].nnodes; i++)
            calls += p->threads[t].nodes[i].calls;
    return calls;
}

/* The program's samples; -1 when no thread has the column (a view that
 * dropped it). */
NOINSTR static int all_samples(const struct profile *p, uint64_t *samples)
{
    int column = 0;
    *samples = 0;
    for (uint32_t t = 0; t < p->nthreads; t++) {
        const struct prof_metric *m = profile_find_metric(&p->threads[t], "samples");
        column |= m != NULL;
        for (uint32_t i = 0; m && i < p->threads[t].nnodes; i++)
            *samples += m->values[i];
    }
    return column ? 0 : -1;
}

/* The threads' inclusive time: their roots'. */
NOINSTR static uint64_t all_roots_ns(const struct profile *p)
{
    uint64_t ns = 0;
    for (uint32_t t = 0; t < p->nthreads; t++)
        for (uint32_t i = 0; i < p->threads[t].nnodes; i++)
            if (p->threads[t].nodes[i].parent == PROF_NONE)
                ns += p->threads[t].nodes[i].incl_ns;
    return ns;
}

NOINSTR int cost_of_run(const struct profile *p, struct run_cost *c)
{
    const char *timer = profile_get_meta(p, "timer"), *source = profile_get_meta(p, "source");
    uint64_t own_ns, own_samples, period, per_call, samples;
    memset(c, 0, sizeof *c);
    c->calls = all_calls(p);
    /* a merge of runs carries the first run's figures over every run's
     * calls; a trace times every call its own way */
    if (!timer || !c->calls || source)
        return -1;
    if (!strcmp(timer, "sample")) {
        if (profile_meta_u64(p, "hookit_sampled_ns", &own_ns)
            || profile_meta_u64(p, "hookit_samples", &own_samples)
            || profile_meta_u64(p, "sample_period_ns", &period) || all_samples(p, &samples))
            return -1;
        c->sampled = 1;
        c->cost_ns = (double)own_ns;
        c->ns_per_call = c->cost_ns / (double)c->calls;
        c->run_ns = (double)(samples + own_samples) * (double)period;
        c->period_ns = (double)period;
        c->own_samples = own_samples;
    } else {
        if (profile_meta_u64(p, "overhead_ns_per_call", &per_call))
            return -1;
        c->ns_per_call = (double)per_call;
        uint64_t inner = 0;
        profile_meta_u64(p, "overhead_inner_ns_per_call", &inner);
        c->inner_ns = (double)inner;
        c->cost_ns = (double)c->calls * c->ns_per_call;
        c->run_ns = (double)all_roots_ns(p);
    }
    uint64_t build_ns = 0;
    profile_meta_u64(p, "build_ns", &build_ns);
    c->fixed_ns = COST_START_NS + (double)build_ns;
    return c->run_ns > 0 ? 0 : -1;
}

NOINSTR double cost_sampling_ns(const struct run_cost *c, double cpu_ns)
{
    return c->period_ns > 0 ? cpu_ns / c->period_ns * COST_SAMPLE_NS : 0;
}

NOINSTR double cost_share(const struct run_cost *c)
{
    double share = c->run_ns > 0 ? c->cost_ns / c->run_ns : 0;
    return share > 1 ? 1 : share;
}

NOINSTR const char *cost_fmt_ns(double ns, char *buf, size_t size)
{
    if (ns >= 1e9)
        snprintf(buf, size, "%.2fs", ns / 1e9);
    else if (ns >= 1e6)
        snprintf(buf, size, "%.2fms", ns / 1e6);
    else if (ns >= 1e3)
        snprintf(buf, size, "%.2fus", ns / 1e3);
    else if (ns >= 10 || ns == 0)
        snprintf(buf, size, "%.0fns", ns);
    else
        snprintf(buf, size, "%.1fns", ns);
    return buf;
}

NOINSTR int cost_overhead_line(const struct profile *p, const char *what, char *buf, size_t size)
{
    struct run_cost c;
    if (cost_of_run(p, &c) != 0 || cost_share(&c) < COST_LARGE_SHARE || c.cost_ns < COST_LINE_MIN_NS
        || (c.sampled && c.own_samples < COST_LINE_MIN_SAMPLES))
        return 0;
    char cost[32], run[32], per[32];
    snprintf(buf, size,
             "overhead: the hooks took about %s of this run's %s of %s (%.0f%%: %llu calls x %s "
             "each); `hookit advise %s` says which functions to stop instrumenting",
             cost_fmt_ns(c.cost_ns, cost, sizeof cost), cost_fmt_ns(c.run_ns, run, sizeof run),
             c.sampled ? "CPU" : "time", 100 * cost_share(&c), (unsigned long long)c.calls,
             cost_fmt_ns(c.ns_per_call, per, sizeof per), what);
    return 1;
}
