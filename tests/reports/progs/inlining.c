/* Known inlining for the view as compiled (tests/reports/test_as_compiled.py):
 * built with gcc -O2 -finstrument-functions, sq() is inlined into work()
 * (always_inline; GCC still calls the hooks around the copy, with work's
 * call site), twice() is a real call (noinline).  main calls work() N
 * times; work calls sq() and twice() M times each.  The source's view has
 * main > work > sq and main > work > twice; as compiled, sq is part of
 * work, as perf and a debugger see the binary.  With an argument, main
 * prints "ready" after the first work() and goes on calling it until
 * killed (a live snapshot's test). */
#include <stdio.h>

#define N 50
#define M 2000

static volatile long sink;

static inline __attribute__((always_inline)) long sq(long x)
{
    return x * x;
}

__attribute__((noinline)) long twice(long x);
__attribute__((noinline)) long twice(long x)
{
    sink += x;
    return 2 * x;
}

__attribute__((noinline)) long work(long k);
__attribute__((noinline)) long work(long k)
{
    long s = 0;
    for (long i = 0; i < M; i++)
        s += sq(i + k) + twice(i);
    return s;
}

int main(int argc, char **argv)
{
    long s = 0;
    (void)argv;
    for (long k = 0; k < N || argc > 1; k++) {
        s += work(k);
        if (argc > 1 && k == 0) {
            printf("ready\n");
            fflush(stdout);
        }
    }
    printf("%ld\n", s);
    return 0;
}
