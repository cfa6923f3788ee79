/* From the live trees to a struct profile: every thread's tree in preorder,
 * open frames counted up to now (without touching the live tree, so a
 * flush leaves collection undisturbed), exclusive time derived, and a
 * function table of every distinct address (names come later, names.c). */
#include "jprof.h"
#include "profile/profile.h"
#include "profile/arena_walk.h"
#include "metrics.h"

#include <stdlib.h>
#include <string.h>

/* ---- building ----------------------------------------------------------- */
struct builder {
    struct profile *p;
    struct arena_funcs funcs;   /* fn address -> function table index */
    struct arena_timing timing; /* ticks, samples and compensation to times */
    uint64_t now;
};

/* The thread's tree in preorder into th->nodes (profile/arena_walk.c, the
 * walk live readers use too), open frames counted up to now. */
JP_NOINSTR static int fill_nodes(struct builder *b, const struct arena_thread *rec, struct prof_thread *th)
{
    const struct jp_thread *t = (const struct jp_thread *)(uintptr_t)rec->priv;
    uint32_t depth = t && rec->state == ARENA_THREAD_RUNNING ? rec->depth : 0;
    struct arena_view view = { jp_arena_base, (uint64_t)jp_arena_header()->used };
    /* A reset or zerobase the thread has not applied yet (it is blocked,
     * profile/arena.h): written as it will be. */
    uint32_t pending = t ? __atomic_load_n(&rec->request, __ATOMIC_ACQUIRE) & ARENA_REQ_PENDING : 0;
    uint64_t pending_at = rec->pending_at;
    uint64_t n = arena_tree_copy(&view, rec->root, NULL, UINT64_MAX, NULL);
    struct arena_copy_node *copy = malloc(((size_t)n + 1) * sizeof *copy);
    struct arena_frame *stack = depth ? malloc(((size_t)depth + 1) * sizeof *stack) : NULL;
    if (!copy || (depth && !stack)) {
        free(copy);
        free(stack);
        return -1;
    }
    n = arena_tree_copy(&view, rec->root, copy, n, NULL); /* at most what was counted */
    if (depth)
        memcpy(stack, t->stack, ((size_t)depth + 1) * sizeof *stack);
    n = arena_copy_pending(&view, pending, pending_at, copy, (uint32_t)n, stack, &depth);
    int rc = arena_copy_to_thread(b->p, &b->funcs, copy, (uint32_t)n, depth ? stack : NULL, depth, b->now,
                                  &b->timing, th);
    if (rc == 0)
        rc = jp_metrics_thread(b->p, th, copy, (uint32_t)n);
    if (rc == 0)
        rc = jp_mpi_thread(b->p, th, copy, (uint32_t)n);
    if (rc == 0)
        rc = jp_wait_thread(b->p, th, copy, (uint32_t)n);
    free(copy);
    free(stack);
    return rc;
}

JP_NOINSTR static int by_index(const void *a, const void *b)
{
    const struct arena_thread *x = *(const struct arena_thread *const *)a;
    const struct arena_thread *y = *(const struct arena_thread *const *)b;
    return (x->index > y->index) - (x->index < y->index);
}

JP_NOINSTR static int add_threads(struct builder *b)
{
    uint32_t n = 0;
    for (arena_ref r = jp_arena_header()->first_thread; r; r = ((struct arena_thread *)jp_at(r))->next)
        n++;
    struct arena_thread **recs = malloc((n + 1) * sizeof *recs);
    b->p->threads = profile_alloc(b->p, (n + 1) * sizeof *b->p->threads);
    if (!recs || !b->p->threads) {
        free(recs);
        return -1;
    }
    uint32_t i = 0;
    for (arena_ref r = jp_arena_header()->first_thread; r && i < n; r = ((struct arena_thread *)jp_at(r))->next)
        recs[i++] = jp_at(r);
    qsort(recs, i, sizeof *recs, by_index);
    int rc = 0;
    for (uint32_t k = 0; k < i && rc == 0; k++) {
        struct prof_thread *th = &b->p->threads[k];
        memset(th, 0, sizeof *th);
        th->tid = recs[k]->tid;
        th->index = recs[k]->index;
        char name[sizeof recs[k]->name + 1] = { 0 };
        memcpy(name, recs[k]->name, sizeof recs[k]->name);
        th->name = profile_intern(b->p, name);
        rc = fill_nodes(b, recs[k], th);
    }
    b->p->nthreads = i;
    free(recs);
    return rc;
}

JP_NOINSTR struct profile *jp_build_profile(int how)
{
    struct builder b = { .p = profile_new() };
    jp_clock_calibrate();
    b.now = jp_now();
    b.timing = (struct arena_timing){
        .ticks_per_ns = jp_ticks_per_ns(),
        .sample_period_ns = jp_sampling() ? jp_sample_period_ns() : 0,
        .compensate = jp_opt.compensate,
        .overhead_full_ns = jp_ticks_to_ns(jp_overhead_full_ticks()),
        .overhead_inner_ns = jp_ticks_to_ns(jp_overhead_inner_ticks()),
    };
    int rc = b.p && arena_funcs_init(&b.funcs) == 0 ? 0 : -1;
    if (rc == 0)
        rc = jp_fill_process(b.p, how);
    if (rc == 0)
        rc = add_threads(&b);
    if (rc == 0)
        rc = jp_metrics_process(b.p);
    if (rc == 0)
        rc = arena_funcs_to_profile(&b.funcs, b.p);
    if (rc == 0)
        rc = jp_resolve_names(b.p);
    arena_funcs_free(&b.funcs);
    if (rc != 0 && b.p) {
        profile_free(b.p);
        return NULL;
    }
    return b.p;
}
