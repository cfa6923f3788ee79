/* Time waiting and on the CPU per node (waittime.h). */
#include "tools/waittime.h"

int waittime_of(const struct prof_thread *th, struct waittime *w)
{
    const struct prof_metric *wait = profile_find_metric(th, "wait_ns");
    const struct prof_metric *cpu = profile_find_metric(th, "cpu_ns");
    w->wait = wait ? wait->values : NULL;
    w->cpu = cpu ? cpu->values : NULL;
    return w->wait != NULL;
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
    return excl > wait ? excl - wait : 0;   /* the two clocks may differ by a tick */
}
