/* Time waiting and on the CPU per node (waittime.h). */
#include "profile/waittime.h"

#include <stdlib.h>
#include <string.h>

int waittime_of(const struct prof_thread *th, struct waittime *w)
{
    const struct prof_metric *wait = profile_find_metric(th, "wait_ns");
    const struct prof_metric *cpu = profile_find_metric(th, "cpu_ns");
    w->wait = wait ? wait->values : NULL;
    w->cpu = cpu ? cpu->values : NULL;
    return w->wait != NULL;
}

int waittime_in(const struct profile *p)
{
    struct waittime w;
    for (uint32_t k = 0; k < p->nthreads; k++)
        if (waittime_of(&p->threads[k], &w))
            return 1;
    return 0;
}

uint64_t waittime_wait(const struct waittime *w, uint32_t i)
{
    return w->wait ? w->wait[i] : 0;
}

uint64_t waittime_cpu(const struct waittime *w, const struct prof_thread *th, uint32_t i)
{
    if (w->cpu)
        return w->cpu[i];
    uint64_t excl = th->nodes[i].excl_ns, wait = waittime_wait(w, i);
    return excl > wait ? excl - wait : 0; /* the two clocks may differ by a tick */
}

static const char *const weight_names[] = { "time", "calls", "cpu", "wait" };

int weight_parse(const char *s, enum weight *out)
{
    if (!strcmp(s, "ns")) {
        *out = WEIGHT_TIME;
        return 0;
    }
    for (size_t k = 0; k < sizeof weight_names / sizeof *weight_names; k++)
        if (!strcmp(s, weight_names[k])) {
            *out = (enum weight)k;
            return 0;
        }
    return -1;
}

const char *weight_name(enum weight k)
{
    return (size_t)k < sizeof weight_names / sizeof *weight_names ? weight_names[k] : "?";
}

uint64_t waittime_self(const struct waittime *w, const struct prof_thread *th, uint32_t i, enum weight k)
{
    switch (k) {
    case WEIGHT_CALLS:
        return th->nodes[i].calls;
    case WEIGHT_CPU:
        return waittime_cpu(w, th, i);
    case WEIGHT_WAIT:
        return waittime_wait(w, i);
    default:
        return th->nodes[i].excl_ns;
    }
}

uint64_t *waittime_subtree(const struct prof_thread *th, enum weight k)
{
    uint64_t *sum = calloc((size_t)th->nnodes + 1, sizeof *sum);
    if (!sum)
        return NULL;
    struct waittime w;
    waittime_of(th, &w);
    for (uint32_t i = th->nnodes; i-- > 0;) { /* parents precede their children */
        if (k == WEIGHT_TIME) {
            sum[i] = th->nodes[i].incl_ns;
            continue;
        }
        sum[i] += waittime_self(&w, th, i, k);
        uint32_t par = th->nodes[i].parent;
        if (par != PROF_NONE && par < i)
            sum[par] += sum[i];
    }
    return sum;
}
