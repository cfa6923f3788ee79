/*
 * inlined: instrumented functions the compiler inlines at -O2 still call
 * the hooks, with their host's return address as call site; they must nest
 * under their host, not become its siblings (tests/core/test_inline.py).
 *
 *   main
 *     compute      x3 (noinline)
 *       helper     x3 (inlined into compute)
 *         kernel   x6 (inlined into helper)
 */
#include <stdio.h>

static int kernel(int x) { return x * 2; }
static int helper(int x) { return kernel(x) + kernel(x + 1); }
__attribute__((noinline)) int compute(int x) { return helper(x); }

int main(void)
{
    int s = 0;
    for (int i = 0; i < 3; i++)
        s += compute(i);
    printf("inlined: %d\n", s);
    return 0;
}
