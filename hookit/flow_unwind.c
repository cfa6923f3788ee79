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
 * cleanups, so there is then nothing left to close. */
#include "hookit/flow.h"

#include <errno.h>

#ifndef HOOKIT_STATIC
/* The unwinder that called us is loaded (libgcc_s or LLVM's libunwind):
 * found at the first call, after libhookit in the search order. */
static _Unwind_Word (*get_cfa)(struct _Unwind_Context *);
#define GET_CFA(ctx) hk_flow_next((void **)&get_cfa, "_Unwind_GetCFA") ? get_cfa(ctx) : 0
#else
#define GET_CFA(ctx) _Unwind_GetCFA(ctx)
#endif

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
            hk_flow_tell(HOOKIT_FLOW_UNWIND, 0, sp, NULL, NULL);
        errno = saved;
    }
    return rc;
}
