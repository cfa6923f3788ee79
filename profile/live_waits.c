/* Waiting and CPU time in a live reader's profile (live_waits.h). */
#include "profile/live_waits.h"
#include "common/clock.h"

/* node's extension block, or NULL when it has none or it is outside v. */
static const struct node_ext *ext_of(const struct arena_view *v, arena_ref node)
{
    const struct arena_node *n = arena_view_node(v, node);
    arena_ref e = n ? __atomic_load_n(&n->ext, __ATOMIC_ACQUIRE) : 0;
    uint64_t off = (uint64_t)e * ARENA_SLOT;
    if (!e || off + sizeof(struct node_ext) > v->size)
        return NULL;
    return (const struct node_ext *)(v->base + off);
}

static uint64_t ns_of(uint64_t ticks, double ticks_per_ns)
{
    return (uint64_t)((double)ticks / ticks_per_ns + 0.5);
}

double live_wait_rate(const struct arena_waits *w, const struct arena_process *pr, int process_counter,
                      double ticks_per_ns)
{
    if (!w || !pr || (w->clock != ARENA_WAITS_COUNTER && w->clock != ARENA_WAITS_MONOTONIC))
        return 0;
    if (w->clock == ARENA_WAITS_MONOTONIC)
        return 1.0;
    if (process_counter)
        return ticks_per_ns;
    uint64_t mono, tsc;
    hk_clock_pair(&mono, &tsc);
    if (mono <= pr->start_mono_ns || tsc <= pr->start_tsc)
        return 0;
    return (double)(tsc - pr->start_tsc) / (double)(mono - pr->start_mono_ns);
}

int live_wait_columns(const struct arena_view *v, const struct arena_waits *w, double wait_rate, int sampled,
                      const struct live_snapshot *s, const struct live_thread *t, struct profile *p,
                      struct prof_thread *th)
{
    uint32_t n = th->nnodes;
    if (w && w->cpu_us) {
        uint64_t *cpu = profile_new_column(p, th, "cpu_ns", n);
        if (!cpu)
            return -1;
        for (uint32_t i = 0; i < n; i++)
            cpu[i] = t->nodes[i].samples * (uint64_t)w->cpu_us * 1000u;
    }
    if (wait_rate <= 0)
        return 0;
    uint64_t *wait_ns = profile_new_column(p, th, "wait_ns", n);
    uint64_t *calls = profile_new_column(p, th, "wait_calls", n);
    if (!wait_ns || !calls)
        return -1;
    /* A pending command: the counters were before it (a blocked thread
     * counts nothing until it applies it), and the call in progress counts
     * from its moment. */
    uint64_t from = t->pending ? t->pending_at : 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct node_ext *x = ext_of(v, t->nodes[i].ref);
        if (!x)
            continue;
        if (!t->pending) {
            uint64_t ticks = __atomic_load_n(&x->io_ticks, __ATOMIC_RELAXED)
                + __atomic_load_n(&x->wait_ticks, __ATOMIC_RELAXED);
            wait_ns[i] = ns_of(ticks, wait_rate);
            calls[i] = __atomic_load_n(&x->wait_calls, __ATOMIC_RELAXED);
        }
        uint64_t since = __atomic_load_n(&x->wait_since, __ATOMIC_ACQUIRE);
        if (since && since < from)
            since = from;
        if (since && t->now > since) {
            wait_ns[i] += ns_of(t->now - since, s->ticks_per_ns);
            calls[i]++;
        }
        /* The counters are read after the tree was copied: a call that
         * ended in between is in them, its time after the copy in no
         * node.  Timed exactly, a context's wait is within its own time. */
        if (!sampled && wait_ns[i] > th->nodes[i].excl_ns)
            wait_ns[i] = th->nodes[i].excl_ns;
    }
    return 1;
}
