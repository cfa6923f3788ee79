/* Requests from outside the process (live readers, `hookit ctl`), carried
 * out by the profiled program's own threads at their next hook, so no
 * thread is ever stopped from outside; a command none of them takes (all
 * blocked) is taken by the control thread (agent.c, t == NULL here).
 *
 * A reader sets bits in a thread's arena_thread.request (tree.c calls
 * jp_attend at the next hook exit when any is set) and, for commands, the
 * header's attention word (libhookit checks it on every hook while
 * collection is off).  What each request does:
 *   ARENA_REQ_COPY    copy your own tree into your copy block (the reader
 *                     could not get a torn-free copy: you were always busy)
 *   ARENA_REQ_PAUSE   park until the reader's process-consistent copy is
 *                     done (futex wait, at most PAUSE_MAX_NS)
 *   ARENA_REQ_RESET   start your tree anew (ctl reset), as of pending_at
 *   ARENA_REQ_ZERO    zero your numbers, keep the tree (ctl zerobase), as of
 *                     pending_at; both are applied before the thread next
 *                     changes its tree (jp_pending_apply), and readers show
 *                     them applied meanwhile (profile/arena.h)
 *   ARENA_REQ_CONTROL a command waits in the header: the first thread to
 *                     claim it (attention 1 -> 2) carries it out and
 *                     acknowledges it (control_done = control_seq).
 * The protocol is described in docs/live.md. */
#include "profiler/jprof/jprof.h"
#include "live.h"
#include "profiler/jprof/metrics/metrics.h"
#include "profiler/jprof/metrics/sampler.h"
#include "profiler/jprof/metrics/wait.h"
#include "profiler/jprof/output/output.h"
#include "profiler/jprof/tree/tree.h"
#include "profile/arena_walk.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* A parked thread goes on by itself after this long, reader or not. */
#define PAUSE_MAX_NS 500000000ull

JP_NOINSTR static struct arena_process *process_block(void)
{
    return jp_at(ARENA_PROCESS_REF);
}

JP_NOINSTR static struct arena_view whole_arena(void)
{
    return (struct arena_view){ jp_arena_base, jp_arena_header()->used };
}

/* ---- reset and zerobase, on the calling thread's own tree --------------------- */

static int zero_node(void *ctx, arena_ref ref, const struct arena_node *node)
{
    (void)ctx;
    (void)node;
    struct arena_node *n = jp_node(ref);
    n->calls = 0;
    n->incl = 0;
    n->samples = 0;
    return 0;
}

/* Zero every node's numbers; open frames count their time from `at` (their
 * calls were counted before and are not counted again). */
JP_NOINSTR static void zero_tree(struct jp_thread *t, uint64_t at)
{
    struct arena_view v = whole_arena();
    arena_tree_walk(&v, t->rec->root, zero_node, NULL, NULL);
    for (uint32_t i = 1; i <= jp_depth(t); i++)
        if (t->stack[i].t0 < at)
            t->stack[i].t0 = at;
    t->rec->dropped = t->rec->unmatched = 0;
    jp_pc_samples_clear(t);
}

/* An open frame's node old was re-made as new: a wait in progress there
 * (a reset applied during it, by a signal handler's hook) goes on in the
 * new context, so a profile made meanwhile (jp_wait_thread) and its end
 * without an event (wait_charge) find it. */
JP_NOINSTR static void remade(struct jp_thread *t, arena_ref old, arena_ref new)
{
    if (t->wait.active && t->wait.node == old)
        t->wait.node = new;
}

/* A fresh root with the open path re-made under it (each frame's time
 * counted from `at`, or its entry if later): everything before is gone
 * from the profile.  The old nodes stay where they are (readers may be
 * following them). */
