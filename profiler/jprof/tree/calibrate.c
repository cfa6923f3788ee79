/* The profiler's own cost, measured at start so the profile can report it
 * and, with JPROFOPTS=compensate, subtract it.
 *
 * A call costs its parent the whole hook pair (o_full); of that, the part
 * between the entry's clock read and the exit's clock read (o_inner) lands
 * in the callee's own inclusive time.  Both are measured by driving the
 * real entry points on a private, unpublished tree: one outer frame with
 * many empty children, best of several rounds.  What is not seen here is
 * the compiler-inserted call into the hooks; the bench shows how close the
 * compensated total comes to an uninstrumented run.
 *
 * Measured at start and again for the final profile, keeping the lower
 * figure: on a shared VM about one start in five runs the whole
 * measurement (half a millisecond) in a slow state, 38-40 ns per call
 * against 24, which compensation would then subtract from every call. */
#include "profiler/jprof/jprof.h"
#include "tree.h"

static uint64_t overhead_full_ticks, overhead_inner_ticks;

#define ROUNDS 7
#define CALLS 2000

JP_NOINSTR __attribute__((noinline)) static void calib_outer(void) { __asm__ volatile(""); }
JP_NOINSTR __attribute__((noinline)) static void calib_inner(void) { __asm__ volatile(""); }

/* The calls an instrumented function's body makes: each enter/exit pair
 * gets this function's own return address as its call site, as the
 * compiler's hooks would, so the entry finds the caller's frame the way it
 * does for real code.  Called from its own frame, below the outer one. */
JP_NOINSTR __attribute__((noinline)) static void inner_calls(hookit_fast_fn enter, hookit_fast_fn exit)
{
    void *site = __builtin_return_address(0);
    for (int i = 0; i < CALLS; i++) {
        enter((void *)calib_inner, site);
        exit((void *)calib_inner, site);
    }
}

JP_NOINSTR __attribute__((noinline)) static void outer_call(hookit_fast_fn enter, hookit_fast_fn exit)
{
    void *site = __builtin_return_address(0);
    enter((void *)calib_outer, site);
    inner_calls(enter, exit);
    exit((void *)calib_outer, site);
}

/* One private tree for every round; the first round only warms caches and
 * pages, then the best of the others counts (and the best of every
 * measurement so far).  Not for every flush: each measurement leaves its
 * scratch tree's few slots in the arena. */
JP_NOINSTR void jp_calibrate(hookit_fast_fn enter, hookit_fast_fn exit)
{
    struct jp_thread *saved = jp_self;
    struct jp_thread *t = jp_thread_scratch();
    if (!t)
        return;
    uint64_t best_full = UINT64_MAX, best_inner = UINT64_MAX;
    jp_self = t;
    for (int round = 0; round <= ROUNDS; round++) {
        outer_call(enter, exit);
        struct arena_node *outer = jp_node(jp_node(t->rec->root)->first_child);
        struct arena_node *inner = outer->first_child ? jp_node(outer->first_child) : NULL;
        if (round > 0 && inner && inner->calls == CALLS) {
            if (outer->incl / CALLS < best_full)
                best_full = outer->incl / CALLS;
            if (inner->incl / CALLS < best_inner)
                best_inner = inner->incl / CALLS;
        }
        outer->incl = outer->calls = 0;
        if (inner)
            inner->incl = inner->calls = 0;
    }
    jp_self = saved;
    jp_thread_scratch_free(t);
    if (best_full == UINT64_MAX)
        return;
    if (!overhead_full_ticks || best_full < overhead_full_ticks) {
        overhead_full_ticks = best_full;
        overhead_inner_ticks = best_inner;
    }
    jp_host->debug_log("jprof: calibration: a hook pair takes %llu ticks (%llu inside the callee); "
                       "keeping %llu", (unsigned long long)best_full, (unsigned long long)best_inner,
                       (unsigned long long)overhead_full_ticks);
}

JP_NOINSTR uint64_t jp_overhead_full_ticks(void) { return overhead_full_ticks; }
JP_NOINSTR uint64_t jp_overhead_inner_ticks(void) { return overhead_inner_ticks; }
