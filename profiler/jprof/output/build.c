/* From the live trees to a struct profile: every thread's tree in preorder,
 * open frames counted up to now (without touching the live tree, so a
 * flush leaves collection undisturbed), exclusive time derived, and a
 * function table of every distinct address (names come later, names.c). */
#include "profiler/jprof/jprof.h"
#include "profile/profile.h"
#include "profile/arena_walk.h"
#include "profiler/jprof/metrics/metrics.h"
#include "profiler/jprof/frames/frames.h"
#include "profiler/jprof/metrics/sampler.h"
#include "profiler/jprof/metrics/wait.h"
#include "output.h"
#include "profiler/jprof/tree/skip.h"
#include "profiler/jprof/tree/tree.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* ---- building ----------------------------------------------------------- */
struct builder {
    struct profile *p;
    struct arena_funcs funcs;   /* fn address -> function table index */
    struct arena_timing timing; /* ticks, samples and compensation to times */
    uint64_t now;
    struct arena_thread_copy copy; /* one thread's tree at a time: the buffers are reused */
};

/* How long to wait for another thread's consistent copy, in attempts: a
 * hook holds its thread's seq odd for well under a microsecond. */
enum { COPY_ATTEMPTS = 2000 };

/* One attempt at rec's tree and open frames (profile/arena_walk.c), with
 * the arena as it is now: another thread may have grown it. */
JP_NOINSTR static int copy_attempt(const struct arena_thread *rec, unsigned flags,
                                   struct arena_thread_copy *c)
{
    struct arena_view view = { jp_arena_base, (uint64_t)jp_arena_header()->used };
    return arena_copy_thread(&view, rec, flags, c);
}

/* rec's tree as one consistent moment, into c.  Another thread that is
 * still running (at exit, one the shoot-down found inside a hook goes on
 * running its hooks while we write) changes its tree as we copy: the copy
 * is taken under its seq, as live readers take it, and its open frames
 * count up to a clock read after the copy (*now), so that every activation
 * the copy holds closed ended before that moment.  If the thread never
 * lets go, the last copy is kept.  Our own thread, and one that ended, do
 * not change: copied as they are (their seq may be odd: ours is, inside a
 * hook).  0, or -1 when out of memory. */
JP_NOINSTR static int copy_tree(const struct arena_thread *rec, struct arena_thread_copy *c, uint64_t *now)
{
    const struct jp_thread *t = (const struct jp_thread *)(uintptr_t)rec->priv;
    int other_running = t && t != jp_self && rec->state == ARENA_THREAD_RUNNING;
    /* A reset or zerobase the thread has not applied yet (it is blocked,
     * profile/arena.h): written as it will be. */
    unsigned flags =
        (t && rec->state == ARENA_THREAD_RUNNING ? ARENA_COPY_FRAMES : 0) | (t ? ARENA_COPY_PENDING : 0);
    int rc = 0;
    c->taken = 0;
    for (int attempt = 0; other_running && attempt < COPY_ATTEMPTS && rc == 0; attempt++) {
        rc = copy_attempt(rec, flags, c);
        if (rc == 0 && (__atomic_load_n(&rec->seq, __ATOMIC_ACQUIRE) & 1))
            sched_yield();
    }
    /* Not running, or never let go without a copy: taken as it is (the
     * attempts grow the buffers first if the tree does not fit). */
    for (int attempt = 0; rc == 0 && !c->taken && attempt < COPY_ATTEMPTS; attempt++)
        rc = copy_attempt(rec, flags | ARENA_COPY_ODD, c);
    if (rc < 0 || !c->taken)
        return -1;
    *now = other_running ? jp_now() : 0;
    return 0;
}

/* The thread's tree in preorder into th->nodes (profile/arena_walk.c, the
 * walk live readers use too), open frames counted up to its copy's now. */
JP_NOINSTR static int fill_nodes(struct builder *b, const struct arena_thread *rec, struct prof_thread *th)
{
    struct arena_thread_copy *c = &b->copy;
    uint64_t copy_now = 0;
    int rc = copy_tree(rec, c, &copy_now);
    uint64_t now = copy_now > b->now ? copy_now : b->now; /* b->now: the threads that do not run */
    const struct arena_frame *stack = rc == 0 && c->depth ? c->stack : NULL;
    /* Sampled: prologues' and epilogues' samples to the call they belong
     * to (pc_samples.c), for a thread whose state still holds its table. */
    if (rc == 0 && jp_sampling() && rec->state == ARENA_THREAD_RUNNING)
        rc = jp_pc_samples_place((const struct jp_thread *)(uintptr_t)rec->priv, c->nodes, c->n,
                                 jp_names_function_of);
    if (rc == 0)
        rc = arena_copy_to_thread(b->p, &b->funcs, c->nodes, c->n, stack, c->depth, now, &b->timing, th);
    if (rc == 0)
        rc = jp_metrics_thread(b->p, th, c->nodes, c->n);
    if (rc == 0)
        rc = jp_mpi_thread(b->p, th, c->nodes, c->n);
    if (rc == 0)
        rc = jp_unmatched_thread(b->p, th, c->nodes, c->n);
    if (rc == 0) { /* for the views as compiled (tools/fold.c) */
        struct arena_view v = { jp_arena_base, jp_arena_header()->used };
        rc = arena_inlined_column(b->p, th, &v, c->nodes, c->n);
    }
    if (rc == 0)
        rc = jp_skip_thread(b->p, th, c->nodes, c->n);
    if (rc == 0) /* a thread still blocked: its wait so far, to the copy's now (wait.c) */
        rc = jp_wait_thread(b->p, th, c->nodes, c->n,
                            c->depth ? (const struct jp_thread *)(uintptr_t)rec->priv : NULL, now);
    if (rc == 0 && jp_sampling())
        rc = arena_sampled_times(b->p, th, c->nodes);
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
        rc = jp_undecided_process(b.p);
    if (rc == 0)
        rc = jp_metrics_process(b.p);
    if (rc == 0)
        rc = arena_funcs_to_profile(&b.funcs, b.p);
    if (rc == 0)
        rc = jp_resolve_names(b.p);
    arena_funcs_free(&b.funcs);
    arena_thread_copy_free(&b.copy);
    if (rc != 0 && b.p) {
        profile_free(b.p);
        return NULL;
    }
    return b.p;
}
