/* The hot path: function entry and exit.
 *
 * Entry finds (or creates) the child of the current node for fn and pushes
 * a frame; exit pops it and adds the elapsed ticks to the node.  No locks,
 * no allocation, no libc call but the clock; state reached through
 * initial-exec TLS.  Two copies are compiled, one per clock, so the clock is
 * a direct inline read rather than an indirect call.
 *
 * Real programs do not always pair entries and exits:
 *  - longjmp/siglongjmp and exceptions (clang emits no exit hook on unwind)
 *    leave frames behind: an entry whose stack pointer is at or above the
 *    top frame's proves those frames are gone, and they are closed;
 *  - an exit that does not match the top frame closes frames down to the
 *    matching one, or is counted as unmatched and ignored;
 *  - a signal handler that runs instrumented code while this thread is
 *    inside the profiler sees the busy flag: its events are dropped and
 *    counted, never allowed to corrupt the tree. */
#include "jprof.h"

#include <time.h>

#define barrier() __asm__ volatile("" ::: "memory")

JP_NOINSTR static inline uintptr_t current_sp(void)
{
#if defined(__x86_64__)
    uintptr_t sp;
    __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
    return sp;
#else
    return (uintptr_t)__builtin_frame_address(0);
#endif
}

JP_NOINSTR uint64_t jp_now(void)
{
    return jp_clock_is_tsc() ? jp_tsc() : jp_now_mono();
}

JP_NOINSTR static inline int on_stack(const struct jp_thread *t, uintptr_t sp)
{
    return sp >= t->stack_lo && sp < t->stack_hi;
}

JP_NOINSTR static inline void close_top(struct jp_thread *t, uint64_t now)
{
    struct arena_frame *f = &t->stack[t->depth];
    struct arena_node *n = jp_node(f->node);
    n->incl += now - f->t0;
    t->depth--;
    t->cur = t->stack[t->depth].node;
}

/* Frames the new entry at sp proves abandoned (see the file comment).  A
 * frame on another stack than the current one is kept while we run on that
 * other stack (a handler on sigaltstack), dropped once we are back on ours. */
JP_NOINSTR __attribute__((noinline)) static void cut_back(struct jp_thread *t, uintptr_t sp, uint64_t now)
{
    int here = on_stack(t, sp);
    while (t->depth > 0) {
        uintptr_t fsp = t->stack[t->depth].sp;
        int there = on_stack(t, fsp);
        int gone = (here == there) ? fsp <= sp : (here && !there);
        if (!gone)
            break;
        close_top(t, now);
    }
}

/* The child of parent for fn when it is not the last one found: the one
 * after it (calls in a loop body come in order), a scan, else a new node. */
JP_NOINSTR __attribute__((noinline)) static arena_ref find_child(struct jp_thread *t, arena_ref parent_ref,
                                                                 uint64_t fn)
{
    struct arena_node *parent = jp_node(parent_ref);
    arena_ref last = (arena_ref)parent->last_child;
    arena_ref c = last ? jp_node(last)->next_sibling : 0;
    if (!c || jp_node(c)->fn != fn) {
        c = parent->first_child;
        while (c && jp_node(c)->fn != fn)
            c = jp_node(c)->next_sibling;
        if (!c && !(c = jp_node_new(t, parent_ref, fn)))
            return 0;
    }
    parent->last_child = c;
    return c;
}

/* Entry.  timed: the clock was read (default mode); untimed entries (the
 * sampling mode) only count, and samples charge the current node.
 * Written with locals throughout: every store to the arena could alias the
 * thread state for the compiler, which would reload it after each one. */
JP_NOINSTR __attribute__((always_inline)) static inline void enter(uint64_t now, void *fn, int timed)
{
    struct jp_thread *t = jp_self;
    if (JP_UNLIKELY(!t) && !(t = jp_thread_attach()))
        return;
    struct arena_thread *rec = t->rec;
    if (JP_UNLIKELY(t->busy)) {
        rec->dropped++;
        return;
    }
    t->busy = 1;
    barrier();
    uint32_t seq = rec->seq;
    rec->seq = seq + 1;
    __atomic_thread_fence(__ATOMIC_RELEASE);

    uint32_t depth = t->depth;
    uintptr_t sp = current_sp();
    if (JP_UNLIKELY(t->stack[depth].sp <= sp)) {
        cut_back(t, sp, now);
        depth = t->depth;
    }
    arena_ref cur = t->cur;
    arena_ref c = (arena_ref)jp_node(cur)->last_child;
    if (JP_UNLIKELY(!c || jp_node(c)->fn != (uint64_t)fn))
        c = find_child(t, cur, (uint64_t)fn);
    if (JP_LIKELY(c) && (JP_LIKELY(depth + 1 < t->capacity) || jp_grow_stack(t) == 0)) {
        jp_node(c)->calls++;
        struct arena_frame *f = &t->stack[++depth];
        if (timed)
            f->t0 = now;
        f->sp = sp;
        f->node = c;
        t->cur = c;
        t->depth = depth;
    } else {
        rec->dropped++;
    }
    rec->depth = depth;
    __atomic_store_n(&rec->seq, seq + 2, __ATOMIC_RELEASE);
    barrier();
    t->busy = 0;
}

