/*
 * inlined_landing: a C++ landing pad in a machine frame that holds an
 * inlined function (tests/core/test_exact.py, docs/exactness.md).
 *
 *   OWNER=0  the host owns the catch clause; the inlined callee throws:
 *            main > host > inner_throws ; main > host > handled
 *   OWNER=1  the inlined callee owns the catch clause and throws itself:
 *            main > host > inner_catches > handled
 *   OWNER=2  the inlined callee owns the catch clause around a call that
 *            throws; the host owns nothing:
 *            main > host > inner_tries > throws_far ;
 *            main > host > inner_tries > handled
 *   OWNER=3  the host's try around two inlined calls, the second throws:
 *            main > host > first ; main > host > second ; main > host > handled
 *   OWNER=4  the host's try around an inlined callee that catches its own
 *            throw (the callee entered inside a try that is not the one
 *            whose landing pad runs):
 *            main > host > inner_catches > handled ; main > host > after
 *   OWNER=5  the host's cleanup (a destructor) while an inlined callee's
 *            throw passes through, caught in main:
 *            main > host > inner_throws ; main > host > ~Guard ; main > handled
 *   OWNER=6  as 5, with the callee inlined twice into the host, before the
 *            guarded scope and inside it (the second throws): whose the
 *            landing pad is cannot be decided, and is said:
 *            main > host > maybe_throws (x2) ; main > host > ~Guard ;
 *            main > handled
 *
 * In 0 and 1 the throw comes out of the host's machine frame, the unwinder
 * installs a landing pad in that frame, and the inlined callee's entry
 * hook was given the host's return address: clang makes the same machine
 * code for both up to the end of the handler, and neither the unwinder's
 * context nor the debug information says whose the landing pad is.  The
 * landing pad's call-site ranges in the LSDA do: the inlined callee's entry
 * hook is called inside them in 0, outside in 1 (docs/exactness.md).
 */
#include "progs.h"

#define INLINE __attribute__((always_inline)) inline

volatile long sink;

KEEP void handled() { sink++; }

#if OWNER == 0 || OWNER == 5
INLINE void inner_throws()
{
    sink++;
    if (sink > 0)
        throw 1;
}
#endif
#if OWNER == 1 || OWNER == 4
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
#endif

#if OWNER == 0
KEEP void host()
{
    try {
        inner_throws();
    } catch (int) {
        handled();
    }
}
#elif OWNER == 1
KEEP void host() { inner_catches(); }
#elif OWNER == 2
KEEP void throws_far()
{
    sink++;
    if (sink > 0)
        throw 1;
}

INLINE void inner_tries()
{
    try {
        throws_far();
    } catch (int) {
        handled();
    }
}

KEEP void host() { inner_tries(); }
#elif OWNER == 3
INLINE void first() { sink++; }

INLINE void second()
{
    sink++;
    if (sink > 0)
        throw 1;
}

KEEP void host()
{
    try {
        first();
        second();
    } catch (int) {
        handled();
    }
}
#elif OWNER == 4
KEEP void after() { sink++; }

KEEP void host()
{
    try {
        inner_catches();
        after();
    } catch (int) {
        handled();
    }
}
#elif OWNER == 5
struct Guard {
    KEEP ~Guard() { sink++; }
};

KEEP void host()
{
    Guard g;
    inner_throws();
}
#elif OWNER == 6
struct Guard {
    KEEP ~Guard() { sink++; }
};

INLINE void maybe_throws(int really)
{
    sink++;
    if (really && sink > 0)
        throw 1;
}

KEEP void host()
{
    maybe_throws(0);
    Guard g;
    maybe_throws(1);
}
#endif

int main()
{
    for (int i = 0; i < 3; i++) {
#if OWNER >= 5
        try {
            host();
        } catch (int) {
            handled();
        }
#else
        host();
#endif
    }
    return 0;
}
