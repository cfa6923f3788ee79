/* What the C++ unwinder leaves, for every plugin that keeps a shadow stack
 * (jprof's tree, hktrace's trace; docs/exactness.md).
 *
 * libhookit's personality interposer reports HOOKIT_FLOW_UNWIND with the
 * stack pointer, at the call the exception came out of, of the frame whose
 * landing pad is about to run.  An open frame whose return address (the
 * call site its entry hook was given) is kept on the stack below that
 * stack pointer was unwound: a callee keeps its own below its caller's
 * stack pointer at the call, while the landing pad's frame keeps its own
 * at or above it.  Functions inlined into the landing pad's frame share
 * its return address and stay open here; common/inlined_pad.h decides
 * whether the landing pad is theirs.
 *
 * The search reads the program's frames between two addresses, so both
 * must lie on one stack: the thread's own (its bounds, hk_stack_bounds),
 * or one of unknown bounds (a coroutine's) no larger than HK_ONE_STACK,
 * never across the gap between two. */
#ifndef HOOKIT_COMMON_UNWIND_H
#define HOOKIT_COMMON_UNWIND_H

#include "common/foreign.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Off the thread's stack, farther apart than this: two stacks. */
#define HK_ONE_STACK (8u << 20)

/* The bounds [*lo, *hi) of the calling thread's stack, to tell a frame on
 * it from one on an alternate signal stack or a coroutine's; both 0 when
 * unknown.  The main thread's stack grows on demand: its bounds are
 * estimated from __libc_stack_end and the stack limit (for it,
 * pthread_getattr_np reads /proc/self/maps). */
__attribute__((no_instrument_function, unused)) static void hk_stack_bounds(uintptr_t *lo, uintptr_t *hi)
{
    *lo = *hi = 0;
    if (syscall(SYS_gettid) == getpid()) {
        struct rlimit rl;
        uintptr_t top = (uintptr_t)__libc_stack_end + (1u << 20);
        uintptr_t size = 1ull << 30;
        if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < size)
            size = rl.rlim_cur + (1u << 20);
        *hi = top;
        *lo = top > size ? top - size : 0;
        return;
    }
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
            *lo = (uintptr_t)addr;
            *hi = (uintptr_t)addr + size;
        }
        pthread_attr_destroy(&attr);
    }
}

/* Whether site is kept on the stack in [from, lim).  Reads the program's
 * frames on purpose (AddressSanitizer would take it for an overflow). */
__attribute__((no_instrument_function, no_sanitize_address)) static inline int
hk_return_kept_below(uintptr_t from, uintptr_t site, uintptr_t lim)
{
    for (const uintptr_t *w = (const uintptr_t *)from; site && (uintptr_t)w < lim; w++)
        if (*w == site)
            return 1;
    return 0;
}

/* Whether the open frame whose stack pointer at its entry hook was f_sp
 * and whose call site was f_site was unwound, the landing pad's frame
 * having stack pointer sp.  f_here and here: whether f_sp and sp lie on
 * the thread's own stack. */
__attribute__((no_instrument_function)) static inline int hk_frame_unwound(uintptr_t f_sp, uintptr_t f_site,
                                                                           int f_here, uintptr_t sp, int here)
{
    if (f_here != here || f_sp >= sp || (!here && sp - f_sp > HK_ONE_STACK))
        return 0;
    return hk_return_kept_below(f_sp, f_site, sp);
}

#endif
