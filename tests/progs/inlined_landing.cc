/*
 * inlined_landing: a C++ landing pad in a machine frame that holds an
 * inlined function, two ways that look the same at run time
 * (tests/core/test_exact.py, docs/exactness.md).
 *
 *   OWNER=0  the host owns the catch clause; the inlined callee throws:
 *            main > host > inner_throws ; main > host > handled
 *   OWNER=1  the inlined callee owns the catch clause and throws itself:
 *            main > host > inner_catches > handled
 *
 * In both, the throw comes out of the host's machine frame, the unwinder
 * installs a landing pad in that frame, and the inlined callee's entry
 * hook was given the host's return address: clang makes the same machine
 * code for both up to the end of the handler, and neither the unwinder's
 * context nor the debug information says whose the landing pad is
 * (docs/exactness.md).
 */
#include "progs.h"

#define INLINE __attribute__((always_inline)) inline

volatile long sink;

KEEP void handled() { sink++; }

#if OWNER == 0
INLINE void inner_throws()
{
    sink++;
    if (sink > 0)
        throw 1;
}

KEEP void host()
{
    try {
        inner_throws();
    } catch (int) {
        handled();
    }
}
#else
INLINE void inner_catches()
{
    try {
        sink++;
        if (sink > 0)
            throw 1;
    } catch (int) {
        handled();
    }
}

KEEP void host() { inner_catches(); }
#endif

int main()
{
    for (int i = 0; i < 3; i++)
        host();
    return 0;
}
