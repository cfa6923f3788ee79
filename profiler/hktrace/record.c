/* The hot path: every entry and exit becomes one 8-byte record (ENTER/EXIT
 * with the function id and the ticks since the thread's previous record; a
 * TIME record first when that delta does not fit in 40 bits).
 *
 * A shadow stack of open calls matches exits to entries and carries the
 * options' decisions:
 *  - depth=N: calls deeper than N are SKIPPED (nothing written);
 *  - threshold=T: an entry stays PENDING (not written) until its call is
 *    known to last at least T: when it exits after T, or when a call inside
 *    it is written.  A pending call that ends before T is dropped with its
 *    whole subtree, which was necessarily shorter.  Pending calls are always
 *    the top of the stack, above every written one, and each was entered
 *    after the last record written, so records stay in time order.
 *
 * No locks, no allocation, no libc call but the clock; initial-exec TLS.
 * A signal handler running instrumented code while this thread is inside
 * the tracer sees the busy flag: its events are counted as lost. */
#include "hktrace.h"
#include "common/inlined_pad.h"
#include "common/unwind.h"
#include "profile/trace.h"

#define barrier() __asm__ volatile("" ::: "memory")

HT_NOINSTR __attribute__((noinline)) static int next_chunk(struct ht_thread *t)
{
    uint32_t n = ht_chunk_take();
    if (!n) {
        t->flags |= TR_FLAG_SIZE_CAP;
        t->pos = t->end = NULL;
        return 0;
    }
    struct ht_chunk *c = ht_chunk_at(n);
    if (t->chunk)
        t->chunk->next = n;
    else
        t->first_chunk = n;
    t->chunk = c;
    t->pos = c->rec;
    t->end = c->rec + HT_CHUNK_RECS;
    return 1;
}

HT_NOINSTR static inline int put(struct ht_thread *t, uint64_t rec)
{
    if (HT_UNLIKELY(t->pos == t->end) && !next_chunk(t)) {
        t->lost++;
        return -1;
    }
    *t->pos++ = rec;
    __atomic_store_n(&t->chunk->nrec, t->chunk->nrec + 1, __ATOMIC_RELEASE);
    return 0;
}

HT_NOINSTR static inline void emit(struct ht_thread *t, unsigned kind, uint32_t id, uint64_t now)
{
    uint64_t delta = now > t->last ? now - t->last : 0;
    if (HT_UNLIKELY(delta > TR_MAX_DELTA)) {
        if (put(t, tr_time_record(now)) != 0)
            return;
        t->last = now;
        delta = 0;
    }
    if (put(t, tr_record(kind, id, delta)) == 0 && now > t->last)
        t->last = now;
}

/* A TIME record: the start of a stream, whose first delta has no base. */
HT_NOINSTR void ht_mark_time(struct ht_thread *t, uint64_t now)
{
    if (put(t, tr_time_record(now)) == 0)
        t->last = now;
}

/* Write the entries of the pending calls, outermost first. */
HT_NOINSTR __attribute__((noinline)) static void flush_pending(struct ht_thread *t)
{
    for (uint32_t d = t->flushed + 1; d <= t->depth; d++) {
        struct ht_frame *f = &t->stack[d];
        if (f->state == HT_PENDING) {
            emit(t, TR_REC_ENTER, f->id, f->t0);
            f->state = HT_WRITTEN;
        }
    }
    t->flushed = t->depth;
}

HT_NOINSTR static inline void close_top(struct ht_thread *t, uint64_t now)
{
    struct ht_frame *f = &t->stack[t->depth];
    if (f->state == HT_WRITTEN) {
        emit(t, TR_REC_EXIT, f->id, now);
    } else if (f->state == HT_PENDING) {
        if (now - f->t0 >= ht_threshold_ticks) {
            flush_pending(t);
            emit(t, TR_REC_EXIT, f->id, now);
        } else {
            t->short_dropped++;
        }
    }
    t->depth--;
    if (t->flushed > t->depth)
        t->flushed = t->depth;
}

HT_NOINSTR void ht_close_all(struct ht_thread *t, uint64_t now)
{
    while (t->depth > 0)
        close_top(t, now);
    t->overflow = 0;
}

HT_NOINSTR void ht_reopen_all(struct ht_thread *t, uint64_t now)
{
    ht_mark_time(t, now);
    for (uint32_t d = 1; d <= t->depth; d++) {
        struct ht_frame *f = &t->stack[d];
        f->t0 = now;
        if (f->state != HT_SKIPPED) {
            emit(t, TR_REC_ENTER, f->id, now);
            f->state = HT_WRITTEN;
        }
    }
    t->flushed = t->depth;
}

HT_NOINSTR static inline void enter(uint64_t now, void *fn, void *site, uintptr_t sp)
{
    struct ht_thread *t = ht_self;
    if (HT_UNLIKELY(!t) && !(t = ht_thread_attach()))
        return;
    if (HT_UNLIKELY(t->busy)) {
        t->lost++;
        return;
    }
    t->busy = 1;
    barrier();
    if (HT_UNLIKELY(t->depth + 1 >= t->capacity) && ht_grow_stack(t) != 0) {
        t->overflow++;
        t->lost++;
    } else {
        struct ht_frame *f = &t->stack[++t->depth];
        f->id = ht_func_id((uint64_t)fn);
        f->t0 = now;
        f->sp = sp;
        f->site = (uintptr_t)site;
        if (HT_UNLIKELY((ht_opt.max_depth && t->depth > ht_opt.max_depth) || f->id == UINT32_MAX)) {
            f->state = HT_SKIPPED;
            t->lost += f->id == UINT32_MAX;
        } else if (ht_threshold_ticks) {
            f->state = HT_PENDING;
        } else {
            emit(t, TR_REC_ENTER, f->id, now);
            f->state = HT_WRITTEN;
            t->flushed = t->depth;
        }
    }
    barrier();
    t->busy = 0;
}

