/* Whose is a landing pad installed in a machine frame that holds inlined
 * callees: theirs, or their host's (docs/exactness.md; jprof's tree and
 * hktrace's trace).
 *
 * Inlined copies share their host's machine frame and return address, so
 * the stack pointer that closes the frames the unwinder left
 * (common/unwind.h) keeps them open.  The landing pad's call-site ranges
 * (struct hookit_flow, UNWIND) say which code throws to it: code inside
 * its try, or inside the scope of its cleanup.  An inlined callee's entry
 * hook is called in the host's code where the callee was entered; when
 * that call lies in the landing pad's ranges, the callee was entered
 * inside the landing pad's try, so the landing pad is its caller's and the
 * callee is gone.  (Clang makes the inlined entry hook's call an invoke of
 * the enclosing landing pad; a callee that owns the landing pad was
 * entered before its own try, outside those ranges.)
 *
 * The entry hook's calls are found in the host's code once per (host,
 * callee) and kept (common/entry_calls.h: x86-64 only).  The frame is closed
 * when every call found lies in the landing pad's ranges, and stays open
 * when none does.  When some do and some do not, when none is found, or
 * elsewhere than on x86-64, the owner is not known: the frame stays open,
 * as it did before, and is doubted (struct hk_pad_doubt). */
#ifndef HOOKIT_COMMON_INLINED_PAD_H
#define HOOKIT_COMMON_INLINED_PAD_H

#include <hookit/profiler.h>
#include <stdint.h>

/* The open frame i from the top of a plugin's shadow stack (0: the
 * innermost): its function and its call site. */
typedef void (*hk_open_frame_fn)(const void *ctx, unsigned i, uint64_t *fn, uintptr_t *site);

/* How many of the `open` frames on top (those the unwinder's stack
 * pointer left open, common/unwind.h) the landing pad of f (UNWIND) has
 * unwound: inlined copies, above their host, entered inside its try.
 * *undecided: the frame then on top is an inlined copy whose owning of
 * the landing pad could not be decided (kept open). */
unsigned hk_inlined_unwound(const struct hookit_flow *f, unsigned open, hk_open_frame_fn frame,
                            const void *ctx, int *undecided);

/* The frame an undecided landing pad kept open.  Right if its own exit
 * comes (GCC's cleanups run it; so does a callee whose own catch clause
 * ran); perhaps wrong if anything else closes it (the next landing pad, a
 * catch, the fallback): the landing pad's calls then went under it, one
 * level too deep.  A plugin keeps the frame's identity here and, where it
 * closes frames otherwise than at their exit, counts the landing pad as
 * undecided on the frame's context when it closes this one.  A frame
 * closed at its exit leaves the record stale: the next frame at that depth
 * has another start time (or, with no clock, may be taken for it). */
struct hk_pad_doubt {
    uint32_t depth; /* 0: none */
    uint64_t t0;
    uintptr_t sp;
};

__attribute__((no_instrument_function)) static inline void
hk_pad_doubt_keep(struct hk_pad_doubt *d, uint32_t depth, uint64_t t0, uintptr_t sp)
{
    *d = (struct hk_pad_doubt){ depth, t0, sp };
}

/* Whether the frame at depth, started at t0 with stack pointer sp, being
 * closed otherwise than at its exit, is the doubted one (then forgotten). */
__attribute__((no_instrument_function)) static inline int
hk_pad_doubt_closes(struct hk_pad_doubt *d, uint32_t depth, uint64_t t0, uintptr_t sp)
{
    if (d->depth != depth || d->t0 != t0 || d->sp != sp)
        return 0;
    d->depth = 0;
    return 1;
}

#endif