JP_NOINSTR static void reset_tree(struct jp_thread *t, uint64_t at)
{
    arena_ref root = jp_node_new(t, 0, 0);
    jp_pc_samples_clear(t);
    if (root) {
        uint32_t depth = jp_depth(t);
        remade(t, t->stack[0].node, root);
        t->stack[0].node = root;
        t->cur = root;
        t->rec->depth = 0;
        for (uint32_t i = 1; i <= depth; i++) {
            arena_ref n = jp_node_new(t, t->stack[i - 1].node, jp_node(t->stack[i].node)->fn);
            if (!n)
                break;
            remade(t, t->stack[i].node, n);
            t->stack[i].node = n;
            if (t->stack[i].t0 < at)
                t->stack[i].t0 = at;
            t->cur = n;
            t->rec->depth = i;
        }
        __atomic_store_n(&t->rec->root, root, __ATOMIC_RELEASE);
        t->rec->dropped = t->rec->unmatched = 0;
    }
}

/* Busy held, by t's own thread: the reset or zerobase pending for it
 * (profile/arena.h), as of the moment it was given.  A reset after a
 * zerobase is the reset; a zerobase after a reset zeroes a tree that is
 * only the open path, with nothing to zero: the reset with the later
 * moment, which pending_at holds. */
JP_NOINSTR void jp_pending_apply(struct jp_thread *t)
{
    uint32_t req = __atomic_fetch_and(&t->rec->request, ~JP_REQ_APPLY, __ATOMIC_ACQ_REL);
    uint64_t at = __atomic_load_n(&t->rec->pending_at, __ATOMIC_RELAXED);
    if (req & ARENA_REQ_RESYNC)
        jp_unmatched_resync(t); /* the frames that returned while collection was off */
    if (req & ARENA_REQ_RESET)
        reset_tree(t, at);
    else if (req & ARENA_REQ_ZERO)
        zero_tree(t, at);
    if (req & ARENA_REQ_PENDING)
        jp_wait_cut(t, at);
}

/* Not busy: apply what is pending now, unless the thread is inside the
 * profiler (a handler that interrupted a hook: that hook's thread applies it). */
JP_NOINSTR void jp_pending_settle(struct jp_thread *t)
{
    if (t && jp_pending(t->rec) && jp_busy_begin(t)) {
        jp_pending_apply(t);
        jp_busy_done(t->rec);
    }
}

JP_NOINSTR static void apply_local(struct jp_thread *t, uint32_t cmd, uint64_t at)
{
    if (cmd == ARENA_CMD_RESET)
        reset_tree(t, at);
    else if (cmd == ARENA_CMD_ZEROBASE)
        zero_tree(t, at);
    jp_wait_cut(t, at); /* a wait this thread is in (a handler gave the command) */
}

/* Every other thread: the ended ones (frozen: their threads are gone) are
 * done by retire.c, which alone writes them now; a running one gets it
 * pending (the moment, then the bit; see profile/arena.h): it applies it,
 * as of now, before it next changes its tree, blocked or not, and readers
 * show it applied meanwhile.  (Before, the ended ones were skipped: their
 * records no longer point to a thread state, and a reset left their calls
 * in the profile.) */
JP_NOINSTR static void apply_everywhere(struct jp_thread *self, uint32_t cmd)
{
    uint32_t bit = cmd == ARENA_CMD_RESET ? ARENA_REQ_RESET : ARENA_REQ_ZERO;
    uint64_t now = jp_now();
    for (arena_ref r = jp_arena_header()->first_thread; r; r = ((struct arena_thread *)jp_at(r))->next) {
        struct arena_thread *rec = jp_at(r);
        struct jp_thread *t = (struct jp_thread *)(uintptr_t)rec->priv;
        if (!t || t == self || __atomic_load_n(&rec->state, __ATOMIC_ACQUIRE) == ARENA_THREAD_ENDED)
            continue;
        __atomic_store_n(&rec->pending_at, now, __ATOMIC_RELAXED);
        __atomic_fetch_or(&rec->request, bit, __ATOMIC_RELEASE);
    }
    jp_retired_control(cmd);
    if (self) {
        jp_pending_apply(self); /* an older one first, as of its own moment */
        apply_local(self, cmd, now);
    }
}

