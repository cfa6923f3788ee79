/* Time spent waiting, apart from time spent working (docs/io.md "Wait
 * time"; issue 19).
 *
 * libhookit times the blocking calls that are not I/O (hookit/io_wait.c:
 * condition variables, contended locks, semaphores, sleeps,
 * poll/select/epoll, wait/waitpid, pthread_join) and delivers
 * HOOKIT_EV_WAIT; the I/O wrappers' time is already in each node's
 * io_ticks (metrics.c).  Both go to the calling context's extension block
 * (struct node_ext), and at the end into two columns:
 *   wait_ns     I/O time + blocking-call time of calls made from the node;
 *   wait_calls  the blocking calls that are not I/O.
 * With JPROFOPTS=cpu, the per-thread CPU-time timer of timer=sample
 * (sampler.c) also runs under exact timing, and a third column
 *   cpu_ns      samples charged to the node x the sampling period
 * gives on-CPU self time sampled, which tells pre-emption from work.
 *
 * Callbacks during a wait.  A signal handler (or a cancellation cleanup)
 * that runs instrumented code while the thread waits is a child of the
 * waiting node, and its time is in that child already: it must not count
 * as the node's wait too.  hookit_plugin.wait_begin marks the wait in the
 * thread (its depth, and ARENA_REQ_WAIT in its own request word, so each
 * hook exit during the wait reaches jp_attend, off the hot path); every
 * frame that closes back at the waiting depth adds its time to the
 * callbacks' total, which the wait's event subtracts.  A wait left without
 * its event (a longjmp out of a handler, a cancellation) is dropped when a
 * hook exit finds the thread below the waiting depth, or when the next
 * wait begins at or below it; nested waits (a handler that waits) count
 * as themselves. */
#include "jprof.h"
#include "metrics.h"
#include "profile/profile.h"

#include <errno.h>
#include <string.h>

static int wait_on = 1;                 /* JPROFOPTS wait (default) / nowait */
static const struct hookit_host *host;

JP_NOINSTR int jp_opt_wait(const char *v) { (void)v; wait_on = 1; return 0; }
JP_NOINSTR int jp_opt_nowait(const char *v) { (void)v; wait_on = 0; return 0; }
JP_NOINSTR int jp_opt_cpu(const char *v) { (void)v; jp_opt.cpu = 1; return 0; }

JP_NOINSTR uint32_t jp_wait_start(const struct hookit_host *h)
{
    host = h;
    if (!wait_on || h->size < sizeof *h || !h->io_now)
        return 0;               /* an older libhookit: no blocking-call wrappers */
    return HOOKIT_CAP_WAIT;
}

/* ---- the wait in progress, per thread ------------------------------------------------ */
struct wait_state {
    uint64_t callbacks;         /* jprof ticks of frames closed at the waiting depth */
    uint32_t depth;             /* open frames when the wait began */
    uint32_t active;
};
static __thread struct wait_state ws __attribute__((tls_model("initial-exec")));

#define TOKEN_OUTER 1u          /* the wait that set ws (0: nothing to undo) */

JP_NOINSTR static void wait_clear(struct jp_thread *t)
{
    ws.active = 0;
    __atomic_fetch_and(&t->rec->request, ~ARENA_REQ_WAIT, __ATOMIC_RELAXED);
}

JP_NOINSTR uint64_t jp_wait_begin(void)
{
    struct jp_thread *t = jp_self_live();
    if (!t || jp_busy(t) || jp_opt.sample)
        return 0;               /* no tree to guard (sampled frames have no start time) */
    uint32_t depth = jp_depth(t);
    if (ws.active && depth > ws.depth)
        return 0;               /* a wait inside a callback of another */
    ws.active = 1;
    ws.depth = depth;
    ws.callbacks = 0;
    __atomic_fetch_or(&t->rec->request, ARENA_REQ_WAIT, __ATOMIC_RELAXED);
    return TOKEN_OUTER;
}

/* jp_attend, busy held: a hook exit while ARENA_REQ_WAIT is set.  The
 * frame just closed is stack[depth + 1]. */
