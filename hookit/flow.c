/* Control flow that leaves or resumes frames without their hooks: what
 * the interposers share (docs/exactness.md).  The interposers themselves are
 * one file per concern: flow_jump.c (setjmp, longjmp), flow_catch.c (the
 * C++ catch), flow_context.c (the ucontext functions).  Each tells the
 * plugin what happens (struct hookit_flow in include/hookit/profiler.h),
 * then does the real call.
 *
 * A mark is kept per thread with the buffer it was taken for
 * (flow_marks.c): longjmp(env) and setcontext(ucp) look it up there. */
#include "hookit/flow.h"
#include "hookit/io_api.h"
#include "lifecycle/internal.h"

HK_NOINSTR uint64_t hk_flow_send(const struct hookit_flow *f)
{
    hookit_flow_fn flow = hk_plugin.info.flow;
    if (!flow)
        return 0;
    /* The plugin's work is not the program's: a lock it takes (libjprof's
     * context table on makecontext) must not time as the program's wait. */
    hk_io_guard++;
    uint64_t r = flow(f);
    hk_io_guard--;
    return r;
}

HK_NOINSTR uint64_t hk_flow_tell(uint32_t kind, uint64_t mark, uintptr_t sp, const void *from, const void *to)
{
    struct hookit_flow f = { .kind = kind, .mark = mark, .sp = sp, .from = from, .to = to };
    return hk_flow_send(&f);
}

#ifndef HOOKIT_STATIC
/* The dynamic variant's real functions, found at start (hk_init) and
 * again at a first call that comes earlier.  __cxa_begin_catch may only
 * appear with a C++ library loaded later: looked up again at its first
 * call if it was not there. */
struct hk_flow_reals hk_flow_real;

HK_NOINSTR void *hk_flow_next(void **slot, const char *name)
{
    if (HK_UNLIKELY(!*slot))
        *slot = dlsym(RTLD_NEXT, name);
    return *slot;
}

HK_NOINSTR void hk_flow_resolve(void)
{
#define HK_FLOW_RESOLVE(name) hk_flow_next((void **)&hk_flow_real.name, #name);
    HK_FLOW_WRAPPED(HK_FLOW_RESOLVE)
#undef HK_FLOW_RESOLVE
}
#else
HK_NOINSTR void hk_flow_resolve(void) {}
#endif
