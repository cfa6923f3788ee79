/*
 * throw_depths: exceptions caught at several depths, rethrown, and thrown
 * through qsort (libc: frames that are not instrumented)
 * (tests/core/test_exact.py).  Clang emits no exit hook on unwind; GCC does.
 *
 *   main
 *     catcher
 *       middle(2) > thrower(2) > thrower(1) > thrower(0)      x3
 *       leaf                                                  x3
 *     outer
 *       rethrower
 *         middle(1) > thrower(1) > thrower(0)
 *         leaf
 *       leaf
 *     sorter
 *       by_value                                              once (throws)
 *       leaf
 *     leaf
 */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#if defined(__clang__)
#define KEEP __attribute__((noinline, used))
#else
#define KEEP __attribute__((noipa, used))
#endif

volatile long sink;

KEEP void thrower(int n)
{
    if (n == 0)
        throw std::runtime_error("deep");
    thrower(n - 1);
    sink++;
}
KEEP void middle(int n) { thrower(n); sink++; }
KEEP void leaf() { sink++; }

KEEP void catcher()
{
    for (int i = 0; i < 3; i++) {
        try {
            middle(2);
        } catch (const std::exception &) {
            leaf();
        }
    }
}

KEEP void rethrower()
{
    try {
        middle(1);
    } catch (...) {
        leaf();
        throw;
    }
}

KEEP void outer()
{
    try {
        rethrower();
    } catch (...) {
        leaf();
    }
}

extern "C" KEEP int by_value(const void *a, const void *b)
{
    (void)a;
    (void)b;
    throw 1;
}

KEEP void sorter()
{
    int v[4] = { 4, 3, 2, 1 };
    try {
        qsort(v, 4, sizeof v[0], by_value);
    } catch (int) {
        leaf();
    }
}

int main()
{
    catcher();
    outer();
    sorter();
    leaf();
    std::printf("throw_depths: %ld\n", (long)sink);
    return 0;
}
