/* Frames across `hookit ctl stop` and `start` (docs/live.md).  While
 * collection is off no hook reaches the tree, so the frames open at the
 * stop stay open in it whatever the program does; at the start they are
 * taken as they are, each thread checks them at its next hook (the frames
 * that returned meanwhile are closed, as of the stop), and the exits that
 * then pair with nothing because of the stop are counted apart
 * (unmatched_after_start), not as unmatched exits: the tree is not wrong
 * for them. */
#include "profiler/jprof/jprof.h"
#include "profiler/jprof/metrics/metrics.h"
#include "tree.h"

/* Exits that paired with nothing because collection had been stopped
 * (`hookit ctl stop`, then `start`): the profile's unmatched_after_start. */
static uint64_t restart_exits;

static uint64_t stopped_at; /* jp_now() at the last `ctl stop` */
static int restarted;       /* a `ctl start` found collection off */

JP_NOINSTR void jp_unmatched_stop(void)
{
    __atomic_store_n(&stopped_at, jp_now(), __ATOMIC_RELAXED);
}

/* control.c, carrying out `ctl start` while collection is still off: every
 * running thread's open frames, frozen since the stop, as they are now,
 * and a request to check them at its next hook (ARENA_REQ_RESYNC).  (An
 * ended thread's frames were closed when it ended.) */
JP_NOINSTR void jp_unmatched_restart(void)
{
    uint64_t stop = __atomic_load_n(&stopped_at, __ATOMIC_RELAXED);
    __atomic_store_n(&restarted, 1, __ATOMIC_RELAXED);
    for (arena_ref r = jp_arena_header()->first_thread; r; r = ((struct arena_thread *)jp_at(r))->next) {
        struct arena_thread *rec = jp_at(r);
        struct jp_thread *t = (struct jp_thread *)(uintptr_t)rec->priv;
        if (!t || __atomic_load_n(&rec->state, __ATOMIC_ACQUIRE) == ARENA_THREAD_ENDED)
            continue;
        uint32_t depth = __atomic_load_n(&rec->depth, __ATOMIC_ACQUIRE);
        t->restart.depth = depth;
        for (uint32_t i = 1; i <= depth && i <= JP_RESTART_NODES; i++)
            t->restart.node[i] = t->stack[i].node;
        t->restart.stopped_at = stop;
        __atomic_store_n(&t->restart.since, 1, __ATOMIC_RELEASE);
        __atomic_fetch_or(&rec->request, ARENA_REQ_RESYNC, __ATOMIC_RELEASE);
    }
}

/* A frame of then that returned while collection was off: below our own
 * frame on the thread's stack, or its return address no longer where it
 * was (the fallback's search for it, tree.c's jp_frame_cfa, fails; it
 * looks 1 KiB up: a frame of more is taken for returned too).  One that
 * returned and was called again from the same place is there again: it
 * stays, its calls beneath in the right context.  A frame without a call
 * site (a context frame) or on another stack cannot be told: it stays. */
JP_NOINSTR static int returned(const struct jp_thread *t, const struct arena_frame *f, uintptr_t here)
{
    if (!f->site || !jp_on_stack(t, f->sp) || !jp_on_stack(t, here))
        return 0;
    return f->sp < here || jp_frame_cfa(t, f) == (uintptr_t)f->sp + 1;
}

JP_NOINSTR void jp_unmatched_resync(struct jp_thread *t)
{
    struct jp_restart *r = &t->restart;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    uint32_t depth = jp_depth(t), gone = depth + 1;
    for (uint32_t i = 1; i <= depth && i <= r->depth && gone > depth; i++)
        if (returned(t, &t->stack[i], here))
            gone = i; /* and every frame above it */
    uint64_t closed = 0;
    while (jp_depth(t) >= gone) {
        const struct arena_frame *f = &t->stack[jp_depth(t)];
        jp_close_top(t, r->stopped_at > f->t0 ? r->stopped_at : f->t0);
        closed++;
    }
    if (r->depth >= gone)
        r->depth = gone - 1;
    __atomic_fetch_add(&restart_exits, closed, __ATOMIC_RELAXED);
}

JP_NOINSTR uint64_t jp_unmatched_restart_exits(void)
{
    return __atomic_load_n(&restart_exits, __ATOMIC_RELAXED);
}

/* Whether node's frame, open or the one just closed above the top, was
 * open when collection started again, and so are all below it: those
 * frames are a prefix of the stack, which ends for good where a frame of
 * then was replaced by another (a frame of then that returned and was
 * entered again in the same place, same node, still passes for one).
 * The root (an exit with no frame open) passes too: its function was
 * entered while collection was off. */
JP_NOINSTR static int open_since_stop(struct jp_thread *t, arena_ref node)
{
    struct jp_restart *r = &t->restart;
    /* A thread that ran no hook until after the start (the program was
     * started with collection off, JPROFOPTS=nostart): an exit with no
     * frame open is of a function it entered before. */
    if (!__atomic_load_n(&r->since, __ATOMIC_ACQUIRE))
        return __atomic_load_n(&restarted, __ATOMIC_RELAXED) && node == t->stack[0].node;
    uint32_t open = t->rec->depth, k = r->depth, i;
    for (i = 1; i <= k && i <= open + 1 && i <= JP_RESTART_NODES; i++)
        if (t->stack[i].node != r->node[i]) {
            k = i - 1;
            if (i <= open)
                r->depth = k;
            break;
        }
    for (i = 0; i <= k && i <= open + 1; i++)
        if (t->stack[i].node == node)
            return 1;
    return 0;
}

/* tree.c's fallbacks: exits that paired with nothing, on the context they
 * concern; the stop's doing counted apart.  tree.c counted the exits in
 * the thread's record already. */
JP_NOINSTR void jp_tree_unmatched(arena_ref node, uint64_t exits)
{
    struct jp_thread *t = jp_self_live();
    if (t && open_since_stop(t, node)) {
        t->rec->unmatched -= exits < t->rec->unmatched ? exits : t->rec->unmatched;
        __atomic_fetch_add(&restart_exits, exits, __ATOMIC_RELAXED);
        return;
    }
    jp_unmatched_at(node, exits);
}
