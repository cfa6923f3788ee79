/* Whose is a landing pad in a machine frame with inlined callees
 * (inlined_pad.h). */
#include "common/inlined_pad.h"

#include "common/entry_calls.h"

#define NOINSTR __attribute__((no_instrument_function))

/* Whose a landing pad is, for one inlined callee on top of its host. */
enum pad_owner {
    OWNER_CALLER, /* its caller's: the callee is gone */
    OWNER_CALLEE, /* its own: it stays open */
    OWNER_UNKNOWN,
};

/* ---- the decision ---------------------------------------------------------- */

NOINSTR static int in_ranges(const struct hookit_flow *f, uintptr_t a)
{
    for (uint32_t i = 0; i < f->nranges; i++)
        if (a >= f->ranges[i].start && a < f->ranges[i].end)
            return 1;
    return 0;
}

/* Whose the landing pad is, for callee inlined into its function: the
 * callee's caller's when every place callee is entered lies inside the
 * landing pad's try; its own when none does. */
NOINSTR static enum pad_owner owner_for(const struct hookit_flow *f, uintptr_t callee)
{
    struct hk_entry_calls e;
    if (!hk_entry_calls_known() || !f->nranges)
        return OWNER_UNKNOWN;
    hk_entry_calls_of(&e, f->func, callee, f->func_calls_end);
    if (e.n <= 0)
        return OWNER_UNKNOWN;
    unsigned inside = 0;
    for (int32_t i = 0; i < e.n; i++)
        inside += in_ranges(f, f->func + e.at[i]);
    if (inside == (unsigned)e.n)
        return OWNER_CALLER;
    /* Unsure, a copy of callee entered inside may have gone unseen. */
    return inside || e.unsure ? OWNER_UNKNOWN : OWNER_CALLEE;
}

/* The host: the landing pad's function, the nearest below the top among
 * the frames that share the top's return address; 0 when there is none
 * (no inlined callee on top of the landing pad's frame). */
NOINSTR static unsigned host_of(const struct hookit_flow *f, unsigned open, hk_open_frame_fn frame,
                                const void *ctx)
{
    uint64_t fn;
    uintptr_t site, top_site;
    frame(ctx, 0, &fn, &top_site);
    for (unsigned i = 1; i < open; i++) {
        frame(ctx, i, &fn, &site);
        if (site != top_site)
            return 0;
        if (fn == f->func)
            return i;
    }
    return 0;
}

NOINSTR unsigned hk_inlined_unwound(const struct hookit_flow *f, unsigned open, hk_open_frame_fn frame,
                                    const void *ctx, int *undecided)
{
    *undecided = 0;
    if (f->kind != HOOKIT_FLOW_UNWIND || !f->func || !open)
        return 0;
    unsigned host = host_of(f, open, frame, ctx), n = 0;
    while (n < host) {
        uint64_t fn;
        uintptr_t site;
        frame(ctx, n, &fn, &site);
        enum pad_owner owner = owner_for(f, (uintptr_t)fn);
        if (owner != OWNER_CALLER) {
            *undecided = owner == OWNER_UNKNOWN;
            break;
        }
        n++;
    }
    return n;
}
