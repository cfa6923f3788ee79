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
 * callbacks' total, which the wait's event subtracts.  The I/O wrappers
 * take the same token, and metrics_io.c counts a call as a wait
 * (jp_blocking_ticks).
 * Nested waits (a handler that waits) count as themselves.
 *
 * A wait that never returns.  The wait's start (jprof's clock) and node
 * are kept in the thread's state (struct jp_wait), so a wait left without
 * its event is still charged, from its start to where it ended, less the
 * callbacks:
 *  - a longjmp out of a handler to a frame at or below the waiting depth
 *    (flow.c's jump, jp_wait_jump): it ended when the handler's outermost
 *    instrumented frame began (else at the jump);
 *  - unwinding (a cancellation's, an exception's) that closes the waiting
 *    frame: a hook exit finds the thread below the waiting depth;
 *  - the thread ends while it waits (cancellation without exit hooks, the
 *    shoot-down at exit): jp_wait_thread_end;
 *  - the process ends, or a flush comes, while the thread is still blocked:
 *    the profile gets the time so far (jp_wait_thread; the live tree is left
 *    alone).
 * A wait left in a way none of these sees (a longjmp not wrapped) is
 * dropped when the next one begins at or below its depth: its end is not
 * known. */
#include "profiler/jprof/jprof.h"
#include "wait.h"
#include "metrics.h"
#include "metrics_internal.h"
#include "sampler.h"
#include "profile/profile.h"

#include <errno.h>
#include <string.h>

static int wait_on = 1;                 /* JPROFOPTS wait (default) / nowait */
static const struct hookit_host *host;

JP_NOINSTR int jp_opt_wait(const char *v) { (void)v; wait_on = 1; return 0; }
JP_NOINSTR int jp_opt_nowait(const char *v) { (void)v; wait_on = 0; return 0; }
JP_NOINSTR int jp_opt_cpu(const char *v) { (void)v; jp_opt.cpu = 1; return 0; }

/* What live readers need to read the wait fields and the samples
 * (struct arena_waits, in slot 2 of the arena). */
JP_NOINSTR static void describe_for_readers(int waits)
{
    struct arena_waits *w = (struct arena_waits *)(jp_arena_base + ARENA_WAITS_OFFSET);
    w->clock = !waits ? ARENA_WAITS_NONE : host->io_clock == 0 ? ARENA_WAITS_COUNTER : ARENA_WAITS_MONOTONIC;
    w->cpu_us =
        jp_opt.cpu && !jp_opt.sample && jp_sampler_running() ? (uint32_t)(jp_sample_period_ns() / 1000) : 0;
}

JP_NOINSTR uint32_t jp_wait_start(const struct hookit_host *h)
{
    host = h;
    int waits = wait_on && h->size >= sizeof *h && h->io_now; /* an older libhookit: no wrappers */
    describe_for_readers(waits);
    return waits ? HOOKIT_CAP_WAIT : 0;
}

/* ---- the wait in progress, per thread (struct jp_wait in struct jp_thread) ----------- */
#define TOKEN_OUTER 1u /* the wait that set t->wait (0: nothing to undo) */

/* Sampled, frames have no start time of their own: the waiting frame's
 * holds the wait's start while it lasts, for live readers (struct
 * arena_timing's open_waits, profile/arena_walk.h). */
JP_NOINSTR static void wait_mark_frame(struct jp_thread *t, uint64_t t0)
{
    if (jp_opt.sample && t->wait.depth < t->capacity)
        __atomic_store_n(&t->stack[t->wait.depth].t0, t0, __ATOMIC_RELEASE);
}

/* The wait in progress as live readers see it: its start in its node's
 * extension block (node_ext.wait_since, profile/arena.h), 0 when over.
 * The block comes through the I/O metrics' cache of the thread's last
 * context (the call's own I/O event then finds it there), and is kept
 * for the clearing; a reset during the wait moves it to the new node. */
JP_NOINSTR static void wait_publish(struct jp_thread *t, uint64_t since)
{
    struct node_ext *x = since ? metrics_context_ext(&t->metrics, t->wait.node) : NULL;
    if (t->wait.shown && t->wait.shown != x)
        __atomic_store_n(&t->wait.shown->wait_since, 0, __ATOMIC_RELEASE);
    if (x)
        __atomic_store_n(&x->wait_since, since, __ATOMIC_RELEASE);
    t->wait.shown = x;
}

JP_NOINSTR static void wait_clear(struct jp_thread *t)
{
    wait_mark_frame(t, 0);
    wait_publish(t, 0);
    __atomic_store_n(&t->wait.active, 0, __ATOMIC_RELEASE);
    __atomic_fetch_and(&t->rec->request, ~ARENA_REQ_WAIT, __ATOMIC_RELAXED);
}

JP_NOINSTR uint64_t jp_wait_begin(void)
{
    struct jp_thread *t = jp_self_live();
    if (!t || jp_busy(t))
        return 0; /* no tree to guard */
    uint32_t depth = jp_depth(t);
    if (t->wait.active && depth > t->wait.depth)
        return 0;               /* a wait inside a callback of another */
    t->wait.depth = depth;
    t->wait.node = t->cur;
    t->wait.callbacks = 0;
    t->wait.cb_samples = 0;
    t->wait.t0 = jp_now();
    wait_mark_frame(t, t->wait.t0);
    wait_publish(t, t->wait.t0);
    __atomic_store_n(&t->wait.active, 1, __ATOMIC_RELEASE);
    __atomic_fetch_or(&t->rec->request, ARENA_REQ_WAIT, __ATOMIC_RELAXED);
    return TOKEN_OUTER;
}

/* jprof and libhookit's I/O clock are the same TSC (the usual case): their
 * ticks are alike and have one origin. */
JP_NOINSTR static int io_clock_is_ours(void)
{
    return jp_clock_is_tsc() == (host->io_clock == 0);
}

/* jprof ticks to the I/O clock's. */
JP_NOINSTR static uint64_t to_io_ticks(uint64_t ticks)
{
    if (io_clock_is_ours())
        return ticks;
    return (uint64_t)((double)jp_ticks_to_ns(ticks) * host->io_ticks_per_ns());
}

/* The callbacks' time during w, in I/O clock ticks: the frames that
 * closed at the waiting depth, or under timer=sample (frames without a
 * start time) the samples taken above it, each a period of CPU time
 * (libhookit's rate: jprof's own is calibrated only when a profile is
 * made under timer=sample). */
JP_NOINSTR static uint64_t callback_io_ticks(const struct jp_wait *w)
{
    uint64_t cb = w->callbacks ? to_io_ticks(w->callbacks) : 0;
    if (w->cb_samples) {
        double ns = (double)w->cb_samples * (double)jp_sample_period_ns();
        cb += (uint64_t)(ns * host->io_ticks_per_ns() + 0.5);
    }
    return cb;
}

/* The wait w's own time if it ended at end (jprof's clock): from its
 * start, less the callbacks, in I/O clock ticks. */
JP_NOINSTR static uint64_t open_io_ticks(const struct jp_wait *w, uint64_t end)
{
    uint64_t dt = end > w->t0 ? to_io_ticks(end - w->t0) : 0, cb = callback_io_ticks(w);
    return dt > cb ? dt - cb : 0;
}

/* A wait that will deliver no event, ended at end: charged to its node as
 * a blocking call, and over.  The thread's own, busy held. */
JP_NOINSTR static void wait_charge(struct jp_thread *t, uint64_t end)
{
    struct node_ext *x = host ? jp_node_ext(t->wait.node) : NULL;
    if (x) {
        x->wait_calls++;
        x->wait_ticks += open_io_ticks(&t->wait, end);
    }
    wait_clear(t);
}

/* jp_attend, busy held: a hook exit while ARENA_REQ_WAIT is set.  The
 * frame just closed is stack[depth + 1]. */
JP_NOINSTR void jp_wait_exit(struct jp_thread *t)
{
    uint32_t depth = jp_depth(t);
    if (!t->wait.active) {
        wait_clear(t);
        return;
    }
    if (depth < t->wait.depth) {
        wait_charge(t, jp_now()); /* unwound out of the waiting frame */
        return;
    }
    if (depth == t->wait.depth && !jp_opt.sample) {
        uint64_t t0 = t->stack[depth + 1].t0, now = jp_now();
        t->wait.callbacks += now > t0 ? now - t0 : 0;
    }
}

/* flow.c, busy held, before a jump closes the frames above depth: a jump
 * to the waiting frame or below leaves the wait.  It ended when the
 * outermost frame open above the waiting one began (a signal handler's),
 * or now when there is none (a handler that is not instrumented). */
JP_NOINSTR void jp_wait_jump(struct jp_thread *t, uint32_t depth, uint64_t now)
{
    if (!t->wait.active || depth > t->wait.depth)
        return;
    uint32_t w = t->wait.depth;
    if (jp_opt.sample) /* no start times: now, less the handler's samples */
        wait_charge(t, jp_now());
    else
        wait_charge(t, jp_depth(t) > w ? t->stack[w + 1].t0 : now);
}

/* The wait w as it is after a reset or zerobase at `at`: its time before
 * is gone with the numbers it would have gone to, and so are the callbacks
 * that ran then (a callback's frame open across `at` counts from there,
 * like every open frame). */
JP_NOINSTR static void cut_wait(struct jp_wait *w, uint64_t at)
{
    if (w->cut < at)
        w->cut = at;
    if (w->active && w->t0 < at) {
        w->t0 = at;
        w->callbacks = 0;
        w->cb_samples = 0;
    }
}

JP_NOINSTR void jp_wait_cut(struct jp_thread *t, uint64_t at)
{
    cut_wait(&t->wait, at);
    if (t->wait.active) /* on its node, re-made by a reset (control.c) */
        wait_publish(t, t->wait.t0);
}

/* The moment of the last reset or zerobase of t's tree, applied or still
 * pending (a wait event inside the profiler cannot apply it). */
JP_NOINSTR static uint64_t cut_of(const struct jp_thread *t)
{
    uint64_t at = t->wait.cut;
    if (JP_UNLIKELY(jp_pending(t->rec))) {
        uint64_t p = __atomic_load_n(&t->rec->pending_at, __ATOMIC_RELAXED);
        at = p > at ? p : at;
    }
    return at;
}

/* jp_blocking_ticks's other case.  The event's t0 is the I/O clock's,
 * the cut jprof's: the same TSC in the usual case, else (JPROFOPTS
 * clock=monotonic, libhookit on the TSC) the two have no common origin
 * and the whole call is kept. */
JP_NOINSTR uint64_t jp_wait_cut_part(const struct jp_thread *t, uint64_t t0, uint64_t dt)
{
    if (!t || !host || !io_clock_is_ours())
        return dt;
    uint64_t at = cut_of(t);
    if (JP_LIKELY(at <= t0))
        return dt;
    return dt > at - t0 ? dt - (at - t0) : 0;
}

/* jp_thread_end, busy held, before it closes the open frames: a thread
 * that ends while it waits (cancelled, or shot down at exit). */
JP_NOINSTR void jp_wait_thread_end(struct jp_thread *t, uint64_t now)
{
    if (t->wait.active && jp_depth(t) >= t->wait.depth)
        wait_charge(t, now);
}

/* The time of a blocking call (a wait, or an I/O call: metrics.c) from t0
 * to t1 in I/O clock ticks, less the callbacks that ran during it when
 * token is what jp_wait_begin returned before it; the wait is over. */
JP_NOINSTR uint64_t jp_wait_net(struct jp_thread *t, uint64_t token, uint64_t t0, uint64_t t1)
{
    uint64_t dt = t1 > t0 ? t1 - t0 : 0;
    if (token == TOKEN_OUTER && t && t->wait.active && host) {
        uint64_t cb = callback_io_ticks(&t->wait);
        dt = dt > cb ? dt - cb : 0;
        wait_clear(t);
    }
    return dt;
}

/* HOOKIT_EV_WAIT, or libhookit's direct call (HookitWait below). */
JP_NOINSTR void jp_wait_event(const struct hookit_wait *w)
{
    if (!w || !host)
        return;
    struct jp_thread *t = jp_self_live();
    /* (the callbacks before a reset during the wait went with the old numbers) */
    uint64_t dt = jp_blocking_ticks(t, w->token, w->t0, w->t1);
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
/* A thread still blocked when the profile is made (at exit, or a flush):
 * its wait so far, in the profile only.  Another thread's state, read
 * while that thread is blocked (active is stored last, with release). */
JP_NOINSTR static void still_waiting(const struct jp_thread *t, const struct arena_copy_node *nodes,
                                     uint32_t n, uint64_t now, uint64_t *wait_ns, uint64_t *calls)
{
    if (!t || !__atomic_load_n(&t->wait.active, __ATOMIC_ACQUIRE) || !now)
        return;
    /* A reset or zerobase still pending for the blocked thread: the tree
     * copied shows it applied, so does its wait. */
    struct jp_wait w = t->wait;
    if (jp_pending(t->rec))
        cut_wait(&w, __atomic_load_n(&t->rec->pending_at, __ATOMIC_RELAXED));
    for (uint32_t i = 0; i < n; i++)
        if (nodes[i].ref == w.node) {
            wait_ns[i] += (uint64_t)((double)open_io_ticks(&w, now) / host->io_ticks_per_ns() + 0.5);
            calls[i]++;
            return;
        }
}

JP_NOINSTR int jp_wait_thread(struct profile *p, struct prof_thread *th, const struct arena_copy_node *nodes,
                              uint32_t n, const struct jp_thread *t, uint64_t now)
{
    if (!host || host->size < sizeof *host || !host->io_now)
        return 0;
    uint64_t *cpu = NULL;
    if (jp_opt.cpu && jp_sampler_running() && !jp_opt.sample && !(cpu = jp_new_column(p, th, "cpu_ns", n)))
        return -1;
    if (!wait_on)
        return 0;
    uint64_t *wait_ns = jp_new_column(p, th, "wait_ns", n);
    uint64_t *calls = jp_new_column(p, th, "wait_calls", n);
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
    still_waiting(t, nodes, n, now, wait_ns, calls);
    return 0;
}
