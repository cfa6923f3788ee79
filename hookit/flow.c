/* Control flow that leaves or resumes frames without their hooks: what
 * the interposers share (docs/exactness.md).  The interposers themselves are
 * one file per concern: flow_jump.c (setjmp, longjmp), flow_catch.c (the
 * C++ catch), flow_context.c (the ucontext functions).  Each tells the
 * plugin what happens (struct hookit_flow in include/hookit/profiler.h),
 * then does the real call.
 *
 * A mark is kept per thread with the buffer it was taken for, in memory of
 * our own (lc_alloc, never malloc, which may be the program's own
 * instrumented one): longjmp(env) and setcontext(ucp) look it up there. */
#include "hookit/flow.h"
#include "hookit/io_api.h"
#include "lifecycle/internal.h"

HK_NOINSTR uint64_t hk_flow_tell(uint32_t kind, uint64_t mark, uintptr_t sp, const void *from, const void *to)
{
    hookit_flow_fn flow = hk_plugin.info.flow;
    if (!flow)
        return 0;
    struct hookit_flow f = { .kind = kind, .mark = mark, .sp = sp, .from = from, .to = to };
    /* The plugin's work is not the program's: a lock it takes (libjprof's
     * context table on makecontext) must not time as the program's wait. */
    hk_io_guard++;
    uint64_t r = flow(&f);
    hk_io_guard--;
    return r;
}

/* ---- the marks of this thread ---------------------------------------------------- */

struct kept_mark {
    const void *buf;            /* jmp_buf or ucontext_t; NULL: free */
    uint64_t mark;
};

#define MARKS_PAGE 4096u
#define MARKS (MARKS_PAGE / sizeof(struct kept_mark))

static __thread struct kept_mark *marks __attribute__((tls_model("initial-exec")));
static __thread uint32_t marks_next __attribute__((tls_model("initial-exec")));

/* A mark says in which context (high half) and at which depth (low half)
 * it was taken.  One taken deeper than mark in the same context belongs to
 * a frame that has returned since: its buffer is dead. */
HK_NOINSTR static int dead_by(uint64_t old, uint64_t now)
{
    return (old >> 32) == (now >> 32) && (uint32_t)old > (uint32_t)now;
}

/* Buffers are found by a short probe from their hash: a program calling
 * setjmp for every protected call (Lua's pcall) pays a few compares. */
#define PROBES 8u

HK_NOINSTR static uint32_t slot_of(const void *buf)
{
    return (uint32_t)(((uintptr_t)buf * 0x9e3779b97f4a7c15ull) >> 40) % MARKS;
}

HK_NOINSTR void hk_flow_keep_mark(const void *buf, uint64_t mark)
{
    if (!marks && !(marks = lc_alloc(MARKS_PAGE)))
        return;
    struct kept_mark *spare = NULL;
    for (uint32_t n = 0, i = slot_of(buf); n < PROBES; n++, i = (i + 1) % MARKS) {
        if (marks[i].buf == buf) {
            marks[i].mark = mark;
            return;
        }
        if (!spare && (!marks[i].buf || dead_by(marks[i].mark, mark)))
            spare = &marks[i];
    }
    if (!spare)                 /* all live: one of them goes, in turn */
        spare = &marks[(slot_of(buf) + marks_next++ % PROBES) % MARKS];
    *spare = (struct kept_mark){ buf, mark };
}

/* The mark kept for buf, or 0 with *found = 0. */
HK_NOINSTR uint64_t hk_flow_find_mark(const void *buf, int *found)
{
    for (uint32_t n = 0, i = slot_of(buf); marks && n < PROBES; n++, i = (i + 1) % MARKS)
        if (marks[i].buf == buf) {
            *found = 1;
            return marks[i].mark;
        }
    *found = 0;
    return 0;
}

HK_NOINSTR void hk_flow_forget_mark(const void *buf)
{
    for (uint32_t n = 0, i = slot_of(buf); marks && n < PROBES; n++, i = (i + 1) % MARKS)
        if (marks[i].buf == buf)
            marks[i].buf = NULL;
}

/* The thread ends: its marks go with it. */
HK_NOINSTR void hk_flow_thread_end(void)
{
    lc_release(marks);
    marks = NULL;
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