/* Exit that does not match the top frame: close down to the matching frame
 * if there is one, else count it. */
JP_NOINSTR __attribute__((noinline)) static void exit_unmatched(struct jp_thread *t, uint64_t fn, uint64_t now)
{
    uint32_t d = t->depth;
    while (d > 0 && jp_node(t->stack[d].node)->fn != fn)
        d--;
    if (d == 0) {
        t->rec->unmatched++;
        return;
    }
    while (t->depth >= d)
        close_top(t, now);
}

JP_NOINSTR __attribute__((always_inline)) static inline void leave(uint64_t now, void *fn, int timed)
{
    struct jp_thread *t = jp_self;
    if (JP_UNLIKELY(!t))
        return;
    struct arena_thread *rec = t->rec;
    if (JP_UNLIKELY(t->busy)) {
        rec->dropped++;
        return;
    }
    t->busy = 1;
    barrier();
    uint32_t seq = rec->seq;
    rec->seq = seq + 1;
    __atomic_thread_fence(__ATOMIC_RELEASE);

    uint32_t depth = t->depth;
    struct arena_frame *f = &t->stack[depth];
    struct arena_node *n = jp_node(f->node);
    if (JP_LIKELY(depth > 0 && n->fn == (uint64_t)fn)) {
        if (timed)
            n->incl += now - f->t0;
        depth--;
        t->depth = depth;
        t->cur = f[-1].node;
    } else {
        exit_unmatched(t, (uint64_t)fn, now);
        depth = t->depth;
    }
    rec->depth = depth;
    __atomic_store_n(&rec->seq, seq + 2, __ATOMIC_RELEASE);
    barrier();
    t->busy = 0;
    if (JP_UNLIKELY(rec->request))
        jp_attend(t);
}

JP_NOINSTR void jp_enter_tsc(void *fn, void *site)
{
    (void)site;
    enter(jp_tsc(), fn, 1);
}

JP_NOINSTR void jp_exit_tsc(void *fn, void *site)
{
    (void)site;
    leave(jp_tsc(), fn, 1);
}

JP_NOINSTR void jp_enter_mono(void *fn, void *site)
{
    (void)site;
    enter(jp_now_mono(), fn, 1);
}

JP_NOINSTR void jp_exit_mono(void *fn, void *site)
{
    (void)site;
    leave(jp_now_mono(), fn, 1);
}

JP_NOINSTR void jp_enter_counted(void *fn, void *site)
{
    (void)site;
    enter(0, fn, 0);
}

JP_NOINSTR void jp_exit_counted(void *fn, void *site)
{
    (void)site;
    leave(0, fn, 0);
}

/* Frames that are not machine code (Java methods from the JVMTI agent),
 * keyed by jp_synthetic_key().  A JVMTI callback's stack pointer does not
 * nest with the native frames around it, so these frames carry the top of
 * the thread's stack instead of theirs: the longjmp check never takes them
 * for abandoned frames, and a native entry above them never cuts them.
 * They end by key, like any exit. */
JP_NOINSTR void jp_enter_synthetic(uint64_t key)
{
    int timed = !jp_opt.sample;
    uint64_t now = timed ? jp_now() : 0;
    struct jp_thread *t = jp_self;
    if (JP_UNLIKELY(!t) && !(t = jp_thread_attach()))
        return;
    struct arena_thread *rec = t->rec;
    if (t->busy) {
        rec->dropped++;
        return;
    }
    t->busy = 1;
    barrier();
    uint32_t seq = rec->seq;
    rec->seq = seq + 1;
    __atomic_thread_fence(__ATOMIC_RELEASE);

    uint32_t depth = t->depth;
    arena_ref cur = t->cur;
    arena_ref c = (arena_ref)jp_node(cur)->last_child;
    if (!c || jp_node(c)->fn != key)
        c = find_child(t, cur, key);
    if (c && (depth + 1 < t->capacity || jp_grow_stack(t) == 0)) {
        jp_node(c)->calls++;
        struct arena_frame *f = &t->stack[++depth];
        f->t0 = now;
        f->sp = t->stack_hi ? t->stack_hi - 1 : UINTPTR_MAX;
        f->node = c;
        t->cur = c;
        t->depth = depth;
    } else {
        rec->dropped++;
    }
    rec->depth = depth;
    __atomic_store_n(&rec->seq, seq + 2, __ATOMIC_RELEASE);
    barrier();
    t->busy = 0;
}

JP_NOINSTR void jp_exit_synthetic(uint64_t key)
{
    if (jp_opt.sample)
        leave(0, (void *)(uintptr_t)key, 0);
    else
        leave(jp_now(), (void *)(uintptr_t)key, 1);
}