/* Close the top call otherwise than at its exit (a jump, a landing pad,
 * the fallback): the frame an undecided landing pad kept open counts that
 * landing pad as undecided (common/inlined_pad.h). */
HT_NOINSTR static void close_top_unexited(struct ht_thread *t, uint64_t now)
{
    const struct ht_frame *f = &t->stack[t->depth];
    if (hk_pad_doubt_closes(&t->pad_doubt, t->depth, f->t0, f->sp))
        t->undecided_pads++;
    close_top(t, now);
}

/* An exit that is not the top call's: close down to its call if it is open
 * (a longjmp skipped the exits in between), else count it. */
HT_NOINSTR __attribute__((noinline)) static void exit_unmatched(struct ht_thread *t, uint32_t id, uint64_t now)
{
    uint32_t d = t->depth;
    while (d > 0 && t->stack[d].id != id)
        d--;
    if (d == 0) {
        t->unmatched++;
        return;
    }
    while (t->depth >= d)
        close_top_unexited(t, now);
}

HT_NOINSTR static inline void leave(uint64_t now, void *fn)
{
    struct ht_thread *t = ht_self;
    if (HT_UNLIKELY(!t))
        return;
    if (HT_UNLIKELY(t->busy)) {
        t->lost++;
        return;
    }
    t->busy = 1;
    barrier();
    if (HT_UNLIKELY(t->overflow)) {
        t->overflow--;
    } else {
        uint32_t id = ht_func_id((uint64_t)fn);
        if (HT_LIKELY(t->depth > 0 && t->stack[t->depth].id == id))
            close_top(t, now);
        else
            exit_unmatched(t, id, now);
    }
    barrier();
    t->busy = 0;
}

/* The hooks reach us by a tail jump from libhookit: our canonical frame
 * address is the instrumented function's stack pointer at its hook. */
HT_NOINSTR void ht_enter_tsc(void *fn, void *site)
{
    enter(hk_counter(), fn, site, (uintptr_t)__builtin_dwarf_cfa());
}

HT_NOINSTR void ht_exit_tsc(void *fn, void *site)
{
    (void)site;
    leave(hk_counter(), fn);
}

HT_NOINSTR void ht_enter_mono(void *fn, void *site)
{
    enter(hk_mono_ns(), fn, site, (uintptr_t)__builtin_dwarf_cfa());
}

HT_NOINSTR void ht_exit_mono(void *fn, void *site)
{
    (void)site;
    leave(hk_mono_ns(), fn);
}

/* No frame position: never taken for a frame the unwinder left. */
HT_NOINSTR void ht_enter_event(void *fn, void *site)
{
    enter(ht_now(), fn, site, 0);
}

/* Control flow the hooks do not show (include/hookit/profiler.h).  A mark
 * is the depth of the open calls, and a longjmp to it writes the exits of
 * every call opened since, at once, instead of at the next exit that finds
 * no match.  A landing pad about to run (the C++ unwinder: Clang runs no
 * exit hook while it unwinds) writes the exits of the calls it unwound,
 * before its destructors run, as jprof closes them.  Catches and context
 * switches are left to the fallback. */
HT_NOINSTR static void jump_to(struct ht_thread *t, uint64_t mark, uint64_t now)
{
    while (t->depth > mark && !t->overflow)
        close_top_unexited(t, now);
}

HT_NOINSTR static int on_stack(const struct ht_thread *t, uintptr_t sp)
{
    return sp >= t->stack_lo && sp < t->stack_hi;
}

HT_NOINSTR static void open_frame(const void *ctx, unsigned i, uint64_t *fn, uintptr_t *site)
{
    const struct ht_thread *t = ctx;
    const struct ht_frame *f = &t->stack[t->depth - i];
    *fn = ht_func_addr(f->id);
    *site = f->site;
}

/* The calls the landing pad unwound: those below its frame's stack
 * pointer, and the inlined copies in its frame entered inside its try
 * (common/inlined_pad.h); an inlined copy kept open though its owning of
 * the landing pad was not decided is doubted until its exit comes. */
HT_NOINSTR static void unwind_to(struct ht_thread *t, const struct hookit_flow *flow, uint64_t now)
{
    int here = on_stack(t, flow->sp);
    while (t->depth > 0 && !t->overflow) {
        const struct ht_frame *f = &t->stack[t->depth];
        if (!hk_frame_unwound(f->sp, f->site, on_stack(t, f->sp), flow->sp, here))
            break;
        close_top_unexited(t, now);
    }
    if (t->overflow)
        return;
    int undecided;
    for (unsigned n = hk_inlined_unwound(flow, t->depth, open_frame, t, &undecided); n; n--)
        close_top_unexited(t, now);
    if (undecided)
        hk_pad_doubt_keep(&t->pad_doubt, t->depth, t->stack[t->depth].t0, t->stack[t->depth].sp);
}

HT_NOINSTR uint64_t ht_flow(const struct hookit_flow *f)
{
    struct ht_thread *t = ht_self;
    if (!t || t->busy)
        return 0;
    if (f->kind == HOOKIT_FLOW_MARK)
        return t->depth;
    if (f->kind != HOOKIT_FLOW_JUMP && f->kind != HOOKIT_FLOW_UNWIND)
        return 0;
    t->busy = 1;
    barrier();
    uint64_t now = ht_now();
    if (f->kind == HOOKIT_FLOW_JUMP)
        jump_to(t, f->mark, now);
    else
        unwind_to(t, f, now);
    barrier();
    t->busy = 0;
    return 0;
}
