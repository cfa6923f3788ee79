/* From the live trees to a struct profile: every thread's tree in preorder,
 * open frames counted up to now (without touching the live tree, so a
 * flush leaves collection undisturbed), exclusive time derived, and a
 * function table of every distinct address (names come later, names.c). */
#include "jprof.h"
#include "profile/profile.h"
#include "profile/arena_walk.h"
#include "metrics.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* ---- building ----------------------------------------------------------- */
struct builder {
    struct profile *p;
    struct arena_funcs funcs;   /* fn address -> function table index */
    struct arena_timing timing; /* ticks, samples and compensation to times */
    uint64_t now;
};

/* A thread's tree and open frames, copied at one moment. */
struct tree_copy {
    struct arena_copy_node *nodes;
    uint64_t n;
    struct arena_frame *frames; /* frames[0 .. depth] */
    uint32_t depth;
    uint64_t now; /* another running thread's: its open frames count up to here */
};

JP_NOINSTR static void tree_copy_free(struct tree_copy *c)
{
    free(c->nodes);
    free(c->frames);
    memset(c, 0, sizeof *c);
}

/* One copy of rec's tree and open frames (taken without looking at its
 * seq).  0, or -1 when out of memory. */
JP_NOINSTR static int copy_once(const struct arena_thread *rec, const struct jp_thread *t,
                                struct tree_copy *c)
{
    struct arena_view view = { jp_arena_base, (uint64_t)jp_arena_header()->used };
    uint32_t depth = t && rec->state == ARENA_THREAD_RUNNING ? rec->depth : 0;
    /* A reset or zerobase the thread has not applied yet (it is blocked,
     * profile/arena.h): written as it will be. */
    uint32_t pending = t ? __atomic_load_n(&rec->request, __ATOMIC_ACQUIRE) & ARENA_REQ_PENDING : 0;
    uint64_t pending_at = rec->pending_at;
    uint64_t n = arena_tree_copy(&view, rec->root, NULL, UINT64_MAX, NULL);
    tree_copy_free(c);
    c->nodes = malloc(((size_t)n + 1) * sizeof *c->nodes);
    c->frames = malloc(((size_t)depth + 1) * sizeof *c->frames);
    if (!c->nodes || !c->frames)
        return -1;
    c->n = arena_tree_copy(&view, rec->root, c->nodes, n, NULL); /* at most what was counted */
    if (depth)
        memcpy(c->frames, t->stack, ((size_t)depth + 1) * sizeof *c->frames);
    c->n = arena_copy_pending(&view, pending, pending_at, c->nodes, (uint32_t)c->n, c->frames, &depth);
    c->depth = depth;
    return 0;
}

/* How long to wait for another thread's consistent copy, in attempts: a
 * hook holds its thread's seq odd for well under a microsecond. */
enum { COPY_ATTEMPTS = 2000 };

/* rec's tree as one consistent moment.  Another thread that is still
 * running (at exit, one the shoot-down found inside a hook goes on running
 * its hooks while we write) changes its tree as we copy: the copy is taken
 * under its seq, as live readers take it, and its open frames count up to
 * a clock read after the copy, so that every activation the copy holds
 * closed ended before that moment.  If the thread never lets go, the last
 * copy is kept. */
JP_NOINSTR static int copy_tree(const struct arena_thread *rec, struct tree_copy *c)
{
    const struct jp_thread *t = (const struct jp_thread *)(uintptr_t)rec->priv;
    int other_running = t && t != jp_self && rec->state == ARENA_THREAD_RUNNING;
    for (int attempt = 0; other_running && attempt < COPY_ATTEMPTS; attempt++) {
        uint32_t s1 = __atomic_load_n(&rec->seq, __ATOMIC_ACQUIRE);
        if (s1 & 1) {
            sched_yield();
            continue;
        }
        if (copy_once(rec, t, c) != 0)
            return -1;
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&rec->seq, __ATOMIC_RELAXED) == s1)
            break;
    }
    if (!c->nodes && copy_once(rec, t, c) != 0) /* not running, or never let go */
        return -1;
    c->now = other_running ? jp_now() : 0;
    return 0;
}

/* The thread's tree in preorder into th->nodes (profile/arena_walk.c, the
 * walk live readers use too), open frames counted up to its copy's now. */
JP_NOINSTR static int fill_nodes(struct builder *b, const struct arena_thread *rec, struct prof_thread *th)
{
    struct tree_copy c = { 0 };
    int rc = copy_tree(rec, &c);
    uint64_t now = c.now > b->now ? c.now : b->now; /* b->now: the threads that do not run */
    if (rc == 0)
        rc = arena_copy_to_thread(b->p, &b->funcs, c.nodes, (uint32_t)c.n, c.depth ? c.frames : NULL, c.depth,
                                  now, &b->timing, th);
    if (rc == 0)
        rc = jp_metrics_thread(b->p, th, c.nodes, (uint32_t)c.n);
    if (rc == 0)
        rc = jp_mpi_thread(b->p, th, c.nodes, (uint32_t)c.n);
    if (rc == 0) /* a thread still blocked: its wait so far, to the copy's now (wait.c) */
        rc = jp_wait_thread(b->p, th, c.nodes, (uint32_t)c.n,
                            c.depth ? (const struct jp_thread *)(uintptr_t)rec->priv : NULL, now);
    tree_copy_free(&c);
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
