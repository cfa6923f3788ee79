/* Stress: longjmp out of DEPTH instrumented frames, REPEAT times, then a
 * call after.   st_longjmp DEPTH REPEAT */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf top;

__attribute__((noinline)) static long dive(long n)
{
    if (n == 0)
        longjmp(top, 1);
    return dive(n - 1) + 1;
}

__attribute__((noinline)) static long after(long x) { return x + 1; }

int main(int argc, char **argv)
{
    long depth = argc > 1 ? atol(argv[1]) : 10000;
    long repeat = argc > 2 ? atol(argv[2]) : 100;
    volatile long jumps = 0;
    for (long i = 0; i < repeat; i++) {
        if (setjmp(top) == 0)
            dive(depth - 1);
        else
            jumps++;
    }
    printf("depth %ld jumps %ld %ld\n", depth, (long)jumps, after(jumps));
    return 0;
}