JP_NOINSTR void jp_wait_exit(struct jp_thread *t)
{
    uint32_t depth = jp_depth(t);
    if (!ws.active || depth < ws.depth) {
        wait_clear(t);          /* that wait was left without its end */
        return;
    }
    if (depth == ws.depth) {
        uint64_t t0 = t->stack[depth + 1].t0, now = jp_now();
        ws.callbacks += now > t0 ? now - t0 : 0;
    }
}

/* jprof ticks to the I/O clock's (the same TSC in the usual case). */
JP_NOINSTR static uint64_t to_io_ticks(uint64_t ticks)
{
    int same = jp_clock_is_tsc() == (host->io_clock == 0);
    if (same)
        return ticks;
    return (uint64_t)((double)jp_ticks_to_ns(ticks) * host->io_ticks_per_ns());
}

/* HOOKIT_EV_WAIT, or libhookit's direct call (HookitWait below). */
JP_NOINSTR void jp_wait_event(const struct hookit_wait *w)
{
    if (!w || !host)
        return;
    uint64_t dt = w->t1 > w->t0 ? w->t1 - w->t0 : 0;
    struct jp_thread *t = jp_self_live();
    if (w->token == TOKEN_OUTER && ws.active && t) {
        uint64_t cb = ws.callbacks ? to_io_ticks(ws.callbacks) : 0;
        dt = dt > cb ? dt - cb : 0;
        wait_clear(t);
    }
    if (t && JP_UNLIKELY(jp_pending(t->rec))) {
        /* A reset or zerobase given during this wait: the wait goes to the
         * tree after it, only its time from that moment on when both
         * clocks are the same (else the whole wait). */
        jp_pending_settle(t);
        uint64_t at = t->rec->pending_at;
        if (jp_clock_is_tsc() == (host->io_clock == 0) && at > w->t0)
            dt = dt > at - w->t0 ? dt - (at - w->t0) : 0;
    }
    if (!t || jp_busy(t))
        return;
    struct node_ext *x = jp_node_ext(jp_cur(t));
    if (x) {
        x->wait_calls++;
        x->wait_ticks += dt;
    }
}

JP_EXPORT JP_NOINSTR void HookitWait(const struct hookit_wait *w)
{
    jp_wait_event(w);
}

/* ---- output -------------------------------------------------------------------------- */
/* A new zeroed column of n values appended to th's; NULL when out of memory. */
JP_NOINSTR static uint64_t *new_column(struct profile *p, struct prof_thread *th, const char *name, uint32_t n)
{
    struct prof_metric *m = profile_alloc(p, (th->nmetrics + 1) * sizeof *m);
    uint64_t *values = profile_alloc(p, (size_t)n * sizeof *values + 1);
    const char *key = profile_intern(p, name);
    if (!m || !values || !key)
        return NULL;
    if (th->nmetrics)
        memcpy(m, th->metrics, th->nmetrics * sizeof *m);
    m[th->nmetrics] = (struct prof_metric){ .name = key, .values = values };
    th->metrics = m;
    th->nmetrics++;
    return values;
}

JP_NOINSTR int jp_wait_thread(struct profile *p, struct prof_thread *th, const struct arena_copy_node *nodes,
                              uint32_t n)
{
    if (!host || host->size < sizeof *host || !host->io_now)
        return 0;
    uint64_t *cpu = NULL;
    if (jp_opt.cpu && jp_sampler_running() && !jp_opt.sample && !(cpu = new_column(p, th, "cpu_ns", n)))
        return -1;
    if (!wait_on)
        return 0;
    uint64_t *wait_ns = new_column(p, th, "wait_ns", n);
    uint64_t *calls = new_column(p, th, "wait_calls", n);
    if (!wait_ns || !calls)
        return -1;
    double r = host->io_ticks_per_ns();
    uint64_t period = jp_sample_period_ns();
    for (uint32_t i = 0; i < n; i++) {
        if (cpu)
            cpu[i] = nodes[i].samples * period;
        arena_ref e = __atomic_load_n(&jp_node(nodes[i].ref)->ext, __ATOMIC_ACQUIRE);
        if (!e)
            continue;
        const struct node_ext *x = jp_at(e);
        /* The I/O wrappers' time is wait time too (io_ticks is 0 with noio). */
        wait_ns[i] = (uint64_t)((double)(x->io_ticks + x->wait_ticks) / r + 0.5);
        calls[i] = x->wait_calls;
    }
    return 0;
}