/* The command in the arena's control log (profile/arena.h), for the
 * profiles made after it: CLOCK_MONOTONIC, which the process block's
 * start is read with.  A log another writer holds (a command at the same
 * instant, or the one a signal handler interrupted) is left to it. */
JP_NOINSTR static void log_command(uint32_t cmd)
{
    struct arena_control_log *log = jp_at(ARENA_CONTROL_LOG_REF);
    uint32_t seq = __atomic_load_n(&log->seq, __ATOMIC_RELAXED);
    if ((seq & 1)
        || !__atomic_compare_exchange_n(&log->seq, &seq, seq + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return;
    __atomic_thread_fence(__ATOMIC_RELEASE);
    log->command = cmd;
    log->count++;
    log->mono_ns = hk_mono_ns();
    __atomic_store_n(&log->seq, seq + 2, __ATOMIC_RELEASE);
}

/* ---- a thread's copy of its own tree ---------------------------------------- */

/* Allocates nothing (arena slots aside): this runs at a hook exit, maybe
 * in a signal handler. */
JP_NOINSTR static void copy_self(struct jp_thread *t)
{
    struct arena_thread *rec = t->rec;
    struct arena_view v = whole_arena();
    uint64_t n = arena_tree_copy(&v, rec->root, NULL, UINT64_MAX, NULL);
    uint32_t depth = jp_depth(t);
    size_t node_bytes = n * sizeof(struct arena_copy_node), frame_bytes = ((size_t)depth + 1) * sizeof *t->stack;
    uint64_t slots = (node_bytes + frame_bytes + ARENA_SLOT - 1) / ARENA_SLOT;
    if (slots > rec->copy_slots) {
        uint64_t want = slots > 2ull * rec->copy_slots ? slots : 2ull * rec->copy_slots;
        arena_ref block = want < UINT32_MAX ? jp_arena_alloc((uint32_t)want) : 0;
        if (!block)
            return;
        rec->copy_slots = (uint32_t)want;
        rec->copy_ref = block;  /* published under copy_seq below */
    }
    __atomic_store_n(&rec->copy_seq, rec->copy_seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    char *block = jp_at(rec->copy_ref);
    n = arena_tree_copy(&v, rec->root, (struct arena_copy_node *)block, n, NULL);
    memcpy(block + n * sizeof(struct arena_copy_node), t->stack, frame_bytes);
    rec->copy_nodes = (uint32_t)n;
    rec->copy_depth = depth;
    rec->copy_taken = jp_now();
    __atomic_store_n(&rec->copy_seq, rec->copy_seq + 1, __ATOMIC_RELEASE);
}

/* ---- a process-consistent pause ---------------------------------------------- */

JP_NOINSTR static void park(struct jp_thread *t)
{
    struct arena_process *pr = process_block();
    uint32_t gen = __atomic_load_n(&pr->pause_gen, __ATOMIC_ACQUIRE);
    if (!(gen & 1))
        return;                 /* already released */
    uint64_t deadline = hk_mono_ns() + PAUSE_MAX_NS;
    /* Not busy while parked: the tree is whole (we are at a hook's exit),
     * and a reader copies it under an even seq at once instead of waiting
     * for the thread's own copy, which a parked thread cannot make. */
    jp_busy_done(t->rec);
    __atomic_store_n(&t->rec->parked, 1, __ATOMIC_RELEASE);
    __atomic_fetch_add(&pr->parked, 1, __ATOMIC_ACQ_REL);
    syscall(SYS_futex, &pr->parked, FUTEX_WAKE, 1, NULL, NULL, 0);     /* the reader counts us */
    for (;;) {
        uint64_t now = hk_mono_ns();
        if (__atomic_load_n(&pr->pause_gen, __ATOMIC_ACQUIRE) != gen || now >= deadline)
            break;
        uint64_t left = deadline - now;
        struct timespec ts = { (time_t)(left / 1000000000ull), (long)(left % 1000000000ull) };
        syscall(SYS_futex, &pr->pause_gen, FUTEX_WAIT, gen, &ts, NULL, 0);
    }
    __atomic_fetch_sub(&pr->parked, 1, __ATOMIC_ACQ_REL);
    __atomic_store_n(&t->rec->parked, 0, __ATOMIC_RELEASE);
    jp_busy_take(t->rec);       /* busy again until jp_attend's end */
}

/* ---- commands from `hookit ctl` ------------------------------------------------- */

JP_NOINSTR static uint32_t run_command(struct jp_thread *t, uint32_t cmd)
{
    switch (cmd) {
    case ARENA_CMD_START:
        if (!*jp_host->collecting)
            jp_unmatched_restart(); /* the frames frozen by the stop (unexact.c) */
        *jp_host->collecting = 1;
        return 0;
    case ARENA_CMD_STOP:
        if (*jp_host->collecting)
            jp_unmatched_stop();
        *jp_host->collecting = 0;
        return 0;
    case ARENA_CMD_FLUSH:
        return jp_write_profile(0) == 0 ? 0 : EIO;
    case ARENA_CMD_RESET:
    case ARENA_CMD_ZEROBASE:
        jp_metrics_control(cmd);    /* I/O and memory numbers (metrics.c) */
        apply_everywhere(t, cmd == ARENA_CMD_RESET ? ARENA_CMD_RESET : ARENA_CMD_ZEROBASE);
        log_command(cmd);
        return 0;
    default:
        return EINVAL;
    }
}

/* Claim the waiting command (only one thread gets it), carry it out,
 * acknowledge it, free the command word for the next one. */
JP_NOINSTR void jp_control_take(struct jp_thread *t)
{
    struct arena_header *h = jp_arena_header();
    uint32_t one = 1;
    if (!__atomic_compare_exchange_n(&h->attention, &one, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    uint32_t seq = __atomic_load_n(&h->control_seq, __ATOMIC_ACQUIRE);
    uint32_t result = run_command(t, __atomic_load_n(&h->control, __ATOMIC_ACQUIRE));
    h->control_result = result;
    __atomic_store_n(&h->control_done, seq, __ATOMIC_RELEASE);
    __atomic_store_n(&h->attention, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&h->control, ARENA_CMD_NONE, __ATOMIC_RELEASE);
}

/* The same commands from the program itself (HOOKIT_EV_RESET/ZEROBASE). */
JP_NOINSTR void jp_control_local(uint32_t cmd)
{
    int saved = errno;
    struct jp_thread *t = jp_self_live();
    if (t && !jp_busy_begin(t)) {
        errno = saved;
        return;
    }
    run_command(t, cmd);
    if (t)
        jp_busy_done(t->rec);
    errno = saved;
}

JP_NOINSTR void jp_attend(struct jp_thread *t)
{
    if (!t || !jp_busy_begin(t))
        return;                 /* a handler inside the profiler: next time */
    int saved = errno;
    /* Every bit is taken but the thread's own ARENA_REQ_WAIT (wait.c) and
     * the pending ones, which jp_pending_apply takes with their moment. */
    uint32_t req = __atomic_fetch_and(&t->rec->request, ARENA_REQ_WAIT | JP_REQ_APPLY, __ATOMIC_ACQ_REL);
    if (req & ARENA_REQ_WAIT)
        jp_wait_exit(t);
    if (req & JP_REQ_APPLY)
        jp_pending_apply(t); /* given while this hook ran: as of its moment */
    if (__atomic_load_n(&jp_arena_header()->attention, __ATOMIC_ACQUIRE) == 1)
        jp_control_take(t);
    if (req & ARENA_REQ_COPY)
        copy_self(t);
    if (req & ARENA_REQ_PAUSE)
        park(t);
    jp_busy_done(t->rec);
    errno = saved;
}
