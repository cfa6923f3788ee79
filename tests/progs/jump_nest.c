/*
 * jump_nest: N nested levels, each with a jmp_buf of its own, all live at
 * once (tests/core/test_exact.py).  The deepest level longjmps to its own
 * buffer from a callee; then each level, landed, calls leaf() and longjmps
 * from a callee to the level above it, so every buffer is jumped to while
 * all deeper ones are still kept.  `jump_nest N sig` uses sigsetjmp and
 * siglongjmp.
 *
 *   main > level (N deep); each level: leaf x1, thrower x1 (the outermost
 *   none, the deepest one more)
 */
#include <setjmp.h>
#include <stdlib.h>
#include "progs.h"

volatile long sink;
static int levels, use_sig;
static sigjmp_buf **bufs;

KEEP void thrower(int to)
{
    sink++;
    if (use_sig)
        siglongjmp(*bufs[to], 1);
    longjmp(*(jmp_buf *)bufs[to], 1);
}

KEEP void leaf(void)
{
    sink++;
}

KEEP void level(int n)
{
    sigjmp_buf env;
    bufs[n] = &env;
    int landed = use_sig ? sigsetjmp(env, 1) : setjmp(*(jmp_buf *)&env);
    if (!landed) {
        if (n + 1 < levels)
            level(n + 1);
        thrower(n);
    }
    leaf();
    if (n > 0)
        thrower(n - 1);
}

int main(int argc, char **argv)
{
    levels = argc > 1 ? atoi(argv[1]) : 10000;
    use_sig = argc > 2;
    bufs = calloc((size_t)levels, sizeof *bufs);
    level(0);
    return 0;
}
