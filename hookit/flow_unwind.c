/* C++ unwinding (docs/exactness.md).  The unwinder asks the personality
 * routine of each frame that has cleanups or handlers what to do; when it
 * answers "install the context", that frame's landing pad runs next: a
 * cleanup (destructors, then back to the unwinder) or a catch clause.
 * Clang runs no exit hook while it unwinds, so the frames deeper than that
 * one would still look open when the landing pad calls a destructor.
 * Interposing __gxx_personality_v0 (GCC's libstdc++ and LLVM's libc++abi
 * both name it so) tells the plugin which frame it is, by its stack
 * pointer at the call the exception came out of: the unwinder's
 * _Unwind_GetCFA for the frame (libgcc and LLVM's libunwind both answer
 * with the CFA of the frame below, which is that).  Every frame that keeps
 * its return address below it is gone.  GCC runs the exit hooks in its own
 * cleanups, so there is then nothing left to close.
 *
 * Functions inlined into the landing pad's frame share its return address:
 * whether the landing pad is theirs or their host's, the plugin tells from
 * where in the host their entry hooks are called, against the code ranges
 * from which a throw goes to that landing pad, read here from the
 * function's LSDA (flow_lsda.c). */
#include "hookit/flow.h"

#include <errno.h>

#ifndef HOOKIT_STATIC
/* The unwinder that called us is loaded (libgcc_s or LLVM's libunwind):
 * found at the first call, after libhookit in the search order. */
static _Unwind_Word (*get_cfa)(struct _Unwind_Context *);
static _Unwind_Ptr (*get_ip)(struct _Unwind_Context *);
static _Unwind_Ptr (*get_region_start)(struct _Unwind_Context *);
static void *(*get_lsda)(struct _Unwind_Context *);
#define UNWINDER(fn, name, ctx) (hk_flow_next((void **)&fn, name) ? fn(ctx) : 0)
#define GET_CFA(ctx) UNWINDER(get_cfa, "_Unwind_GetCFA", ctx)
#define GET_IP(ctx) UNWINDER(get_ip, "_Unwind_GetIP", ctx)
#define GET_REGION_START(ctx) UNWINDER(get_region_start, "_Unwind_GetRegionStart", ctx)
#define GET_LSDA(ctx) UNWINDER(get_lsda, "_Unwind_GetLanguageSpecificData", ctx)
#else
#define GET_CFA(ctx) _Unwind_GetCFA(ctx)
#define GET_IP(ctx) _Unwind_GetIP(ctx)
#define GET_REGION_START(ctx) _Unwind_GetRegionStart(ctx)
#define GET_LSDA(ctx) _Unwind_GetLanguageSpecificData(ctx)
#endif

/* The landing pad the real personality routine installed, and the ranges
 * of its function's code that go there (struct hookit_flow). */
HK_NOINSTR static void tell_unwind(struct _Unwind_Context *ctx, uintptr_t sp)
{
    struct hookit_code_range ranges[HK_LSDA_MAX_RANGES];
    struct hookit_flow f = { .kind = HOOKIT_FLOW_UNWIND, .sp = sp };
    f.pad = (uintptr_t)GET_IP(ctx);
    f.func = (uintptr_t)GET_REGION_START(ctx);
    if (f.func)
        f.nranges =
            hk_lsda_pad_ranges(GET_LSDA(ctx), f.func, f.pad, ranges, HK_LSDA_MAX_RANGES, &f.func_calls_end);
    f.ranges = ranges;
    hk_flow_send(&f);
}

HK_EXPORT HK_NOINSTR _Unwind_Reason_Code HK_FLOW_NAME(__gxx_personality_v0)(int version,
                                                                            _Unwind_Action actions,
                                                                            _Unwind_Exception_Class kind,
                                                                            struct _Unwind_Exception *e,
                                                                            struct _Unwind_Context *ctx)
{
    _Unwind_Reason_Code rc = HK_FLOW_REAL(__gxx_personality_v0)(version, actions, kind, e, ctx);
    if ((actions & _UA_CLEANUP_PHASE) && rc == _URC_INSTALL_CONTEXT && hk_plugin.info.flow) {
        int saved = errno;
        uintptr_t sp = (uintptr_t)(GET_CFA(ctx));
        if (sp)
            tell_unwind(ctx, sp);
        errno = saved;
    }
    return rc;
}
