/* The C++ catch (docs/exactness.md).  GCC runs the exit hooks of the
 * frames it unwinds; Clang does not.  The catching frame calls
 * __cxa_begin_catch from its handler, so our own frame address is its stack
 * pointer: whatever is still open deeper on that stack is gone. */
#include "hookit/flow.h"

HK_EXPORT HK_NOINSTR void *HK_FLOW_NAME(__cxa_begin_catch)(void *exception)
{
    hk_flow_tell(HOOKIT_FLOW_CATCH, 0, (uintptr_t)__builtin_dwarf_cfa(), NULL, NULL);
    return HK_FLOW_REAL(__cxa_begin_catch)(exception);
}
